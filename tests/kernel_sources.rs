//! The committed per-dialect kernel files are exactly the shared sources behind their preludes,
//! and every kernel build compiles with OpenCL (every device present, one test per kind:
//! `cargo test --test kernel_sources -- ::opencl_gpu` runs the GPUs') and NVRTC.
//!
//! `CCL_BLESS=1 cargo test --test kernel_sources` rewrites the generated files.

mod common;

use ccl::kernels::{self, Dialect};
#[cfg(any(feature = "cuda", feature = "opencl"))]
use ccl_backend::Define;

#[test]
fn generated_kernel_files_match_shared_sources() {
    let root = common::repo_root();
    let bless = std::env::var("CCL_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for file in ccl::registry::kernel_files() {
        for dialect in Dialect::ALL {
            let path = root.join(file.path(dialect));
            let expected = kernels::generate(file, dialect);
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            if on_disk != expected {
                if bless {
                    std::fs::write(&path, &expected).expect("write generated kernel");
                } else {
                    stale.push(file.path(dialect));
                }
            }
            // The library embeds the committed file; it must be the one on disk.
            if !bless {
                assert_eq!(file.source(dialect), on_disk, "{}: rebuild after blessing", file.path(dialect));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated kernel files drifted from kernels/ and the preludes: {stale:?}\n\
         run `CCL_BLESS=1 cargo test --test kernel_sources` and commit the result"
    );
}

#[cfg(feature = "cuda")]
/// Every build with 32-bit labels (what the labelers compile) and, in full mode, with
/// `LABEL_BITS=64` (the 64-bit label path is a define away) and with strict loads.
fn builds(wide_and_strict: bool) -> Vec<(String, &'static str, Vec<Define>)> {
    let mut out = Vec::new();
    for build in ccl::registry::kernel_builds() {
        let name = format!("{}/{}/{:?}", build.algorithm, build.connectivity, build.kind);
        if !wide_and_strict {
            out.push((name.clone(), build.file.source(Dialect::Cuda), build.defines.clone()));
            continue;
        }
        let mut wide = build.defines.clone();
        wide.push(Define::int("LABEL_BITS", 64));
        out.push((format!("{name}/64-bit labels"), build.file.source(Dialect::Cuda), wide));
        // Strict loads (CCL_ATOMIC_LOADS=strict): relaxed atomics instead of weak loads.
        let mut strict = build.defines.clone();
        strict.push(Define::flag("STRICT_LOADS", true));
        out.push((format!("{name}/strict loads"), build.file.source(Dialect::Cuda), strict));
    }
    out
}

/// Compiles `builds` with NVRTC; failures are collected and named. Without NVRTC, a note (a
/// failure when `CCL_REQUIRE_BACKENDS` names nvrtc).
#[cfg(feature = "cuda")]
fn nvrtc_compiles(builds: &[(String, &'static str, Vec<Define>)]) {
    assert!(!builds.is_empty());
    let mut failures = Vec::new();
    for (name, source, defines) in builds {
        match ccl_cuda::compile_ptx(source, defines, None) {
            Ok(ptx) => assert!(ptx.contains(".entry"), "PTX without kernels"),
            Err(ccl_backend::Error::Unavailable { reason, .. }) => {
                assert!(!common::is_required("nvrtc"), "CCL_REQUIRE_BACKENDS requires nvrtc: {reason}");
                eprintln!("note: NVRTC absent, CUDA kernels not compiled: {reason}");
                return;
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "NVRTC failures:\n{}", failures.join("\n"));
    eprintln!("NVRTC compiled {} kernel builds", builds.len());
}

#[cfg(feature = "cuda")]
#[test]
fn every_kernel_build_compiles_with_nvrtc() {
    nvrtc_compiles(&builds(false));
}

#[cfg(feature = "cuda")]
/// The region properties' builds (every moment order, intensity type), named.
fn region_builds() -> Vec<(String, &'static str, Vec<Define>)> {
    let file = ccl::registry::stage("regionprops").expect("the region properties stage").kernel();
    ccl::registry::regionprops_builds()
        .into_iter()
        .map(|defines| (format!("regionprops {defines:?}"), file.source(Dialect::Cuda), defines))
        .collect()
}

#[cfg(feature = "cuda")]
#[test]
fn every_regionprops_build_compiles_with_nvrtc() {
    nvrtc_compiles(&region_builds());
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "full mode: scripts/test.sh --full"]
fn every_kernel_build_compiles_with_nvrtc_with_wide_labels_and_strict_loads() {
    nvrtc_compiles(&builds(true));
}

/// Every kernel build, with labels of each of `label_bits`, compiles on the OpenCL device `desc`
/// with each of the `models` of atomic loads and stores (kernels-cl/prelude.h); failures are
/// collected and named.
#[cfg(feature = "opencl")]
fn opencl_builds_compile(desc: &ccl_opencl::DeviceDesc, models: &[ccl_opencl::Atomics], label_bits: &[u32]) {
    use ccl_backend::Gpu;
    let mut failures = Vec::new();
    for &atomics in models {
        let runtime = ccl_opencl::Runtime::new(desc.platform, desc.device)
            .and_then(|r| r.with_atomics(atomics))
            .expect("open OpenCL device");
        for build in ccl::registry::kernel_builds() {
            for &bits in label_bits {
                // 32 is the default: without the define, the build is the labelers' own (and
                // its kernel cache entry).
                let mut defines = build.defines.clone();
                if bits == 64 {
                    defines.push(Define::int("LABEL_BITS", 64));
                }
                if let Err(e) = runtime.build(build.file.source(Dialect::OpenCl), &defines) {
                    failures.push(format!(
                        "{}/{}/{:?} ({bits}-bit labels, {atomics}) on {}: {e}",
                        build.algorithm, build.connectivity, build.kind, desc.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "OpenCL build failures:\n{}", failures.join("\n"));
}

device_tests! {
    opencl;
    #[cfg(feature = "opencl")]
    every_kernel_build_compiles_with_opencl: [opencl_cpu, opencl_gpu],
}

device_tests! {
    full;
    opencl;
    #[cfg(feature = "opencl")]
    every_kernel_build_compiles_with_opencl_with_wide_labels: [opencl_cpu, opencl_gpu],
    #[cfg(feature = "opencl")]
    every_kernel_build_compiles_with_every_atomics_model: [opencl_cpu, opencl_gpu],
}

/// With the way of making atomic loads and stores the device takes by default, and 32-bit labels;
/// the region properties' builds too.
#[cfg(feature = "opencl")]
fn every_kernel_build_compiles_with_opencl(desc: &ccl_opencl::DeviceDesc) {
    opencl_builds_compile(desc, &[desc.atomics], &[32]);
    let runtime = ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device");
    let file = ccl::registry::stage("regionprops").expect("the region properties stage").kernel();
    let failures: Vec<String> = ccl::registry::regionprops_builds()
        .into_iter()
        .filter_map(|defines| {
            let result = ccl_backend::Gpu::build(&runtime, file.source(Dialect::OpenCl), &defines);
            result.err().map(|e| format!("regionprops {defines:?} on {}: {e}", desc.name))
        })
        .collect();
    assert!(failures.is_empty(), "OpenCL build failures:\n{}", failures.join("\n"));
}

/// With 64-bit labels (the 64-bit label path is a define away), the device's own atomics.
#[cfg(feature = "opencl")]
fn every_kernel_build_compiles_with_opencl_with_wide_labels(desc: &ccl_opencl::DeviceDesc) {
    opencl_builds_compile(desc, &[desc.atomics], &[64]);
}

/// With every other way a device may be told to take (`CCL_OPENCL_ATOMICS`): OpenCL 1.2's
/// read-modify-writes everywhere, PTX's volatile loads anywhere and weak loads (inline assembly)
/// where NVIDIA's OpenCL is.
#[cfg(feature = "opencl")]
fn every_kernel_build_compiles_with_every_atomics_model(desc: &ccl_opencl::DeviceDesc) {
    let mut models = vec![ccl_opencl::Atomics::ReadModifyWrite, ccl_opencl::Atomics::Ptx];
    if matches!(desc.atomics, ccl_opencl::Atomics::Ptx | ccl_opencl::Atomics::PtxWeak) {
        models.push(ccl_opencl::Atomics::PtxWeak);
    }
    models.retain(|&m| m != desc.atomics);
    opencl_builds_compile(desc, &models, &[32, 64]);
}

/// Binarization programs with NVRTC (double precision included): every method and formula at
/// one window, and (full mode) at the others.
#[cfg(feature = "cuda")]
fn binarize_builds(windows: &[u32]) -> Vec<(String, &'static str, Vec<Define>)> {
    let source = ccl::registry::stage("binarize").expect("the binarization stage").kernel().source(Dialect::Cuda);
    ccl::binarize::kernel_builds_at_windows(windows)
        .into_iter()
        .map(|defines| (format!("binarize {defines:?}"), source, defines))
        .collect()
}

#[cfg(feature = "cuda")]
#[test]
fn every_binarize_build_compiles_with_nvrtc() {
    nvrtc_compiles(&binarize_builds(&[45]));
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "full mode: scripts/test.sh --full"]
fn every_binarize_build_compiles_with_nvrtc_at_every_window() {
    nvrtc_compiles(&binarize_builds(&[101, 301]));
}

/// The kernels a source defines: the names after `KERNEL ... void`.
fn kernel_names(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|line| line.starts_with("KERNEL "))
        .filter_map(|line| line.split("void ").nth(1))
        .filter_map(|rest| rest.split('(').next())
        .map(|name| name.trim().to_string())
        .collect()
}

/// No kernel's name begins another's of the same program: Oclgrind (21.10 and later) charges a
/// kernel with every local array of the program whose name begins with the kernel's name, so
/// `tuf_tiles` next to `tuf_tiles_wide` was refused for 40 KiB of local memory it never uses.
#[test]
fn no_kernel_name_begins_another_of_its_program() {
    let mut clashes = Vec::new();
    for file in ccl::registry::kernel_files() {
        let names = kernel_names(file.source(Dialect::OpenCl));
        assert!(!names.is_empty(), "{}: no kernels found", file.path(Dialect::OpenCl));
        for a in &names {
            for b in &names {
                if a != b && b.starts_with(a.as_str()) {
                    clashes.push(format!("{}: {a} begins {b}", file.path(Dialect::OpenCl)));
                }
            }
        }
    }
    assert!(clashes.is_empty(), "rename these kernels:\n{}", clashes.join("\n"));
}
