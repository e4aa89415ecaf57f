//! Races in union-find show up under contention first: every GPU algorithm labels the same
//! high-contention images many times in a row, and every run must give identical raw labels
//! (which must also be right). One test per GPU backend (`cargo test --test stress -- ::cuda`
//! runs the CUDA ones).

mod common;

use ccl::{random_volume, reference, BinaryImage, DeviceType, Labeler};
use common::images::random;

/// Runs per image: many on a GPU, a few on an OpenCL CPU device (2 cores in CI).
fn runs(device: &ccl::DeviceInfo) -> usize {
    match device.device_type {
        DeviceType::Gpu => 50,
        _ => 3,
    }
}

/// Labels `n` times with `label`, which returns the raw labels as a flat slice owner; every run
/// must give `expected`. Records the first run that differs (or fails) in `failures`.
fn repeat<T>(
    n: usize,
    case: &str,
    expected: &[u32],
    values: impl Fn(&T) -> &[u32],
    mut label: impl FnMut() -> ccl::Result<T>,
    failures: &mut Vec<String>,
) {
    for run in 0..n {
        match label() {
            Ok(labels) if values(&labels) == expected => {}
            Ok(labels) => {
                let wrong = values(&labels).iter().zip(expected).filter(|(a, b)| a != b).count();
                failures.push(format!("{case}: run {run} differs in {wrong} elements"));
                return;
            }
            Err(e) => {
                failures.push(format!("{case}: run {run}: {e}"));
                return;
            }
        }
    }
}

device_tests! {
    fresh;
    repeated_runs_give_identical_raw_labels: [opencl_cpu, opencl_gpu, cuda],
    repeated_volume_labelings_give_identical_raw_labels: [opencl_cpu, opencl_gpu, cuda],
}

fn repeated_runs_give_identical_raw_labels(dev: &common::TestDevice) {
    let images = [
        ("1024x1024-d45", random(1024, 1024, 45, 1, 451)),
        ("2048x2048-foreground", BinaryImage::image_from_fn(2048, 2048, |_, _| true).unwrap()),
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    let n = runs(dev.device.info());
    for &algorithm in ccl::Algorithm::ALL {
        let mut labeler = dev.device.labeler(algorithm).expect("labeler");
        for (name, image) in &images {
            let on_device = labeler.upload(image).expect("upload");
            for &connectivity in algorithm.connectivities().iter().filter(|c| c.dims() == 2) {
                let expected = reference::label_as(image, connectivity, algorithm.raw_labels());
                let case = format!("{algorithm}/{}/{}/{name}", dev.token, connectivity.neighbours());
                let label = || {
                    labeler.run(&on_device, &ccl::Options::new(connectivity)).and_then(|r| labeler.download(&r.labels))
                };
                repeat(n, &case, expected.values(), |l: &ccl::LabelImage| l.values(), label, &mut failures);
                checked += 1;
            }
        }
    }
    eprintln!("stress: {checked} algorithm/connectivity/image cases on {}, {} failed", dev.token, failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn repeated_volume_labelings_give_identical_raw_labels(dev: &common::TestDevice) {
    let mut failures = Vec::new();
    let mut checked = 0;
    let n = runs(dev.device.info());
    // 128^3 on a GPU; a 2-core OpenCL CPU device gets 40^3.
    let side = if dev.device.info().device_type == DeviceType::Gpu { 128 } else { 40 };
    // 30 %: near the percolation threshold of 6-connectivity, where trees are deepest;
    // all foreground: every union meets the one giant component.
    let volumes = [
        (format!("{side}^3-d30"), random_volume(side, side, side, 30, 1, 303).unwrap()),
        (format!("{side}^3-foreground"), BinaryImage::volume_from_fn(side, side, side, |_, _, _| true).unwrap()),
    ];
    for &algorithm in ccl::Algorithm::ALL {
        let mut labeler = dev.device.labeler(algorithm).expect("labeler");
        for (name, volume) in &volumes {
            let on_device = labeler.upload(volume).expect("upload");
            for &connectivity in algorithm.connectivities().iter().filter(|c| c.dims() == 3) {
                let expected = reference::label_volume_as(volume, connectivity, algorithm.raw_labels()).unwrap();
                let case = format!("{algorithm}/{}/{}/{name}", dev.token, connectivity.neighbours());
                let label = || {
                    labeler.run(&on_device, &ccl::Options::new(connectivity)).and_then(|r| labeler.download(&r.labels))
                };
                repeat(n, &case, expected.values(), |l: &ccl::LabelImage| l.values(), label, &mut failures);
                checked += 1;
            }
        }
    }
    eprintln!("stress: {checked} algorithm/connectivity/volume cases on {}, {} failed", dev.token, failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
