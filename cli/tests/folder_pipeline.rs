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
    let (o, text) = run_checked(ccl().arg("label").arg(input.join("page00.png")).args(["--devices", "cpu"]));
    assert!(!o.status.success() && text.contains("--device"), "one file with --devices: {text}");
    std::fs::remove_dir_all(dir).unwrap();
}
