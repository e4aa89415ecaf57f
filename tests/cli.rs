//! The `ccl` command line, end to end: devices, labeling a real page on every backend with the
//! same result, output formats, and clean errors.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `ccl` binary: `CCL_BIN` when set (binaries copied to another machine), else cargo's.
fn ccl() -> Command {
    let bin = std::env::var("CCL_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ccl").to_string());
    Command::new(bin)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run ccl");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("panicked"), "ccl panicked:\n{text}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccl-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Reads a `.npy` of `<u4` labels with shape (H, W): (height, width, labels).
fn read_npy(path: &Path) -> (u64, u64, Vec<u32>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.dtype(), npyz::DType::Plain("<u4".parse().unwrap()));
    assert_eq!(npy.order(), npyz::Order::C);
    let shape = npy.shape().to_vec();
    assert_eq!(shape.len(), 2);
    (shape[0], shape[1], npy.into_vec::<u32>().unwrap())
}

fn count_of(text: &str) -> u64 {
    let line = text.lines().find(|l| l.contains(" components (")).expect("a component count line");
    line.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn devices_lists_the_cpu_reference_and_explains_missing_backends() {
    let out = run(ccl().arg("devices"));
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.lines().any(|l| l.starts_with("cpu ")), "{text}");
    for backend in ["cuda", "opencl"] {
        let listed = text.lines().any(|l| l.starts_with(&format!("{backend}:")));
        let explained = text.lines().any(|l| l.starts_with(&format!("# {backend}:")));
        assert!(listed || explained, "{backend} neither listed nor explained:\n{text}");
    }
}

#[test]
fn label_with_no_input_writes_the_colorized_sample() {
    let dir = scratch("sample");
    let png = dir.join("sample.png");
    let out = run(ccl().args(["label", "-o"]).arg(&png));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).contains("built-in sample"));
    let img = image::open(&png).unwrap().into_rgb8();
    assert_eq!((img.width(), img.height()), (1024, 768));
    assert_eq!(img.get_pixel(0, 0).0, [0, 0, 0], "background is black");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A real page (DIBCO when the shared data is there, else the built-in sample saved as PNG),
/// thresholded, gives the same count and the same consecutive labels on every backend.
#[test]
fn a_real_page_gives_the_same_labels_on_every_backend() {
    let dir = scratch("page");
    let page = common::dibco_pages(1).into_iter().next().unwrap_or_else(|| {
        let path = dir.join("sample-input.png");
        let s = ccl::sample_image();
        let gray = image::GrayImage::from_raw(
            s.width() as u32,
            s.height() as u32,
            s.pixels().iter().map(|&p| if p != 0 { 0 } else { 255 }).collect(),
        )
        .unwrap();
        gray.save(&path).unwrap();
        path
    });
    let mut backends = vec!["cpu"];
    let found = ccl::discover();
    for (backend, name) in [(ccl::BackendKind::OpenCl, "opencl"), (ccl::BackendKind::Cuda, "cuda")] {
        if found.devices.iter().any(|d| d.id.backend() == backend) {
            backends.push(name);
        }
    }
    let mut results = Vec::new();
    for (backend, connectivity) in backends.iter().flat_map(|b| ["4", "8"].map(move |c| (*b, c))) {
        let npy = dir.join(format!("{backend}-{connectivity}.npy"));
        let out = run(ccl()
            .arg("label")
            .arg(&page)
            .args(["--threshold", "128", "--invert", "--algo", "UF", "--backend", backend])
            .args(["--connectivity", connectivity, "-o"])
            .arg(&npy));
        let text = stdout(&out);
        assert!(out.status.success(), "{backend}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains(&format!("device: {backend}")), "{text}");
        let (h, w, labels) = read_npy(&npy);
        let count = count_of(&text);
        assert_eq!(labels.iter().copied().max().unwrap_or(0) as u64, count, "consecutive labels 1..N");
        assert!(count > 10, "a thresholded page has many components");
        results.push((backend, connectivity, h, w, count, labels));
    }
    for r in &results {
        let reference = results.iter().find(|c| c.0 == "cpu" && c.1 == r.1).unwrap();
        assert_eq!((r.2, r.3, r.4), (reference.2, reference.3, reference.4), "{} {}", r.0, r.1);
        assert!(r.5 == reference.5, "{} {}-connectivity labels differ from cpu", r.0, r.1);
    }
    eprintln!(
        "{} on {:?}: counts {:?}",
        page.display(),
        backends,
        results.iter().map(|r| (r.0, r.1, r.4)).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn raw_labels_and_tiff_output() {
    let dir = scratch("raw");
    let npy = dir.join("raw.npy");
    let out = run(ccl().args(["label", "--backend", "cpu", "--raw", "-o"]).arg(&npy));
    assert!(out.status.success());
    let (h, w, labels) = read_npy(&npy);
    assert_eq!((h, w), (768, 1024));
    // Raw labels are first-pixel index + 1: every label points at a pixel holding itself.
    assert!(labels.iter().all(|&l| l == 0 || labels[l as usize - 1] == l));
    let tiff = dir.join("labels.tiff");
    assert!(run(ccl().args(["label", "--backend", "cpu", "-o"]).arg(&tiff)).status.success());
    let decoded = image::open(&tiff);
    // The image crate may not decode 32-bit gray; the tiff crate does.
    let mut decoder =
        tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(&tiff).unwrap())).unwrap();
    assert_eq!(decoder.dimensions().unwrap(), (1024, 768));
    match decoder.read_image().unwrap() {
        tiff::decoder::DecodingResult::U32(v) => assert_eq!(v.len(), 1024 * 768),
        _ => panic!("expected 32-bit labels (image crate said {:?})", decoded.err()),
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn errors_are_clean_and_name_the_problem() {
    let out = run(ccl().args(["label", "/nonexistent/in.png", "-o", "/tmp/x.png", "--backend", "cpu"]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/in.png"));

    let out =
        run(ccl().args(["label", "--algo", "bke-ic", "--connectivity", "4", "--backend", "cpu", "-o", "/tmp/x.png"]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("BKE_IC does not support 4-connectivity"));

    let out = run(ccl().args(["label", "--algo", "nope"]));
    assert!(!out.status.success());

    // With no OpenCL platform visible, asking for OpenCL is an error, not a crash.
    let out = run(ccl().env("OCL_ICD_VENDORS", "/nonexistent").env("OCL_ICD_FILENAMES", "").args([
        "label",
        "--backend",
        "opencl",
        "-o",
        "/tmp/x.png",
    ]));
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && text.contains("opencl backend unavailable"), "{text}");
    let out = run(ccl().env("OCL_ICD_VENDORS", "/nonexistent").env("OCL_ICD_FILENAMES", "").arg("devices"));
    assert!(out.status.success());
    assert!(stdout(&out).contains("# opencl:"), "{}", stdout(&out));
}

/// `--algo NAME` works for every algorithm, in any spelling, and gives the partition of
/// `--backend cpu` (consecutive labels are canonical, so the files must be identical).
#[test]
fn every_algorithm_name_labels_like_the_cpu_reference() {
    let dir = scratch("algos");
    let found = ccl::discover();
    let gpu_devices: Vec<String> =
        found.devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).map(|d| d.id.to_string()).collect();
    let label = |device: &str, algo: &str, connectivity: &str, out: &Path| {
        let o = run(ccl()
            .args(["label", "--device", device, "--algo", algo, "--connectivity", connectivity, "-o"])
            .arg(out));
        assert!(o.status.success(), "{device} {algo} {connectivity}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(out).unwrap()
    };
    for (a, algorithm) in ccl::Algorithm::ALL.into_iter().enumerate() {
        let spellings = [algorithm.name().to_string(), algorithm.name().to_lowercase().replace('_', "-")];
        for &connectivity in algorithm.connectivities() {
            let c = connectivity.neighbours().to_string();
            let expected = label("cpu", &spellings[0], &c, &dir.join("cpu.npy"));
            for (k, device) in gpu_devices.iter().enumerate() {
                let spelling = &spellings[(a + k) % 2];
                let got = label(device, spelling, &c, &dir.join("gpu.npy"));
                assert!(got == expected, "{algorithm} ({spelling}) on {device}, {c}-connectivity differs from cpu");
            }
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn generate_writes_the_random_image_the_library_makes() {
    let dir = scratch("generate");
    let png = dir.join("r.png");
    let out = run(ccl()
        .args(["generate", "--width", "67", "--height", "45", "--density", "30", "--granularity", "4"])
        .args(["--seed", "7", "-o"])
        .arg(&png));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = image::open(&png).unwrap().into_luma8();
    let expected = ccl::random_image(67, 45, 30, 4, 7).unwrap();
    assert_eq!(written.as_raw().iter().map(|&p| u8::from(p != 0)).collect::<Vec<_>>(), expected.pixels());
    assert!(!run(ccl().args(["generate", "--density", "101", "-o"]).arg(&png)).status.success());
    std::fs::remove_dir_all(dir).unwrap();
}
