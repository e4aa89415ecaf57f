//! A labeler is ready when made: the first labeling's phases hold no driver compilation. POCL
//! compiles a kernel for its work-group size at its first launch (that took an OLE merge phase
//! from 0.5 ms to 268 ms on a cold cache); the labeler does that launch when it is created.
//! Its own test binary, so that POCL starts here with an empty kernel cache. One test per GPU
//! backend, one at a time (`cargo test --test cold_start -- ::opencl_cpu` runs POCL's).

mod common;

use std::sync::{Mutex, PoisonError};

use ccl::{Connectivity, Labeler};
use common::images::random;

device_tests! {
    with super::cold;
    the_first_labeling_is_timed_like_the_next: [opencl_cpu, opencl_gpu, cuda],
}

/// Runs `body` on a device of its own, one test at a time, with POCL's kernel cache in an empty
/// folder of this process's, removed afterwards.
fn cold(token: &str, test: &str, body: impl FnOnce(&common::TestDevice)) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    struct Removed(std::path::PathBuf);
    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let cache = Removed(std::env::temp_dir().join(format!("ccl-cold-pocl-cache-{}", std::process::id())));
    std::fs::create_dir_all(&cache.0).unwrap();
    // Before any OpenCL call in this process: POCL reads it when it starts.
    std::env::set_var("POCL_CACHE_DIR", &cache.0);
    common::on_fresh_device(token, test, body);
}

fn the_first_labeling_is_timed_like_the_next(dev: &common::TestDevice) {
    let image = random(128, 96, 45, 1, 5);
    let mut failures = Vec::new();
    for &algorithm in ccl::Algorithm::ALL {
        let mut labeler = dev.device.labeler(algorithm).unwrap();
        let on_device = labeler.upload(&image).unwrap();
        let first = labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap().timings;
        let second = labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap().timings;
        let (a, b) = (first.labeling_ms(), second.labeling_ms());
        if a > 5.0 * b + 25.0 {
            failures.push(format!("{algorithm}/{}: first run {a:.3} ms, second {b:.3} ms", dev.token));
        }
    }
    assert!(failures.is_empty(), "first labelings took longer:\n{}", failures.join("\n"));
}
