//! The default algorithm and the fallback order are the measured ones: for every connectivity,
//! [`Algorithm::ranking`] lists exactly the algorithms that support it, its first (the default,
//! [`Algorithm::default_for`]) is the fastest on every device of the committed measurements
//! (`bench-results/h200/ranking/cN/results.csv`, from `bash scripts/bench-suite.sh OUT PAGES
//! ranking`), and each one after it is no faster than those before it, near-ties of 3 % aside.
//! Re-measuring writes new files; this test then says whether the ranking still holds. On every
//! device, the labeler built to choose the default is the next one asked for, and it labels.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use ccl::{reference, Algorithm, Connectivity, Labeler, Options};

/// Two algorithms within this fraction of each other may stand in either order after the first.
const NEAR_TIE: f64 = 0.03;

/// Per device, per algorithm: the geometric mean over the inputs of each input's fastest run (ms).
type Measured = BTreeMap<String, BTreeMap<Algorithm, f64>>;

fn results(connectivity: Connectivity) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("bench-results/h200/ranking")
        .join(format!("c{}", connectivity.neighbours()))
        .join("results.csv")
}

/// Reads a `ccl bench density` results file into [`Measured`], over the inputs that every
/// algorithm of a device ran.
fn measured(connectivity: Connectivity) -> Measured {
    let path = results(connectivity);
    let mut reader = csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = reader.headers().expect("a header").clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (device, algorithm, conn, image, ms) =
        (column("device_id"), column("algorithm"), column("connectivity"), column("image"), column("labeling_ms"));
    // device -> algorithm -> image -> fastest run
    let mut fastest: BTreeMap<String, BTreeMap<Algorithm, BTreeMap<String, f64>>> = BTreeMap::new();
    for row in reader.records() {
        let row = row.expect("a well-formed row");
        assert_eq!(
            row[conn].parse::<u32>().unwrap(),
            connectivity.neighbours(),
            "{}: a row of another connectivity",
            path.display()
        );
        let algorithm: Algorithm = row[algorithm].parse().expect("a known algorithm");
        let time: f64 = row[ms].parse().expect("a time");
        let runs = fastest.entry(row[device].to_string()).or_default().entry(algorithm).or_default();
        let best = runs.entry(row[image].to_string()).or_insert(f64::INFINITY);
        *best = best.min(time);
    }
    assert!(!fastest.is_empty(), "{}: no measurements", path.display());
    fastest
        .into_iter()
        .map(|(device, by_algorithm)| {
            let inputs: Vec<&String> = by_algorithm
                .values()
                .next()
                .unwrap()
                .keys()
                .filter(|image| by_algorithm.values().all(|runs| runs.contains_key(*image)))
                .collect();
            assert!(!inputs.is_empty(), "{device}: no input that every algorithm ran");
            let means = by_algorithm
                .iter()
                .map(|(&a, runs)| {
                    let log_sum: f64 = inputs.iter().map(|image| runs[*image].ln()).sum();
                    (a, (log_sum / inputs.len() as f64).exp())
                })
                .collect();
            (device, means)
        })
        .collect()
}

fn check(connectivity: Connectivity) {
    let ranking = Algorithm::ranking(connectivity);
    let mut listed: Vec<Algorithm> = ranking.to_vec();
    listed.sort_by_key(|a| a.name());
    let mut supporting: Vec<Algorithm> = Algorithm::ALL.iter().copied().filter(|a| a.supports(connectivity)).collect();
    supporting.sort_by_key(|a| a.name());
    assert_eq!(listed, supporting, "{connectivity}: the ranking lists every algorithm that supports it, once");
    assert_eq!(Algorithm::default_for(connectivity), ranking[0]);

    for (device, means) in measured(connectivity) {
        let time =
            |a: Algorithm| *means.get(&a).unwrap_or_else(|| panic!("{connectivity}: {a} was not measured on {device}"));
        let (fastest, best) = means.iter().min_by(|a, b| a.1.total_cmp(b.1)).map(|(&a, &t)| (a, t)).unwrap();
        assert_eq!(
            ranking[0],
            fastest,
            "{connectivity}, {device}: the default {} takes {:.4} ms, {fastest} {best:.4} ms",
            ranking[0],
            time(ranking[0])
        );
        for (i, &earlier) in ranking.iter().enumerate() {
            for &later in &ranking[i + 1..] {
                assert!(
                    time(earlier) <= time(later) * (1.0 + NEAR_TIE),
                    "{connectivity}, {device}: {earlier} ({:.4} ms) is ranked before {later} ({:.4} ms)",
                    time(earlier),
                    time(later)
                );
            }
        }
    }
}

#[test]
fn images_4_connected() {
    check(Connectivity::Four);
}

#[test]
fn images_8_connected() {
    check(Connectivity::Eight);
}

#[test]
fn volumes_6_connected() {
    check(Connectivity::Six);
}

#[test]
fn volumes_18_connected() {
    check(Connectivity::Eighteen);
}

#[test]
fn volumes_26_connected() {
    check(Connectivity::TwentySix);
}

device_tests! {
    fresh;
    the_labeler_that_chose_the_default_labels_and_is_handed_out_once: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn the_labeler_that_chose_the_default_labels_and_is_handed_out_once(dev: &common::TestDevice) {
    let connectivity = Connectivity::Eight;
    let (algorithm, _) = dev.device.default_algorithm(connectivity).expect("a default algorithm");
    assert_eq!(dev.device.default_algorithm(connectivity).expect("chosen again").0, algorithm);
    let image = common::images::random(300, 70, 50, 1, 7);
    let (expected, count) = reference::label(&image, connectivity).into_consecutive();
    // The first is the one that chose (kept by the device), the second a new one: both label.
    let mut labelers: Vec<_> =
        (0..2).map(|_| dev.device.labeler_for(algorithm, connectivity).expect("a labeler")).collect();
    for (i, labeler) in labelers.iter_mut().enumerate() {
        let run = labeler.label(&image, &Options::new(connectivity).consecutive()).expect("labels");
        assert_eq!((run.labels, run.count), (expected.clone(), Some(count)), "{}: labeler {i}", dev.token);
    }
}
