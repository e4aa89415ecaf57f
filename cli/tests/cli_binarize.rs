//! The command line of binarization: `ccl binarize` writes the library's result in DIBCO's
//! convention, `ccl label --binarize` labels the binarized ink like the reference, `ccl eval`
//! scores pages, and bad parameters are clean errors.
use std::path::{Path, PathBuf};

use ccl::binarize::{reference, GrayImage, Method, NickFormula, Params};
mod support;
use support::{ccl, run_checked as run};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccl-cli-binarize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A color page (the gray it becomes is known: OpenCV's RGB2GRAY).
fn color_page(path: &Path) -> GrayImage {
    let (w, h) = (97u32, 61u32);
    let rgb = image::RgbImage::from_fn(w, h, |x, y| {
        let ink = (x / 3 + y / 4) % 6 == 0;
        let v = if ink { 40 + (x % 7) as u8 } else { 180 + (y % 50) as u8 };
        image::Rgb([v, v.saturating_add(10), v.saturating_sub(5)])
    });
    rgb.save(path).unwrap();
    let gray = rgb.pixels().map(|p| ccl::binarize::gray_from_rgb(p[0], p[1], p[2])).collect();
    GrayImage::image(w as usize, h as usize, gray).unwrap()
}

#[test]
fn binarize_writes_the_reference_result_with_ink_black() {
    let input = scratch("page.png");
    let page = color_page(&input);
    let output = scratch("ink.png");
    // `--k -0.1` parses as written.
    let (out, text) = run(ccl().arg("binarize").arg(&input).arg("-o").arg(&output).args([
        "--method",
        "nick",
        "--window",
        "15",
        "--k",
        "-0.1",
        "--formula",
        "doxa",
        "--kernel",
        "shared",
    ]));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("ms on the device"), "{text}");
    let params = Params { window: 15, k: -0.1, formula: NickFormula::Doxa, ..Method::Nick.defaults() };
    let expected = reference::binarize(&page, &params).unwrap();
    let written = image::open(&output).unwrap().to_luma8();
    for (w, e) in written.pixels().zip(expected.values()) {
        assert_eq!(w[0], if *e != 0 { 0 } else { 255 }, "ink 0, background 255");
    }
    // Otsu to .npy (uint8).
    let npy = scratch("ink.npy");
    let (out, text) = run(ccl().arg("binarize").arg(&input).arg("-o").arg(&npy).args(["--method", "otsu"]));
    assert!(out.status.success(), "{text}");
    let bytes = std::fs::read(&npy).unwrap();
    let array = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(array.shape(), &[61, 97]);
    let values: Vec<u8> = array.into_vec().unwrap();
    let expected = reference::binarize(&page, &Method::Otsu.defaults()).unwrap();
    assert!(values.iter().zip(expected.values()).all(|(v, e)| *v == if *e != 0 { 0 } else { 255 }));
}

#[test]
fn label_binarize_labels_the_ink_like_the_reference() {
    let input = scratch("page2.png");
    let page = color_page(&input);
    let output = scratch("labels.npy");
    let (out, text) = run(ccl().arg("label").arg(&input).arg("-o").arg(&output).args([
        "--binarize",
        "sauvola:window=21,k=0.2",
        "--connectivity",
        "4",
        "--algo",
        "bke_ic",
    ]));
    // BKE_IC is 8-connectivity only: a clean error first.
    assert!(!out.status.success() && text.contains("does not support"), "{text}");
    let (out, text) = run(ccl().arg("label").arg(&input).arg("-o").arg(&output).args([
        "--binarize",
        "sauvola:window=21,k=0.2",
        "--connectivity",
        "4",
    ]));
    assert!(out.status.success(), "{text}");
    let params = Params { window: 21, k: 0.2, ..Method::Sauvola.defaults() };
    let ink = reference::binarize(&page, &params).unwrap();
    let (expected, count) = ccl::reference::label(&ink, ccl::Connectivity::Four).into_consecutive();
    assert!(text.contains(&format!("{count} components")), "{text}");
    let bytes = std::fs::read(&output).unwrap();
    let labels: Vec<u32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
    assert_eq!(labels, expected.values());
}

/// Writes `values` as a `.npy` of `T` with `shape` (C order).
fn write_npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], values: &[T]) {
    use npyz::WriterBuilder;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut writer = npyz::WriteOptions::<T>::new().default_dtype().shape(shape).writer(&mut file).begin_nd().unwrap();
    writer.extend(values.iter().copied()).unwrap();
    writer.finish().unwrap();
}

/// A page saved from NumPy binarizes and labels as the same page saved as an image: gray (H, W)
/// and RGB (H, W, 3) uint8, and 16-bit gray (H, W) uint16 (brought to 8 bits as a 16-bit PNG).
#[test]
fn npy_pages_binarize_and_label_like_image_files() {
    let png = scratch("npy-page.png");
    let page = color_page(&png);
    let rgb = image::open(&png).unwrap().to_rgb8();
    let (w, h) = (page.width() as u64, page.height() as u64);
    let gray_npy = scratch("npy-gray.npy");
    write_npy(&gray_npy, &[h, w], page.values());
    let rgb_npy = scratch("npy-rgb.npy");
    write_npy(&rgb_npy, &[h, w, 3], rgb.as_raw());
    // 16-bit samples whose conversion to 8 bits, (v + 128) / 257, gives the page back.
    let wide: Vec<u16> = page.values().iter().map(|&v| u16::from(v) * 257 + (v % 100) as u16).collect();
    let wide_npy = scratch("npy-wide.npy");
    write_npy(&wide_npy, &[h, w], &wide);
    let params = Params { window: 15, ..Method::Nick.defaults() };
    let expected = reference::binarize(&page, &params).unwrap();
    for input in [&gray_npy, &rgb_npy, &wide_npy] {
        let (read, source) = ccl::io::read_gray(input, ccl::MAX_PIXELS).unwrap();
        assert_eq!(read, page, "{}", input.display());
        assert_eq!((source.format.as_str(), source.width, source.height), ("NPY", w, h));
        let output = scratch("npy-ink.png");
        let (out, text) = run(ccl().arg("binarize").arg(input).arg("-o").arg(&output).args(["--window", "15"]));
        assert!(out.status.success(), "{text}");
        let written = image::open(&output).unwrap().to_luma8();
        assert!(written.pixels().zip(expected.values()).all(|(w, e)| w[0] == if *e != 0 { 0 } else { 255 }));
    }
    let labels = scratch("npy-labels.npy");
    let (out, text) =
        run(ccl().arg("label").arg(&rgb_npy).arg("-o").arg(&labels).args(["--binarize", "nick:window=15"]));
    assert!(out.status.success(), "{text}");
    let (_, count) = ccl::reference::label(&expected, ccl::Connectivity::Eight).into_consecutive();
    assert!(text.contains(&format!("{count} components")), "{text}");
}

/// `.npy` files that hold no page are typed errors naming the file and what is wrong.
#[test]
fn npy_files_that_hold_no_page_are_typed_errors() {
    type WriteFile = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, WriteFile, &str)> = vec![
        ("floats", Box::new(|p| write_npy(p, &[2, 2], &[0f32; 4])), "uint8 or uint16"),
        ("line", Box::new(|p| write_npy(p, &[4], &[0u8; 4])), "shape [4]"),
        ("two channels", Box::new(|p| write_npy(p, &[2, 2, 2], &[0u8; 8])), "(H, W, 3)"),
        ("empty", Box::new(|p| write_npy(p, &[0, 5], &[0u8; 0])), "empty page"),
        ("text", Box::new(|p| std::fs::write(p, b"not numpy").unwrap()), "not a .npy"),
        (
            "short",
            Box::new(|p| {
                write_npy(p, &[3, 3], &[7u8; 9]);
                let bytes = std::fs::read(p).unwrap();
                std::fs::write(p, &bytes[..bytes.len() - 4]).unwrap();
            }),
            "ends before the samples of its shape [3, 3]",
        ),
    ];
    for (name, write, says) in cases {
        let path = scratch(&format!("bad-{}.npy", name.replace(' ', "-")));
        write(&path);
        let err = ccl::io::read_gray(&path, ccl::MAX_PIXELS).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()) && text.contains(says), "{name}: {text}");
    }
    // Fortran order is read as np.load reads it: the same page as in C order.
    let path = scratch("fortran.npy");
    let header = "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8, 3, 1, 4, 2, 5]);
    std::fs::write(&path, bytes).unwrap();
    let (page, _) = ccl::io::read_gray(&path, ccl::MAX_PIXELS).unwrap();
    assert_eq!(page.values(), &[0, 1, 2, 3, 4, 5]);
    // Larger than the limit: refused before its samples are read.
    let path = scratch("big.npy");
    write_npy(&path, &[40, 50], &[0u8; 2000]);
    let err = ccl::io::read_gray(&path, 1999).unwrap_err();
    assert!(matches!(err, ccl::Error::ImageTooLarge { .. }), "{err}");
}

#[test]
fn bad_binarization_arguments_are_clean_errors() {
    let input = scratch("page3.png");
    color_page(&input);
    let out_png = scratch("x.png");
    let cases: [(&[&str], &str); 8] = [
        (&["binarize", "IN", "-o", "OUT", "--max-pixels", "10"], "more than the limit of 10 pixels"),
        (&["label", "IN", "-o", "OUT", "--binarize", "nick", "--max-pixels", "10"], "more than the limit of 10 pixels"),
        (&["binarize", "IN", "-o", "OUT", "--window", "0"], "window"),
        (&["binarize", "IN", "-o", "OUT", "--method", "bernsen"], "method"),
        (&["binarize", "IN", "-o", "OUT", "--formula", "opencv", "--window", "16"], "odd window"),
        (&["label", "IN", "-o", "OUT", "--binarize", "nick:window=x"], "window"),
        (&["label", "IN", "-o", "OUT", "--binarize", "nick:depth=3"], "unknown key"),
        (&["label", "IN", "-o", "OUT", "--binarize", "otsu", "--threshold", "3"], "cannot be used with"),
    ];
    for (args, expected) in cases {
        let args: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "IN" => input.display().to_string(),
                "OUT" => out_png.display().to_string(),
                a => a.to_string(),
            })
            .collect();
        let (out, text) = run(ccl().args(&args));
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(text.contains(expected), "{args:?}: expected '{expected}' in:\n{text}");
    }
}

#[test]
fn eval_scores_pages_against_their_ground_truth() {
    let data = scratch("dibco");
    let (originals, truth) = (data.join("2099/Originals"), data.join("2099/GT"));
    std::fs::create_dir_all(&originals).unwrap();
    std::fs::create_dir_all(&truth).unwrap();
    let page = color_page(&originals.join("P01.png"));
    // The ground truth is Otsu's own result: Otsu scores 100 % there.
    let ink = reference::binarize(&page, &Method::Otsu.defaults()).unwrap();
    let gt = image::GrayImage::from_fn(97, 61, |x, y| {
        image::Luma([if ink.values()[(y * 97 + x) as usize] != 0 { 0 } else { 255 }])
    });
    gt.save(truth.join("P01_gt.png")).unwrap();
    let csv = scratch("eval.csv");
    let (out, text) = run(ccl().args(["eval", "--device", "cpu", "--data"]).arg(&data).arg("-o").arg(&csv));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("| otsu | 100.00 | 100.00 |"), "{text}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 1 + ccl_settings(), "{rows}");
}

fn ccl_settings() -> usize {
    // One row per setting for the single page.
    12
}

/// `ccl bench binarize` on a small tiled page: a row per device, window and kernel (the CPU
/// device's is its reference), and the binarize + label rows with the library's default labeler
/// (TUF) unless `--algo` names another; each run timed behind a queue hold (`queued`, the
/// default, which runs the hold kernel on every device) or on an idle device (`--timing idle`).
#[test]
fn bench_binarize_times_the_fast_kernel_and_binarize_plus_label() {
    let dir = scratch("bench");
    let devices = ccl::discover().devices.iter().map(|d| d.id.to_string()).collect::<Vec<_>>();
    for (algo, label, timing) in [(None, "TUF", None), (Some("uf"), "UF", Some("idle"))] {
        let mut cmd = ccl();
        cmd.args(["bench", "binarize", "--devices", &devices.join(","), "--windows", "3,8", "--kernels", "fast"])
            .args(["--size", "40x30", "--page-limit", "0", "--runs", "1", "--warmup", "0", "--out"])
            .arg(&dir);
        if let Some(algo) = algo {
            cmd.args(["--algo", algo]);
        }
        if let Some(timing) = timing {
            cmd.args(["--timing", timing]);
        }
        let (out, text) = run(&mut cmd);
        assert!(out.status.success(), "{text}");
        let results = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        let timing = timing.unwrap_or("queued");
        for suffix in ["".to_string(), format!("+{label}")] {
            // The CPU reference's rows are timed by the host clock.
            let rows = results
                .lines()
                .filter(|l| {
                    [("fast", timing), ("reference", "host")].iter().any(|(k, t)| {
                        l.contains(&format!(",{k}{suffix},tiled-40x30,")) && l.contains(&format!(",{t},"))
                    })
                })
                .count();
            assert_eq!(rows, 2 * devices.len(), "rows of kernel{suffix} timed {timing} in\n{results}");
        }
    }
    let (out, text) = run(ccl().args(["bench", "binarize", "--timing", "busy", "--out"]).arg(&dir));
    assert!(!out.status.success() && text.contains("queued, idle"), "{text}");
}

/// `ccl binarize DIR -o OUTDIR` and `ccl label DIR --binarize ... -o OUTDIR`: every page of a
/// folder, each output equal to the one-page command's; a page that cannot be read is named and
/// skipped, the others written, and the exit status is 1 at the end.
#[test]
fn folders_of_pages_binarize_and_label_page_by_page() {
    let dir = scratch("pages");
    std::fs::create_dir_all(&dir).unwrap();
    let pages: Vec<GrayImage> = ["a.png", "b.png"].iter().map(|name| color_page(&dir.join(name))).collect();
    std::fs::write(dir.join("broken.png"), b"not a png").unwrap();
    std::fs::write(dir.join("notes.txt"), b"ignored").unwrap();
    let params = Params { window: 21, ..Method::Nick.defaults() };

    let inks = scratch("inks");
    let (out, text) = run(ccl().arg("binarize").arg(&dir).arg("-o").arg(&inks).args(["--window", "21"]));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("broken.png") && text.contains("1 of 3"), "{text}");
    assert!(text.contains("ignoring 1 file"), "{text}");
    for (name, page) in ["a", "b"].iter().zip(&pages) {
        let expected = reference::binarize(page, &params).unwrap();
        let written = image::open(inks.join(format!("{name}.png"))).unwrap().to_luma8();
        assert!(written.pixels().zip(expected.values()).all(|(w, e)| w[0] == if *e != 0 { 0 } else { 255 }), "{name}");
    }
    assert!(!inks.join("broken.png").exists());

    let labels = scratch("page-labels");
    let (out, text) = run(ccl().arg("label").arg(&dir).arg("-o").arg(&labels).args([
        "--binarize",
        "nick:window=21",
        "--connectivity",
        "4",
        "--format",
        "npy",
    ]));
    assert_eq!(out.status.code(), Some(1), "{text}");
    for (name, page) in ["a", "b"].iter().zip(&pages) {
        let ink = reference::binarize(page, &params).unwrap();
        let (expected, _) = ccl::reference::label(&ink, ccl::Connectivity::Four).into_consecutive();
        let bytes = std::fs::read(labels.join(format!("{name}.npy"))).unwrap();
        let got: Vec<u32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
        assert_eq!(got, expected.values(), "{name}");
    }

    // Statistics take one page; an output folder that is a file of a known format is refused.
    let (out, text) =
        run(ccl().arg("label").arg(&dir).arg("-o").arg(&labels).args(["--binarize", "nick", "--stats", "s.csv"]));
    assert!(!out.status.success() && text.contains("not a folder"), "{text}");
    let file = scratch("ink-file.png");
    std::fs::write(&file, b"x").unwrap();
    let (out, text) = run(ccl().arg("binarize").arg(&dir).arg("-o").arg(&file));
    assert!(!out.status.success() && text.contains("output folder"), "{text}");
}
