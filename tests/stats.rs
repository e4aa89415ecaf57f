//! Component statistics (area, bounding box, centroid) on every device, exact against the host
//! reference computed from the CPU reference's consecutive labels: every conformance image and
//! a few more, volumes, raw labels of both conventions, shapes that cut the kernel's row
//! segments, components that span many rows and slices, no component at all. One test per
//! device (`cargo test --test stats -- ::cuda` runs the CUDA ones).

mod common;

use std::sync::OnceLock;

use ccl::testing::Stages;
use ccl::{
    random_volume, reference, Algorithm, AnyLabeler, BinaryImage, ComponentStat, ComponentStats, Connectivity,
    DeviceImage, DeviceLabels, Labeler, Options, Shape, Stats, Timings,
};
use common::images::{random, rings, spiral};

/// Statistics the reference gives for an image's consecutive labels.
fn expected_image(image: &BinaryImage, connectivity: Connectivity) -> ComponentStats {
    let (labels, n) = reference::label(image, connectivity).into_consecutive();
    ComponentStats::of_labels(labels.values(), Shape::image(image.width(), image.height()), n)
}

#[test]
fn the_reference_statistics_are_those_of_the_labels() {
    // Two components: an L of 4 pixels and a single pixel.
    let image = BinaryImage::image_from_fn(5, 4, |x, y| (x == 1 && y <= 2) || (y == 2 && x == 2) || (x == 4 && y == 3))
        .unwrap();
    let stats = expected_image(&image, Connectivity::Four);
    assert_eq!(
        stats.components,
        vec![
            ComponentStat { left: 1, top: 0, front: 0, width: 2, height: 3, depth: 1, area: 4, sums: [5, 5, 0] },
            ComponentStat { left: 4, top: 3, front: 0, width: 1, height: 1, depth: 1, area: 1, sums: [4, 3, 0] },
        ]
    );
    assert_eq!(stats.components[0].centroid(), [1.25, 1.25, 0.0]);
    // A volume: one voxel at (2, 1, 3) and a column along z.
    let volume = BinaryImage::volume_from_fn(3, 2, 5, |x, y, z| (x, y, z) == (2, 1, 3) || (x == 0 && y == 0)).unwrap();
    let (labels, n) = reference::label_volume(&volume, Connectivity::Six).unwrap().to_consecutive();
    let stats = ComponentStats::of_labels(labels.values(), volume.shape(), n);
    assert_eq!(
        stats.components[0],
        ComponentStat { left: 0, top: 0, front: 0, width: 1, height: 1, depth: 5, area: 5, sums: [0, 0, 10] }
    );
    assert_eq!(stats.components[1].sums, [2, 1, 3]);
}

fn images() -> Vec<(String, BinaryImage)> {
    // The large conformance images (megapixels) in full mode only (common::full_mode).
    let mut cases = common::images::conformance_cases();
    if common::full_mode() {
        cases.extend(common::images::large_conformance_cases());
    }
    let mut out: Vec<(String, BinaryImage)> = cases.into_iter().map(|c| (c.name, c.image)).collect();
    out.extend([
        ("1x1 background".to_string(), BinaryImage::image_from_fn(1, 1, |_, _| false).unwrap()),
        ("1x1 foreground".to_string(), BinaryImage::image_from_fn(1, 1, |_, _| true).unwrap()),
        ("1x70".to_string(), random(1, 70, 60, 1, 3)),
        ("70x1".to_string(), random(70, 1, 60, 1, 4)),
        ("all foreground 97x33".to_string(), BinaryImage::image_from_fn(97, 33, |_, _| true).unwrap()),
        ("spiral".to_string(), spiral(61)),
        ("rings".to_string(), rings(83, 47)),
    ]);
    for (density, granularity) in [(10, 1), (45, 1), (70, 2), (90, 1)] {
        out.push((format!("131x77 d{density} g{granularity}"), random(131, 77, density, granularity, density)));
    }
    // Wider than one accumulating work-group (512 columns): groups away from the origin, a
    // giant component over many groups, and groups meeting more components than their table
    // holds (64).
    for (density, seed) in [(10, 11), (45, 12), (60, 13)] {
        out.push((format!("2100x45 d{density}"), random(2100, 45, density, 1, seed)));
    }
    // Work-groups' spans (512 x 8 pixels) crowded far past their table (64 slots), so that most
    // hand-overs go to the global entries: isolated dots (1024 components a span), a checkerboard
    // at 4-connectivity (2048), and columns crossing every span's top and bottom rows (256
    // components a span, each over several spans).
    out.extend([
        ("dots 1030x37".to_string(), BinaryImage::image_from_fn(1030, 37, |x, y| x % 2 == 0 && y % 2 == 0).unwrap()),
        ("checkerboard 1030x37".to_string(), BinaryImage::image_from_fn(1030, 37, |x, y| (x + y) % 2 == 0).unwrap()),
        (
            "columns 1030x37".to_string(),
            BinaryImage::image_from_fn(1030, 37, |x, y| x % 2 == 0 && y % 19 != 18).unwrap(),
        ),
    ]);
    out
}

/// How a test labels an array on the device into consecutive labels and their statistics.
type LabelWithStats = fn(&mut AnyLabeler, &DeviceImage, Connectivity) -> (DeviceLabels, ComponentStats, Timings);

/// Labels every image of [`images`] (with each 2D connectivity of `algorithms`) and a few random
/// volumes (each 3D one) with `label`, one labeler per algorithm on device `d`, and lists where
/// the statistics, the labels (the reference's consecutive ones) or their numbering differ;
/// returns those and the number of runs.
fn statistics_mismatches(
    d: &common::TestDevice,
    algorithms: &[Algorithm],
    label: LabelWithStats,
) -> (Vec<String>, usize) {
    let (mut failures, mut runs) = (Vec::new(), 0);
    for &algorithm in algorithms {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for connectivity in algorithm.connectivities().iter().copied() {
            let arrays: Vec<(String, DeviceImage, Vec<u32>, u32)> = if connectivity.dims() == 2 {
                images()
                    .into_iter()
                    .map(|(name, image)| {
                        let (want, n) = reference::label(&image, connectivity).into_consecutive();
                        (name, labeler.upload(&image).expect("upload"), want.values().to_vec(), n)
                    })
                    .collect()
            } else {
                // (The last three have heights of whole work-groups of rows, 8 and 16: every
                // group's rows lie in one slice, so volumes use the groups' tables too.)
                [
                    (1, 1, 1, 100),
                    (37, 9, 11, 30),
                    (40, 33, 21, 60),
                    (2, 3, 70, 50),
                    (65, 17, 9, 0),
                    (40, 16, 9, 60),
                    (33, 8, 20, 20),
                    (600, 8, 3, 40),
                ]
                .into_iter()
                .map(|(w, h, dd, density)| {
                    let volume = random_volume(w, h, dd, density, 1, w as u32 + density).unwrap();
                    let (want, n) = reference::label_volume(&volume, connectivity).unwrap().to_consecutive();
                    let on_device = labeler.upload(&volume).expect("upload");
                    (format!("{w}x{h}x{dd}"), on_device, want.values().to_vec(), n)
                })
                .collect()
            };
            for (name, on_device, want, n) in arrays {
                let (labels, stats, timings) = label(&mut labeler, &on_device, connectivity);
                let case = format!("{} {algorithm} {connectivity} {name}", d.token);
                if stats != ComponentStats::of_labels(&want, on_device.shape(), n) {
                    failures.push(format!("{case}: statistics differ"));
                }
                let mut got = vec![0u32; want.len()];
                labeler.download_into(&labels, &mut got).expect("download");
                if labels.numbering() != Some(ccl::Numbering::Consecutive(n)) || got != want {
                    failures.push(format!("{case}: labels differ"));
                }
                if n > 0 && !timings.phases.iter().any(|p| p.phase == ccl::Phase::ComponentStats) {
                    failures.push(format!("{case}: no statistics phase"));
                }
                runs += 1;
            }
        }
    }
    (failures, runs)
}

device_tests! {
    device_statistics_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    labeling_with_statistics_equals_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    statistics_tables_grow_and_shrink_with_the_component_count: [cpu, opencl_cpu, opencl_gpu, cuda],
    relabeling_and_statistics_past_one_scan_level: [cpu, opencl_cpu, opencl_gpu, cuda],
    small_components_are_removed_and_the_largest_kept: [cpu, opencl_cpu, opencl_gpu, cuda],
    opencv_tables_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn device_statistics_equal_the_reference(d: &common::TestDevice) {
    // UF gives first-pixel raw labels, BKE first-block ones: component_stats renumbers both
    // first, in place (the host's consecutive labels).
    let (failures, runs) = statistics_mismatches(d, &[Algorithm::UF, Algorithm::BKE], |labeler, on_device, c| {
        let (mut labels, _) = labeler.label_on_device(on_device, c).expect("label");
        let (stats, timings) = labeler.component_stats(&mut labels).expect("stats");
        (labels, stats, timings)
    });
    assert!(failures.is_empty(), "{} of {runs} differ:\n{}", failures.len(), failures.join("\n"));
}

/// Labels with statistics in one call (`run` with `Stats::Components`: the statistics kernels run
/// before N is read back, on a table sized by the labeler's last calls): TUF (renumbering in its
/// last pass) and UF (labeling, then relabeling), images and volumes, every connectivity, one
/// labeler per algorithm across all shapes, so that tables both too small and far too large
/// for the next N are met; the reference's consecutive labels and statistics every time.
fn labeling_with_statistics_equals_the_reference(d: &common::TestDevice) {
    let (failures, runs) = statistics_mismatches(d, &[Algorithm::TUF, Algorithm::UF], |labeler, on_device, c| {
        let run = labeler.run(on_device, &Options::new(c).stats(Stats::Components)).expect("label with stats");
        (run.labels, run.stats.expect("asked for"), run.timings)
    });
    assert!(failures.is_empty(), "{} of {runs} differ:\n{}", failures.len(), failures.join("\n"));
}

/// A labeler's statistics table outgrown (N above the capacity its last calls left: the kernels
/// run again on a larger table) and far too large (it shrinks back): every result exact.
fn statistics_tables_grow_and_shrink_with_the_component_count(d: &common::TestDevice) {
    // Components: a few (the first table holds 72, one per two pixels of the 16x9 image), then
    // thousands (past it, and past the room the second image leaves), a few again (the table
    // shrinks back), then many more at once.
    let sequence = [
        random(16, 9, 30, 1, 1),
        random(300, 200, 10, 1, 2),
        random(700, 500, 10, 1, 3),
        random(40, 30, 10, 1, 4),
        random(1500, 900, 10, 1, 5),
    ];
    let mut labeler = d.device.labeler(Algorithm::TUF).expect("labeler");
    for (k, image) in sequence.iter().enumerate() {
        let on_device = labeler.upload(image).expect("upload");
        let options = Options::new(Connectivity::Eight).stats(Stats::Components);
        let run = labeler.run(&on_device, &options).expect("label with stats");
        let (labels, stats) = (run.labels, run.stats.expect("asked for"));
        let (want, n) = reference::label(image, Connectivity::Eight).into_consecutive();
        assert_eq!(stats, ComponentStats::of_labels(want.values(), on_device.shape(), n), "{} image {k}", d.token);
        assert_eq!(labeler.download(&labels).expect("download").values(), want.values(), "{} image {k}", d.token);
    }
}

/// An image of more pixels than one level of the relabeling's scan covers (1024 rank spans of
/// 8192 pixels), so the span counts are scanned over two levels: the consecutive labels and the
/// statistics still equal the host's, for both raw-label conventions and for TUF's own ranking.
fn relabeling_and_statistics_past_one_scan_level(d: &common::TestDevice) {
    // The image and the reference's consecutive labels, count and statistics, once per process.
    static CASE: OnceLock<(BinaryImage, ccl::LabelImage, u32, ComponentStats)> = OnceLock::new();
    let (image, want_labels, n, want_stats) = CASE.get_or_init(|| {
        let image = random(4100, 2100, 30, 1, 41);
        let (want_labels, n) = reference::label(&image, Connectivity::Eight).into_consecutive();
        let want_stats = ComponentStats::of_labels(want_labels.values(), Shape::image(4100, 2100), n);
        (image, want_labels, n, want_stats)
    });
    let n = *n;
    assert!(image.width() * image.height() > 1024 * 8192);
    for algorithm in [Algorithm::UF, Algorithm::BKE_IC] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        let on_device = labeler.upload(image).expect("upload");
        let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
        let (count, _) = labeler.relabel(&mut labels).expect("relabel");
        assert_eq!(count, n, "{} {algorithm}: count", d.token);
        let got = labeler.download(&labels).expect("download");
        assert!(got.values() == want_labels.values(), "{} {algorithm}: consecutive labels differ", d.token);
        let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
        let (stats, _) = labeler.component_stats(&mut labels).expect("stats");
        assert!(stats == *want_stats, "{} {algorithm}: statistics differ", d.token);
        let got = labeler.download(&labels).expect("download");
        assert!(got.values() == want_labels.values(), "{} {algorithm}: labels after statistics differ", d.token);
    }
    // TUF ranks its own roots (from the root marks of its 8-tile kernel, which an image this
    // size takes) into consecutive labels, and statistics follow from them.
    let mut tuf = d.device.labeler(Algorithm::TUF).expect("labeler");
    let on_device = tuf.upload(image).expect("upload");
    let run = tuf.run(&on_device, &Options::new(Connectivity::Eight).consecutive()).expect("label");
    let (labels, count) = (run.labels, run.count);
    assert_eq!(count, Some(n), "{} TUF: count", d.token);
    let got = tuf.download(&labels).expect("download");
    assert!(got.values() == want_labels.values(), "{} TUF: consecutive labels differ", d.token);
    let run = tuf.run(&on_device, &Options::new(Connectivity::Eight).stats(Stats::Components)).expect("stats");
    let (labels, stats) = (run.labels, run.stats.expect("asked for"));
    assert!(stats == *want_stats, "{} TUF: statistics differ", d.token);
    let got = tuf.download(&labels).expect("download");
    assert!(got.values() == want_labels.values(), "{} TUF: labels with statistics differ", d.token);
}

/// Consecutive labels with only the components `keep` selects, renumbered in label order.
fn kept_labels(labels: &[u32], keep: &[bool]) -> Vec<u32> {
    let mut next = 0;
    let map: Vec<u32> = keep
        .iter()
        .map(|&k| {
            next += u32::from(k);
            if k {
                next
            } else {
                0
            }
        })
        .collect();
    labels.iter().map(|&l| if l == 0 { 0 } else { map[l as usize - 1] }).collect()
}

fn small_components_are_removed_and_the_largest_kept(d: &common::TestDevice) {
    let mut failures = Vec::new();
    let mut labeler = d.device.labeler(Algorithm::BKE).expect("labeler");
    for (name, image) in [("131x77 d45", random(131, 77, 45, 1, 7)), ("rings", rings(83, 47))] {
        let (want, n) = reference::label(&image, Connectivity::Eight).into_consecutive();
        let shape = Shape::image(image.width(), image.height());
        let all = ComponentStats::of_labels(want.values(), shape, n);
        for (how, keep) in
            [("at least 5", all.at_least(5)), ("largest 3", all.largest(3)), ("none", vec![false; all.len()])]
        {
            let on_device = labeler.upload(&image).expect("upload");
            let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
            let (stats, _) = labeler.component_stats(&mut labels).expect("stats");
            assert_eq!(stats, all, "{} {name}", d.token);
            let (m, _) = labeler.keep_components(&mut labels, &keep).expect("keep");
            let got = labeler.download(&labels).expect("download");
            let expected = kept_labels(want.values(), &keep);
            if got.values() != expected.as_slice() || m as usize != keep.iter().filter(|&&k| k).count() {
                failures.push(format!("{} {name} {how}: labels differ", d.token));
            }
            // The kept components' statistics are the filtered list.
            if ComponentStats::of_labels(got.values(), shape, m) != all.kept(&keep) {
                failures.push(format!("{} {name} {how}: statistics of the kept labels differ", d.token));
            }
        }
        // Raw labels, or a keep list of another length, are refused.
        let on_device = labeler.upload(&image).expect("upload");
        let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
        assert!(matches!(labeler.keep_components(&mut labels, &[true]), Err(ccl::Error::InvalidParameter { .. })));
        labeler.relabel(&mut labels).expect("relabel");
        assert!(matches!(labeler.keep_components(&mut labels, &[true]), Err(ccl::Error::InvalidParameter { .. })));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The two tables' rows as the reference gives them, bit for bit (centroids by their bits: the
/// background of an array without one has NaN there).
fn same_opencv(got: &ccl::OpenCvStats, want: &ccl::OpenCvStats) -> bool {
    let bits = |t: &ccl::OpenCvStats| t.centroids.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
    got.rows == want.rows && got.dims == want.dims && got.stats == want.stats && bits(got) == bits(want)
}

/// OpenCV's tables (row 0 the background, its box from the faces or, where a face is all
/// foreground, from every pixel) built on each device equal the host's, for images (every
/// conformance image, frames of foreground around background, no background at all) and
/// volumes, from raw labels of both conventions.
fn opencv_tables_equal_the_reference(d: &common::TestDevice) {
    let mut inputs = images();
    // Foreground frames of widths 1 and 3 (every face foreground), and one open at the right.
    for (frame, open_right) in [(1, false), (3, false), (2, true)] {
        let image = BinaryImage::image_from_fn(40, 30, |x, y| {
            let edge = x < frame || y < frame || y >= 30 - frame || (!open_right && x >= 40 - frame);
            edge || (x * 7 + y * 3) % 11 == 0
        })
        .unwrap();
        inputs.push((format!("frame {frame} open {open_right}"), image));
    }
    let mut volumes: Vec<(String, BinaryImage)> = Vec::new();
    for (w, h, d, density) in [(1, 1, 1, 100), (37, 9, 11, 30), (40, 33, 21, 60), (2, 3, 70, 50), (9, 8, 7, 100)] {
        let volume = random_volume(w, h, d, density, 1, w as u32 + density).unwrap();
        volumes.push((format!("{w}x{h}x{d} d{density}"), volume));
    }
    // A shell of foreground voxels around background.
    let shell = BinaryImage::volume_from_fn(12, 10, 8, |x, y, z| {
        x == 0 || y == 0 || z == 0 || x == 11 || y == 9 || z == 7 || (x + y + z) % 5 == 0
    })
    .unwrap();
    volumes.push(("shell 12x10x8".to_string(), shell));
    let mut failures = Vec::new();
    let mut runs = 0;
    for algorithm in [Algorithm::UF, Algorithm::BKE] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        let mut check =
            |labeler: &mut ccl::AnyLabeler, name: &str, labels: &mut ccl::DeviceLabels, want: ccl::OpenCvStats| {
                let (got, _) = labeler.opencv_stats(labels, want.dims as u8).expect("OpenCV tables");
                if !same_opencv(&got, &want) {
                    failures.push(format!("{} {algorithm} {name}: tables differ", d.token));
                }
            };
        for connectivity in algorithm.connectivities().iter().copied() {
            if connectivity.dims() == 2 {
                // Images as 2D arrays, and as volumes of one slice (z columns: 0, 1, 0).
                for ((name, image), dims) in inputs.iter().flat_map(|i| [(i, 2), (i, 3)]) {
                    let on_device = labeler.upload(image).expect("upload");
                    let (mut labels, _) = labeler.label_on_device(&on_device, connectivity).expect("label");
                    let (want, n) = reference::label(image, connectivity).into_consecutive();
                    let shape = Shape::image(image.width(), image.height());
                    let want = ccl::OpenCvStats::of_labels(want.values(), shape, dims, n);
                    check(&mut labeler, &format!("{connectivity} {name} dims {dims}"), &mut labels, want);
                    runs += 1;
                }
            } else {
                for (name, volume) in &volumes {
                    let on_device = labeler.upload(volume).expect("upload");
                    let (mut labels, _) = labeler.label_on_device(&on_device, connectivity).expect("label");
                    let (want, n) = reference::label_volume(volume, connectivity).unwrap().to_consecutive();
                    let dims = usize::from(volume.shape().dims());
                    let want = ccl::OpenCvStats::of_labels(want.values(), volume.shape(), dims, n);
                    check(&mut labeler, &format!("{connectivity} {name}"), &mut labels, want);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 0);
    assert!(failures.is_empty(), "{} of {runs} differ:\n{}", failures.len(), failures.join("\n"));
}
