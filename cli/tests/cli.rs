//! The `ccl` command line, end to end: devices, labeling a real page on every backend with the
//! same result, output formats, and clean errors. Tests of one device each are one test per
//! device (`cargo test --test cli -- ::cuda` runs the CUDA ones).

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
mod support;
use support::ccl;

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
            s.values().iter().map(|&p| if p != 0 { 0 } else { 255 }).collect(),
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
    for (a, algorithm) in ccl::Algorithm::ALL.iter().enumerate() {
        let spellings = [algorithm.name().to_string(), algorithm.name().to_lowercase().replace('_', "-")];
        for &connectivity in algorithm.connectivities().iter().filter(|c| c.dims() == 2) {
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
    assert_eq!(written.as_raw().iter().map(|&p| u8::from(p != 0)).collect::<Vec<_>>(), expected.values());
    assert!(!run(ccl().args(["generate", "--density", "101", "-o"]).arg(&png)).status.success());
    std::fs::remove_dir_all(dir).unwrap();
}

/// A 16-bit image with blocks of 100, 128, 129, 300 and 65535 has five components on every
/// backend (they used to be cut to 8 bits first, which left three), and `--threshold` is in
/// the 16-bit range.
#[test]
fn sixteen_bit_inputs_label_on_their_own_values_on_every_backend() {
    let dir = scratch("16bit");
    let values = [100u16, 128, 129, 300, 65535];
    let image = image::ImageBuffer::from_fn(42, 10, |x, y| {
        let inside = x % 8 >= 2 && (2..8).contains(&y) && x / 8 < 5;
        image::Luma([if inside { values[(x / 8) as usize] } else { 0 }])
    });
    let mut devices = vec!["cpu".to_string()];
    devices.extend(
        ccl::discover().devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).map(|d| d.id.to_string()),
    );
    for ext in ["png", "tiff"] {
        let input = dir.join(format!("blocks.{ext}"));
        image.save(&input).unwrap();
        for device in &devices {
            for (threshold, expected) in [(None, 5), (Some("200"), 2), (Some("128.5"), 3)] {
                let mut cmd = ccl();
                cmd.arg("label").arg(&input).args(["--device", device, "-o"]).arg(dir.join("l.npy"));
                if let Some(t) = threshold {
                    cmd.args(["--threshold", t]);
                }
                let out = run(&mut cmd);
                assert!(out.status.success(), "{ext} {device}: {}", String::from_utf8_lossy(&out.stderr));
                assert_eq!(count_of(&stdout(&out)), expected, "{ext} on {device}, threshold {threshold:?}");
                assert!(stdout(&out).contains("16-bit gray"), "{}", stdout(&out));
            }
        }
        let out =
            run(ccl().arg("label").arg(&input).args(["--threshold", "70000", "--backend", "cpu", "-o", "/tmp/x.npy"]));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("0-65535"), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A multi-page TIFF is a volume (one slice per page); an animated GIF says that only its first
/// frame is labeled.
#[test]
fn multi_page_tiffs_are_volumes_and_other_frames_are_noted() {
    let dir = scratch("pages");
    let path = dir.join("pages.tiff");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
        for _ in 0..2 {
            encoder.write_image::<tiff::encoder::colortype::Gray8>(4, 4, &[255; 16]).unwrap();
        }
    }
    let out = run(ccl().arg("label").arg(&path).args(["--backend", "cpu", "-o"]).arg(dir.join("l.npy")));
    let text = stdout(&out);
    assert!(out.status.success() && text.contains("4x4x2 volume"), "{text}");
    let gif = dir.join("frames.gif");
    {
        let frames = (0..2).map(|_| image::Frame::new(image::RgbaImage::from_pixel(4, 4, image::Rgba([255; 4]))));
        let mut encoder = image::codecs::gif::GifEncoder::new(std::fs::File::create(&gif).unwrap());
        encoder.encode_frames(frames).unwrap();
    }
    let out = run(ccl().arg("label").arg(&gif).args(["--backend", "cpu", "-o"]).arg(dir.join("g.npy")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("holds several frames or pages; only the first is labeled"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Errors say their cause once, with the real numbers and places.
#[test]
fn error_messages_name_the_real_cause_once() {
    // A missing platform: said once, naming the folder the loader searched.
    let out = run(ccl().env("OCL_ICD_VENDORS", "/nonexistent/vendors").env("OCL_ICD_FILENAMES", "").args([
        "label",
        "--backend",
        "opencl",
        "-o",
        "/tmp/x.png",
    ]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.matches("backend unavailable").count(), 1, "{err}");
    assert!(err.contains("OCL_ICD_VENDORS=/nonexistent/vendors"), "{err}");
    // A broken loader library is not reported as missing.
    let dir = scratch("broken-lib");
    std::fs::write(dir.join("libOpenCL.so.1"), b"not a shared library").unwrap();
    std::fs::write(dir.join("libcuda.so.1"), b"not a shared library").unwrap();
    let out = run(ccl().env("LD_LIBRARY_PATH", &dir).arg("devices"));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    let opencl = text.lines().find(|l| l.starts_with("# opencl:")).unwrap_or_else(|| panic!("{text}"));
    assert!(opencl.contains("libOpenCL.so.1 could not be loaded") && opencl.contains("file too short"), "{opencl}");
    // CUDA tries other names first (libcuda.so); where none of them loads, the broken one is named.
    if let Some(cuda) = text.lines().find(|l| l.starts_with("# cuda:")) {
        assert!(cuda.contains("could not be loaded") && cuda.contains("libcuda.so.1"), "{cuda}");
    }
    std::fs::remove_dir_all(dir).unwrap();
    // An unknown index names how many devices there are; the device line is not printed.
    let found = ccl::discover();
    let opencl = found.devices.iter().filter(|d| d.id.backend() == ccl::BackendKind::OpenCl).count();
    if opencl > 0 {
        let out = run(ccl().args(["label", "--device", "opencl:99", "-o", "/tmp/x.png"]));
        let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success() && !text.contains("device: opencl:99"), "{text}");
        let expected = if opencl == 1 {
            "there is 1 OpenCL device (opencl:0)".to_string()
        } else {
            format!("there are {opencl} OpenCL devices")
        };
        assert!(text.contains(&expected), "{text}");
    }
    // There is one CPU device.
    let out = run(ccl().args(["label", "--device", "cpu:5", "-o", "/tmp/x.png"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is one CPU device"));
    // A results file that is not there is a file, not an image.
    let out = run(ccl().args(["bench", "plot", "--results", "/nonexistent/results.csv", "--out", "/tmp/ccl-plot"]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success() && err.contains("cannot read /nonexistent/results.csv") && !err.contains("image"),
        "{err}"
    );
    // An unknown plot mode names every mode there is.
    let results = common::repo_root().join("bench-results/h100/end-to-end-pages/results.csv");
    let out = run(ccl().args(["bench", "plot", "--mode", "bogus", "--out", "/tmp/ccl-plot", "--results"]).arg(results));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && err.contains("'bogus' is not a mode") && err.contains("end-to-end"), "{err}");
}

/// Every numeric option is range-checked by the argument parser (exit status 2, a message
/// naming the range) instead of failing later, panicking or allocating without bound.
#[test]
fn numeric_options_are_range_checked() {
    let cases: &[&[&str]] = &[
        &["bench", "average", "--runs", "4294967295"],
        &["bench", "average", "--runs", "0"],
        &["bench", "average", "--warmup", "99999999"],
        &["bench", "average", "--images", "0"],
        &["bench", "average", "--density", "500"],
        &["bench", "average", "--size", "0x10"],
        &["bench", "average", "--size", "70000x70000"],
        &["bench", "density", "--densities", "100:0:10"],
        &["bench", "density", "--densities", "0:100:0"],
        &["bench", "density", "--granularities", "0"],
        &["bench", "size", "--sizes", "0"],
        &["bench", "size", "--sizes", "100000"],
        &["bench", "size", "--density", "101"],
        &["bench", "steps", "--connectivity", "5"],
        &["bench", "average", "--hilbert", "11"],
        &["bench", "average", "--hilbert-side", "2"],
        &["bench", "size", "--dims", "4"],
        &["bench", "density", "--size", "4x4x0"],
        &["generate", "-o", "/tmp/g.png", "--granularity", "0"],
        &["generate", "-o", "/tmp/g.png", "--width", "0"],
        &["generate", "-o", "/tmp/g.png", "--density", "101"],
        &["label", "--threshold", "nan"],
        &["label", "--threshold", "abc"],
        &["label", "--threshold", "inf"],
        &["label", "--max-pixels", "0"],
        &["label", "--max-pixels", "4294967296"],
        &["label", "--connectivity", "5"],
    ];
    for args in cases {
        let out = run(ccl().args(*args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("invalid value"), "{args:?}: {err}");
    }
}

/// A 24000x24000 image (576 Mpx, beyond the image crate's default 512 MB decoding limit) is read
/// and labeled; `--max-pixels` refuses it before decoding, naming its size and memory.
#[test]
#[ignore = "full mode: scripts/test.sh --full"]
fn a_24000_by_24000_image_is_read_and_labeled() {
    let dir = scratch("large");
    let png = dir.join("large.png");
    let out = run(ccl()
        .args(["generate", "--width", "24000", "--height", "24000", "--density", "50", "--granularity", "1000"])
        .arg("-o")
        .arg(&png));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(ccl().arg("label").arg(&png).args(["--max-pixels", "100000000", "-o"]).arg(dir.join("l.npy")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("24000x24000") && err.contains("--max-pixels"), "{err}");
    assert!(err.contains("GB of host memory"), "{err}");
    let npy = dir.join("labels.npy");
    let out = run(ccl().arg("label").arg(&png).args(["--backend", "cpu", "-o"]).arg(&npy));
    let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("24000x24000") && text.contains("GB of host memory"), "{text}");
    let expected = ccl::reference::label(&ccl::random_image(24, 24, 50, 1, 5489).unwrap(), ccl::Connectivity::Eight);
    assert_eq!(count_of(&stdout(&out)), u64::from(expected.component_count()), "one draw per 1000x1000 square");
    assert_eq!(std::fs::metadata(&npy).unwrap().len(), 128 + 24000 * 24000 * 4);
    std::fs::remove_dir_all(dir).unwrap();
}

/// `ccl label DIR -o OUTDIR` labels every image of a folder; an unreadable file is named and
/// skipped, the others are written (the same labels as one-file calls), and the exit status is
/// 1 at the end.
#[test]
fn a_folder_labels_the_readable_images_and_fails_at_the_end() {
    let dir = scratch("folder");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for seed in 0..5u32 {
        let img = ccl::random_image(97, 61, 45, 2, seed).unwrap();
        let gray = image::GrayImage::from_raw(97, 61, img.values().iter().map(|p| p * 255).collect()).unwrap();
        gray.save(input.join(format!("page{seed}.png"))).unwrap();
    }
    std::fs::write(input.join("broken.png"), b"\x89PNG\r\n\x1a\n cut short").unwrap();
    std::fs::write(input.join("notes.txt"), b"not an image").unwrap();
    let output = dir.join("out");
    let out = run(ccl().arg("label").arg(&input).arg("-o").arg(&output).args(["--backend", "cpu"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("broken.png") && err.contains("1 of 6 images failed"), "{err}");
    assert!(stdout(&out).contains("labeled 5 images"), "{}", stdout(&out));
    let mut written: Vec<String> =
        std::fs::read_dir(&output).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, (0..5).map(|s| format!("page{s}.npy")).collect::<Vec<_>>());
    // The same labels as labeling each file alone, on every device.
    let devices: Vec<String> = ccl::discover().devices.iter().map(|d| d.id.to_string()).collect();
    for device in &devices {
        let out_dir = dir.join(format!("out-{}", device.replace(':', "-")));
        let o = run(ccl().arg("label").arg(&input).arg("-o").arg(&out_dir).args(["--device", device, "--algo", "bke"]));
        assert_eq!(o.status.code(), Some(1), "{device}");
        for seed in 0..5 {
            let single = dir.join("single.npy");
            let s = run(ccl()
                .arg("label")
                .arg(input.join(format!("page{seed}.png")))
                .args(["--backend", "cpu", "-o"])
                .arg(&single));
            assert!(s.status.success());
            let name = format!("page{seed}.npy");
            assert!(std::fs::read(&single).unwrap() == std::fs::read(out_dir.join(&name)).unwrap(), "{device} {name}");
        }
    }
    // Two inputs that would write the same output are refused before any work.
    image::GrayImage::new(4, 4).save(input.join("page0.tiff")).unwrap();
    let o = run(ccl().arg("label").arg(&input).arg("-o").arg(dir.join("clash")));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(1) && err.contains("would both write"), "{err}");
    // An output named like a label file (any extension `-o FILE` takes) is not a folder.
    for name in ["labels.tif", "labels.NPY"] {
        let o = run(ccl().arg("label").arg(&input).arg("-o").arg(dir.join(name)).args(["--backend", "cpu"]));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.code() == Some(1) && err.contains("names the output folder"), "{name}: {err}");
        assert!(!dir.join(name).exists(), "{name} was created");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Naming a device opens only its backend: a stand-in libOpenCL.so.1 that leaves a mark when
/// it is loaded stays unloaded for `--device cpu` and `--device cuda:0`, and is loaded by
/// `ccl devices` (which lists every backend), proving the probe works.
#[test]
fn naming_a_device_opens_only_its_backend() {
    let dir = scratch("only-asked");
    let source = dir.join("probe.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void mark(void) {\n\
         const char *p = getenv(\"CCL_PROBE_MARK\"); if (p) { FILE *f = fopen(p, \"w\"); if (f) fclose(f); } }\n",
    )
    .unwrap();
    let lib = dir.join("libOpenCL.so.1");
    let gcc = Command::new("gcc").args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&source).output();
    let gcc = gcc.expect("gcc builds the probe library (it is on every machine of this project)");
    assert!(gcc.status.success(), "{}", String::from_utf8_lossy(&gcc.stderr));
    let mark = dir.join("loaded");
    let probe = |args: &[&str]| {
        let _ = std::fs::remove_file(&mark);
        let out = run(ccl().env("LD_LIBRARY_PATH", &dir).env("CCL_PROBE_MARK", &mark).args(args));
        (out, mark.exists())
    };
    let (out, loaded) = probe(&["label", "--device", "cpu", "-o", dir.join("l.npy").to_str().unwrap()]);
    assert!(out.status.success() && !loaded, "--device cpu loaded the OpenCL library");
    let (_, loaded) = probe(&["label", "--device", "cuda:0", "-o", dir.join("l.npy").to_str().unwrap()]);
    assert!(!loaded, "--device cuda:0 loaded the OpenCL library");
    let (out, loaded) = probe(&["devices"]);
    assert!(out.status.success() && loaded, "the probe library was not loaded by `ccl devices`");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Writes `values` as a `.npy` of uint8 with `shape` (C order).
fn write_npy_u8(path: &Path, shape: &[u64], values: &[u8]) {
    use npyz::WriterBuilder;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut writer = npyz::WriteOptions::<u8>::new().default_dtype().shape(shape).writer(&mut file).begin_nd().unwrap();
    writer.extend(values.iter().copied()).unwrap();
    writer.finish().unwrap();
}

device_tests! {
    a_npy_volume_is_labeled_in_3d: [cpu, opencl_cpu, opencl_gpu, cuda],
    a_tiff_volume_is_labeled_in_3d: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// A .npy of shape (D, H, W) is labeled as a volume on the device, at each connectivity.
fn a_npy_volume_is_labeled_in_3d(d: &common::TestDevice) {
    let dir = scratch(&format!("volume-{}", d.token));
    let volume = ccl::random_volume(23, 17, 9, 45, 1, 77).unwrap();
    let input = dir.join("vol.npy");
    write_npy_u8(&input, &[9, 17, 23], volume.values());
    for (connectivity, algo) in [(26, "uf_ic"), (6, "uf"), (18, "uf")] {
        let out = dir.join(format!("labels-{}-{connectivity}.npy", d.token));
        let result = run(ccl()
            .args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--algo", algo])
            .args(["--connectivity", &connectivity.to_string(), "--device", &d.device.info().id.to_string()]));
        assert!(result.status.success(), "{}: {}", d.token, String::from_utf8_lossy(&result.stderr));
        let bytes = std::fs::read(&out).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        assert_eq!(npy.shape(), &[9, 17, 23]);
        let c = ccl::Connectivity::from_neighbours(connectivity).unwrap();
        let (expected, n) = ccl::reference::label_volume(&volume, c).unwrap().to_consecutive();
        assert_eq!(npy.into_vec::<u32>().unwrap(), expected.values(), "{} {connectivity}", d.token);
        assert_eq!(count_of(&stdout(&result)), n as u64);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_npy_volume_is_labeled_in_3d_and_a_flat_npy_as_an_image() {
    let dir = scratch("volume");
    let volume = ccl::random_volume(23, 17, 9, 45, 1, 77).unwrap();
    let input = dir.join("vol.npy");
    write_npy_u8(&input, &[9, 17, 23], volume.values());
    // The default connectivity of a volume is 26, and its default algorithm the fastest there.
    let out = dir.join("default.npy");
    let result = run(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", "cpu"]));
    let default = ccl::Algorithm::default_for(ccl::Connectivity::TwentySix);
    assert!(stdout(&result).contains(&format!(", {default}, 26-connectivity")), "{}", stdout(&result));
    // --max-pixels holds for a volume's voxels (9 x 17 x 23 = 3519).
    let result =
        run(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--max-pixels", "3518"]));
    let text = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success() && text.contains("23x17x9") && text.contains("--max-pixels"), "{text}");
    let result =
        run(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--max-pixels", "3519"]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    // A (H, W) .npy is an image: 8-connectivity by default, labels of shape (H, W).
    let flat = dir.join("flat.npy");
    write_npy_u8(&flat, &[17, 23], &volume.values()[..17 * 23]);
    let out = dir.join("flat-labels.npy");
    let result = run(ccl().args(["label", flat.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", "cpu"]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let (h, w, _) = read_npy(&out);
    assert_eq!((h, w), (17, 23));
    // ... and TUF, the default algorithm for images.
    assert!(stdout(&result).contains(", TUF, 8-connectivity"), "{}", stdout(&result));
    // A mask of int64 labels (as skimage writes them) labels alike, and --max-pixels holds for it.
    let wide = dir.join("wide.npy");
    {
        use npyz::WriterBuilder;
        let values: Vec<i64> = volume.values()[..17 * 23].iter().map(|&v| i64::from(v) * 1000).collect();
        let mut file = std::io::BufWriter::new(std::fs::File::create(&wide).unwrap());
        let mut writer =
            npyz::WriteOptions::<i64>::new().default_dtype().shape(&[17, 23]).writer(&mut file).begin_nd().unwrap();
        writer.extend(values).unwrap();
        writer.finish().unwrap();
    }
    let out_wide = dir.join("wide-labels.npy");
    let result =
        run(ccl().args(["label", wide.to_str().unwrap(), "-o", out_wide.to_str().unwrap(), "--device", "cpu"]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert_eq!(read_npy(&out_wide), read_npy(&out));
    let result =
        run(ccl().args(["label", wide.to_str().unwrap(), "-o", out_wide.to_str().unwrap(), "--max-pixels", "390"]));
    let text = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success() && text.contains("23x17") && text.contains("--max-pixels"), "{text}");
    // Connectivities and outputs that do not fit the input are clean errors.
    for (args, says) in [
        (vec![flat.to_str().unwrap(), "--connectivity", "26"], "26-connectivity is for volumes"),
        (vec![input.to_str().unwrap(), "--connectivity", "8"], "8-connectivity is for images"),
        (vec![input.to_str().unwrap(), "--connectivity", "5"], "connectivity is 4 or 8 (images), 6, 18 or 26"),
        (vec![input.to_str().unwrap(), "--algo", "bke", "--connectivity", "6"], "BKE"),
    ] {
        let out = dir.join("x.npy");
        let result = run(ccl().arg("label").args(&args).args(["-o", out.to_str().unwrap(), "--device", "cpu"]));
        let text = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success() && text.contains(says), "{args:?}: {text}");
    }
    let result = run(ccl().args(["label", input.to_str().unwrap(), "-o", dir.join("v.png").to_str().unwrap()]));
    assert!(String::from_utf8_lossy(&result.stderr).contains("written as .npy"), "{:?}", result);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads a TIFF of uint32 gray pages as a label volume.
fn read_label_tiff(path: &Path) -> ccl::LabelImage {
    let mut decoder = tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let (width, height) = decoder.dimensions().unwrap();
    let (mut labels, mut depth) = (Vec::new(), 0);
    loop {
        match decoder.read_image().unwrap() {
            tiff::decoder::DecodingResult::U32(page) => labels.extend(page),
            _ => panic!("page {depth} of {} is not uint32", path.display()),
        }
        depth += 1;
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().unwrap();
    }
    ccl::LabelImage::volume(width as usize, height as usize, depth, labels).unwrap()
}

/// Reads a `.npy` of uint32 labels with shape (D, H, W).
fn read_label_npy(path: &Path) -> ccl::LabelImage {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape: Vec<usize> = npy.shape().iter().map(|&n| n as usize).collect();
    assert_eq!(shape.len(), 3, "{}", path.display());
    ccl::LabelImage::volume(shape[2], shape[1], shape[0], npy.into_vec::<u32>().unwrap()).unwrap()
}

/// Checks labels against the CPU reference's partition and the printed component count.
fn check_volume_labels(volume: &ccl::BinaryImage, connectivity: u32, labels: &ccl::LabelImage, out: &Output) {
    let c = ccl::Connectivity::from_neighbours(connectivity).unwrap();
    let expected = ccl::reference::label_volume(volume, c).unwrap();
    if let Some(difference) = ccl::reference::volume_partition_difference(&expected, labels) {
        panic!("{connectivity}-connectivity: {difference}");
    }
    assert_eq!(count_of(&stdout(out)), expected.component_count() as u64);
}

/// Writes `volume` as a multi-page TIFF of 8-bit gray (foreground 255).
fn write_tiff_volume(path: &Path, volume: &ccl::BinaryImage) {
    let s = volume.shape();
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
    for page in volume.values().chunks(s.width * s.height) {
        let page: Vec<u8> = page.iter().map(|&v| v * 255).collect();
        encoder.write_image::<tiff::encoder::colortype::Gray8>(s.width as u32, s.height as u32, &page).unwrap();
    }
}

/// A multi-page TIFF is labeled as a volume on the device, labels out as a TIFF.
fn a_tiff_volume_is_labeled_in_3d(d: &common::TestDevice) {
    let dir = scratch(&format!("volume-io-{}", d.token));
    let volume = ccl::random_volume(19, 11, 6, 45, 1, 21).unwrap();
    let tif = dir.join("vol.tif");
    write_tiff_volume(&tif, &volume);
    for (connectivity, algo) in [(26, "uf_ic"), (6, "uf")] {
        let out = dir.join(format!("labels-{}-{connectivity}.tif", d.token));
        let result = run(ccl()
            .args(["label", tif.to_str().unwrap(), "-o", out.to_str().unwrap(), "--algo", algo])
            .args(["--connectivity", &connectivity.to_string(), "--device", &d.device.info().id.to_string()]));
        assert!(result.status.success(), "{}: {}", d.token, String::from_utf8_lossy(&result.stderr));
        assert!(stdout(&result).contains("19x11x6 volume, TIFF"), "{}", stdout(&result));
        check_volume_labels(&volume, connectivity, &read_label_tiff(&out), &result);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tiff_and_folder_volumes_are_labeled_in_3d() {
    let dir = scratch("volume-io");
    let volume = ccl::random_volume(19, 11, 6, 45, 1, 21).unwrap();
    let s = volume.shape();
    let slice = |z: usize| &volume.values()[z * s.width * s.height..(z + 1) * s.width * s.height];
    // A multi-page TIFF of 8-bit gray (foreground 255), as a_tiff_volume_is_labeled_in_3d labels.
    let tif = dir.join("vol.tif");
    write_tiff_volume(&tif, &volume);
    // A folder of PNG slices with --volume, gray values thresholded and inverted per slice; a
    // file without an image extension is ignored (and said so).
    let slices = dir.join("slices");
    std::fs::create_dir_all(&slices).unwrap();
    for z in 0..s.depth {
        // Foreground voxels dark (0-99), background light (101-255): --threshold 100 --invert.
        let page: Vec<u8> = slice(z)
            .iter()
            .enumerate()
            .map(|(i, &v)| if v != 0 { (i % 100) as u8 } else { 101 + (i % 155) as u8 })
            .collect();
        image::GrayImage::from_raw(19, 11, page).unwrap().save(slices.join(format!("z{z:03}.png"))).unwrap();
    }
    std::fs::write(slices.join("README"), "slices").unwrap();
    let out = dir.join("folder-labels.npy");
    let result = run(ccl().args(["label", slices.to_str().unwrap(), "--volume", "-o", out.to_str().unwrap()]).args([
        "--threshold",
        "100",
        "--invert",
        "--device",
        "cpu",
    ]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert!(String::from_utf8_lossy(&result.stderr).contains("ignoring 1 file"), "{result:?}");
    assert!(stdout(&result).contains("19x11x6 volume, slices sorted by name"), "{}", stdout(&result));
    check_volume_labels(&volume, 26, &read_label_npy(&out), &result);
    // Without --volume the folder is a batch of images: one label image per slice.
    let batch = dir.join("batch");
    let result = run(ccl().args(["label", slices.to_str().unwrap(), "-o", batch.to_str().unwrap(), "--device", "cpu"]));
    assert!(result.status.success() && batch.join("z000.npy").is_file(), "{result:?}");
    // A single-page TIFF stays an image: 8-connectivity, labels of shape (H, W).
    let one = dir.join("one.tif");
    image::GrayImage::from_raw(19, 11, slice(0).iter().map(|&v| v * 255).collect()).unwrap().save(&one).unwrap();
    let out = dir.join("one.npy");
    let result = run(ccl().args(["label", one.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", "cpu"]));
    assert!(result.status.success() && stdout(&result).contains("8-connectivity"), "{result:?}");
    assert_eq!(read_npy(&out).0, 11);
    // With --volume it is a volume of one slice.
    let out = dir.join("one-volume.tif");
    let result =
        run(ccl().args(["label", one.to_str().unwrap(), "--volume", "-o", out.to_str().unwrap(), "--device", "cpu"]));
    assert!(result.status.success() && stdout(&result).contains("19x11x1 volume"), "{result:?}");
    // Wrong outputs, inputs and options are clean errors.
    for (args, says) in [
        (vec![tif.to_str().unwrap(), "-o", "/tmp/v.png"], "written as .npy"),
        (vec![slices.to_str().unwrap(), "--volume", "-o", "/tmp/v.png"], "written as .npy"),
        (vec![tif.to_str().unwrap(), "-o", "/tmp/v.tif", "--threshold", "300"], "0-255"),
        (vec!["--volume", "-o", "/tmp/v.npy"], "needs an input"),
        (vec![slices.to_str().unwrap(), "--volume", "--binarize", "otsu"], "cannot be used with"),
    ] {
        let result = run(ccl().arg("label").args(&args).args(["--device", "cpu"]));
        let text = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success() && text.contains(says), "{args:?}: {text}");
    }
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    image::GrayImage::new(4, 4).save(bad.join("a.png")).unwrap();
    image::GrayImage::new(5, 4).save(bad.join("b.png")).unwrap();
    let result = run(ccl().args(["label", bad.to_str().unwrap(), "--volume", "-o", "/tmp/v.npy", "--device", "cpu"]));
    let text = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success() && text.contains("b.png") && text.contains("is 5x4"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The rows of a statistics CSV, header first.
fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
}

/// An image and a volume as .npy files in `dir`, for `--stats`.
fn stats_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let image = ccl::random_image(67, 45, 40, 2, 9).unwrap();
    let input = dir.join("in.npy");
    write_npy_u8(&input, &[45, 67], image.values());
    let volume = ccl::random_volume(23, 17, 9, 35, 1, 5).unwrap();
    let vol_input = dir.join("vol.npy");
    write_npy_u8(&vol_input, &[9, 17, 23], volume.values());
    (input, vol_input)
}

device_tests! {
    fresh;
    stats_are_written_beside_the_labels_of_images_and_volumes: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// `--stats` rows equal the statistics of the labels written beside them (the host reference),
/// under OpenCV's column names; for images and volumes, on every device.
fn stats_are_written_beside_the_labels_of_images_and_volumes(d: &common::TestDevice) {
    let dir = scratch(&format!("stats-{}", d.token));
    let (input, vol_input) = stats_inputs(&dir);
    let id = d.device.info().id.to_string();
    // An image.
    let (out, csv) = (dir.join("l.npy"), dir.join("s.csv"));
    let args = ["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--stats", csv.to_str().unwrap()];
    let result = run(ccl().args(args).args(["--device", &id]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let (h, w, labels) = read_npy(&out);
    let n = *labels.iter().max().unwrap();
    let want = ccl::ComponentStats::of_labels(&labels, ccl::Shape::image(w as usize, h as usize), n);
    let rows = read_csv(&csv);
    assert_eq!(rows[0].join(","), "label,left,top,width,height,area,cx,cy");
    assert_eq!(rows.len() - 1, want.len(), "{}", d.token);
    for (k, (row, c)) in rows[1..].iter().zip(&want.components).enumerate() {
        let [cx, cy, _] = c.centroid();
        let expected = [k as u64 + 1, c.left.into(), c.top.into(), c.width.into(), c.height.into(), c.area];
        let ints: Vec<u64> = row[..6].iter().map(|v| v.parse().unwrap()).collect();
        assert_eq!(ints, expected, "{} row {k}", d.token);
        assert_eq!((row[6].parse::<f64>().unwrap(), row[7].parse::<f64>().unwrap()), (cx, cy));
    }
    // A volume.
    let args = ["label", vol_input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--stats", csv.to_str().unwrap()];
    let result = run(ccl().args(args).args(["--connectivity", "6", "--device", &id]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let labels = read_label_npy(&out);
    let want = ccl::ComponentStats::of_labels(labels.values(), labels.shape(), labels.component_count());
    let rows = read_csv(&csv);
    assert_eq!(rows[0].join(","), "label,left,top,front,width,height,depth,area,cx,cy,cz");
    assert_eq!(rows.len() - 1, want.len(), "{}", d.token);
    let last = &want.components[want.len() - 1];
    let row: Vec<f64> = rows[want.len()].iter().map(|v| v.parse().unwrap()).collect();
    assert_eq!(
        row[1..8],
        [last.left, last.top, last.front, last.width, last.height, last.depth, last.area as u32].map(f64::from)
    );
    assert_eq!(row[8..], last.centroid());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--stats` with --min-size and --keep-largest; refused with --raw or a folder.
#[test]
fn stats_are_written_beside_the_labels() {
    let dir = scratch("stats");
    let (input, _) = stats_inputs(&dir);
    // --min-size and --keep-largest: the kept components, renumbered, with their statistics.
    let (out, csv) = (dir.join("kept.npy"), dir.join("kept.csv"));
    let args = ["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--stats", csv.to_str().unwrap()];
    let result = run(ccl().args(args).args(["--min-size", "3", "--keep-largest", "4", "--device", "cpu"]));
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let (h, w, labels) = read_npy(&out);
    let unfiltered = dir.join("unfiltered.npy");
    run(ccl().args(["label", input.to_str().unwrap(), "-o", unfiltered.to_str().unwrap(), "--device", "cpu"]));
    let (_, _, all) = read_npy(&unfiltered);
    let all = ccl::ComponentStats::of_labels(&all, ccl::Shape::image(67, 45), *all.iter().max().unwrap());
    assert!(all.len() > 10, "{} components", all.len());
    let mut areas: Vec<u64> = all.components.iter().map(|c| c.area).filter(|&a| a >= 3).collect();
    areas.sort_unstable_by(|a, b| b.cmp(a));
    let n = *labels.iter().max().unwrap();
    let kept = ccl::ComponentStats::of_labels(&labels, ccl::Shape::image(w as usize, h as usize), n);
    let mut got: Vec<u64> = kept.components.iter().map(|c| c.area).collect();
    got.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(got, areas[..4.min(areas.len())], "the four largest of at least 3 pixels");
    assert_eq!(n as usize, got.len());
    assert_eq!(read_csv(&csv).len() - 1, got.len());
    for extra in [vec!["--raw"], vec![]] {
        let target = if extra.is_empty() { dir.to_str().unwrap() } else { input.to_str().unwrap() };
        let out = dir.join("x");
        let csv = dir.join("s.csv");
        let args = ["label", target, "-o", out.to_str().unwrap(), "--stats", csv.to_str().unwrap(), "--device", "cpu"];
        let result = run(ccl().args(args).args(&extra));
        assert!(!result.status.success(), "{extra:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

device_tests! {
    #[cfg(unix)]
    a_build_that_ptxas_refused_is_noted: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Where NVIDIA OpenCL's PTX cannot be assembled by ptxas (here a stand-in that names a release
/// and refuses every file), the driver assembles it, the labels are the same, and `ccl` says
/// so; no other device uses ptxas, and they say nothing.
#[cfg(unix)]
fn a_build_that_ptxas_refused_is_noted(d: &common::TestDevice) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch(&format!("ptxas-{}", d.token));
    let stand_in = dir.join("ptxas");
    std::fs::write(
        &stand_in,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; fi\n\
         echo 'refused by the stand-in' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let label = |device: &str, out: &Path| {
        run(ccl().env("CCL_PTXAS", &stand_in).env("CCL_CACHE", "off").args([
            "label",
            "--device",
            device,
            "-o",
            out.to_str().unwrap(),
        ]))
    };
    let info = d.device.info();
    let out = dir.join(format!("{}.npy", d.token));
    let result = label(&info.id.to_string(), &out);
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{}: {err}", d.token);
    let nvidia_opencl = d.token == "opencl-gpu" && info.name.contains("NVIDIA");
    let noted = err.contains("ptxas could not assemble a program") && err.contains("refused by the stand-in");
    assert_eq!(noted, nvidia_opencl, "{}: {err}", d.token);
    assert_eq!(d.device.build_note(), None, "{}: this process's builds use the real ptxas, if any", d.token);
    // Consecutive labels in raster order: every device's are the CPU reference's.
    let cpu = dir.join("cpu-reference.npy");
    let result = label("cpu", &cpu);
    assert!(result.status.success(), "cpu: {}", String::from_utf8_lossy(&result.stderr));
    assert!(read_npy(&out) == read_npy(&cpu), "{} and cpu differ", d.token);
}
