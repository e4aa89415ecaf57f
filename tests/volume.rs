//! Volumes: the 3D CPU reference (6-, 18- and 26-connectivity) against an independent flood
//! fill, its raw label convention, degenerate shapes, .npy files and typed errors; Hilbert curve
//! volumes (one simple path); then every 3D algorithm on every device against the reference,
//! raw labels and consecutive ones, on degenerate shapes, random volumes, Hilbert volumes (whole
//! and cut) and stacks of real pages, one test per device (`cargo test --test volume -- ::cuda`
//! runs the CUDA ones).

mod common;

use std::collections::VecDeque;

use ccl::reference::{label_volume, label_volume_as, volume_partition_difference};
use ccl::testing::Stages;
use ccl::{
    hilbert_point, hilbert_side, hilbert_volume, random_volume, Algorithm, BinaryImage, Connectivity, Error,
    LabelImage, Labeler, Options, MAX_HILBERT_ORDER,
};

/// Labels by breadth-first flood fill from each unlabeled foreground voxel in raster order, with
/// the neighbourhood spelled out: a voxel's label is its component's first voxel index + 1.
fn flood_fill(volume: &BinaryImage, connectivity: Connectivity) -> LabelImage {
    let s = volume.shape();
    let (w, h, d) = (s.width as isize, s.height as isize, s.depth as isize);
    let most = match connectivity {
        Connectivity::Six => 1,
        Connectivity::Eighteen => 2,
        Connectivity::TwentySix => 3,
        _ => unreachable!("volumes only"),
    };
    let mut offsets = Vec::new();
    for dz in -1isize..=1 {
        for dy in -1isize..=1 {
            for dx in -1isize..=1 {
                let n = (dx != 0) as usize + (dy != 0) as usize + (dz != 0) as usize;
                if n >= 1 && n <= most {
                    offsets.push((dx, dy, dz));
                }
            }
        }
    }
    let mut labels = vec![0u32; s.len()];
    let index = |x: isize, y: isize, z: isize| ((z * h + y) * w + x) as usize;
    for start in 0..s.len() {
        if volume.values()[start] == 0 || labels[start] != 0 {
            continue;
        }
        let label = start as u32 + 1;
        labels[start] = label;
        let mut queue = VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            let (x, y, z) = ((i as isize) % w, (i as isize) / w % h, (i as isize) / (w * h));
            for &(dx, dy, dz) in &offsets {
                let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                if nx < 0 || ny < 0 || nz < 0 || nx >= w || ny >= h || nz >= d {
                    continue;
                }
                let n = index(nx, ny, nz);
                if volume.values()[n] != 0 && labels[n] == 0 {
                    labels[n] = label;
                    queue.push_back(n);
                }
            }
        }
    }
    LabelImage::volume(s.width, s.height, s.depth, labels).unwrap()
}

#[test]
fn the_reference_equals_a_flood_fill_with_its_raw_labels() {
    let shapes = [(1, 1, 1), (1, 7, 1), (7, 1, 1), (1, 1, 7), (5, 1, 9), (7, 6, 5), (16, 9, 12), (33, 2, 17)];
    let mut runs = 0;
    for (seed, &(w, h, d)) in shapes.iter().enumerate() {
        for density in [0, 10, 40, 55, 70, 90, 100] {
            for granularity in [1, 2, 3] {
                let volume = random_volume(w, h, d, density, granularity, seed as u32 * 100 + density).unwrap();
                for connectivity in Connectivity::VOLUMETRIC {
                    let got = label_volume(&volume, connectivity).unwrap();
                    let expected = flood_fill(&volume, connectivity);
                    // Equal raw labels: the same partition and the first-voxel convention.
                    assert_eq!(
                        got,
                        expected,
                        "{w}x{h}x{d} density {density} granularity {granularity} {connectivity}: {:?}",
                        volume_partition_difference(&expected, &got)
                    );
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 8 * 7 * 3 * 3);
}

#[test]
fn connectivities_differ_as_faces_edges_and_corners() {
    // Two voxels sharing a face, an edge, a corner: one component or two.
    let pair = |x: usize, y: usize, z: usize| {
        BinaryImage::volume_from_fn(2, 2, 2, |a, b, c| (a, b, c) == (0, 0, 0) || (a, b, c) == (x, y, z)).unwrap()
    };
    let count = |v: &BinaryImage, c| label_volume(v, c).unwrap().component_count();
    let (face, edge, corner) = (pair(1, 0, 0), pair(1, 1, 0), pair(1, 1, 1));
    assert_eq!([count(&face, Connectivity::Six), count(&face, Connectivity::Eighteen)], [1, 1]);
    assert_eq!([count(&edge, Connectivity::Six), count(&edge, Connectivity::Eighteen)], [2, 1]);
    assert_eq!([count(&corner, Connectivity::Eighteen), count(&corner, Connectivity::TwentySix)], [2, 1]);
    assert_eq!(count(&edge, Connectivity::TwentySix), 1);
}

#[test]
fn nested_shells_are_one_component_each() {
    // Cubic shells at Chebyshev distances 1, 3, 5, 7 from the centre, one voxel apart.
    for n in [17, 18] {
        for connectivity in Connectivity::VOLUMETRIC {
            let count = label_volume(&nested_shells(n), connectivity).unwrap().component_count();
            assert_eq!(count, 4, "{n}^3 {connectivity}");
        }
    }
}

#[test]
fn one_slice_is_labeled_as_the_image_it_holds() {
    let volume = random_volume(40, 30, 1, 50, 1, 7).unwrap();
    let image = BinaryImage::image(40, 30, volume.values().to_vec()).unwrap();
    for (three, two) in [
        (Connectivity::Six, Connectivity::Four),
        (Connectivity::Eighteen, Connectivity::Eight),
        (Connectivity::TwentySix, Connectivity::Eight),
    ] {
        let v = label_volume(&volume, three).unwrap();
        assert_eq!(v.values(), ccl::reference::label(&image, two).values(), "{three}");
    }
}

#[test]
fn bad_volumes_and_connectivities_are_typed_errors() {
    assert!(matches!(BinaryImage::volume(0, 3, 3, vec![]), Err(Error::EmptyVolume { .. })));
    assert!(matches!(BinaryImage::volume(2, 2, 2, vec![1; 7]), Err(Error::VolumeSizeMismatch { len: 7, .. })));
    assert!(matches!(random_volume(1 << 11, 1 << 11, 1 << 11, 50, 1, 1), Err(Error::TooManyVoxels { .. })));
    assert!(matches!(random_volume(4, 4, 4, 101, 1, 1), Err(Error::InvalidParameter { .. })));
    let volume = random_volume(4, 4, 4, 50, 1, 1).unwrap();
    for connectivity in Connectivity::PLANAR {
        let err = label_volume(&volume, connectivity).unwrap_err();
        assert!(matches!(err, Error::ConnectivityDimensions { .. }), "{err}");
        assert!(err.to_string().contains("use 6, 18 or 26"), "{err}");
    }
}

#[test]
fn random_volumes_are_reproducible_and_follow_their_density() {
    let a = random_volume(30, 20, 10, 30, 2, 42).unwrap();
    assert_eq!(a, random_volume(30, 20, 10, 30, 2, 42).unwrap());
    assert_ne!(a, random_volume(30, 20, 10, 30, 2, 43).unwrap());
    let full = random_volume(64, 64, 64, 30, 1, 5).unwrap();
    let fraction = full.values().iter().filter(|&&v| v != 0).count() as f64 / full.values().len() as f64;
    assert!((fraction - 0.30).abs() < 0.01, "{fraction}");
}

/// A fresh, empty folder for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ccl-volume-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn npy_volumes_round_trip_as_numpy_writes_them() {
    let dir = scratch("npy");
    let volume = random_volume(7, 5, 3, 50, 1, 9).unwrap();
    for descr in ["|u1", "|b1"] {
        let path = dir.join(format!("in-{}.npy", &descr[1..]));
        std::fs::write(&path, common::npy_bytes(descr, &[3, 5, 7], false, volume.values())).unwrap();
        assert_eq!(ccl::io::read_volume_npy(&path, ccl::MAX_PIXELS).unwrap(), volume, "{descr}");
    }
    let labels = label_volume(&volume, Connectivity::TwentySix).unwrap();
    let out = dir.join("labels.npy");
    ccl::io::write_volume_npy(&out, &labels).unwrap();
    let npy = npyz::NpyFile::new(std::fs::File::open(&out).unwrap()).unwrap();
    assert_eq!(npy.shape(), &[3, 5, 7]);
    assert_eq!(npy.into_vec::<u32>().unwrap(), labels.values());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Masks and label images saved from NumPy in any integer type (either byte order) or float type
/// read as the same volume, nonzero as foreground: a value whose only nonzero byte is its last
/// (or first) counts, -0.0 is background and NaN foreground, as `scipy.ndimage.label` takes them.
#[test]
fn npy_masks_of_every_integer_and_float_type_read_as_nonzero() {
    let dir = scratch("types");
    let volume = random_volume(7, 5, 3, 50, 1, 10).unwrap();
    let shape = [3, 5, 7];
    // Each element: foreground a value with one nonzero byte at `byte` (of `size`), else zero.
    let bytes_of = |size: usize, byte: usize| -> Vec<u8> {
        volume
            .values()
            .iter()
            .flat_map(|&v| (0..size).map(move |b| if v != 0 && b == byte { 0x40 } else { 0 }))
            .collect()
    };
    for size in [1, 2, 4, 8] {
        for kind in ['u', 'i'] {
            for order in ['<', '>'] {
                for byte in [0, size - 1] {
                    let descr = if size == 1 { format!("|{kind}1") } else { format!("{order}{kind}{size}") };
                    let path = dir.join(format!("{kind}{size}{}-{byte}.npy", if order == '<' { "le" } else { "be" }));
                    std::fs::write(&path, common::npy_bytes(&descr, &shape, false, &bytes_of(size, byte))).unwrap();
                    let read = ccl::io::read_volume_npy(&path, ccl::MAX_PIXELS).unwrap();
                    assert!(read.values().iter().zip(volume.values()).all(|(r, v)| (*r != 0) == (*v != 0)), "{descr}");
                }
            }
        }
    }
    let floats: Vec<(String, Vec<u8>)> = vec![
        (
            "<f4".into(),
            volume.values().iter().flat_map(|&v| if v != 0 { f32::NAN } else { -0.0f32 }.to_le_bytes()).collect(),
        ),
        (">f4".into(), volume.values().iter().flat_map(|&v| if v != 0 { 0.5f32 } else { 0.0 }.to_be_bytes()).collect()),
        (
            "<f8".into(),
            volume.values().iter().flat_map(|&v| if v != 0 { -1e-300f64 } else { -0.0 }.to_le_bytes()).collect(),
        ),
        (
            ">f8".into(),
            volume.values().iter().flat_map(|&v| if v != 0 { f64::INFINITY } else { 0.0 }.to_be_bytes()).collect(),
        ),
    ];
    for (descr, data) in floats {
        let path = dir.join(format!("float-{}.npy", descr.replace(['<', '>'], "")));
        std::fs::write(&path, common::npy_bytes(&descr, &shape, false, &data)).unwrap();
        let read = ccl::io::read_volume_npy(&path, ccl::MAX_PIXELS).unwrap();
        assert!(read.values().iter().zip(volume.values()).all(|(r, v)| (*r != 0) == (*v != 0)), "{descr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn npy_files_that_are_no_volume_are_typed_errors() {
    let dir = scratch("bad");
    for (name, bytes, says) in [
        ("flat", common::npy_bytes("|u1", &[4, 4], false, &[0; 16]), "three axes"),
        ("line", common::npy_bytes("|u1", &[4], false, &[0; 4]), "two axes"),
        (
            "complex",
            common::npy_bytes("<c8", &[1, 1, 1], false, &[0; 8]),
            "a mask is bool, an integer type or float32/float64",
        ),
        ("float16", common::npy_bytes("<f2", &[1, 1, 1], false, &[0; 2]), "elements of type '<f2'"),
        ("ragged", common::npy_bytes("<u2", &[1, 1, 2], false, &[0; 5]), "holds 2 values"),
        ("short", common::npy_bytes("|u1", &[1, 1, 100], false, &[0; 50]), "holds 50 values"),
        ("long", common::npy_bytes("|u1", &[1, 2, 2], false, &[0; 5]), "has 4"),
        ("text", b"not numpy".to_vec(), "not a .npy"),
    ] {
        let path = dir.join(format!("{name}.npy"));
        std::fs::write(&path, bytes).unwrap();
        let err = ccl::io::read_volume_npy(&path, ccl::MAX_PIXELS).unwrap_err();
        assert!(matches!(err, Error::FileRead { .. }) && err.to_string().contains(says), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The algorithms that label volumes.
fn volume_algorithms() -> Vec<Algorithm> {
    Algorithm::ALL.iter().copied().filter(|a| a.connectivities().iter().any(|c| c.dims() == 3)).collect()
}

/// Volumes of awkward shapes: single voxels and lines along each axis (odd and even lengths),
/// one slice, thin slabs, sizes that are and are not multiples of the 8 x 8 x 4 tiles or of
/// 2x2x2 blocks (odd sides put a lone corner voxel in a block of its own, with one, two or three
/// coordinates above 0), a few tiles in each direction, all background, all foreground, nested
/// shells and a long snake.
fn test_volumes() -> Vec<(String, BinaryImage)> {
    let shapes = [
        (1, 1, 1),
        (1, 9, 1),
        (1, 8, 1),
        (9, 1, 1),
        (1, 1, 9),
        (1, 1, 8),
        (2, 2, 2),
        (13, 11, 1),
        (20, 17, 2),
        (1, 12, 9),
        (12, 1, 9),
        (8, 8, 4),
        (16, 8, 8),
        (1, 11, 7),
        (11, 1, 7),
        (13, 11, 7),
        (16, 8, 6),
        (17, 9, 10),
        (40, 33, 21),
    ];
    let mut out = Vec::new();
    for (seed, &(w, h, d)) in shapes.iter().enumerate() {
        for (density, granularity) in [(10, 1), (50, 1), (90, 1), (45, 2)] {
            let volume = random_volume(w, h, d, density, granularity, seed as u32 * 10 + density).unwrap();
            out.push((format!("{w}x{h}x{d} density {density} granularity {granularity}"), volume));
        }
    }
    // The density x granularity grid on one odd shape.
    for density in (0..=100).step_by(20) {
        for granularity in [1, 2, 3, 4] {
            let volume = random_volume(19, 14, 11, density, granularity, 77 * density + granularity as u32).unwrap();
            out.push((format!("19x14x11 density {density} granularity {granularity}"), volume));
        }
    }
    // Several of TUF's 32 x 16 x 16 regions along each axis, whole and cut.
    for (w, h, d, density) in [(64, 32, 32, 50), (70, 35, 40, 30), (70, 35, 40, 60)] {
        let volume = random_volume(w, h, d, density, 1, 91 + density).unwrap();
        out.push((format!("{w}x{h}x{d} density {density} granularity 1"), volume));
    }
    // Regions of few and of many components side by side (TUF's pass 1 defers the labels of the
    // first to pass 3; the border merge then joins both kinds across their faces): each column of
    // regions at its own density, 10, 60, 95 %, and one region cut by the edge.
    let mixed = |w: usize, h: usize, d: usize| {
        let noise = random_volume(w, h, d, 50, 1, 4242).unwrap();
        let mut state = 0x9E37_79B9u32;
        BinaryImage::volume_from_fn(w, h, d, |x, y, z| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let density = [10, 60, 95, 30][(x / 32) % 4];
            (state % 100) < density || (density == 30 && noise.at(x, y, z) != 0)
        })
        .unwrap()
    };
    out.push(("96x48x48 regions of 10 / 60 / 95 %".into(), mixed(96, 48, 48)));
    out.push(("100x40x36 regions of 10 / 60 / 95 / 30 %".into(), mixed(100, 40, 36)));
    for (w, h, d) in [(1, 1, 1), (2, 2, 2), (9, 8, 5), (16, 16, 8)] {
        out.push((format!("{w}x{h}x{d} background"), BinaryImage::volume_from_fn(w, h, d, |_, _, _| false).unwrap()));
        out.push((format!("{w}x{h}x{d} foreground"), BinaryImage::volume_from_fn(w, h, d, |_, _, _| true).unwrap()));
    }
    out.push(("nested shells 17x17x17".into(), nested_shells(17)));
    out.push(("nested shells 18x18x18".into(), nested_shells(18)));
    // One long path: a snake through every row of every slice.
    out.push((
        "snake 15x12x6".into(),
        BinaryImage::volume_from_fn(15, 12, 6, |x, y, z| y % 2 == 0 || x == if (y / 2 + z) % 2 == 0 { 14 } else { 0 })
            .unwrap(),
    ));
    out
}

/// Cubic shells one voxel thick and one apart around the centre of an `n`^3 cube (Chebyshev
/// distances 1, 3, 5, ... from the centre voxel, or from the centre corner for even `n`).
fn nested_shells(n: usize) -> BinaryImage {
    BinaryImage::volume_from_fn(n, n, n, |x, y, z| {
        let r = [x, y, z].iter().map(|&c| (2 * c as isize + 1 - n as isize).unsigned_abs() / 2).max().unwrap();
        r % 2 == 1
    })
    .unwrap()
}

/// Labels every volume with every volume algorithm on device `d` at each connectivity it
/// supports, raw and consecutive, against the reference; returns the differences and the
/// number of labelings.
fn differences_on_the_device(d: &common::TestDevice, volumes: &[(String, BinaryImage)]) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut runs = 0;
    for &algorithm in &volume_algorithms() {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for connectivity in Connectivity::VOLUMETRIC.into_iter().filter(|&c| algorithm.supports(c)) {
            for (name, volume) in volumes {
                let expected = label_volume_as(volume, connectivity, algorithm.raw_labels()).unwrap();
                let raw = labeler.label(volume, &Options::new(connectivity)).expect("label").labels;
                if raw != expected {
                    let why = volume_partition_difference(&expected, &raw).unwrap_or("raw labels differ".into());
                    failures.push(format!("{} {algorithm} {connectivity} {name}: {why}", d.token));
                }
                let result = labeler.label(volume, &Options::new(connectivity).consecutive()).expect("label");
                let (consecutive, count) = (result.labels, result.count);
                let (want, n) = expected.to_consecutive();
                if consecutive != want || count != Some(n) {
                    failures.push(format!("{} {algorithm} {connectivity} {name}: consecutive labels differ", d.token));
                }
                runs += 1;
            }
        }
    }
    (failures, runs)
}

device_tests! {
    every_volume_algorithm_equals_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    hilbert_volumes_are_one_component: [cpu, opencl_cpu, opencl_gpu, cuda],
    stacked_real_pages_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    dimensions_and_connectivities_must_agree: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn every_volume_algorithm_equals_the_reference(d: &common::TestDevice) {
    let algorithms = volume_algorithms();
    assert!(algorithms.contains(&Algorithm::UF) && algorithms.contains(&Algorithm::UF_IC), "{algorithms:?}");
    let (failures, runs) = differences_on_the_device(d, &test_volumes());
    assert!(failures.is_empty(), "{} of {runs} labelings differ:\n{}", failures.len(), failures.join("\n"));
}

/// The Hilbert curve of `order` in its smallest cube, with the middle voxel of every `every`-th
/// segment (counted from the first) removed when `every` > 0: `cuts` pieces more.
fn cut_hilbert(order: u32, every: u64) -> (BinaryImage, u32) {
    let volume = hilbert_volume(order, hilbert_side(order)).unwrap();
    if every == 0 {
        return (volume, 0);
    }
    let side = volume.shape().width;
    let mut voxels = volume.values().to_vec();
    let mut cuts = 0;
    for segment in (0..(1u64 << (3 * order)) - 1).step_by(every as usize) {
        let (a, b) = (hilbert_point(order, segment), hilbert_point(order, segment + 1));
        // Points sit at even coordinates, the segment's middle voxel between them.
        let [x, y, z] = [0, 1, 2].map(|i| (a[i] + b[i]) as usize);
        voxels[(z * side + y) * side + x] = 0;
        cuts += 1;
    }
    (BinaryImage::volume(side, side, side, voxels).unwrap(), cuts)
}

#[test]
fn hilbert_volumes_are_one_simple_path() {
    for order in 1..=4 {
        for side in [hilbert_side(order), hilbert_side(order) + 1, hilbert_side(order) + 2] {
            let volume = hilbert_volume(order, side).unwrap();
            let step = (side - 1) / ((1 << order) - 1);
            let points = 1usize << (3 * order);
            let foreground = volume.values().iter().filter(|&&v| v != 0).count();
            assert_eq!(foreground, (points - 1) * step + 1, "order {order} side {side}");
            // A simple path: two ends with one face neighbour, every other voxel with two, and
            // no voxel touching another but along the path (one component even with corners).
            let s = side as isize;
            let on = |x: isize, y: isize, z: isize| {
                (0..s).contains(&x)
                    && (0..s).contains(&y)
                    && (0..s).contains(&z)
                    && volume.at(x as usize, y as usize, z as usize) != 0
            };
            let mut ends = 0;
            for (i, _) in volume.values().iter().enumerate().filter(|(_, &v)| v != 0) {
                let (x, y, z) = (i as isize % s, i as isize / s % s, i as isize / (s * s));
                let faces = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
                    .iter()
                    .filter(|(dx, dy, dz)| on(x + dx, y + dy, z + dz))
                    .count();
                assert!(faces == 1 || faces == 2, "order {order}: ({x}, {y}, {z}) has {faces} face neighbours");
                ends += usize::from(faces == 1);
            }
            assert_eq!(ends, if points > 1 { 2 } else { 0 }, "order {order} side {side}");
            for connectivity in Connectivity::VOLUMETRIC {
                let count = label_volume(&volume, connectivity).unwrap().component_count();
                assert_eq!(count, 1, "order {order} side {side} {connectivity}");
            }
        }
        // Cut in many places, the path falls into one piece more per cut, at any connectivity:
        // segments that do not follow each other never touch, not even at a corner.
        let (cut, cuts) = cut_hilbert(order, 7);
        for connectivity in Connectivity::VOLUMETRIC {
            assert_eq!(label_volume(&cut, connectivity).unwrap().component_count(), cuts + 1, "order {order}");
        }
    }
    for (order, side) in [(0, 5), (MAX_HILBERT_ORDER + 1, 5), (3, hilbert_side(3) - 1)] {
        let err = hilbert_volume(order, side).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { .. }), "order {order} side {side}: {err}");
    }
    assert!(matches!(hilbert_volume(9, 2000), Err(Error::TooManyVoxels { .. })));
}

fn hilbert_volumes_are_one_component(d: &common::TestDevice) {
    let mut volumes = Vec::new();
    for order in 1..=4 {
        let (whole, _) = cut_hilbert(order, 0);
        volumes.push((format!("hilbert order {order}"), whole));
        let (cut, cuts) = cut_hilbert(order, 5);
        volumes.push((format!("hilbert order {order} cut {cuts} times"), cut));
    }
    volumes.push(("hilbert order 3 in 32^3".into(), hilbert_volume(3, 32).unwrap()));
    volumes.push(("hilbert order 2 in 9^3".into(), hilbert_volume(2, 9).unwrap()));
    for (name, volume) in volumes.iter().filter(|(name, _)| !name.contains("cut")) {
        for connectivity in Connectivity::VOLUMETRIC {
            assert_eq!(label_volume(volume, connectivity).unwrap().component_count(), 1, "{name} {connectivity}");
        }
    }
    let (failures, runs) = differences_on_the_device(d, &volumes);
    assert!(failures.is_empty(), "{} of {runs} labelings differ:\n{}", failures.len(), failures.join("\n"));
}

/// Real pages stacked into volumes: `count` DIBCO pages (dark ink as foreground, gray <= 128,
/// as the image conformance tests read them), each cropped about its centre to the common
/// size, at most `most` (width, height).
fn page_stack(count: usize, most: (usize, usize)) -> Option<BinaryImage> {
    let pages = common::dibco_pages(count);
    if pages.len() < count {
        eprintln!("note: fewer than {count} DIBCO pages; the page-stack case does not run");
        return None;
    }
    let binarize = ccl::io::Binarize { threshold: Some(128.0), invert: true };
    let images: Vec<BinaryImage> = pages.iter().map(|p| ccl::io::read_binary(p, binarize).expect("page")).collect();
    let w = images.iter().map(|i| i.width()).min().unwrap().min(most.0);
    let h = images.iter().map(|i| i.height()).min().unwrap().min(most.1);
    let volume = BinaryImage::volume_from_fn(w, h, images.len(), |x, y, z| {
        let image = &images[z];
        image.is_foreground(x + (image.width() - w) / 2, y + (image.height() - h) / 2)
    })
    .unwrap();
    Some(volume)
}

fn stacked_real_pages_equal_the_reference(d: &common::TestDevice) {
    let mut volumes = Vec::new();
    for (count, most) in [(3, (257, 131)), (8, (320, 256))] {
        if let Some(volume) = page_stack(count, most) {
            let s = volume.shape();
            let fraction = volume.values().iter().filter(|&&v| v != 0).count() as f64 / s.len() as f64;
            assert!(fraction > 0.01 && fraction < 0.6, "{count} pages: {fraction} foreground");
            volumes.push((format!("{count} pages {s}"), volume));
        }
    }
    let (failures, runs) = differences_on_the_device(d, &volumes);
    assert!(failures.is_empty(), "{} of {runs} labelings differ:\n{}", failures.len(), failures.join("\n"));
}

fn dimensions_and_connectivities_must_agree(d: &common::TestDevice) {
    let volume = random_volume(9, 8, 5, 50, 1, 3).unwrap();
    let image = BinaryImage::image_from_fn(9, 8, |x, y| (x + y) % 3 == 0).unwrap();
    for &algorithm in Algorithm::ALL {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for connectivity in Connectivity::ALL {
            let on_volume = labeler.label(&volume, &Options::new(connectivity)).map(|_| ());
            let on_image = labeler.label(&image, &Options::new(connectivity)).map(|_| ());
            let context = format!("{} {algorithm} {connectivity}", d.token);
            match (connectivity.dims(), algorithm.supports(connectivity)) {
                (3, true) => {
                    on_volume.unwrap();
                    // An image is a volume of one slice.
                    on_image.unwrap();
                }
                (3, false) => {
                    assert!(matches!(on_volume, Err(Error::UnsupportedConnectivity { .. })), "{context}");
                    assert!(matches!(on_image, Err(Error::UnsupportedConnectivity { .. })), "{context}");
                }
                (_, supported) => {
                    // Refused either way: the algorithm's connectivities are checked first.
                    assert!(
                        matches!(
                            on_volume,
                            Err(Error::ConnectivityDimensions { .. } | Error::UnsupportedConnectivity { .. })
                        ),
                        "{context}"
                    );
                    assert_eq!(on_image.is_ok(), supported, "{context}");
                }
            }
        }
        // A volume on the device, deeper than a slice, refuses the connectivities of images.
        let on_device = labeler.upload(&volume).unwrap();
        let result = labeler.label_on_device(&on_device, Connectivity::Eight);
        assert!(matches!(result, Err(Error::ConnectivityDimensions { .. })), "{} {algorithm}", d.token);
    }
}
