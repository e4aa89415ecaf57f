//! Binarization: the CPU reference against the Doxa golden vector, every method x kernel x
//! formula on every device against the reference bit for bit, parameter errors, and binarize +
//! label without leaving the device. Tests on devices are one per device (`cargo test --test
//! binarize -- ::cuda` runs the CUDA ones).
mod common;

use std::sync::OnceLock;

use ccl::binarize::{reference, GrayImage, KernelKind, Method, NickFormula, Params};
use ccl::{Algorithm, Labeler};
use rand_mt::Mt;

/// A page like a scan: a smooth uneven background with dark strokes and noise.
fn document(width: usize, height: usize, seed: u32) -> GrayImage {
    let mut rng = Mt::new(seed);
    let pixels = (0..width * height)
        .map(|i| {
            let (x, y) = (i % width, i / width);
            let background = 170 + (x * 40 / width.max(1)) as i32 + (y * 30 / height.max(1)) as i32;
            let stroke = (x / 3 + y / 5) % 7 == 0 || (x * x + y) % 23 < 3;
            let noise = (rng.next_u32() % 21) as i32 - 10;
            (if stroke { 60 + noise } else { background + noise }).clamp(0, 255) as u8
        })
        .collect();
    GrayImage::image(width, height, pixels).unwrap()
}

fn uniform_noise(width: usize, height: usize, seed: u32) -> GrayImage {
    let mut rng = Mt::new(seed);
    GrayImage::image(width, height, (0..width * height).map(|_| rng.next_u32() as u8).collect()).unwrap()
}

/// Pages of every awkward shape: single pixels and lines, pages wider than one fast-kernel
/// tile (1024 columns, fewer for large windows), one taller than one group of rows (32), flat
/// pages.
fn pages() -> Vec<(String, GrayImage)> {
    vec![
        ("1x1".into(), GrayImage::image(1, 1, vec![90]).unwrap()),
        ("1x37".into(), uniform_noise(1, 37, 1)),
        ("37x1".into(), uniform_noise(37, 1, 2)),
        ("5x3".into(), uniform_noise(5, 3, 3)),
        ("flat 20x9".into(), GrayImage::image(20, 9, vec![200; 180]).unwrap()),
        ("black 13x7".into(), GrayImage::image(13, 7, vec![0; 91]).unwrap()),
        ("document 67x41".into(), document(67, 41, 4)),
        ("document 530x21".into(), document(530, 21, 5)),
        ("noise 23x150".into(), uniform_noise(23, 150, 6)),
        ("document 1100x9".into(), document(1100, 9, 8)),
    ]
}

/// Every local configuration: Nick with its three formulas, Niblack, Sauvola, Wolf.
fn local_configs() -> Vec<Params> {
    let mut out: Vec<Params> =
        NickFormula::ALL.into_iter().map(|formula| Params { formula, ..Method::Nick.defaults() }).collect();
    out.extend([Method::Niblack, Method::Sauvola, Method::Wolf].map(Method::defaults));
    out
}

fn windows(params: &Params) -> &'static [u32] {
    if params.formula == NickFormula::OpenCv && params.method == Method::Nick {
        &[3, 15, 45]
    } else {
        &[1, 2, 3, 15, 45, 46]
    }
}

fn mismatches(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).filter(|(x, y)| (**x != 0) != (**y != 0)).count()
}

/// A 400x300 crop of a real DIBCO page (gray as the CLI reads it), when the data is present.
fn real_page() -> Option<GrayImage> {
    let path = common::data_dir()?.join("dibco/2009/Originals/2009-H01.png");
    let (page, _) = ccl::io::read_gray(&path, ccl::MAX_PIXELS).ok()?;
    let (w, h) = (400.min(page.width()), 300.min(page.height()));
    let pixels = (0..w * h).map(|i| page.values()[(i / w) * page.width() + i % w]).collect();
    Some(GrayImage::image(w, h, pixels).unwrap())
}

device_tests! {
    nick_otsu_and_every_kernel_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    tall_windows_start_from_column_block_sums: [cpu, opencl_cpu, opencl_gpu, cuda],
    binarized_pages_are_labeled_without_leaving_the_device: [cpu, opencl_cpu, opencl_gpu, cuda],
    binarizing_into_an_existing_array_equals_binarizing: [cpu, opencl_cpu, opencl_gpu, cuda],
    a_wide_window_as_first_use_works: [cpu, opencl_cpu, opencl_gpu, cuda],
    bad_parameters_are_typed_errors_on_the_device: [cpu, opencl_cpu, opencl_gpu, cuda],
    the_device_equals_doxas_golden_vector: [cpu, opencl_cpu, opencl_gpu, cuda],
}

// Large images and windows: full mode (scripts/test.sh --full).
device_tests! {
    full;
    niblack_sauvola_and_wolf_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    wide_windows_and_a_real_page_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    a_ten_megapixel_page_equals_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Nick (each formula) and Otsu, with every kernel and small window, must equal the CPU reference
/// exactly, not within a tolerance: both compute the window sums in integers and T in IEEE double with the same
/// operations in the same order, never fused (the kernels' DADD, DMUL, ... macros), so no pixel
/// may round a tie differently.
fn nick_otsu_and_every_kernel_equal_the_reference(d: &common::TestDevice) {
    methods_equal_the_reference(d, &local_configs()[..NickFormula::ALL.len()]);
}

/// Niblack, Sauvola and Wolf as [`nick_otsu_and_every_kernel_equal_the_reference`] checks Nick
/// (full mode: each is a program of its own to build, slow on a CPU device's cold cache).
fn niblack_sauvola_and_wolf_equal_the_reference(d: &common::TestDevice) {
    methods_equal_the_reference(d, &local_configs()[NickFormula::ALL.len()..]);
}

/// How many pixels of `page` (on the device as `on_device`) the device binarizes otherwise than
/// the CPU reference with `params`.
fn pixels_off_the_reference(
    binarizer: &mut ccl::binarize::Binarizer,
    page: &GrayImage,
    on_device: &ccl::binarize::DeviceGray,
    params: &Params,
) -> usize {
    let expected = reference::binarize(page, params).expect("reference");
    let (ink, _) = binarizer.binarize_on_device(on_device, params).expect("binarize");
    let got = binarizer.download(&ink).expect("download");
    mismatches(got.values(), expected.values())
}

/// Each of the local `configs` at every small window, with every kernel, and Otsu, on every page.
fn methods_equal_the_reference(d: &common::TestDevice, configs: &[Params]) {
    let pages = pages();
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut binarizer = d.device.binarizer().expect("binarizer");
    for (name, page) in &pages {
        let on_device = binarizer.upload(page).expect("upload");
        let mut check = |params: Params, binarizer: &mut ccl::binarize::Binarizer| {
            let wrong = pixels_off_the_reference(binarizer, page, &on_device, &params);
            if wrong != 0 {
                failures.push(format!("{}: {name}: {}: {wrong} pixels differ", d.token, params.describe()));
            }
            runs += 1;
        };
        for &base in configs {
            for &window in windows(&base) {
                for kernel in KernelKind::ALL {
                    check(Params { window, kernel, ..base }, &mut binarizer);
                }
            }
        }
        check(Method::Otsu.defaults(), &mut binarizer);
    }
    assert!(failures.is_empty(), "{} of {runs} binarizations differ:\n{}", failures.len(), failures.join("\n"));
}

/// Windows at and past 257 (64-bit sums of p^2 from 258 on), larger than the page, on every
/// kernel; and a real page: exact as above (full mode: each is a program of its own to build).
fn wide_windows_and_a_real_page_equal_the_reference(d: &common::TestDevice) {
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut binarizer = d.device.binarizer().expect("binarizer");
    let mut large = vec![("document 530x21".to_string(), document(530, 21, 7), vec![257, 301])];
    if let Some(page) = real_page() {
        large.push(("DIBCO 2009-H01, cropped".to_string(), page, vec![15, 45]));
    }
    for (name, page, windows) in &large {
        let on_device = binarizer.upload(page).expect("upload");
        for base in local_configs() {
            for &window in windows {
                for kernel in KernelKind::ALL {
                    let params = Params { window, kernel, ..base };
                    let wrong = pixels_off_the_reference(&mut binarizer, page, &on_device, &params);
                    if wrong != 0 {
                        failures.push(format!("{}: {name}: {}: {wrong} differ", d.token, params.describe()));
                    }
                    runs += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} binarizations differ:\n{}", failures.len(), failures.join("\n"));
    assert!(runs > 0);
}

/// Binarize + label on the device, for every algorithm and connectivity it supports on every
/// device (the conformance matrix's binarize + label cells): consecutive labels and count equal
/// to the reference's, from the reference binarization.
/// Windows taller than two blocks of 32 rows start the fast kernel's tiles from column block
/// sums (the rows around them read one by one): pages several blocks tall, one of them not a
/// whole number of blocks, widths of whole words and not, windows that reach past the top and the bottom, every local method
/// and formula (the opencv one replicates the border rows), 32- and 64-bit sums.
fn tall_windows_start_from_column_block_sums(d: &common::TestDevice) {
    // (Noise at both widths: the block sums read whole words of rows of a multiple of 4 bytes,
    // bytes otherwise, and a document's margins hide an edge column's sums.)
    let pages = [
        ("noise 300x700", uniform_noise(300, 700, 11)),
        ("noise 301x400", uniform_noise(301, 400, 13)),
        ("document 310x650", document(310, 650, 12)),
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut binarizer = d.device.binarizer().expect("binarizer");
    for (name, page) in &pages {
        let on_device = binarizer.upload(page).expect("upload");
        for base in local_configs() {
            for window in [65, 101, 257, 301] {
                let params = Params { window, kernel: KernelKind::Fast, ..base };
                let expected = reference::binarize(page, &params).expect("reference");
                let (ink, _) = binarizer.binarize_on_device(&on_device, &params).expect("binarize");
                let got = binarizer.download(&ink).expect("download");
                let wrong = mismatches(got.values(), expected.values());
                if wrong != 0 {
                    failures.push(format!("{}: {name}: {}: {wrong} pixels differ", d.token, params.describe()));
                }
                runs += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs differ:\n{}", failures.len(), failures.join("\n"));
}

fn binarized_pages_are_labeled_without_leaving_the_device(d: &common::TestDevice) {
    let mut pages = vec![("document 301x97".to_string(), document(301, 97, 11))];
    pages.extend(real_page().map(|p| ("DIBCO 2009-H01, cropped".to_string(), p)));
    let methods = [Method::Nick.defaults(), Method::Otsu.defaults(), Params { window: 31, ..Method::Wolf.defaults() }];
    let mut failures = Vec::new();
    let mut binarizer = d.device.binarizer().unwrap();
    for (name, page) in &pages {
        let gray = binarizer.upload(page).unwrap();
        for params in &methods {
            let ink = reference::binarize(page, params).unwrap();
            let (binary, _) = binarizer.binarize_on_device(&gray, params).unwrap();
            for &algorithm in Algorithm::ALL {
                for connectivity in algorithm.connectivities().iter().copied().filter(|c| c.dims() == 2) {
                    let (expected, count) = ccl::reference::label(&ink, connectivity).into_consecutive();
                    let mut labeler = d.device.labeler_for(algorithm, connectivity).unwrap();
                    let run = labeler.run(&binary, &ccl::Options::new(connectivity).consecutive()).unwrap();
                    let got_count = run.count.unwrap();
                    let got = labeler.download(&run.labels).unwrap();
                    if got_count != count || got.values() != expected.values() {
                        failures.push(format!(
                            "{}: {name}: {}: {algorithm} {connectivity}",
                            d.token,
                            params.describe()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "binarize + label differs from the reference:\n{}", failures.join("\n"));
}

/// `binarize_on_device_into` writes the same ink into an array the caller made (a borrowed one
/// on CUDA, from Python's GPU arrays; here an uploaded page reused as the output), over what
/// was there; a wrong shape is refused, and borrowing is for CUDA devices only. Pages uploaded
/// from their pixels (`upload_pixels`, what the Python package does) binarize the same.
fn binarizing_into_an_existing_array_equals_binarizing(d: &common::TestDevice) {
    let page = document(173, 61, 5);
    let cases = [Method::Nick.defaults(), Method::Otsu.defaults(), Params { window: 9, ..Method::Wolf.defaults() }];
    let mut binarizer = d.device.binarizer().unwrap();
    let gray = binarizer.upload(&page).unwrap();
    let filler = GrayImage::image(173, 61, vec![7; 173 * 61]).unwrap();
    for params in &cases {
        let expected = reference::binarize(&page, params).unwrap();
        let mut ink = binarizer.upload(&filler).unwrap();
        binarizer.binarize_on_device_into(&gray, params, &mut ink).unwrap();
        let got = binarizer.download(&ink).unwrap();
        assert_eq!(mismatches(got.values(), expected.values()), 0, "{}: {}", d.token, params.describe());
    }
    // A page uploaded from its pixels binarizes as one uploaded as a GrayImage; a length
    // that does not match is refused.
    let from_pixels = binarizer.upload_pixels(173, 61, page.values()).unwrap();
    let (ink, _) = binarizer.binarize_on_device(&from_pixels, &cases[0]).unwrap();
    let expected = reference::binarize(&page, &cases[0]).unwrap();
    assert_eq!(binarizer.download(&ink).unwrap().into_values(), expected.values(), "{}", d.token);
    assert!(matches!(binarizer.upload_pixels(173, 60, page.values()), Err(ccl::Error::SizeMismatch { .. })));
    let mut small = binarizer.upload(&GrayImage::image(172, 61, vec![0; 172 * 61]).unwrap()).unwrap();
    let err = binarizer.binarize_on_device_into(&gray, &cases[0], &mut small).unwrap_err();
    assert!(err.to_string().contains("ink"), "{}: {err}", d.token);
    if d.device.info().id.backend() != ccl::BackendKind::Cuda {
        // SAFETY: refused before the address is used.
        let Err(err) = (unsafe { binarizer.borrow(ccl::Shape::image(4, 4), 0x1000, None) }) else {
            panic!("{}: borrowed device memory", d.token)
        };
        assert!(matches!(err.backend(), Some(ccl::BackendError::Unsupported { .. })), "{}: {err}", d.token);
    }
}

/// A binarizer whose first use is a window past 257 builds (and warms up) the 64-bit program
/// itself (it once warmed up with a 32-bit one it had not built, and panicked).
fn a_wide_window_as_first_use_works(d: &common::TestDevice) {
    let page = document(300, 40, 3);
    let cases = [
        Params { window: 301, ..Method::Sauvola.defaults() },
        Params { window: 259, formula: NickFormula::OpenCv, ..Method::Nick.defaults() },
    ];
    for params in cases {
        let expected = reference::binarize(&page, &params).unwrap();
        let (got, _) = d.device.binarizer().unwrap().binarize(&page, &params).unwrap();
        assert_eq!(mismatches(got.values(), expected.values()), 0, "{}: {}", d.token, params.describe());
    }
}

/// Parameters out of range or not finite.
fn bad_parameters() -> [Params; 5] {
    [
        Params { window: 0, ..Method::Nick.defaults() },
        Params { window: ccl::binarize::MAX_WINDOW + 1, ..Method::Nick.defaults() },
        Params { window: 16, formula: NickFormula::OpenCv, ..Method::Nick.defaults() },
        Params { k: f64::NAN, ..Method::Niblack.defaults() },
        Params { r: 0.0, ..Method::Sauvola.defaults() },
    ]
}

#[test]
fn bad_parameters_are_typed_errors() {
    let page = document(20, 20, 1);
    for params in bad_parameters() {
        let err = reference::binarize(&page, &params).expect_err(&params.describe());
        assert!(matches!(err, ccl::Error::InvalidParameter { .. }), "{}: {err}", params.describe());
    }
    assert!("sideways".parse::<Method>().is_err());
    assert_eq!("Sauvola".parse::<Method>().unwrap(), Method::Sauvola);
    assert_eq!("global-shared".parse::<KernelKind>().unwrap(), KernelKind::GlobalShared);
}

/// The same typed errors from every device's binarizer.
fn bad_parameters_are_typed_errors_on_the_device(d: &common::TestDevice) {
    let page = document(20, 20, 1);
    for params in bad_parameters() {
        let mut binarizer = d.device.binarizer().unwrap();
        let err = binarizer.binarize(&page, &params).expect_err(&params.describe());
        assert!(matches!(err, ccl::Error::InvalidParameter { .. }), "{}: {err}", d.token);
    }
}

/// Doxa's CC0 test page, gray = (11 R + 16 G + 5 B) / 32, Doxa's own ink for Nick (window 45,
/// k = -0.1, T = m + k sqrt(S2 / NP), clipped window) on it, and those parameters; `None`
/// without the shared data.
fn doxa_page() -> Option<(GrayImage, Vec<u8>, Params)> {
    let dir = common::data_dir()?;
    let color = image::open(dir.join("doxa/2JohnC1V3.ppm")).expect("doxa page").to_rgb8();
    let gray: Vec<u8> = color
        .pixels()
        .map(|p| ((11 * u32::from(p[0]) + 16 * u32::from(p[1]) + 5 * u32::from(p[2])) / 32) as u8)
        .collect();
    let page = GrayImage::image(color.width() as usize, color.height() as usize, gray).unwrap();
    let golden = image::open(dir.join("doxa/2JohnC1V3-NICK.pbm")).expect("golden").to_luma8();
    let golden_ink: Vec<u8> = golden.pixels().map(|p| u8::from(p[0] == 0)).collect();
    let params = Params { window: 45, k: -0.1, formula: NickFormula::Doxa, ..Method::Nick.defaults() };
    Some((page, golden_ink, params))
}

/// Our reference equals Doxa's output for Nick bit for bit.
#[test]
fn nick_equals_doxas_golden_vector() {
    let Some((page, golden_ink, params)) = doxa_page() else { return };
    let ours = reference::binarize(&page, &params).unwrap();
    let ink = ours.values().iter().filter(|&&p| p != 0).count();
    assert!(ink > 1000, "the page has ink ({ink} pixels)");
    assert_eq!(mismatches(ours.values(), &golden_ink), 0, "pixels differing from Doxa's NICK output");
}

/// The same on every device.
fn the_device_equals_doxas_golden_vector(d: &common::TestDevice) {
    let Some((page, golden_ink, params)) = doxa_page() else { return };
    let (got, _) = d.device.binarizer().unwrap().binarize(&page, &params).unwrap();
    assert_eq!(mismatches(got.values(), &golden_ink), 0, "{}", d.token);
}

#[test]
fn otsu_splits_two_levels_between_them() {
    let mut histogram = [0u64; 256];
    histogram[40] = 100;
    histogram[200] = 300;
    assert_eq!(reference::otsu_threshold(&histogram), 40);
    let flat = [0u64; 256];
    assert_eq!(reference::otsu_threshold(&flat), 0);
}

/// A 10 Mpx page gets the fast kernel's full-size tiles (1536 columns x 32 rows), which the small
/// pages above never reach; 5000 columns wide, it has tiles whose spans lie inside the page
/// (read without border tests).
fn a_ten_megapixel_page_equals_the_reference(d: &common::TestDevice) {
    // The page and the reference's ink for each case, once per test process.
    static CASES: OnceLock<(GrayImage, Vec<(Params, ccl::BinaryImage)>)> = OnceLock::new();
    let (page, cases) = CASES.get_or_init(|| {
        // Uniform noise: many pixels lie near their threshold, so any error in the sums shows.
        let page = uniform_noise(5000, 2000, 21);
        let cases = [
            Params { window: 9, ..Method::Nick.defaults() },
            Params { window: 201, ..Method::Nick.defaults() },
            Params { window: 45, formula: NickFormula::OpenCv, ..Method::Nick.defaults() },
            Params { window: 45, ..Method::Wolf.defaults() },
        ];
        let cases = cases.map(|params| (params, reference::binarize(&page, &params).unwrap())).to_vec();
        (page, cases)
    });
    for (params, expected) in cases {
        let mut binarizer = d.device.binarizer().unwrap();
        let gray = binarizer.upload(page).unwrap();
        let (ink, _) = binarizer.binarize_on_device(&gray, params).unwrap();
        let got = binarizer.download(&ink).unwrap();
        assert_eq!(mismatches(got.values(), expected.values()), 0, "{}: {}", d.token, params.describe());
    }
}
