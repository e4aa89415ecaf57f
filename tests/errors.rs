//! Bad input and missing backends give typed errors naming what is wrong, never panics. Tests on
//! devices are one per device (`cargo test --test errors -- ::cuda` runs the CUDA ones).

mod common;

use std::path::Path;

use ccl::io::{read_binary, write_labels, Binarize};
use ccl::testing::Stages;
use ccl::{
    Algorithm, BackendError, BackendKind, BinaryImage, Connectivity, CpuLabeler, Device, DeviceId, Error, LabelImage,
    Labeler, Options,
};

#[test]
fn block_algorithms_reject_4_connectivity_naming_what_they_support() {
    let image = BinaryImage::image_from_fn(4, 4, |x, _| x < 2).unwrap();
    for algorithm in [Algorithm::BE, Algorithm::BUF, Algorithm::BUF_IC, Algorithm::BKE, Algorithm::BKE_IC] {
        assert!(!algorithm.supports(Connectivity::Four));
        let err = CpuLabeler::new(algorithm).label(&image, &Options::new(Connectivity::Four)).unwrap_err();
        match &err {
            Error::UnsupportedConnectivity { algorithm: a, connectivity, supported } => {
                assert_eq!((*a, *connectivity), (algorithm.name(), Connectivity::Four));
                // 2x2 blocks are 8-connected; 2x2x2 ones 26-connected, for volumes.
                assert_eq!(supported, &[Connectivity::Eight, Connectivity::TwentySix]);
            }
            other => panic!("expected UnsupportedConnectivity, got {other:?}"),
        }
        assert!(err.to_string().contains("supports 8-connectivity"), "{err}");
    }
}

device_tests! {
    fresh;
    gpu_labelers_reject_unsupported_pairs_too: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn gpu_labelers_reject_unsupported_pairs_too(dev: &common::TestDevice) {
    let image = BinaryImage::image_from_fn(4, 4, |x, _| x < 2).unwrap();
    for &algorithm in ccl::Algorithm::ALL {
        let mut labeler = dev.device.labeler(algorithm).unwrap();
        for connectivity in Connectivity::ALL {
            let r = labeler.label(&image, &Options::new(connectivity));
            if connectivity.dims() == 3 && algorithm.supports(connectivity) {
                // An image is a volume of one slice: a volume connectivity labels it as the
                // planar one (6 as 4, 18 and 26 as 8).
                let planar = if connectivity == Connectivity::Six { Connectivity::Four } else { Connectivity::Eight };
                let want = ccl::reference::label(&image, planar);
                let got = r.unwrap().labels;
                assert!(ccl::reference::partition_difference(&want, &got).is_none(), "{algorithm}/{}", dev.token);
            } else if algorithm.supports(connectivity) {
                r.unwrap();
            } else {
                assert!(matches!(r, Err(Error::UnsupportedConnectivity { .. })), "{algorithm}/{}", dev.token);
            }
        }
    }
}

#[test]
fn empty_and_oversized_images_are_rejected() {
    assert!(matches!(BinaryImage::image(0, 5, vec![]), Err(Error::EmptyImage { width: 0, height: 5 })));
    assert!(matches!(BinaryImage::image(5, 0, vec![]), Err(Error::EmptyImage { .. })));
    assert!(matches!(BinaryImage::image_from_fn(0, 0, |_, _| true), Err(Error::EmptyImage { .. })));
    let err = BinaryImage::image(70_000, 70_000, vec![]).unwrap_err();
    assert!(matches!(err, Error::TooManyPixels { width: 70_000, height: 70_000 }), "{err:?}");
    assert!(err.to_string().contains("4900000000"), "{err}");
    assert!(matches!(BinaryImage::image(3, 3, vec![0; 8]), Err(Error::SizeMismatch { len: 8, .. })));
    assert!(matches!(LabelImage::image(2, 2, vec![0; 3]), Err(Error::SizeMismatch { .. })));
}

#[test]
fn device_identifiers_parse_and_unknown_ones_are_named() {
    assert_eq!("cpu".parse::<DeviceId>().unwrap(), DeviceId::Cpu);
    assert_eq!("OpenCL:2".parse::<DeviceId>().unwrap(), DeviceId::OpenCl(2));
    assert_eq!("cuda".parse::<DeviceId>().unwrap(), DeviceId::Cuda(0));
    assert_eq!(DeviceId::OpenCl(3).to_string().parse::<DeviceId>().unwrap(), DeviceId::OpenCl(3));
    for bad in ["gpu", "cuda:x", "opencl:-1"] {
        let err = bad.parse::<DeviceId>().unwrap_err();
        assert!(matches!(&err, Error::Backend(BackendError::UnknownDevice { id, .. }) if id == bad), "{err:?}");
    }
    match Device::open(DeviceId::OpenCl(999)) {
        Err(Error::Backend(BackendError::UnknownDevice { id, .. })) => assert_eq!(id, "opencl:999"),
        Err(Error::Backend(BackendError::Unavailable { backend: "opencl", .. })) => {}
        other => panic!("expected an error, got {:?}", other.map(|d| d.info().clone())),
    }
}

#[test]
fn missing_cuda_is_an_error_not_a_panic() {
    let cuda_present = ccl::discover().devices.iter().any(|d| d.id.backend() == BackendKind::Cuda);
    match Device::open(DeviceId::Cuda(0)) {
        Ok(_) => assert!(cuda_present),
        Err(Error::Backend(BackendError::Unavailable { backend: "cuda", reason })) => {
            assert!(!cuda_present);
            assert!(!reason.is_empty());
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
    match Device::open(DeviceId::Cuda(99)) {
        Err(Error::Backend(BackendError::Unavailable { .. } | BackendError::UnknownDevice { .. })) => {}
        other => panic!("cuda:99 must not open: {:?}", other.is_ok()),
    }
}

#[test]
fn backend_errors_are_kept_whole_and_named() {
    use std::error::Error as _;
    // Wrapped as it is: the same message, the backend error reachable as itself.
    let limit = BackendError::DeviceLimit {
        device: "Tiny GPU".into(),
        kernel: "tuf_tiles".into(),
        limit: "work-items per work-group",
        needs: 256,
        allows: 128,
    };
    let shown = limit.to_string();
    let err = Error::from(limit);
    assert_eq!(err.to_string(), shown);
    assert!(shown.contains("Tiny GPU") && shown.contains("tuf_tiles needs 256 work-items"), "{err}");
    assert!(matches!(err.backend(), Some(BackendError::DeviceLimit { allows: 128, .. })), "{err:?}");
    assert!(matches!(&err, Error::Backend(BackendError::DeviceLimit { needs: 256, .. })), "{err:?}");
    // A device that cannot open says which backend and why.
    let err = Error::from(BackendError::Unavailable { backend: "cuda", reason: "no driver".into() });
    assert_eq!(err.to_string(), "cuda backend unavailable: no driver");
    // A kernel that does not compile names its file, and keeps the backend's error (the device
    // and the compiler's log) as its source.
    let build = BackendError::Build { device: "Tiny GPU".into(), log: "uf.cl:3: error: expected ';'".into() };
    let err = Error::KernelBuild { kernel: "kernels-cl/uf.cl".into(), source: build };
    let text = err.to_string();
    assert!(text.contains("kernels-cl/uf.cl") && text.contains("Tiny GPU") && text.contains("expected ';'"), "{text}");
    let source = err.source().and_then(|s| s.downcast_ref::<BackendError>());
    assert!(matches!(source, Some(BackendError::Build { device, .. }) if device == "Tiny GPU"), "{err:?}");
    assert!(matches!(err.backend(), Some(BackendError::Build { .. })));
    // Errors of `ccl`'s own have no backend error.
    assert!(BinaryImage::image(0, 1, vec![]).unwrap_err().backend().is_none());
}

#[test]
fn device_errors_of_ccl_itself_are_backend_errors() {
    // Parsing an identifier and asking the CPU reference for device memory.
    let err = "gpu:1".parse::<DeviceId>().unwrap_err();
    assert!(matches!(err.backend(), Some(BackendError::UnknownDevice { .. })), "{err:?}");
    assert!(err.to_string().contains("unknown device 'gpu:1'"), "{err}");
    let mut cpu = Device::open(DeviceId::Cpu).unwrap().labeler(Algorithm::UF).unwrap();
    // SAFETY: refused before any use of the address.
    let Err(err) = (unsafe { cpu.borrow_labels(ccl::Shape::image(4, 4), 0x1000) }) else {
        panic!("the CPU reference borrowed device memory")
    };
    assert!(matches!(err.backend(), Some(BackendError::Unsupported { .. })), "{err:?}");
    assert!(err.to_string().contains("does not support borrowing device memory"), "{err}");
}

device_tests! {
    fresh;
    buffers_of_one_device_are_refused_by_another: [opencl_cpu, opencl_gpu, cuda],
}

fn buffers_of_one_device_are_refused_by_another(dev: &common::TestDevice) {
    let image = BinaryImage::image_from_fn(8, 8, |x, y| x == y).unwrap();
    let mut cpu = CpuLabeler::new(Algorithm::UF);
    let on_host = cpu.upload(&image).unwrap();
    let mut gpu = dev.device.labeler(Algorithm::UF).unwrap();
    let r = gpu.label_on_device(&on_host, Connectivity::Eight);
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{}", dev.token);
    let on_gpu = gpu.upload(&image).unwrap();
    assert!(matches!(cpu.label_on_device(&on_gpu, Connectivity::Eight), Err(Error::DeviceMismatch { .. })));
    // A second device handle has its own buffers.
    let other = Device::open(dev.device.info().id).unwrap().labeler(Algorithm::UF).unwrap();
    let mut other = other;
    assert!(matches!(other.label_on_device(&on_gpu, Connectivity::Eight), Err(Error::DeviceMismatch { .. })));
}

#[test]
fn algorithm_names_parse_case_insensitively() {
    assert_eq!("bke-ic".parse::<Algorithm>().unwrap(), Algorithm::BKE_IC);
    assert_eq!("BKE_IC".parse::<Algorithm>().unwrap(), Algorithm::BKE_IC);
    assert_eq!("uf".parse::<Algorithm>().unwrap(), Algorithm::UF);
    for &a in Algorithm::ALL {
        assert_eq!(a.name().to_lowercase().parse::<Algorithm>().unwrap(), a);
    }
    let err = "bfs".parse::<Algorithm>().unwrap_err();
    assert!(err.to_string().contains("'bfs'"));
}

#[test]
fn unreadable_files_and_bad_outputs_are_named() {
    let missing = Path::new("/nonexistent/page.png");
    match read_binary(missing, Binarize::default()) {
        Err(Error::ImageRead { path, .. }) => assert_eq!(path, "/nonexistent/page.png"),
        other => panic!("{other:?}"),
    }
    let dir = std::env::temp_dir().join(format!("ccl-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.png");
    std::fs::write(&garbage, b"not an image at all").unwrap();
    assert!(matches!(read_binary(&garbage, Binarize::default()), Err(Error::ImageRead { .. })));
    let labels = LabelImage::image(2, 1, vec![1, 0]).unwrap();
    let err = write_labels(&dir.join("out.bmp"), &labels).unwrap_err();
    assert!(matches!(err, Error::ImageWrite { .. }) && err.to_string().contains("bmp"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

device_tests! {
    fresh;
    download_into_a_wrong_sized_buffer_is_refused: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Copying labels into caller memory of the wrong size is a typed error, on every backend.
fn download_into_a_wrong_sized_buffer_is_refused(dev: &common::TestDevice) {
    let image = BinaryImage::image_from_fn(12, 7, |x, y| (x + y) % 3 == 0).unwrap();
    let mut labeler = dev.device.labeler(Algorithm::KE).unwrap();
    let on_device = labeler.upload(&image).unwrap();
    let (labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).unwrap();
    let consecutive = Options::new(Connectivity::Eight).consecutive();
    for len in [0, 83, 85] {
        let mut out = vec![0u32; len];
        match labeler.download_into(&labels, &mut out) {
            Err(Error::SizeMismatch { width: 12, height: 7, len: l }) => assert_eq!(l, len),
            other => panic!("{}: {len} values: expected SizeMismatch, got {other:?}", dev.token),
        }
        let into = |l: &mut ccl::AnyLabeler, d: &ccl::DeviceLabels| l.download_into(d, &mut out);
        let result = ccl::run_host(&mut labeler, &consecutive, |l| l.upload(&image), into);
        assert!(matches!(result, Err(Error::SizeMismatch { .. })));
    }
    let mut out = vec![u32::MAX; 84];
    labeler.download_into(&labels, &mut out).unwrap();
    assert_eq!(out, labeler.download(&labels).unwrap().values(), "{}", dev.token);
    let into = |l: &mut ccl::AnyLabeler, d: &ccl::DeviceLabels| l.download_into(d, &mut out);
    let count = ccl::run_host(&mut labeler, &consecutive, |l| l.upload(&image), into).unwrap().count.unwrap();
    let (expected, n) = ccl::reference::label(&image, Connectivity::Eight).into_consecutive();
    assert_eq!((out.as_slice(), count), (expected.values(), n), "{}", dev.token);
    // The device's own host memory (page-locked on CUDA) works the same.
    let mut pinned = dev.device.pinned_buffer::<u32>(84).unwrap();
    assert!(pinned.iter().all(|&v| v == 0));
    let into = |l: &mut ccl::AnyLabeler, d: &ccl::DeviceLabels| l.download_into(d, &mut pinned);
    let count = ccl::run_host(&mut labeler, &consecutive, |l| l.upload(&image), into).unwrap().count.unwrap();
    assert_eq!((&pinned[..], count), (expected.values(), n), "{} (host array)", dev.token);
}
