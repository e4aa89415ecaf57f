//! A labeler is ready when made: the first labeling's phases hold no driver compilation. POCL
//! compiles a kernel for its work-group size at its first launch (that took an OLE merge phase
//! from 0.5 ms to 268 ms on a cold cache); the labeler does that launch when it is created.
//! Its own test binary, so that POCL starts here with an empty kernel cache.

mod common;

use ccl::{BackendKind, Connectivity, Labeler};
use common::images::random;

#[test]
fn the_first_labeling_is_timed_like_the_next() {
    let cache = std::env::temp_dir().join(format!("ccl-cold-pocl-cache-{}", std::process::id()));
    std::fs::create_dir_all(&cache).unwrap();
    // Before any OpenCL call in this process: POCL reads it when it starts.
    std::env::set_var("POCL_CACHE_DIR", &cache);
    let image = random(128, 96, 45, 1, 5);
    let mut failures = Vec::new();
    for dev in common::devices().into_iter().filter(|d| d.device.info().id.backend() != BackendKind::Cpu) {
        for &algorithm in ccl::Algorithm::ALL {
            let mut labeler = dev.device.labeler(algorithm).unwrap();
            let on_device = labeler.upload(&image).unwrap();
            let (_, first) = labeler.label_on_device(&on_device, Connectivity::Eight).unwrap();
            let (_, second) = labeler.label_on_device(&on_device, Connectivity::Eight).unwrap();
            let (a, b) = (first.labeling_ms(), second.labeling_ms());
            if a > 5.0 * b + 25.0 {
                failures.push(format!("{algorithm}/{}: first run {a:.3} ms, second {b:.3} ms", dev.token));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
    assert!(failures.is_empty(), "first labelings took longer:\n{}", failures.join("\n"));
}
