//! Inputs that used to be skipped in silence or read otherwise than documented (issue 49): each
//! test names its item. Every test runs the `ccl` binary (`CCL_BIN` when set, e.g. an older
//! build to compare with).

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Command, Output};
mod support;
use support::{ccl, run_checked as run, scratch};

/// Writes 8-bit gray `pages` (8x8 each) as one TIFF.
fn write_gray_tiff(path: &Path, pages: &[Vec<u8>]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
    for page in pages {
        encoder.write_image::<tiff::encoder::colortype::Gray8>(8, 8, page).unwrap();
    }
}

/// Writes gray 32-bit float `pages` of `width` x `height` as one TIFF.
fn write_float_tiff(path: &Path, width: u32, height: u32, pages: &[Vec<f32>]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
    for page in pages {
        encoder.write_image::<tiff::encoder::colortype::Gray32Float>(width, height, page).unwrap();
    }
}

/// Writes an animated GIF of two 8x8 frames.
fn write_gif(path: &Path) {
    let frames = [255u8, 0].map(|v| {
        let img =
            image::RgbaImage::from_fn(8, 8, |x, _| image::Rgba(if x < 4 { [v, v, v, 255] } else { [0, 0, 0, 255] }));
        image::Frame::new(img)
    });
    image::codecs::gif::GifEncoder::new(std::fs::File::create(path).unwrap()).encode_frames(frames).unwrap();
}

/// The shape and uint32 values of a `.npy` of labels.
fn read_labels(path: &Path) -> (Vec<u64>, Vec<u32>) {
    let npy = npyz::NpyFile::new(std::fs::File::open(path).unwrap()).unwrap();
    (npy.shape().to_vec(), npy.into_vec::<u32>().unwrap())
}

/// The first CUDA or OpenCL device, if any.
fn first_gpu() -> Option<String> {
    ccl::discover().devices.iter().find(|d| d.id != ccl::DeviceId::Cpu).map(|d| d.id.to_string())
}

/// D7: in a folder, a multi-page TIFF is labeled as the volume it is alone (the same file), an
/// animated GIF on its first frame with the note it gets alone; a volume asked for as PNG fails
/// by name as alone; in a folder of slices a multi-page file is an error naming it; binarizing a
/// folder notes the pages it does not read.
#[test]
fn multi_page_files_in_a_folder_are_treated_as_alone() {
    let dir = scratch("pages");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let first: Vec<u8> = (0..64).map(|i| if i % 9 == 0 { 255 } else { 0 }).collect();
    write_gray_tiff(&input.join("stack.tif"), &[first.clone(), vec![255; 64], first.clone()]);
    write_gif(&input.join("anim.gif"));
    image::GrayImage::from_raw(8, 8, first.clone()).unwrap().save(input.join("page.png")).unwrap();

    let out_dir = dir.join("out");
    let (out, text) = run(ccl().arg("label").arg(&input).arg("-o").arg(&out_dir).args(["--backend", "cpu"]));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("anim.gif holds") && text.contains("only the first is labeled"), "{text}");
    let alone = dir.join("alone.npy");
    let (out, text) = run(ccl().arg("label").arg(input.join("stack.tif")).args(["--backend", "cpu", "-o"]).arg(&alone));
    assert!(out.status.success(), "{text}");
    assert_eq!(read_labels(&out_dir.join("stack.npy")), read_labels(&alone), "the folder's stack is the volume");
    assert_eq!(read_labels(&alone).0, vec![3, 8, 8]);

    // As PNG, the volume fails by name (as alone), the images are written, the exit status is 1.
    let (out, text) = run(ccl().arg("label").arg(&input).arg("-o").arg(dir.join("png")).args([
        "--backend",
        "cpu",
        "--format",
        "png",
    ]));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("stack.tif") && text.contains("1 of 3"), "{text}");
    assert!(dir.join("png/page.png").exists() && !dir.join("png/stack.png").exists());

    // A folder of slices: a multi-page slice is an error naming it.
    for name in ["stack.tif", "anim.gif"] {
        let slices = dir.join(format!("slices-{name}"));
        std::fs::create_dir_all(&slices).unwrap();
        image::GrayImage::from_raw(8, 8, first.clone()).unwrap().save(slices.join("a.png")).unwrap();
        std::fs::copy(input.join(name), slices.join(name)).unwrap();
        let (out, text) =
            run(ccl().arg("label").arg(&slices).args(["--volume", "--backend", "cpu", "-o"]).arg(dir.join("v.npy")));
        assert!(!out.status.success() && text.contains(name) && text.contains("one image"), "{name}: {text}");
    }

    // Binarizing a folder says which files had pages or frames left unread.
    let (out, text) = run(ccl().arg("binarize").arg(&input).arg("-o").arg(dir.join("ink")).args(["--backend", "cpu"]));
    assert!(out.status.success(), "{text}");
    for name in ["stack.tif holds 3", "anim.gif holds"] {
        assert!(text.contains(name) && text.contains("only the first is binarized"), "{name}: {text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D8: entries of an input folder with an image extension that are no readable file (dangling
/// and looping links, a FIFO) are each named with why, count as failed in the summary, and
/// make the exit status 1; the other images are written. In a folder of slices they are an
/// error naming the entry.
#[cfg(unix)]
#[test]
fn unreadable_folder_entries_are_named_and_counted() {
    let dir = scratch("links");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    image::GrayImage::from_fn(8, 8, |x, _| image::Luma([if x < 3 { 255 } else { 0 }]))
        .save(input.join("a.png"))
        .unwrap();
    std::os::unix::fs::symlink("/nonexistent/page.png", input.join("dangling.png")).unwrap();
    std::os::unix::fs::symlink("loop.png", input.join("loop.png")).unwrap();
    let fifo = std::ffi::CString::new(input.join("fifo.png").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

    for command in [&["label", "--format", "npy"][..], &["binarize"], &["label", "--binarize", "otsu"]] {
        let out_dir = dir.join(format!("out-{}", command.len()));
        let (out, text) = run(ccl().args(command).arg(&input).arg("-o").arg(&out_dir).args(["--backend", "cpu"]));
        assert_eq!(out.status.code(), Some(1), "{command:?}: {text}");
        assert!(text.contains("dangling.png") && text.contains("dangling symbolic link"), "{command:?}: {text}");
        assert!(
            text.contains("loop.png") && text.contains("symbolic link that cannot be followed"),
            "{command:?}: {text}"
        );
        assert!(text.contains("fifo.png") && text.contains("FIFO"), "{command:?}: {text}");
        assert!(text.contains("3 of 4 images failed"), "{command:?}: {text}");
        assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1, "{command:?}: a.* written");
    }
    let (out, text) =
        run(ccl().arg("label").arg(&input).args(["--volume", "--backend", "cpu", "-o"]).arg(dir.join("v.npy")));
    assert!(!out.status.success() && text.contains("dangling.png"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Three 2x2 blocks of -1.0, -0.25 and 0.5 on a 0.0 background, 9x3.
fn float_blocks() -> Vec<f32> {
    let values = [-1.0f32, -0.25, 0.5];
    (0..27).map(|i| if i % 9 % 3 != 2 && i / 9 < 2 { values[i % 9 / 3] } else { 0.0 }).collect()
}

/// The largest label `ccl label` writes for `path` with `extra` arguments (its component count).
fn components(path: &Path, extra: &[&str]) -> u32 {
    let npy = path.with_extension("labels.npy");
    let (out, text) = run(ccl().arg("label").arg(path).args(["--backend", "cpu", "-o"]).arg(&npy).args(extra));
    assert!(out.status.success(), "{extra:?}: {text}");
    read_labels(&npy).1.into_iter().max().unwrap_or(0)
}

/// D9: a gray 32-bit float TIFF is read as stored, alone and as the pages of a volume.
#[test]
fn gray_float_tiffs_are_read_as_stored() {
    let dir = scratch("gray-float");
    let path = dir.join("gray-float.tif");
    write_float_tiff(&path, 9, 3, &[float_blocks()]);
    assert_eq!(components(&path, &[]), 3, "nonzero is foreground");
    assert_eq!(components(&path, &["--threshold", "0.4"]), 1);
    assert_eq!(components(&path, &["--threshold", "0.4", "--invert"]), 1, "all but the 0.5 block");
    // The same page twice is a volume of two slices.
    let stack = dir.join("stack.tif");
    write_float_tiff(&stack, 9, 3, &[float_blocks(), float_blocks()]);
    assert_eq!(components(&stack, &[]), 3);
    assert_eq!(read_labels(&stack.with_extension("labels.npy")).0, vec![2, 3, 9]);
    // Binarized as a page: 255 v, clamped, as the image crate converts float to 8 bits.
    let (out, text) = run(ccl()
        .arg("binarize")
        .arg(&path)
        .args(["--backend", "cpu", "--method", "otsu", "-o"])
        .arg(dir.join("ink.png")));
    assert!(out.status.success() && text.contains("32-bit float gray"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D10: any finite threshold is valid for float samples, negative too (`--threshold -0.5` and
/// `--threshold=-0.5`), on RGB float TIFF (gray is its Rec. 709 luma); an 8-bit image refuses a
/// negative threshold by its range (exit status 2).
#[test]
fn negative_thresholds_are_valid_for_float_images() {
    let dir = scratch("negative");
    let path = dir.join("rgb-float.tiff");
    let rgb: Vec<f32> = float_blocks().into_iter().flat_map(|v| [v; 3]).collect();
    image::ImageBuffer::<image::Rgb<f32>, _>::from_raw(9, 3, rgb).unwrap().save(&path).unwrap();
    // Inverted, foreground is gray <= T.
    assert_eq!(components(&path, &["--threshold", "-0.1", "--invert"]), 2, "-1.0 and -0.25");
    assert_eq!(components(&path, &["--threshold", "-0.5", "--invert"]), 1, "-1.0");
    assert_eq!(components(&path, &["--threshold=-0.5", "--invert"]), 1);
    assert_eq!(components(&path, &["--threshold", "-2", "--invert"]), 0);
    assert_eq!(components(&path, &["--threshold", "-0.5"]), 1, "-0.25, 0.5 and the background");
    let gray = dir.join("gray.tif");
    write_float_tiff(&gray, 9, 3, &[float_blocks()]);
    assert_eq!(components(&gray, &["--threshold", "-0.1", "--invert"]), 2);
    // 8-bit samples: a negative threshold is outside their range, an invalid value.
    let png = dir.join("gray.png");
    image::GrayImage::new(4, 4).save(&png).unwrap();
    let (out, text) =
        run(ccl().arg("label").arg(&png).args(["--backend", "cpu", "--threshold", "-1", "-o"]).arg(dir.join("l.npy")));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("0-255"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D11: with POCL as the only OpenCL platform and no cache folder it can make (HOME under a
/// regular file, so that even root cannot write it), `ccl devices` and `--backend opencl` say
/// why there is no device and that POCL_CACHE_DIR fixes it; with POCL_CACHE_DIR the device is
/// there.
#[test]
fn pocl_without_its_cache_folder_says_why_and_how_to_fix_it() {
    let (_, listing) = run(ccl().arg("devices"));
    let opencl: Vec<&str> = listing.lines().filter(|l| l.starts_with("opencl:")).collect();
    if opencl.is_empty() || !opencl.iter().all(|l| l.contains("Portable Computing Language")) {
        eprintln!("skipped: POCL is not the only OpenCL platform here");
        return;
    }
    let no_cache = |cmd: &mut Command| -> (Output, String) {
        cmd.env("HOME", "/dev/null/home").env_remove("POCL_CACHE_DIR").env_remove("XDG_CACHE_HOME");
        run(cmd)
    };
    let (_, text) = no_cache(ccl().arg("devices"));
    let line = text.lines().find(|l| l.starts_with("# opencl:")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("/dev/null/home") && line.contains("POCL_CACHE_DIR"), "{line}");
    let (out, text) = no_cache(ccl().args(["label", "--backend", "opencl", "-o", "/tmp/ccl-pocl.npy"]));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("cannot create its kernel cache folder") && text.contains("POCL_CACHE_DIR"), "{text}");
    let cache = scratch("pocl-cache");
    let (_, text) = run(ccl().arg("devices").env("HOME", "/dev/null/home").env("POCL_CACHE_DIR", &cache));
    assert!(text.lines().any(|l| l.starts_with("opencl:0")), "{text}");
    std::fs::remove_dir_all(cache).unwrap();
}

/// D12: `--verbose` says how the kernels were obtained and where the wall time went for volumes,
/// `--binarize` and folders too, not only for images.
#[test]
fn verbose_reports_volumes_and_binarized_pages() {
    let dir = scratch("verbose");
    let stack = dir.join("stack.tif");
    write_gray_tiff(&stack, &[vec![255; 64], vec![0; 64]]);
    let page = dir.join("page.png");
    image::GrayImage::from_fn(32, 32, |x, y| image::Luma([if (x / 4 + y / 4) % 2 == 0 { 20 } else { 230 }]))
        .save(&page)
        .unwrap();
    let npy = dir.join("vol.npy");
    std::fs::write(&npy, common::npy_bytes("|u1", &[2, 3, 4], false, &[1; 24])).unwrap();
    let mut devices = vec!["cpu".to_string()];
    devices.extend(first_gpu());
    for device in &devices {
        for (input, extra) in [(&stack, &[][..]), (&npy, &[]), (&page, &["--binarize", "otsu"])] {
            let (out, text) = run(ccl()
                .arg("label")
                .arg(input)
                .args(["--verbose", "--device", device])
                .args(extra)
                .arg("-o")
                .arg(dir.join("l.npy")));
            assert!(out.status.success(), "{device} {input:?}: {text}");
            assert!(text.contains("wall time ms: read"), "{device} {input:?}: {text}");
            if device != "cpu" {
                assert!(text.contains("kernels: "), "{device} {input:?}: {text}");
            }
        }
        // A folder (an image and a volume): the devices, the images, the volumes.
        let folder = dir.join("folder");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(&page, folder.join("page.png")).unwrap();
        std::fs::copy(&npy, folder.join("vol.npy")).unwrap();
        let (out, text) =
            run(ccl().arg("label").arg(&folder).args(["--verbose", "--device", device]).arg("-o").arg(dir.join("out")));
        assert!(out.status.success(), "{device} folder: {text}");
        for lap in ["wall time ms: list", "open devices", "labelers and images", "volumes"] {
            assert!(text.contains(lap), "{device} folder: no {lap:?} in {text}");
        }
        std::fs::remove_dir_all(dir.join("out")).unwrap();
        std::fs::remove_dir_all(folder).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D13: a value found invalid after parsing exits 2, as the parser's own usage errors do, in
/// every command: a binarization parameter, a connectivity for the other dimensionality or the
/// algorithm, a threshold outside the input's range or for a `.npy`, a bench connectivity.
#[test]
fn invalid_values_exit_2_in_every_command() {
    let dir = scratch("exit");
    let page = dir.join("page.png");
    image::GrayImage::from_fn(16, 16, |x, _| image::Luma([if x < 8 { 0 } else { 255 }])).save(&page).unwrap();
    let npy = dir.join("mask.npy");
    std::fs::write(&npy, common::npy_bytes("|u1", &[4, 4], false, &[1; 16])).unwrap();
    let page = page.to_str().unwrap();
    let npy = npy.to_str().unwrap();
    let out = dir.join("out.png");
    let out = out.to_str().unwrap();
    let labels = dir.join("out.npy");
    let labels = labels.to_str().unwrap();
    let bench = dir.join("bench");
    let bench = bench.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["binarize", page, "-o", out, "--window", "0"],
        &["binarize", page, "-o", out, "--window", "5000"],
        &["binarize", page, "-o", out, "--formula", "opencv", "--window", "16"],
        &["binarize", page, "-o", out, "--method", "sauvola", "--r", "0"],
        &["label", page, "-o", labels, "--connectivity", "6"],
        &["label", page, "-o", labels, "--connectivity", "26", "--backend", "cpu"],
        &["label", page, "-o", labels, "--algo", "bke", "--connectivity", "4"],
        &["label", page, "-o", labels, "--threshold", "300"],
        &["label", npy, "-o", labels, "--threshold", "3"],
        &["label", page, "-o", labels, "--binarize", "nick:window=0"],
        &["label", "--volume", "-o", labels],
        &["bench", "average", "--size", "9x8x7", "--connectivity", "8", "--devices", "cpu", "--out", bench],
        &["bench", "average", "--size", "9x8", "--connectivity", "26", "--devices", "cpu", "--out", bench],
        &["generate", "-o", out, "--density", "101"],
    ];
    for args in cases {
        let (status, text) = run(ccl().args(*args));
        assert_eq!(status.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains("error"), "{args:?}: {text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D15: a `.npy` in Fortran order (as `np.save` writes `np.asfortranarray` arrays) is read as
/// `np.load` reads it, for an image and a volume, not refused as a volume.
#[test]
fn fortran_order_npy_files_read_as_numpy_loads_them() {
    let dir = scratch("fortran");
    for shape in [&[3usize, 5][..], &[2, 3, 4]] {
        let n: usize = shape.iter().product();
        // C-order values with several components; their Fortran-order bytes.
        let c: Vec<u8> = (0..n).map(|i| u8::from((i * 7) % 5 < 2)).collect();
        let mut f = vec![0u8; n];
        for (i, &v) in c.iter().enumerate() {
            // The C multi-index of i, then its Fortran position.
            let mut rest = i;
            let mut index = vec![0; shape.len()];
            for axis in (0..shape.len()).rev() {
                index[axis] = rest % shape[axis];
                rest /= shape[axis];
            }
            let mut at = 0;
            for axis in (0..shape.len()).rev() {
                at = at * shape[axis] + index[axis];
            }
            f[at] = v;
        }
        let (c_path, f_path) = (dir.join("c.npy"), dir.join("f.npy"));
        std::fs::write(&c_path, common::npy_bytes("|u1", shape, false, &c)).unwrap();
        std::fs::write(&f_path, common::npy_bytes("|u1", shape, true, &f)).unwrap();
        let mut got = Vec::new();
        for path in [&c_path, &f_path] {
            let out = dir.join("l.npy");
            let connectivity = if shape.len() == 2 { "4" } else { "6" };
            let (status, text) = run(ccl()
                .arg("label")
                .arg(path)
                .args(["--backend", "cpu", "--connectivity", connectivity, "-o"])
                .arg(&out));
            assert!(status.status.success(), "{shape:?}: {text}");
            got.push(read_labels(&out));
        }
        assert_eq!(got[0], got[1], "{shape:?}");
        assert!(got[0].1.iter().any(|&l| l > 1), "{shape:?}: several components");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D15: empty arrays are refused naming the file and their shape.
#[test]
fn empty_npy_arrays_are_refused_naming_the_file() {
    let dir = scratch("empty");
    for (name, shape) in [("image.npy", &[0usize, 5][..]), ("volume.npy", &[2, 0, 5])] {
        let path = dir.join(name);
        std::fs::write(&path, common::npy_bytes("|u1", shape, false, &[])).unwrap();
        let (out, text) = run(ccl().arg("label").arg(&path).args(["--backend", "cpu", "-o"]).arg(dir.join("l.npy")));
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains(&path.display().to_string()) && text.contains("empty"), "{name}: {text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D15: a file given as the output folder of a folder input is refused saying so, not as
/// "File exists".
#[test]
fn a_file_as_output_folder_is_refused_saying_so() {
    let dir = scratch("outfile");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    image::GrayImage::new(4, 4).save(input.join("a.png")).unwrap();
    let file = dir.join("results");
    std::fs::write(&file, b"a file").unwrap();
    for command in [&["label"][..], &["binarize"]] {
        let (out, text) = run(ccl().args(command).arg(&input).arg("-o").arg(&file).args(["--backend", "cpu"]));
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("results") && text.contains("not a folder") && !text.contains("os error"), "{text}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"a file");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D15: a CCL_CACHE_DIR that cannot hold the compiled kernels is told (with and without
/// --verbose), naming the folder and why; the labeling itself succeeds.
#[test]
fn an_unusable_kernel_cache_is_told() {
    let Some(device) = first_gpu() else {
        eprintln!("skipped: no CUDA or OpenCL device builds kernels here");
        return;
    };
    let dir = scratch("cache");
    let page = dir.join("page.png");
    image::GrayImage::from_fn(16, 16, |x, _| image::Luma([if x % 3 == 0 { 255 } else { 0 }])).save(&page).unwrap();
    for verbose in [false, true] {
        let mut cmd = ccl();
        cmd.env("CCL_CACHE_DIR", "/dev/null/ccl-cache").env_remove("CCL_CACHE");
        cmd.arg("label").arg(&page).args(["--device", &device, "-o"]).arg(dir.join("l.npy"));
        if verbose {
            cmd.arg("--verbose");
        }
        let (out, text) = run(&mut cmd);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("kernel cache /dev/null/ccl-cache") && text.contains("CCL_CACHE_DIR"), "{text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
