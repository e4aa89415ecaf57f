//! The committed per-dialect kernel files are exactly the shared sources behind their preludes,
//! and every kernel build compiles with OpenCL (every device present) and NVRTC.
//!
//! `CCL_BLESS=1 cargo test --test kernel_sources` rewrites the generated files.

mod common;

use ccl::kernels::{self, Dialect};

#[test]
fn generated_kernel_files_match_shared_sources() {
    let root = common::repo_root();
    let bless = std::env::var("CCL_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for file in kernels::ALL {
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
#[test]
fn every_kernel_build_compiles_with_nvrtc() {
    let builds = kernels::builds();
    assert!(!builds.is_empty());
    let mut failures = Vec::new();
    for build in &builds {
        match kernels::compile_cuda_ptx(build) {
            Ok(ptx) => assert!(ptx.contains(".entry"), "PTX without kernels"),
            Err(ccl::Error::BackendUnavailable { reason, .. }) => {
                assert!(!common::is_required("nvrtc"), "CCL_REQUIRE_BACKENDS requires nvrtc: {reason}");
                eprintln!("note: NVRTC absent, CUDA kernels not compiled: {reason}");
                return;
            }
            Err(e) => failures.push(format!("{}/{}: {e}", build.algorithm, build.connectivity)),
        }
    }
    assert!(failures.is_empty(), "NVRTC failures:\n{}", failures.join("\n"));
    eprintln!("NVRTC compiled {} kernel builds", builds.len());
}

#[test]
fn every_kernel_build_compiles_with_every_opencl_device() {
    let found = ccl::discover();
    let opencl: Vec<_> = found.devices.iter().filter(|d| d.id.backend() == ccl::BackendKind::OpenCl).collect();
    if opencl.is_empty() {
        assert!(
            !common::is_required("opencl-cpu") && !common::is_required("opencl-gpu"),
            "an OpenCL backend is required but none is present: {:?}",
            found.unavailable
        );
        eprintln!("note: no OpenCL device, OpenCL kernels not compiled");
        return;
    }
    for info in opencl {
        let device = ccl::Device::open(info.id).expect("open OpenCL device");
        for &algorithm in ccl::gpu_algorithms() {
            if let Err(e) = device.labeler(algorithm) {
                panic!("{algorithm} does not build on {info}: {e}");
            }
        }
    }
}
