//! `Labeler::run` and `Labeler::run_into` (issue 50): every combination of numbering,
//! statistics and filters, on new and on existing labels, on the CPU reference and on each
//! device, checked against the reference: the same partition with background 0 for raw labels,
//! and for consecutive ones the reference's labels (after the filters), their count, their
//! `ComponentStats::of_labels` and their `OpenCvStats::of_labels`. One test per device
//! (`cargo test --test pipeline -- ::cuda` runs the CUDA ones).

mod common;

use ccl::{
    random_volume, reference, Algorithm, BinaryImage, ComponentStats, Connectivity, DeviceImage, Filter,
    LabelNumbering, Labeler, OpenCvStats, Options, Shape, Stats,
};
use common::images::{random, rings, spiral};

device_tests! {
    every_option_matches_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// An input with its shape and the reference's consecutive labels and count.
struct Case {
    name: String,
    shape: Shape,
    connectivity: Connectivity,
    pixels: Vec<u8>,
    consecutive: Vec<u32>,
    count: u32,
}

fn cases() -> Vec<Case> {
    let images: Vec<(&str, BinaryImage)> = vec![
        ("empty", BinaryImage::image_from_fn(9, 7, |_, _| false).unwrap()),
        ("spiral", spiral(41)),
        ("rings", rings(83, 47)),
        ("random d45", random(131, 77, 45, 1, 7)),
        ("random d70 g2", random(70, 61, 70, 2, 8)),
    ];
    let mut out = Vec::new();
    for (name, image) in images {
        for connectivity in [Connectivity::Four, Connectivity::Eight] {
            let (labels, count) = reference::label(&image, connectivity).into_consecutive();
            out.push(Case {
                name: format!("{name} {connectivity}"),
                shape: Shape::image(image.width(), image.height()),
                connectivity,
                pixels: image.values().to_vec(),
                consecutive: labels.into_values(),
                count,
            });
        }
    }
    let volume = random_volume(23, 17, 9, 35, 1, 5).unwrap();
    for connectivity in [Connectivity::Six, Connectivity::TwentySix] {
        let (labels, count) = reference::label_volume(&volume, connectivity).unwrap().to_consecutive();
        out.push(Case {
            name: format!("volume {connectivity}"),
            shape: volume.shape(),
            connectivity,
            pixels: volume.values().to_vec(),
            consecutive: labels.values().to_vec(),
            count,
        });
    }
    out
}

/// The option sets under test: each numbering, each kind of statistics, no filter, each filter
/// and two in a row.
fn option_sets(connectivity: Connectivity, dims: u8) -> Vec<Options> {
    let filters: [&[Filter]; 4] =
        [&[], &[Filter::MinSize(3)], &[Filter::Largest(2)], &[Filter::MinSize(2), Filter::Largest(3)]];
    let mut out = Vec::new();
    for numbering in [LabelNumbering::Raw, LabelNumbering::Consecutive] {
        for stats in [Stats::None, Stats::Components, Stats::OpenCv { dims }] {
            for filters in filters {
                let options = filters
                    .iter()
                    .fold(Options::new(connectivity).numbering(numbering).stats(stats), |o, f| o.filter(*f));
                out.push(options);
            }
        }
    }
    out
}

/// The reference's consecutive labels after `filters`, and their count.
fn filtered(case: &Case, filters: &[Filter]) -> (Vec<u32>, u32) {
    let (mut labels, mut count) = (case.consecutive.clone(), case.count);
    for filter in filters {
        let stats = ComponentStats::of_labels(&labels, case.shape, count);
        let keep = match *filter {
            Filter::MinSize(n) => stats.at_least(n),
            Filter::Largest(k) => stats.largest(k),
        };
        let mut map = Vec::with_capacity(keep.len());
        let mut kept = 0;
        for k in keep {
            kept += u32::from(k);
            map.push(if k { kept } else { 0 });
        }
        for l in labels.iter_mut().filter(|l| **l != 0) {
            *l = map[*l as usize - 1];
        }
        count = kept;
    }
    (labels, count)
}

/// Whether `got` numbers the pixels as `want` does up to a renaming of labels, background 0.
fn same_partition(want: &[u32], got: &[u32]) -> bool {
    let mut forward = std::collections::HashMap::new();
    let mut backward = std::collections::HashMap::new();
    want.iter().zip(got).all(|(&w, &g)| {
        (w == 0) == (g == 0) && *forward.entry(w).or_insert(g) == g && *backward.entry(g).or_insert(w) == w
    })
}

/// The tables bit for bit (centroids by their bits: NaN for a background without pixels).
fn same_opencv(got: &OpenCvStats, want: &OpenCvStats) -> bool {
    let bits = |t: &OpenCvStats| t.centroids.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
    got.rows == want.rows && got.dims == want.dims && got.stats == want.stats && bits(got) == bits(want)
}

/// What a run returned, new labels or existing ones alike.
struct Outcome {
    labels: Vec<u32>,
    numbering: Option<ccl::Numbering>,
    count: Option<u32>,
    stats: Option<ComponentStats>,
    opencv: Option<OpenCvStats>,
}

/// Lists how `got` differs from what `options` ask of `case`.
fn check(case: &Case, options: &Options, got: &Outcome, failures: &mut Vec<String>) {
    let what = format!("{} {options:?}", case.name);
    if !options.is_consecutive() {
        if !same_partition(&case.consecutive, &got.labels) {
            failures.push(format!("{what}: raw labels are not the reference's partition"));
        }
        if got.count.is_some() || got.stats.is_some() || got.opencv.is_some() {
            failures.push(format!("{what}: raw labels came with a count or statistics"));
        }
        if !matches!(got.numbering, Some(ccl::Numbering::Raw(_))) {
            failures.push(format!("{what}: numbered {:?}", got.numbering));
        }
        return;
    }
    let (want, n) = filtered(case, &options.filters);
    if got.labels != want {
        failures.push(format!("{what}: labels differ from the reference's"));
    }
    if got.count != Some(n) || got.numbering != Some(ccl::Numbering::Consecutive(n)) {
        failures.push(format!("{what}: count {:?}, numbering {:?}, want {n}", got.count, got.numbering));
    }
    match (options.stats, &got.stats) {
        (Stats::Components, Some(stats)) if *stats == ComponentStats::of_labels(&want, case.shape, n) => {}
        (Stats::Components, _) => failures.push(format!("{what}: statistics differ")),
        (_, Some(_)) => failures.push(format!("{what}: statistics not asked for")),
        (_, None) => {}
    }
    match (options.stats, &got.opencv) {
        (Stats::OpenCv { dims }, Some(tables))
            if same_opencv(tables, &OpenCvStats::of_labels(&want, case.shape, usize::from(dims), n)) => {}
        (Stats::OpenCv { .. }, _) => failures.push(format!("{what}: OpenCV tables differ")),
        (_, Some(_)) => failures.push(format!("{what}: OpenCV tables not asked for")),
        (_, None) => {}
    }
}

fn every_option_matches_the_reference(d: &common::TestDevice) {
    let mut failures = Vec::new();
    let mut runs = 0;
    let cases = cases();
    // TUF numbers consecutively in its own last pass; UF relabels after labeling; BKE labels
    // volumes at 26-connectivity.
    for algorithm in [Algorithm::TUF, Algorithm::UF, Algorithm::BKE] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for case in cases.iter().filter(|c| algorithm.connectivities().contains(&c.connectivity)) {
            let image: DeviceImage = labeler.upload_array(case.shape, &case.pixels).expect("upload");
            // One label array reused by every run_into of this case.
            let mut reused = labeler.run(&image, &Options::new(case.connectivity)).expect("run").labels;
            for options in option_sets(case.connectivity, case.shape.dims()) {
                let run = labeler.run(&image, &options).expect("run");
                let got = Outcome {
                    labels: labeler.download(&run.labels).expect("download").into_values(),
                    numbering: run.labels.numbering(),
                    count: run.count,
                    stats: run.stats,
                    opencv: run.opencv,
                };
                check(case, &options, &got, &mut failures);
                let into = labeler.run_into(&image, &mut reused, &options).expect("run_into");
                let mut labels = vec![0u32; case.shape.len()];
                labeler.download_into(&reused, &mut labels).expect("download");
                let got = Outcome {
                    labels,
                    numbering: reused.numbering(),
                    count: into.count,
                    stats: into.stats,
                    opencv: into.opencv,
                };
                let mut into_failures = Vec::new();
                check(case, &options, &got, &mut into_failures);
                failures.extend(into_failures.into_iter().map(|f| format!("{algorithm} run_into {f}")));
                runs += 2;
            }
        }
    }
    assert!(failures.is_empty(), "{}: {} of {runs} runs failed:\n{}", d.token, failures.len(), failures.join("\n"));
}

/// Options describe themselves: statistics and filters imply consecutive labels.
#[test]
fn statistics_and_filters_imply_consecutive_labels() {
    let raw = Options::new(Connectivity::Eight);
    assert!(!raw.is_consecutive());
    assert!(raw.clone().consecutive().is_consecutive());
    assert!(raw.clone().stats(Stats::Components).is_consecutive());
    assert!(raw.clone().stats(Stats::OpenCv { dims: 2 }).is_consecutive());
    assert!(raw.clone().filter(Filter::Largest(1)).is_consecutive());
    assert_eq!(raw.filter(Filter::MinSize(2)).filter(Filter::Largest(1)).filters.len(), 2);
}

/// A volume's connectivity on an image, and an image's on a volume, are refused as labeling
/// refuses them.
#[test]
fn connectivity_of_the_wrong_dimensions_is_refused() {
    let mut labeler = ccl::CpuLabeler::new(Algorithm::UF);
    let volume = labeler.upload(&random_volume(5, 4, 3, 50, 1, 1).unwrap()).unwrap();
    let err = labeler.run(&volume, &Options::new(Connectivity::Eight)).err();
    assert!(matches!(err, Some(ccl::Error::ConnectivityDimensions { .. })), "{err:?}");
}
