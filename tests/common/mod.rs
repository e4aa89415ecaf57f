//! Shared test support: which backends are present (and required), test images, paths.
#![allow(dead_code)]

pub mod images;

use std::path::PathBuf;

use ccl::{BackendKind, Device, DeviceType};

/// A device under test, with the token `CCL_REQUIRE_BACKENDS` names it by.
pub struct TestDevice {
    pub token: &'static str,
    pub device: Device,
}

/// Tokens `CCL_REQUIRE_BACKENDS` accepts.
/// `ptxas`: NVIDIA OpenCL programs must be assembled by a CUDA toolkit's ptxas (`CCL_PTXAS`).
/// `oclgrind`: the Oclgrind cells must run (tests/oclgrind.rs).
pub const TOKENS: [&str; 7] = ["cpu", "opencl-cpu", "opencl-gpu", "cuda", "nvrtc", "ptxas", "oclgrind"];

/// The tokens listed in `CCL_REQUIRE_BACKENDS` (comma separated); panics on an unknown one.
pub fn required() -> Vec<String> {
    let list = std::env::var("CCL_REQUIRE_BACKENDS").unwrap_or_default();
    let tokens: Vec<String> =
        list.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect();
    for t in &tokens {
        assert!(TOKENS.contains(&t.as_str()), "CCL_REQUIRE_BACKENDS: unknown backend '{t}' (known: {TOKENS:?})");
    }
    tokens
}

/// Whether `token` is required.
pub fn is_required(token: &str) -> bool {
    required().iter().any(|t| t == token)
}

fn token_of(device: &ccl::DeviceInfo) -> &'static str {
    match (device.id.backend(), device.device_type) {
        (BackendKind::Cpu, _) => "cpu",
        (BackendKind::Cuda, _) => "cuda",
        (BackendKind::OpenCl, DeviceType::Gpu) => "opencl-gpu",
        (BackendKind::OpenCl, _) => "opencl-cpu",
    }
}

/// Opens the first device of every kind present. Panics when a required kind is missing,
/// and says on stderr which kinds are absent.
pub fn devices() -> Vec<TestDevice> {
    let found = ccl::discover();
    let mut out: Vec<TestDevice> = Vec::new();
    for info in &found.devices {
        let token = token_of(info);
        if out.iter().any(|d| d.token == token) {
            continue;
        }
        match Device::open(info.id) {
            Ok(device) => out.push(TestDevice { token, device }),
            Err(e) if is_required(token) => {
                panic!("required backend {token} ({}) failed to open: {e}", info.id)
            }
            Err(e) => eprintln!("note: {token} device {} did not open, its cases do not run: {e}", info.id),
        }
    }
    for token in ["cpu", "opencl-cpu", "opencl-gpu", "cuda"] {
        if out.iter().any(|d| d.token == token) {
            continue;
        }
        let why: Vec<String> = found.unavailable.iter().map(|(b, r)| format!("{b}: {r}")).collect();
        if is_required(token) {
            panic!("CCL_REQUIRE_BACKENDS requires {token}, which is not present ({})", why.join("; "));
        }
        eprintln!("note: no {token} device; its cases do not run ({})", why.join("; "));
    }
    out
}

/// Every OpenCL device, for tests that drive the OpenCL backend directly. With none present,
/// panics when `CCL_REQUIRE_BACKENDS` requires an OpenCL backend, else notes that `what` is not
/// checked and returns none.
#[cfg(feature = "opencl")]
pub fn opencl_devices(what: &str) -> Vec<ccl_opencl::DeviceDesc> {
    match ccl_opencl::devices() {
        Ok(found) if !found.is_empty() => found,
        other => {
            assert!(
                !is_required("opencl-cpu") && !is_required("opencl-gpu"),
                "an OpenCL backend is required but none is present: {:?}",
                other.err()
            );
            eprintln!("note: no OpenCL device, {what} not checked");
            Vec::new()
        }
    }
}

/// Whether a CUDA device is present, for tests that drive the CUDA backend directly. Without
/// one, panics when `CCL_REQUIRE_BACKENDS` requires cuda, else notes that `what` is not checked.
#[cfg(feature = "cuda")]
pub fn cuda_present(what: &str) -> bool {
    let present = ccl_cuda::devices().map(|d| !d.is_empty());
    if !matches!(present, Ok(true)) {
        assert!(!is_required("cuda"), "CCL_REQUIRE_BACKENDS requires cuda: {:?}", present.err());
        eprintln!("note: no CUDA device, {what} not checked");
        return false;
    }
    true
}

/// [`devices`], opened once per test process and shared by its tests (a `Device` is `Sync`).
pub fn shared_devices() -> &'static [TestDevice] {
    static DEVICES: std::sync::OnceLock<Vec<TestDevice>> = std::sync::OnceLock::new();
    DEVICES.get_or_init(devices)
}

/// The repository root: `CCL_REPO_ROOT` when set (the GPU machine's runner sets it), else the
/// current directory when it holds `kernels/`, else where this crate was built.
pub fn repo_root() -> PathBuf {
    if let Ok(root) = std::env::var("CCL_REPO_ROOT") {
        return PathBuf::from(root);
    }
    let cwd = std::env::current_dir().expect("current directory");
    if cwd.join("kernels").is_dir() {
        return cwd;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared real-data folder: `CCL_DATA_DIR`, else `<repo>/../shared/data`; `None` (with a
/// note on stderr) when absent.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var("CCL_DATA_DIR").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("../shared/data"));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("note: real-data folder {} is absent; real-page cases do not run", dir.display());
        None
    }
}

/// Up to `limit` DIBCO originals (sorted), from the shared data folder.
pub fn dibco_pages(limit: usize) -> Vec<PathBuf> {
    let Some(dir) = data_dir() else {
        return Vec::new();
    };
    let mut pages = Vec::new();
    if let Ok(years) = std::fs::read_dir(dir.join("dibco")) {
        for year in years.flatten() {
            if let Ok(files) = std::fs::read_dir(year.path().join("Originals")) {
                pages.extend(files.flatten().map(|f| f.path()));
            }
        }
    }
    pages.sort();
    pages.truncate(limit);
    pages
}

/// Whether the long suites run: `scripts/test.sh --full` sets `CCL_TEST_FULL=1`. Tests that only
/// grow in full mode (larger inputs) ask this; whole full-mode tests are
/// `#[ignore = "full mode: scripts/test.sh --full"]` instead, so that cargo counts them.
pub fn full_mode() -> bool {
    std::env::var("CCL_TEST_FULL").is_ok_and(|v| v == "1")
}
