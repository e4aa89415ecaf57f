//! Shared test support: which backends are present (and required), test images, paths.
#![allow(dead_code)]

pub mod images;

use std::path::{Path, PathBuf};

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

/// The kinds of device a test runs on, as `CCL_REQUIRE_BACKENDS` names them.
pub const DEVICE_TOKENS: [&str; 4] = ["cpu", "opencl-cpu", "opencl-gpu", "cuda"];

/// A kind of device that is not among those opened: not present, or present but it did not open.
struct Missing {
    token: &'static str,
    /// What a test panics with when `CCL_REQUIRE_BACKENDS` requires the kind.
    required: String,
    /// Why the kind's cases do not run, for a note.
    why: String,
}

/// The devices opened (the first of every kind) and the kinds missing.
struct Found {
    devices: Vec<TestDevice>,
    missing: Vec<Missing>,
}

/// Opens the first device of every kind present, or of the kind `only` alone; never panics.
fn open_devices(only: Option<&str>) -> Found {
    let found = ccl::discover();
    let (mut devices, mut missing) = (Vec::<TestDevice>::new(), Vec::new());
    for info in &found.devices {
        let token = token_of(info);
        if only.is_some_and(|t| t != token) || devices.iter().any(|d| d.token == token) {
            continue;
        }
        match Device::open(info.id) {
            Ok(device) => devices.push(TestDevice { token, device }),
            Err(e) => missing.push(Missing {
                token,
                required: format!("required backend {token} ({}) failed to open: {e}", info.id),
                why: format!("{token} device {} did not open: {e}", info.id),
            }),
        }
    }
    for token in DEVICE_TOKENS {
        if only.is_some_and(|t| t != token) || devices.iter().any(|d| d.token == token) {
            continue;
        }
        let why: Vec<String> = found.unavailable.iter().map(|(b, r)| format!("{b}: {r}")).collect();
        missing.push(Missing {
            token,
            required: format!("CCL_REQUIRE_BACKENDS requires {token}, which is not present ({})", why.join("; ")),
            why: format!("no {token} device ({})", why.join("; ")),
        });
    }
    Found { devices, missing }
}

impl Found {
    /// Panics when a required kind is missing; else notes on stderr which kinds are absent.
    fn check_all(&self) {
        for m in &self.missing {
            assert!(!is_required(m.token), "{}", m.required);
            eprintln!("note: {}; its cases do not run", m.why);
        }
    }

    /// Runs `body` on the device of kind `token`. Without one, panics when `CCL_REQUIRE_BACKENDS`
    /// requires it, else notes that `test` does not run.
    fn run(&self, token: &str, test: &str, body: impl FnOnce(&TestDevice)) {
        assert!(DEVICE_TOKENS.contains(&token), "{test}: unknown device kind '{token}' (known: {DEVICE_TOKENS:?})");
        for m in self.missing.iter().filter(|m| m.token == token) {
            assert!(!is_required(token), "{test}: {}", m.required);
        }
        match self.devices.iter().find(|d| d.token == token) {
            Some(device) => body(device),
            None => {
                let why: Vec<&str> = self.missing.iter().filter(|m| m.token == token).map(|m| m.why.as_str()).collect();
                eprintln!("note: {test} does not run: {}", why.join("; "));
            }
        }
    }
}

/// Opens the first device of every kind present. Panics when a required kind is missing,
/// and says on stderr which kinds are absent.
pub fn devices() -> Vec<TestDevice> {
    let found = open_devices(None);
    found.check_all();
    found.devices
}

/// The devices of [`devices`], opened once per test process and shared by its tests.
fn shared() -> &'static Found {
    static FOUND: std::sync::OnceLock<Found> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let found = open_devices(None);
        for m in found.missing.iter().filter(|m| !is_required(m.token)) {
            eprintln!("note: {}; its cases do not run", m.why);
        }
        found
    })
}

/// [`devices`], opened once per test process and shared by its tests (a `Device` is `Sync`).
/// Panics when a required kind is missing.
pub fn shared_devices() -> &'static [TestDevice] {
    let found = shared();
    for m in &found.missing {
        assert!(!is_required(m.token), "{}", m.required);
    }
    &found.devices
}

/// One test body on one kind of device (`token`, as `CCL_REQUIRE_BACKENDS` names it), the
/// device shared by the tests of this process ([`shared_devices`]'s). Without one, panics when
/// the kind is required, else notes that `test` does not run and returns: the test passes.
/// [`device_tests!`](crate::device_tests) makes one test per device of such bodies.
pub fn on_device(token: &str, test: &str, body: impl FnOnce(&TestDevice)) {
    shared().run(token, test, body);
}

/// [`on_device`] on a device opened for this test alone (as [`devices`] opens them), for tests
/// that need a handle of their own.
pub fn on_fresh_device(token: &str, test: &str, body: impl FnOnce(&TestDevice)) {
    open_devices(Some(token)).run(token, test, body);
}

/// [`on_device`] for tests that drive the OpenCL backend directly: `body` runs on every OpenCL
/// device of kind `token` (`opencl-gpu`: GPUs; `opencl-cpu`: the others). With none, panics
/// when the kind is required, else notes that `test` does not run.
#[cfg(feature = "opencl")]
pub fn on_opencl_devices(token: &str, test: &str, body: impl Fn(&ccl_opencl::DeviceDesc)) {
    let gpu = match token {
        "opencl-gpu" => true,
        "opencl-cpu" => false,
        other => panic!("{test}: '{other}' is not an OpenCL device kind"),
    };
    let descs = ccl_opencl::devices()
        .map(|all| all.into_iter().filter(|d| (d.kind == ccl_opencl::DeviceKind::Gpu) == gpu).collect::<Vec<_>>());
    match descs {
        Ok(descs) if !descs.is_empty() => descs.iter().for_each(body),
        other => {
            let why = other.err().map_or("none found".to_string(), |e| e.to_string());
            assert!(!is_required(token), "CCL_REQUIRE_BACKENDS requires {token}, which is not present ({why})");
            eprintln!("note: no {token} device ({why}); {test} does not run");
        }
    }
}

/// One test per device for test bodies of one device each, as the conformance matrix has:
///
/// ```ignore
/// device_tests! {
///     statistics_are_exact: [cpu, opencl_cpu, opencl_gpu, cuda],
///     borrowed_memory_is_labeled: [cuda],
/// }
/// fn statistics_are_exact(d: &common::TestDevice) { ... }
/// ```
///
/// makes `mod statistics_are_exact { #[test] fn cpu() ... #[test] fn cuda() }`, each running
/// the function on its device through [`on_device`] (`cargo test --test stats
/// statistics_are_exact::cuda` runs one; `-- ::cuda` every CUDA test of the file). Backends:
/// `cpu`, `opencl_cpu`, `opencl_gpu`, `cuda`. An entry may carry attributes (`#[cfg(...)]`),
/// which go on its module. A first line `fresh;` runs the bodies through [`on_fresh_device`],
/// `opencl;` through [`on_opencl_devices`] (a body takes a `&ccl_opencl::DeviceDesc`), and
/// `with PATH;` through the function `PATH` names from inside the generated module (e.g.
/// `super::serialized`), which takes the same arguments as [`on_device`]. A first `full;` (before
/// the others) marks every test of the invocation `#[ignore = "full mode: ..."]`: the long
/// suites, which `scripts/test.sh --full` runs.
#[macro_export]
macro_rules! device_tests {
    // `full;` first: every test of the invocation is `#[ignore]`d but in full mode.
    (full; $($rest:tt)*) => {
        $crate::device_tests! { @mode [ignore = "full mode: scripts/test.sh --full"] $($rest)* }
    };
    (@mode [$mode:meta] fresh; $($rest:tt)*) => {
        $crate::device_tests! { @mode [$mode] with $crate::common::on_fresh_device; $($rest)* }
    };
    (@mode [$mode:meta] opencl; $($rest:tt)*) => {
        $crate::device_tests! { @mode [$mode] with $crate::common::on_opencl_devices; $($rest)* }
    };
    (@mode [$mode:meta] with $runner:path; $($(#[$meta:meta])* $body:ident: [$($backend:ident),+ $(,)?]),* $(,)?) => {
        $(
            $(#[$meta])*
            mod $body {
                $(
                    #[test]
                    #[$mode]
                    fn $backend() {
                        $runner(
                            $crate::device_tests!(@token $backend),
                            concat!(module_path!(), "::", stringify!($backend)),
                            super::$body,
                        );
                    }
                )+
            }
        )*
    };
    (@mode [$mode:meta] $($(#[$meta:meta])* $body:ident: [$($backend:ident),+ $(,)?]),* $(,)?) => {
        $crate::device_tests! { @mode [$mode] with $crate::common::on_device; $($(#[$meta])* $body: [$($backend),+]),* }
    };
    (@token cpu) => { "cpu" };
    (@token opencl_cpu) => { "opencl-cpu" };
    (@token opencl_gpu) => { "opencl-gpu" };
    (@token cuda) => { "cuda" };
    ($($rest:tt)*) => {
        // (`any()` is false: no attribute.)
        $crate::device_tests! { @mode [cfg_attr(any(), ignore)] $($rest)* }
    };
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

/// The repository root: `CCL_REPO_ROOT` when set (the GPU machine's runner sets it), else the
/// current directory when it holds `kernels/`, else the first folder holding `kernels/` from
/// where the test's crate was built upwards (`cli/`'s tests share this module).
pub fn repo_root() -> PathBuf {
    if let Ok(root) = std::env::var("CCL_REPO_ROOT") {
        return PathBuf::from(root);
    }
    let cwd = std::env::current_dir().expect("current directory");
    if cwd.join("kernels").is_dir() {
        return cwd;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    built.ancestors().find(|dir| dir.join("kernels").is_dir()).unwrap_or(built).to_path_buf()
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

/// A .npy of one-byte elements (`descr`, e.g. "|u1") with `shape`, in Fortran order when
/// `fortran` (then `data` is in that order).
pub fn npy_bytes(descr: &str, shape: &[usize], fortran: bool, data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let order = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// A TUF labeler on `device` once the caller has forced `kernel` as TUF's tile kernel: `None`,
/// with a note on stderr, where the device refuses that kernel's work-groups of 512 (NVIDIA's
/// OpenCL allows `tuf_tiles_wide` 256 work-items), a kernel TUF then never chooses there.
#[allow(dead_code)] // (not every test binary forces a kernel)
pub fn tuf_labeler_with(device: &Device, kernel: ccl::testing::TufTileKernel) -> Option<ccl::AnyLabeler> {
    match device.labeler(ccl::Algorithm::TUF) {
        Ok(labeler) => Some(labeler),
        Err(ccl::Error::Backend(ccl::BackendError::DeviceLimit { kernel: name, allows, .. }))
            if kernel == ccl::testing::TufTileKernel::Wide && name == "tuf_tiles_wide" =>
        {
            eprintln!("note: {} refuses {name}'s 512 work-items (allows {allows}): not run there", device.info().name);
            None
        }
        Err(e) => panic!("TUF labeler with {kernel:?} forced: {e}"),
    }
}

/// A xorshift stream of `u64`s from `seed`, so that generated test arrays are the same
/// everywhere.
pub fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
