//! Copies outside a labeling keep nothing alive (each used to retain an OpenCL event). Its own
//! test binary: resident memory is only meaningful with no other test running in the process,
//! so its one test per device run one at a time (`cargo test --test retention -- ::cuda` runs
//! the CUDA one).

mod common;

use std::sync::{Mutex, PoisonError};

use ccl::{Algorithm, Connectivity, Labeler};
use common::images::random;

/// Resident memory of this process, bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

device_tests! {
    with super::alone;
    copies_retain_nothing: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Runs `body` on a device of its own while no other test of this process runs.
fn alone(token: &str, test: &str, body: impl FnOnce(&common::TestDevice)) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    common::on_fresh_device(token, test, body);
}

/// 40,000 uploads and downloads leave the resident memory where it was (it grew by ~300 bytes
/// per copy).
fn copies_retain_nothing(dev: &common::TestDevice) {
    let image = random(16, 16, 50, 1, 1);
    let mut labeler = dev.device.labeler(Algorithm::UF).unwrap();
    let on_device = labeler.upload(&image).unwrap();
    let labels = labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap().labels;
    let mut cycle = |n: usize| {
        for _ in 0..n {
            drop(labeler.upload(&image).unwrap());
            labeler.download(&labels).unwrap();
        }
    };
    cycle(2_000);
    let before = resident_bytes();
    cycle(40_000);
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 4 << 20, "{}: resident memory grew by {} kB over 80,000 copies", dev.token, grown >> 10);
}
