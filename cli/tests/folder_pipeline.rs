//! The folder pipeline: `ccl label DIR` and `ccl binarize DIR` spread over several devices
//! (`--devices`, here the CPU reference and an OpenCL CPU device when there is one) with
//! `--jobs` threads write the same files, byte for byte, as one device and one thread; a broken
//! input is named and fails the run at the end; an unknown device fails before any work.

mod support;

use std::path::Path;

use support::{ccl, files_in, run_checked, scratch};

/// The devices of the test: `cpu`, and the first OpenCL CPU device (POCL) when there is one.
fn devices() -> String {
    let found = ccl::discover();
    match found.devices.iter().find(|d| d.id.backend() == ccl::BackendKind::OpenCl) {
        Some(d) => format!("cpu,{}", d.id),
        None => {
            eprintln!("note: no OpenCL device; --devices lists the CPU reference alone");
            "cpu".to_string()
        }
    }
}

/// A folder of gray pages of several sizes, and one broken file.
fn pages(dir: &Path) -> std::path::PathBuf {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for seed in 0..12u32 {
        let (w, h) = (60 + 7 * seed, 41 + 5 * (seed % 4));
        let img = ccl::random_image(w as usize, h as usize, 45, 2, seed).unwrap();
        let gray = image::GrayImage::from_raw(w, h, img.values().iter().map(|p| 30 + p * 200).collect()).unwrap();
        gray.save(input.join(format!("page{seed:02}.png"))).unwrap();
    }
    std::fs::write(input.join("broken.png"), b"\x89PNG\r\n\x1a\n cut short").unwrap();
    input
}

/// Runs `ccl ARGS... IN -o OUT EXTRA...`; checks the exit status 1 and that `broken.png` is
/// named; returns the output folder's files and their bytes.
fn run_folder(args: &[&str], input: &Path, out: &Path, extra: &[&str]) -> Vec<(String, Vec<u8>)> {
    let (o, text) = run_checked(ccl().args(args).arg(input).arg("-o").arg(out).args(extra));
    assert_eq!(o.status.code(), Some(1), "{args:?} {extra:?}: one input is broken:\n{text}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("broken.png") && err.contains("1 of 13"), "{args:?} {extra:?}: {err}");
    let names = files_in(out);
    assert_eq!(names.len(), 12, "{args:?} {extra:?}: {names:?}");
    names.into_iter().map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap())).collect()
}

#[test]
fn several_devices_and_threads_write_what_one_device_writes() {
    let dir = scratch("same");
    let input = pages(&dir);
    let devices = devices();
    let many = ["--devices", devices.as_str(), "--jobs", "3"];
    let one = ["--device", "cpu", "--jobs", "1"];
    for (name, args, extra) in [
        ("label", &["label"][..], &["--threshold", "100"][..]),
        ("label-raw", &["label"][..], &["--threshold", "100", "--raw", "--algo", "uf", "--format", "tiff"][..]),
        ("binarize", &["binarize"][..], &["--format", "npy"][..]),
        ("label-binarize", &["label"][..], &["--binarize", "sauvola:window=15"][..]),
    ] {
        let alone = run_folder(args, &input, &dir.join(format!("{name}-one")), &[&one[..], extra].concat());
        let spread = run_folder(args, &input, &dir.join(format!("{name}-many")), &[&many[..], extra].concat());
        for ((a, bytes_a), (b, bytes_b)) in alone.iter().zip(&spread) {
            assert_eq!(a, b);
            assert!(bytes_a == bytes_b, "{name}: {a} differs between one device and {devices} with 3 jobs");
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_unknown_or_repeated_device_fails_before_any_work() {
    let dir = scratch("unknown");
    let input = pages(&dir);
    for (args, list, says) in [
        (&["label"][..], "cpu,opencl:97", "opencl:97"),
        (&["binarize"][..], "cpu,cuda:97", "cuda:97"),
        (&["label"][..], "cpu,cpu", "listed twice"),
        (&["label"][..], "cpu,gpu", "gpu"),
    ] {
        let out = dir.join("out");
        let (o, text) = run_checked(ccl().args(args).arg(&input).arg("-o").arg(&out).args(["--devices", list]));
        assert!(!o.status.success() && text.contains(says), "--devices {list}: {text}");
        assert!(!out.exists(), "--devices {list}: the output folder was made before the devices were checked");
    }
    // One file over devices is labeled in slabs (cli/tests/slabs.rs), which make no raw labels.
    let out = dir.join("raw.npy");
    let (o, text) = run_checked(
        ccl().arg("label").arg(input.join("page00.png")).args(["--devices", "cpu", "--raw", "-o"]).arg(&out),
    );
    assert!(
        !o.status.success() && text.contains("devices") && text.contains("--raw"),
        "one file with --devices: {text}"
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// Writes `values` as a `.npy` of uint8 with `shape`.
fn write_npy_u8(path: &Path, shape: &[u64], values: &[u8]) {
    use npyz::WriterBuilder;
    let mut file = std::fs::File::create(path).unwrap();
    let mut writer = npyz::WriteOptions::<u8>::new().default_dtype().shape(shape).writer(&mut file).begin_nd().unwrap();
    writer.extend(values.iter().copied()).unwrap();
    writer.finish().unwrap();
}

/// A folder of `.npy` arrays (images of shape (H, W) and a volume of shape (D, H, W)) next to a
/// PNG: every file is labeled as it is alone (the images on the pipeline's devices, the volume
/// as a volume), byte for byte; an array of four axes is named and fails the run at the end.
#[test]
fn a_folder_of_npy_arrays_is_labeled_as_each_file_alone() {
    let dir = scratch("npy");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for seed in 0..5u32 {
        let (w, h) = (50 + 9 * seed as usize, 33 + 4 * seed as usize);
        let img = ccl::random_image(w, h, 50, 1, seed).unwrap();
        write_npy_u8(&input.join(format!("a{seed}.npy")), &[h as u64, w as u64], img.values());
    }
    let volume = ccl::random_volume(9, 7, 5, 40, 1, 3).unwrap();
    write_npy_u8(&input.join("vol.npy"), &[5, 7, 9], volume.values());
    write_npy_u8(&input.join("four.npy"), &[1, 1, 2, 2], &[1, 0, 0, 1]);
    let img = ccl::random_image(40, 30, 50, 1, 9).unwrap();
    image::GrayImage::from_raw(40, 30, img.values().iter().map(|p| p * 255).collect())
        .unwrap()
        .save(input.join("page.png"))
        .unwrap();

    let out = dir.join("out");
    let devices = devices();
    let (o, text) = run_checked(ccl().arg("label").arg(&input).arg("-o").arg(&out).args(["--devices", &devices]));
    assert_eq!(o.status.code(), Some(1), "four.npy fails:\n{text}");
    assert!(text.contains("four.npy") && text.contains("1 of 8"), "{text}");
    assert!(text.contains("1 volume"), "vol.npy is a volume: {text}");
    let names = files_in(&out);
    assert_eq!(names.len(), 7, "{names:?}");
    for name in names {
        let stem = name.trim_end_matches(".npy");
        let source = if stem == "page" { input.join("page.png") } else { input.join(format!("{stem}.npy")) };
        let alone = dir.join(format!("alone-{name}"));
        let (o, text) = run_checked(ccl().arg("label").arg(&source).args(["--device", "cpu", "-o"]).arg(&alone));
        assert!(o.status.success(), "{name}: {text}");
        assert!(std::fs::read(out.join(&name)).unwrap() == std::fs::read(&alone).unwrap(), "{name} differs from alone");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `ccl bench folder` times the four stages on a folder and writes its summary; the scratch
/// folder is left empty and no input is touched.
#[test]
fn bench_folder_times_the_stages_of_the_folder_path() {
    let dir = scratch("bench-folder");
    let input = pages(&dir);
    std::fs::remove_file(input.join("broken.png")).unwrap();
    let before: Vec<_> = files_in(&input).iter().map(|n| std::fs::read(input.join(n)).unwrap()).collect();
    let out = dir.join("bench");
    let (o, text) = run_checked(
        ccl()
            .args(["--no-sync", "bench", "folder"])
            .arg(&input)
            .args(["--devices", "cpu", "--jobs", "2", "--rounds", "1", "--out"])
            .arg(&out),
    );
    assert!(o.status.success(), "{text}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for stage in ["| decode |", "| write |", "| codecs |", "| label |", "not synced"] {
        assert!(summary.contains(stage), "{stage}: {summary}");
    }
    assert!(files_in(&out) == ["summary.md"], "{:?}", files_in(&out));
    let after: Vec<_> = files_in(&input).iter().map(|n| std::fs::read(input.join(n)).unwrap()).collect();
    assert!(before == after, "the inputs changed");
    std::fs::remove_dir_all(dir).unwrap();
}
