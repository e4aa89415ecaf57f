//! Every schedule checked without a GPU, on the recording device: each launch names a kernel of
//! its file with arguments matching the kernel's parameter list, covers every pixel or every 2x2
//! block (TUF: every 32 x 32 tile or 32 x 16 x 16 region, or every pixel after a tile border or
//! region face), fits a CUDA device's grid once folded (tall images included), and the labeling
//! reports the phases the registry declares. Every kernel of a file is launched by some
//! connectivity of some algorithm.

use std::collections::BTreeSet;

use ccl::recording::{kernel_declarations, record, record_consecutive, record_kind, record_stacked, Call, RecordedArg};
use ccl::{Algorithm, BackendError, Connectivity, Error, ImageKind, Phase, Shape};
use ccl_backend::Limits;

/// An H100's limits (CUDA: 1024 threads per block, grid 2^31 - 1 x 65535 x 65535).
const CUDA: Limits = Limits {
    max_group_size: 1024,
    max_group_sizes: [1024, 1024, 64],
    max_groups: [(1 << 31) - 1, 65535, 65535],
    compute_units: 132,
    local_memory: 48 * 1024,
    max_allocation: u64::MAX,
    group_multiple: 32,
};

const SHAPES: [(usize, usize); 8] =
    [(1, 1), (3, 5), (67, 37), (64, 64), (1, 600_000), (600_000, 1), (2, 1_100_000), (1, u32::MAX as usize)];

#[test]
fn every_schedule_launches_valid_ranges_and_arguments() {
    let mut failures = Vec::new();
    for &algorithm in Algorithm::ALL {
        for &connectivity in algorithm.connectivities().iter().filter(|c| c.dims() == 2) {
            for (w, h) in SHAPES {
                let shape = Shape::image(w, h);
                let case = format!("{algorithm}/{}/{shape}", connectivity.neighbours());
                let recording = match record(algorithm, connectivity, shape, CUDA) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{case}: {e}"));
                        continue;
                    }
                };
                let pixels = [w as u64, h as u64];
                let blocks = [w.div_ceil(2) as u64, h.div_ceil(2) as u64];
                // TUF: one 32 x 8 work-group per 8 tiles of 32 x 32 side by side (tuf_tiles_groups,
                // which joins them in local memory) or per tile on small images
                // (tuf_tiles_small), then one work-item per pixel just after the border of a
                // group's tiles (every row of each column 256k, or 32k after tuf_tiles_small,
                // and every column of each row 32m; k, m >= 1) in a 1D range; the compression
                // takes 4 pixels of a row per work-item.
                let quads = [w.div_ceil(4) as u64, h as u64];
                let tiles8 = [(w.div_ceil(256) * 32) as u64, (h.div_ceil(32) * 8) as u64];
                let tiles1 = [(w.div_ceil(32) * 32) as u64, (h.div_ceil(32) * 8) as u64];
                let border = |region: usize| ((w.div_ceil(region) - 1) * h + (h.div_ceil(32) - 1) * w) as u64;
                let mut region = 0;
                let mut launches = 0;
                for (kernel, range, args) in recording.launches() {
                    launches += 1;
                    let covered = [range.global[0] as u64, range.global[1] as u64];
                    // Every launch covers the pixels or the 2x2 blocks, in whole groups.
                    let covers = |e: [u64; 2]| covered[0] >= e[0] && covered[1] >= e[1];
                    match kernel {
                        "tuf_tiles_groups" => region = 256,
                        "tuf_tiles_small" => region = 32,
                        _ => {}
                    }
                    // (Kernel names are unique across kernel files: these are TUF's.)
                    let tiled = match kernel {
                        "tuf_tiles_groups" => covers(tiles8),
                        "tuf_tiles_small" => covers(tiles1),
                        "tuf_compress_2d" => covers(quads),
                        "tuf_border_merge_2d" => {
                            region > 0 && covered[1] == 1 && covered[0] >= border(region) && border(region) > 0
                        }
                        _ => false,
                    };
                    if !covers(pixels) && !covers(blocks) && !tiled {
                        failures.push(format!("{case}: {kernel} covers {covered:?}, not {pixels:?} or {blocks:?}"));
                    }
                    // Sizes passed to the kernel are the image's (or its block grid's).
                    let scalars: Vec<u64> = args
                        .iter()
                        .filter_map(|a| if let RecordedArg::U32(v) = a { Some(u64::from(*v)) } else { None })
                        .collect();
                    if scalars.len() >= 2 && scalars[..2] != pixels && scalars[..2] != blocks {
                        failures.push(format!("{case}: {kernel} gets sizes {scalars:?}"));
                    }
                    // TUF's border merge: the region width of the tile kernel that ran, its
                    // vertical and total border pixels, whether it keeps root marks (0 or 1), and
                    // the rows of an item (all of them: one image).
                    if kernel == "tuf_border_merge_2d" {
                        let vertical = ((w.div_ceil(region.max(1)) - 1) * h) as u64;
                        let expected = [region as u64, vertical, border(region), h as u64];
                        if !matches!(scalars[2..], [r, v, b, 0 | 1, i] if [r, v, b, i] == expected) {
                            failures.push(format!("{case}: {kernel} gets {scalars:?} after a {region}-wide tile pass"));
                        }
                    }
                }
                if launches == 0 {
                    failures.push(format!("{case}: no launch"));
                }
                let phases: Vec<_> = recording.timings.phases.iter().map(|p| p.phase).collect();
                for phase in algorithm.info().phases {
                    if !phases.contains(phase) {
                        failures.push(format!("{case}: phase {phase} missing from {phases:?}"));
                    }
                }
                if recording.timings.iterations.is_some() != algorithm.info().iterative {
                    failures.push(format!("{case}: iterations {:?}", recording.timings.iterations));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} schedule problems:\n{}", failures.len(), failures.join("\n"));
}

/// Volumes of awkward shapes, a long one along x included.
const VOLUMES: [(usize, usize, usize); 5] = [(1, 1, 1), (3, 5, 7), (67, 37, 9), (64, 64, 64), (600_000, 1, 1)];

/// Volumes too long along y or z for a CUDA grid (3D ranges are not folded, and more than
/// 65535 work-groups along y or z do not launch): a typed device error naming the limit, never a
/// partial labeling.
const TOO_LONG: [(usize, usize, usize); 3] = [(1, 1, 600_000), (1, 600_000, 1), (2, 3, 300_000)];

#[test]
fn every_volume_schedule_launches_valid_ranges_and_arguments() {
    let mut failures = Vec::new();
    for &algorithm in Algorithm::ALL {
        for &connectivity in algorithm.connectivities().iter().filter(|c| c.dims() == 3) {
            // (An algorithm whose volume launches are 2D ranges, folded into the grid, labels
            // them: they are checked as the others below.)
            let flat_ranges = algorithm.info().flat_volume_ranges;
            for (w, h, d) in TOO_LONG.into_iter().filter(|_| !flat_ranges) {
                let shape = Shape { width: w, height: h, depth: d };
                match record(algorithm, connectivity, shape, CUDA) {
                    Err(Error::Backend(BackendError::InvalidLaunch { reason, .. }))
                        if reason.contains("work-groups along y and z") => {}
                    other => failures.push(format!("{algorithm}/{shape}: {:?}", other.map(|_| "labeled"))),
                }
            }
            let extra = if flat_ranges { &TOO_LONG[..] } else { &[] };
            for &(w, h, d) in VOLUMES.iter().chain(extra) {
                let shape = Shape { width: w, height: h, depth: d };
                let case = format!("{algorithm}/{}/{shape}", connectivity.neighbours());
                let recording = match record(algorithm, connectivity, shape, CUDA) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{case}: {e}"));
                        continue;
                    }
                };
                let voxels = [w as u64, h as u64, d as u64];
                let blocks = [w.div_ceil(2) as u64, h.div_ceil(2) as u64, d.div_ceil(2) as u64];
                // TUF: one 32 x 8 work-group per region of 32 x 16 x 16 voxels (regions along y
                // and z one after the other along the range's y), one work-item per voxel just
                // after a region face x = 32k, then (from the next multiple of 32) 8 per row of a
                // region just after a face y = 16m or z = 16n (k, m, n >= 1) in a 1D range, and
                // the compression over the regions again.
                let across = w.div_ceil(32);
                let regions = [(across * 32) as u64, (h.div_ceil(16) * d.div_ceil(16) * 8) as u64, 1];
                let (across_x, across_y) = (((across - 1) * h * d) as u64, (across * ((h - 1) / 16) * d) as u64);
                let faces = across_x.next_multiple_of(32) + 8 * (across_y + (across * h * ((d - 1) / 16)) as u64);
                for (kernel, range, args) in recording.launches() {
                    let covered = range.global.map(|g| g as u64);
                    // Every launch covers the voxels or the 2x2x2 blocks (relabeling: one
                    // dimension over all of them), in whole groups.
                    let covers = |e: [u64; 3]| (0..3).all(|a| covered[a] >= e[a]);
                    let flat = covered[0] >= shape.len() as u64;
                    // (Kernel names are unique across kernel files: these are TUF's.)
                    let tiled = match kernel {
                        "tuf_tiles_3d" | "tuf_compress_3d" => covers(regions),
                        "tuf_border_merge_3d" => {
                            covered[1..] == [1, 1]
                                && covered[0] >= faces
                                && faces > 0
                                && args[6..9]
                                    == [
                                        RecordedArg::U32(across_x as u32),
                                        RecordedArg::U32(across_y as u32),
                                        RecordedArg::U32(faces as u32),
                                    ]
                                // Then whether pass 1 may defer regions (raw labels), as a flag.
                                && matches!(args[9], RecordedArg::U32(0 | 1))
                        }
                        _ => false,
                    };
                    if !covers(voxels) && !covers(blocks) && !flat && !tiled {
                        failures.push(format!("{case}: {kernel} covers {covered:?}, not {voxels:?} or {blocks:?}"));
                    }
                    // Sizes passed to the kernel are the volume's (or its block grid's).
                    let scalars: Vec<u64> = args
                        .iter()
                        .filter_map(|a| if let RecordedArg::U32(v) = a { Some(u64::from(*v)) } else { None })
                        .collect();
                    if scalars.len() >= 3
                        && (!flat || kernel == "tuf_border_merge_3d")
                        && scalars[..3] != voxels
                        && scalars[..3] != blocks
                    {
                        failures.push(format!("{case}: {kernel} gets sizes {scalars:?}"));
                    }
                }
                let phases: Vec<_> = recording.timings.phases.iter().map(|p| p.phase).collect();
                for phase in algorithm.info().phases {
                    if !phases.contains(phase) {
                        failures.push(format!("{case}: phase {phase} missing from {phases:?}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} volume schedule problems:\n{}", failures.len(), failures.join("\n"));
}

/// A kernel declared twice in a file (its 2D and its DIMS=3 version) keeps one parameter list,
/// so that one schedule launches either build (and the recording device, which reads both,
/// checks the right one).
#[test]
fn kernels_declared_for_images_and_volumes_take_the_same_parameters() {
    let mut failures = Vec::new();
    for &algorithm in Algorithm::ALL {
        let mut seen: std::collections::BTreeMap<String, String> = Default::default();
        let source: String = algorithm.info().kernel().parts().iter().map(|(_, text)| *text).collect();
        for (name, params) in kernel_declarations(&source) {
            let params: String = params.split_whitespace().collect();
            if let Some(before) = seen.insert(name.to_string(), params.clone()) {
                if before != params {
                    failures.push(format!("{algorithm}: {name} takes {before} and {params}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Tall images fold into the grid: more than 65535 groups along y become y x z.
#[test]
fn tall_images_fold_into_the_cuda_grid() {
    let recording = record(Algorithm::UF, Connectivity::Eight, Shape::image(1, 600_000), CUDA).unwrap();
    for call in &recording.calls {
        if let Call::Launch { kernel, grid, range, .. } = call {
            assert_eq!(range.groups()[1], 75_000, "{kernel}: 600000 rows in groups of 8");
            assert_eq!(*grid, [1, 65535, 2], "{kernel}: folded into y and z");
        }
    }
    // A device whose grid cannot hold the range refuses the launch with the reason.
    let tiny = Limits { max_groups: [65535, 16, 16], ..CUDA };
    match record(Algorithm::KE, Connectivity::Four, Shape::image(8, 8 * 257), tiny) {
        Err(Error::Backend(BackendError::InvalidLaunch { reason, .. })) => {
            assert!(reason.contains("cannot be folded"), "{reason}")
        }
        other => panic!("expected a refused launch, got {:?}", other.map(|_| ())),
    }
}

/// No kernel is dead: every `KERNEL` of the kernel sources is launched by some algorithm and
/// connectivity (the shared parts, such as `compress.kernel`, by some of the files they are in).
#[test]
fn every_kernel_is_launched() {
    let mut declared = BTreeSet::new();
    let mut launched = BTreeSet::new();
    for &algorithm in Algorithm::ALL {
        let file = algorithm.info().kernel();
        for (_, text) in file.parts() {
            declared.extend(kernel_declarations(text).map(|(name, _)| name.to_string()));
        }
        for &connectivity in algorithm.connectivities() {
            // More than one 32 x 32 tile; enough tiles for TUF's 8-tile work-groups; and, at
            // 4-connectivity, few enough of those for its wide tile kernel (2048 x 2048: 512
            // groups of 8 tiles on 132 compute units).
            for shape in [Shape::image(37, 37), Shape::image(2048, 2048), Shape::image(20_000, 20_000)] {
                for recording in [
                    record(algorithm, connectivity, shape, CUDA).map(Some),
                    record_consecutive(algorithm, connectivity, shape, CUDA).map(Some),
                    // (A batch of images stacked along the rows: TUF's item offsets.)
                    record_stacked(algorithm, connectivity, shape, 2, CUDA),
                ] {
                    for (kernel, _, _) in recording.unwrap().iter().flat_map(|r| r.launches()) {
                        launched.insert(kernel.to_string());
                    }
                }
            }
        }
        // Multi-label images and volumes (TUF's slice merge).
        for &connectivity in algorithm.multilabel_connectivities() {
            let shape =
                if connectivity.dims() == 3 { Shape { width: 40, height: 20, depth: 6 } } else { Shape::image(70, 40) };
            let recording = record_kind(algorithm, connectivity, shape, ImageKind::multilabel(0u16), CUDA).unwrap();
            launched.extend(recording.launches().map(|(kernel, _, _)| kernel.to_string()));
        }
    }
    let dead: Vec<_> = declared.difference(&launched).collect();
    assert!(dead.is_empty(), "kernels never launched: {dead:?}");
}

/// Labelings straight into consecutive labels launch only what the recording device accepts
/// (arguments matching each kernel's parameters, whole groups) and end with the relabeling. TUF
/// renumbers in its last pass: passes 1 and 2 label a scratch forest, the relabeling ranks it
/// (no relabel_final), and tuf_compress_ranked_2d reads the forest and writes 4 pixels of a row of
/// the output per work-item (tuf_compress_ranked_3d: a work-group per region).
#[test]
fn consecutive_labelings_launch_valid_ranges_and_arguments() {
    let mut failures = Vec::new();
    for &algorithm in Algorithm::ALL {
        for &connectivity in algorithm.connectivities() {
            for shape in [
                Shape::image(3, 5),
                Shape::image(67, 37),
                Shape::image(2100, 600),
                Shape { width: 37, height: 19, depth: 33 },
            ] {
                if (shape.depth > 1) != (connectivity.dims() == 3) {
                    continue;
                }
                let case = format!("{algorithm}/{}/{shape}", connectivity.neighbours());
                let recording = match record_consecutive(algorithm, connectivity, shape, CUDA) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{case}: {e}"));
                        continue;
                    }
                };
                if recording.timings.phases.last().map(|p| p.phase) != Some(Phase::Relabel) {
                    failures
                        .push(format!("{case}: phases {:?} do not end with the relabeling", recording.timings.phases));
                }
                // The relabeling's final pass runs unless the algorithm's own last pass writes
                // the consecutive labels (then the last launch is the algorithm's).
                let kernels: Vec<&str> = recording.launches().map(|(k, _, _)| k).collect();
                let fused = algorithm.info().ranks_in_last_pass;
                let last_is_relabel = kernels.last().is_some_and(|k| k.starts_with("relabel_"));
                if kernels.contains(&"relabel_final") == fused || last_is_relabel == fused {
                    failures.push(format!("{case}: launches {kernels:?}"));
                }
                for (kernel, range, args) in recording.launches().filter(|(k, _, _)| *k == "tuf_compress_ranked_2d") {
                    let quads = [shape.width.div_ceil(4), shape.height];
                    let forest = matches!(args[0], RecordedArg::Buffer { bytes, .. } if bytes == shape.len() * 4);
                    let distinct = matches!((&args[0], &args[1]), (RecordedArg::Buffer { id: a, .. }, RecordedArg::Buffer { id: b, .. }) if a != b);
                    if range.global[0] < quads[0] || range.global[1] < quads[1] || !forest || !distinct {
                        failures.push(format!("{case}: {kernel} over {:?} with {args:?}", range.global));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The recording device refuses what a real one would: arguments that do not match the kernel's
/// parameters, and ranges that are not whole groups.
#[test]
fn the_recording_device_refuses_mismatched_launches() {
    use ccl_backend::{Arg, Gpu, LaunchRange};
    let gpu = ccl::recording::RecordingGpu::new(CUDA);
    let source = "KERNEL void k(GLOBAL const uchar *img, GLOBAL label_t *L, uint width, float k)";
    let program = gpu.build(source, &[]).unwrap();
    let mut kernel = gpu.kernel(&program, "k").unwrap();
    let buffer = gpu.alloc(16).unwrap();
    let range = LaunchRange::over([4, 4, 1], [4, 4, 1]);
    let good = [Arg::Buffer(&buffer), Arg::Buffer(&buffer), Arg::U32(4), Arg::F32(0.5)];
    gpu.launch(&mut kernel, &range, &good).unwrap();
    let swapped = [Arg::Buffer(&buffer), Arg::Buffer(&buffer), Arg::F32(0.5), Arg::U32(4)];
    assert!(gpu.launch(&mut kernel, &range, &swapped).is_err());
    assert!(gpu.launch(&mut kernel, &range, &good[..3]).is_err());
    let ragged = LaunchRange { global: [6, 4, 1], local: [4, 4, 1] };
    assert!(gpu.launch(&mut kernel, &ragged, &good).is_err());
    assert!(gpu.kernel(&program, "missing").is_err());
}

/// A batch of images stacked along the rows, labeled as one by TUF: the border merge gets the
/// rows of an item, the item offsets run over the items and one more (N), and pass 3 gets them
/// with the item's rows; items of a height that is not a multiple of 32, or another algorithm,
/// are not labeled as one (`None`).
#[test]
fn stacked_batches_pass_the_item_rows_to_tuf() {
    for connectivity in [Connectivity::Four, Connectivity::Eight] {
        let shape = Shape::image(300, 6 * 64);
        let recording = record_stacked(Algorithm::TUF, connectivity, shape, 6, CUDA).unwrap().expect("as one");
        let scalars = |args: &[RecordedArg]| -> Vec<u32> {
            args.iter().filter_map(|a| if let RecordedArg::U32(v) = a { Some(*v) } else { None }).collect()
        };
        let launches: Vec<_> = recording.launches().collect();
        let merge = launches.iter().find(|(k, _, _)| *k == "tuf_border_merge_2d").expect("border merge");
        assert_eq!(scalars(merge.2).last(), Some(&64), "{connectivity}: the border merge's item rows");
        let offsets = launches.iter().find(|(k, _, _)| *k == "tuf_item_offsets").expect("item offsets");
        assert!(offsets.1.global[0] >= 7, "{connectivity}: item offsets over {:?}", offsets.1.global);
        assert_eq!(scalars(offsets.2)[..2], [300 * 64, 6], "{connectivity}: item pixels and items");
        let ranked = launches.iter().find(|(k, _, _)| *k == "tuf_compress_ranked_2d").expect("pass 3");
        assert_eq!(scalars(ranked.2).last(), Some(&64), "{connectivity}: pass 3's item rows");
        let order: Vec<&str> = launches.iter().map(|(k, _, _)| *k).collect();
        let at = |name: &str| order.iter().position(|k| *k == name).unwrap();
        assert!(at("tuf_item_offsets") < at("tuf_compress_ranked_2d"), "{order:?}");
    }
    let uneven = Shape::image(300, 6 * 40);
    assert!(record_stacked(Algorithm::TUF, Connectivity::Eight, uneven, 6, CUDA).unwrap().is_none());
    assert!(record_stacked(Algorithm::UF, Connectivity::Eight, Shape::image(300, 128), 2, CUDA).unwrap().is_none());
}
