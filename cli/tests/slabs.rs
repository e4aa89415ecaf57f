//! `ccl label` in slabs: `--label-bits 64`, `--max-device-bytes` (or `CCL_MAX_DEVICE_BYTES`) and
//! `--devices` for one file give the labels of labeling the array whole, on every device, as uint64 or uint32 .npy (and
//! PNG or TIFF at 32 bits); what slabs cannot serve is refused before any work, leaving an
//! existing output as it was.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use std::path::Path;

use support::{ccl, run_checked, scratch};

/// A .npy's type string, shape and values (as u64).
fn read_npy(path: &Path) -> (String, Vec<u64>, Vec<u64>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let descr = npy.dtype().descr().trim_matches('\'').to_string();
    let shape = npy.shape().to_vec();
    let values = match descr.as_str() {
        "<u8" => npy.into_vec::<u64>().unwrap(),
        "<u4" => npy.into_vec::<u32>().unwrap().into_iter().map(u64::from).collect(),
        other => panic!("labels of type {other}"),
    };
    (descr, shape, values)
}

fn device_arg(d: &common::TestDevice) -> String {
    d.device.info().id.to_string()
}

device_tests! {
    slabs_give_the_labels_of_the_whole_array: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// An image (bool, mapped) and a volume (uint16 in Fortran order, converted) labeled in slabs
/// of a few planes, at 64 and 32 bits, equal the consecutive labels of the CPU reference.
fn slabs_give_the_labels_of_the_whole_array(d: &common::TestDevice) {
    let dir = scratch(&format!("whole-{}", d.token));
    let image = ccl::random_image(257, 301, 50, 2, 11).unwrap();
    let input = dir.join("image.npy");
    std::fs::write(&input, common::npy_bytes("|b1", &[301, 257], false, image.values())).unwrap();
    let (expected, n) = ccl::reference::label(&image, ccl::Connectivity::Eight).to_consecutive();
    for (bits, cap, descr) in [("64", "20000", "<u8"), ("32", "5000", "<u4"), ("64", "100000000", "<u8")] {
        let out = dir.join(format!("labels-{bits}-{cap}.npy"));
        let (status, text) = run_checked(
            ccl()
                .args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", &device_arg(d)])
                .args(["--label-bits", bits, "--max-device-bytes", cap]),
        );
        assert!(status.status.success(), "{}: {text}", d.token);
        assert!(text.contains(&format!("{n} components")) && text.contains(&format!("{bits}-bit labels")), "{text}");
        let (got_descr, shape, labels) = read_npy(&out);
        assert_eq!((got_descr.as_str(), shape), (descr, vec![301, 257]), "{}", d.token);
        let expected: Vec<u64> = expected.values().iter().map(|&l| u64::from(l)).collect();
        assert_eq!(labels, expected, "{} {bits} bits, cap {cap}", d.token);
    }

    // One image over two devices (the CPU reference and this one; the CPU alone is one device
    // and one slab): a slab on each at a time.
    let out = dir.join("devices.npy");
    let (devices, slabs) = match d.token {
        "cpu" => ("cpu".to_string(), " 1 slab of 301 planes"),
        _ => (format!("cpu,{}", device_arg(d)), " 2 slabs of 151 planes"),
    };
    let (status, text) =
        run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--devices", &devices]));
    assert!(status.status.success() && text.contains(slabs), "{}: {text}", d.token);
    let (descr, _, labels) = read_npy(&out);
    let expected64: Vec<u64> = expected.values().iter().map(|&l| u64::from(l)).collect();
    assert_eq!((descr.as_str(), &labels), ("<u4", &expected64), "{} with the CPU", d.token);

    // A volume of uint16 in Fortran order: (D, H, W) = (9, 17, 23) stored first axis fastest.
    let volume = ccl::random_volume(23, 17, 9, 40, 1, 5).unwrap();
    let mut fortran = vec![0u8; volume.values().len() * 2];
    for z in 0..9 {
        for y in 0..17 {
            for x in 0..23 {
                let at = z + 9 * (y + 17 * x);
                fortran[2 * at] = volume.values()[x + 23 * (y + 17 * z)] * 7;
            }
        }
    }
    let input = dir.join("volume.npy");
    std::fs::write(&input, common::npy_bytes("<u2", &[9, 17, 23], true, &fortran)).unwrap();
    for (connectivity, c) in [("6", ccl::Connectivity::Six), ("26", ccl::Connectivity::TwentySix)] {
        let out = dir.join(format!("volume-{connectivity}.npy"));
        let (status, text) = run_checked(
            ccl()
                .args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", &device_arg(d)])
                .args(["--connectivity", connectivity, "--max-device-bytes", "10000"]),
        );
        assert!(status.status.success(), "{}: {text}", d.token);
        let (expected, _) = ccl::reference::label_volume(&volume, c).unwrap().to_consecutive();
        let (descr, shape, labels) = read_npy(&out);
        assert_eq!((descr.as_str(), shape), ("<u4", vec![9, 17, 23]));
        let expected: Vec<u64> = expected.values().iter().map(|&l| u64::from(l)).collect();
        assert_eq!(labels, expected, "{} {connectivity}", d.token);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `CCL_MAX_DEVICE_BYTES` forces slabs where they apply (the PNG is that of the whole
/// labeling) and leaves the other labelings whole.
#[test]
fn the_environment_cap_forces_slabs_where_they_apply() {
    let dir = scratch("env");
    let image = ccl::random_image(120, 90, 45, 1, 3).unwrap();
    let input = dir.join("image.npy");
    std::fs::write(&input, common::npy_bytes("|u1", &[90, 120], false, image.values())).unwrap();
    let whole = dir.join("whole.png");
    let (out, text) = run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", whole.to_str().unwrap()]));
    assert!(out.status.success() && !text.contains(" slab"), "{text}");
    let capped = dir.join("capped.png");
    let (out, text) = run_checked(
        ccl()
            .args(["label", input.to_str().unwrap(), "-o", capped.to_str().unwrap()])
            .env("CCL_MAX_DEVICE_BYTES", "4000"),
    );
    assert!(out.status.success() && text.contains(" slabs of "), "{text}");
    assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&capped).unwrap());
    // Statistics and filters are made in slabs too: the same labels and rows as whole.
    let stats_of = |name: &str, env: Option<&str>| {
        let (labels, stats) = (dir.join(format!("{name}.npy")), dir.join(format!("{name}.csv")));
        let mut cmd = ccl();
        cmd.args([
            "label",
            input.to_str().unwrap(),
            "-o",
            labels.to_str().unwrap(),
            "--stats",
            stats.to_str().unwrap(),
        ])
        .args(["--min-size", "3", "--keep-largest", "20"]);
        if let Some(cap) = env {
            cmd.env("CCL_MAX_DEVICE_BYTES", cap);
        }
        let (out, text) = run_checked(&mut cmd);
        assert!(out.status.success(), "{text}");
        (text, std::fs::read(labels).unwrap(), std::fs::read_to_string(stats).unwrap())
    };
    let (text, whole_labels, whole_stats) = stats_of("whole", None);
    assert!(!text.contains(" slab") && whole_stats.lines().count() == 21, "{text}\n{whole_stats}");
    let (text, labels, stats) = stats_of("capped", Some("4000"));
    assert!(text.contains(" slabs of "), "{text}");
    assert_eq!((labels, stats), (whole_labels, whole_stats));
    let (out, text) = run_checked(
        ccl()
            .args(["label", input.to_str().unwrap(), "-o", capped.to_str().unwrap()])
            .env("CCL_MAX_DEVICE_BYTES", "lots"),
    );
    assert!(!out.status.success() && text.contains("CCL_MAX_DEVICE_BYTES") && text.contains("lots"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What slabs cannot serve is refused from the arguments or the .npy header, before reading the
/// samples, and an existing output stays as it was.
#[test]
fn slab_options_are_checked_before_any_work() {
    let dir = scratch("errors");
    let small = dir.join("small.npy");
    std::fs::write(&small, common::npy_bytes("|u1", &[4, 5], false, &[1; 20])).unwrap();
    // A header of 65537 x 65536 bytes over a sparse file: past 32-bit labels, never read here.
    let large = dir.join("large.npy");
    let header = common::npy_bytes("|u1", &[65537, 65536], false, &[]);
    std::fs::write(&large, &header).unwrap();
    std::fs::OpenOptions::new().write(true).open(&large).unwrap().set_len(header.len() as u64 + 65537 * 65536).unwrap();
    let existing = dir.join("existing.png");
    std::fs::write(&existing, b"keep me").unwrap();
    let npy_out = dir.join("out.npy");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![small.to_str().unwrap(), "-o", existing.to_str().unwrap(), "--label-bits", "64"], "written as .npy"),
        (vec![small.to_str().unwrap(), "-o", npy_out.to_str().unwrap(), "--label-bits", "64", "--raw"], "--raw"),
        (
            vec![
                small.to_str().unwrap(),
                "-o",
                npy_out.to_str().unwrap(),
                "--max-device-bytes",
                "99",
                "--binarize",
                "nick",
            ],
            "--binarize",
        ),
        (vec![small.to_str().unwrap(), "--label-bits", "16"], "32 or 64"),
        (vec![small.to_str().unwrap(), "--max-device-bytes", "0"], "0"),
        (vec![large.to_str().unwrap(), "-o", npy_out.to_str().unwrap(), "--label-bits", "32"], "4294967295"),
        (vec![large.to_str().unwrap(), "-o", npy_out.to_str().unwrap(), "--max-pixels", "1000"], "65537"),
    ];
    for (args, needle) in cases {
        let (out, text) = run_checked(ccl().arg("label").args(&args));
        assert!(!out.status.success() && text.contains("error:") && text.contains(needle), "{args:?}: {text}");
    }
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me");
    assert!(!npy_out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("ccl-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A zarr array's labels (uint32 or uint64) and shape.
fn read_zarr(path: &Path) -> (String, Vec<u64>, Vec<u64>) {
    let store = std::sync::Arc::new(zarrs::filesystem::FilesystemStore::new(path).unwrap());
    let array = zarrs::array::Array::open(store, "/").unwrap();
    let shape = array.shape().to_vec();
    let all = zarrs::array_subset::ArraySubset::new_with_shape(shape.clone());
    let (kind, values) = match array.data_type() {
        zarrs::array::DataType::UInt32 => {
            let v = array.retrieve_array_subset_elements::<u32>(&all).unwrap();
            ("uint32", v.into_iter().map(u64::from).collect())
        }
        zarrs::array::DataType::UInt64 => ("uint64", array.retrieve_array_subset_elements::<u64>(&all).unwrap()),
        other => panic!("labels of type {other}"),
    };
    (kind.to_string(), shape, values)
}

device_tests! {
    zarr_in_and_out: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// .npy to zarr (32 and 64 bits, capped into slabs), zarr to .npy and zarr to zarr: the labels of
/// the whole array; an existing zarr output is replaced whole, and kept when the call fails.
fn zarr_in_and_out(d: &common::TestDevice) {
    let dir = scratch(&format!("zarr-{}", d.token));
    let volume = ccl::random_volume(23, 17, 19, 40, 1, 9).unwrap();
    let input = dir.join("volume.npy");
    std::fs::write(&input, common::npy_bytes("|b1", &[19, 17, 23], false, volume.values())).unwrap();
    let want = |c| -> Vec<u64> {
        let (labels, _) = ccl::reference::label_volume(&volume, c).unwrap().to_consecutive();
        labels.values().iter().map(|&l| u64::from(l)).collect()
    };
    let run = |args: &[&str]| {
        let (out, text) = run_checked(ccl().arg("label").args(args).args(["--device", &device_arg(d)]));
        assert!(out.status.success(), "{} {args:?}: {text}", d.token);
        text
    };
    let labels = dir.join("labels.zarr");
    for (bits, kind) in [("64", "uint64"), ("32", "uint32")] {
        run(&[
            input.to_str().unwrap(),
            "-o",
            labels.to_str().unwrap(),
            "--label-bits",
            bits,
            "--max-device-bytes",
            "30000",
        ]);
        let (got_kind, shape, values) = read_zarr(&labels);
        assert_eq!((got_kind.as_str(), shape), (kind, vec![19, 17, 23]), "{}", d.token);
        assert_eq!(values, want(ccl::Connectivity::TwentySix), "{} npy to zarr, {bits} bits", d.token);
    }
    // The labels are a mask of the same foreground: zarr in, .npy and zarr out.
    let npy = dir.join("again.npy");
    run(&[labels.to_str().unwrap(), "-o", npy.to_str().unwrap(), "--connectivity", "6"]);
    assert_eq!(read_npy(&npy).2, want(ccl::Connectivity::Six), "{} zarr to npy", d.token);
    let again = dir.join("again.zarr");
    let text = run(&[labels.to_str().unwrap(), "-o", again.to_str().unwrap(), "--connectivity", "18"]);
    assert!(text.contains("zarr, chunks"), "{text}");
    assert_eq!(read_zarr(&again).2, want(ccl::Connectivity::Eighteen), "{} zarr to zarr", d.token);
    // A failing call leaves the existing output as it was, and no temporary folder.
    let (out, text) = run_checked(ccl().arg("label").arg(&labels).arg("-o").arg(&again).args(["--connectivity", "8"]));
    assert!(!out.status.success() && text.contains("8"), "{text}");
    assert_eq!(read_zarr(&again).2, want(ccl::Connectivity::Eighteen));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("ccl-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The temporary folder of a killed run is removed by the next run there; a live one stays.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = dir.join(format!(".again.zarr.ccl-tmp-{}-xGoxl3", gone.id()));
    let live = dir.join(format!(".other.zarr.ccl-tmp-{}-Ab12Cd", std::process::id()));
    for folder in [&stale, &live] {
        std::fs::create_dir_all(folder.join("c/0")).unwrap();
        std::fs::write(folder.join("c/0/0"), b"partial").unwrap();
    }
    let text = run(&[labels.to_str().unwrap(), "-o", again.to_str().unwrap(), "--connectivity", "18"]);
    assert!(text.contains("removed 1 unfinished temporary file") && !stale.exists() && live.exists(), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
