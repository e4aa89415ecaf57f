//! Labelers of one device in several threads: each labeling's timings cover its own commands
//! (no zero or borrowed phases), results stay exact, and the types say what may be shared.
//! One test per device (`cargo test --test threads -- ::cuda` runs the CUDA ones).

mod common;

use std::time::Instant;

use ccl::{reference, Algorithm, AnyLabeler, Connectivity, Device, DeviceImage, Labeler, Phase};
use common::images::random;

#[test]
fn devices_are_shared_and_labelers_sent_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Device>();
    send_sync::<DeviceImage>();
    send_sync::<ccl::DeviceLabels>();
    send::<AnyLabeler>();
}

device_tests! {
    fresh;
    eight_threads_on_one_device_report_their_own_phases: [opencl_cpu, opencl_gpu, cuda],
    an_upload_is_labeled_from_other_threads: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// 8 threads share one device (a clone each), each with its own labeler, and label many times
/// while the others do. Every run must report every kernel phase with a nonzero time, a total
/// no longer than the host-clock duration of that call, and exact labels.
fn eight_threads_on_one_device_report_their_own_phases(dev: &common::TestDevice) {
    const THREADS: usize = 8;
    const RUNS: usize = 40;
    let algorithms = [Algorithm::UF, Algorithm::KE, Algorithm::BKE_IC, Algorithm::OLE];
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let device = dev.device.clone();
                let algorithm = algorithms[t % algorithms.len()];
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    let image = random(257, 131 + 16 * t, 45, 1, t as u32);
                    let expected = reference::label_as(&image, Connectivity::Eight, algorithm.raw_labels());
                    let mut labeler = device.labeler(algorithm).expect("labeler");
                    let on_device = labeler.upload(&image).expect("upload");
                    for run in 0..RUNS {
                        let name = format!("thread {t} {algorithm} run {run}");
                        let start = Instant::now();
                        let ccl::Run { labels, timings, .. } =
                            labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).expect("label");
                        let wall_ms = start.elapsed().as_secs_f64() * 1e3;
                        let kernels: Vec<_> = timings
                            .phases
                            .iter()
                            .filter(|p| !matches!(p.phase, Phase::Allocation | Phase::Deallocation))
                            .collect();
                        if kernels.is_empty() || kernels.iter().any(|p| p.ms.is_nan() || p.ms <= 0.0) {
                            failures.push(format!("{name}: a kernel phase without time: {:?}", timings.phases));
                        }
                        // Device and host clocks differ by far less than a millisecond over
                        // one call; a borrowed phase spans other threads' work.
                        if timings.labeling_ms() > wall_ms + 1.0 {
                            failures.push(format!(
                                "{name}: {:.3} ms of phases in a {wall_ms:.3} ms call: {:?}",
                                timings.labeling_ms(),
                                timings.phases
                            ));
                        }
                        if labeler.download(&labels).expect("download") != expected {
                            failures.push(format!("{name}: wrong labels"));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    });
    assert!(failures.is_empty(), "{}: {} bad runs:\n{}", dev.token, failures.len(), failures.join("\n"));
}

/// An image uploaded by one labeler is labeled by labelers of the same device in other threads.
fn an_upload_is_labeled_from_other_threads(dev: &common::TestDevice) {
    let image = random(300, 200, 55, 2, 9);
    let mut uploader = dev.device.labeler(Algorithm::UF).unwrap();
    let on_device = uploader.upload(&image).unwrap();
    std::thread::scope(|scope| {
        for algorithm in [Algorithm::KE, Algorithm::BKE] {
            let (device, on_device, image) = (dev.device.clone(), &on_device, &image);
            scope.spawn(move || {
                let mut labeler = device.labeler(algorithm).unwrap();
                let labels = labeler.run(on_device, &ccl::Options::new(Connectivity::Eight)).unwrap().labels;
                let expected = reference::label_as(image, Connectivity::Eight, algorithm.raw_labels());
                assert_eq!(labeler.download(&labels).unwrap(), expected, "{algorithm} on {}", dev.token);
            });
        }
    });
}
