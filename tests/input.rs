//! Reading inputs: foreground is decided on the file's own samples for every bit depth and
//! channel layout (16-bit and dark color pixels are foreground), the threshold is in the file's
//! range, multi-frame files say so, oversized files are refused before decoding, and no
//! truncated or mutated file of any format makes the reader panic or label wrongly, on any
//! device (one test each: `cargo test --test input -- ::cuda` runs the CUDA one).

mod common;

use std::path::{Path, PathBuf};

use ccl::io::{probe, read_image, Binarize, Frames, ReadOptions, SampleType};
use ccl::{reference, BinaryImage, Connectivity, Error, Labeler};
use image::{ImageBuffer, Luma, LumaA, Rgb, Rgba};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccl-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(path: &Path, threshold: Option<f64>, invert: bool) -> ccl::Result<BinaryImage> {
    let options = ReadOptions { binarize: Binarize { threshold, invert }, ..ReadOptions::default() };
    read_image(path, &options).map(|d| d.image)
}

/// Components of `image` (8-connectivity) by the CPU reference and by every device present,
/// which must agree.
fn components(image: &BinaryImage) -> u32 {
    let expected = reference::label(image, Connectivity::Eight);
    for dev in common::shared_devices() {
        let mut labeler = dev.device.labeler(ccl::Algorithm::UF).unwrap();
        let got = label(&mut labeler, image);
        assert_eq!(got, expected, "{} differs from the reference", dev.token);
    }
    expected.component_count()
}

/// Five 6x6 blocks, 2 pixels apart, with the given sample values, on a zero background.
fn blocks<P: image::Pixel>(values: [P; 5], zero: P) -> ImageBuffer<P, Vec<P::Subpixel>> {
    ImageBuffer::from_fn(5 * 8 + 2, 10, |x, y| {
        let (bx, inside) = (x / 8, x % 8 >= 2 && (2..8).contains(&y));
        if inside && bx < 5 {
            values[bx as usize]
        } else {
            zero
        }
    })
}

#[test]
fn sixteen_bit_values_below_256_are_foreground_in_png_and_tiff() {
    let dir = scratch("16bit");
    let image = blocks([100u16, 128, 129, 300, 65535].map(|v| Luma([v])), Luma([0]));
    for ext in ["png", "tiff"] {
        let path = dir.join(format!("blocks.{ext}"));
        image.save(&path).unwrap();
        let info = probe(&path).unwrap();
        assert_eq!((info.samples, info.color_channels), (SampleType::U16, 1), "{ext}");
        assert_eq!(components(&read(&path, None, false).unwrap()), 5, "{ext}: every nonzero block");
        // The threshold is in the 16-bit range: > 200 keeps 300 and 65535; > 128 also 129.
        assert_eq!(components(&read(&path, Some(200.0), false).unwrap()), 2, "{ext}");
        assert_eq!(components(&read(&path, Some(128.0), false).unwrap()), 3, "{ext}");
        assert_eq!(components(&read(&path, Some(65535.0), true).unwrap()), 1, "{ext}: all is one background");
        match read(&path, Some(70_000.0), false) {
            Err(Error::InvalidParameter { name, reason }) => {
                assert_eq!(name, "threshold");
                assert!(reason.contains("0-65535") && reason.contains("blocks"), "{reason}");
            }
            other => panic!("{ext}: threshold 70000 must be refused, got {other:?}"),
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn dark_colors_are_foreground_and_alpha_is_ignored() {
    let dir = scratch("color");
    let rgb =
        blocks([Rgb([1u8, 0, 0]), Rgb([0, 1, 0]), Rgb([0, 0, 1]), Rgb([1, 1, 1]), Rgb([255, 0, 0])], Rgb([0, 0, 0]));
    let rgba = blocks(
        [Rgba([1u8, 0, 0, 255]), Rgba([0, 0, 1, 0]), Rgba([0, 0, 0, 255]), Rgba([9, 9, 9, 9]), Rgba([0, 7, 0, 1])],
        Rgba([0, 0, 0, 255]),
    );
    let rgb16 = blocks(
        [Rgb([1u16, 0, 0]), Rgb([0, 0, 300]), Rgb([0, 0, 0]), Rgb([0, 65535, 0]), Rgb([2, 2, 2])],
        Rgb([0, 0, 0]),
    );
    let gray_alpha =
        blocks([LumaA([1u8, 0]), LumaA([0, 255]), LumaA([3, 255]), LumaA([0, 0]), LumaA([200, 7])], LumaA([0, 255]));
    rgb.save(dir.join("rgb.png")).unwrap();
    rgb.save(dir.join("rgb.bmp")).unwrap();
    rgba.save(dir.join("rgba.png")).unwrap();
    rgb16.save(dir.join("rgb16.tiff")).unwrap();
    gray_alpha.save(dir.join("gray-alpha.png")).unwrap();
    for (name, count) in [("rgb.png", 5), ("rgb.bmp", 5), ("rgba.png", 4), ("rgb16.tiff", 4), ("gray-alpha.png", 3)] {
        assert_eq!(components(&read(&dir.join(name), None, false).unwrap()), count, "{name}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn color_thresholds_use_rec709_gray_at_full_depth() {
    let dir = scratch("luma");
    // Gray = (2126 R + 7152 G + 722 B) / 10000: (255, 0, 0) -> 54, (0, 255, 0) -> 182,
    // (0, 0, 255) -> 18, (100, 100, 100) -> 100, (0, 0, 0) -> 0.
    let image = blocks(
        [Rgb([255u8, 0, 0]), Rgb([0, 255, 0]), Rgb([0, 0, 255]), Rgb([100, 100, 100]), Rgb([0, 0, 0])],
        Rgb([0, 0, 0]),
    );
    let path = dir.join("luma.png");
    image.save(&path).unwrap();
    for (t, count) in [(17.0, 4), (18.0, 3), (53.0, 3), (54.0, 2), (99.5, 2), (100.0, 1), (181.0, 1), (182.0, 0)] {
        assert_eq!(components(&read(&path, Some(t), false).unwrap()), count, "threshold {t}");
    }
    // 16-bit color: the same weights on 16-bit values, not on values scaled to 8 bits.
    let deep = blocks([Rgb([0u16, 0, 300]); 5], Rgb([0, 0, 0]));
    let path = dir.join("deep.png");
    deep.save(&path).unwrap();
    // 722 * 300 / 10000 = 21: above 20, not above 21.
    assert_eq!(components(&read(&path, Some(20.0), false).unwrap()), 5);
    assert_eq!(components(&read(&path, Some(21.0), false).unwrap()), 0);
    assert!(matches!(read(&dir.join("luma.png"), Some(256.0), false), Err(Error::InvalidParameter { .. })));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn float_tiff_samples_are_read_as_stored() {
    let dir = scratch("float");
    let image = blocks(
        [Rgb([0.001f32, 0.0, 0.0]), Rgb([0.0, 0.5, 0.0]), Rgb([0.0, 0.0, -1.0]), Rgb([2.0, 2.0, 2.0]), Rgb([0.0; 3])],
        Rgb([0.0, 0.0, 0.0]),
    );
    let path = dir.join("float.tiff");
    image.save(&path).unwrap();
    assert_eq!(probe(&path).unwrap().samples, SampleType::F32);
    assert_eq!(components(&read(&path, None, false).unwrap()), 4);
    // Gray 0.5 * 0.7152 = 0.3576 and 2.0: above 0.3, then only 2.0 above 1.
    assert_eq!(components(&read(&path, Some(0.3), false).unwrap()), 2);
    assert_eq!(components(&read(&path, Some(1.0), false).unwrap()), 1);
    // Any finite threshold is valid for float samples.
    assert!(read(&path, Some(1e9), false).is_ok());
    std::fs::remove_dir_all(dir).unwrap();
}

/// A gray 32-bit float TIFF (which the image crate does not decode) is read as stored: nonzero,
/// or gray > T for any finite T, negative too; NaN samples are refused.
#[test]
fn gray_float_tiff_samples_are_read_as_stored() {
    let dir = scratch("gray-float");
    let values = [Luma([0.001f32]), Luma([-0.5]), Luma([-2.0]), Luma([2.0]), Luma([0.0])];
    let image = blocks(values, Luma([0.0f32]));
    let path = dir.join("gray-float.tiff");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
    encoder.write_image::<tiff::encoder::colortype::Gray32Float>(image.width(), image.height(), &image).unwrap();
    drop(encoder);
    let source = probe(&path).unwrap();
    assert_eq!((source.samples, source.color_channels), (SampleType::F32, 1));
    assert_eq!(components(&read(&path, None, false).unwrap()), 4);
    assert_eq!(components(&read(&path, Some(0.0), false).unwrap()), 2, "0.001 and 2.0");
    assert_eq!(components(&read(&path, Some(-1.0), true).unwrap()), 1, "-2.0 alone is <= -1");
    let (page, _) = ccl::io::read_gray(&path, ccl::MAX_PIXELS).unwrap();
    assert_eq!(page.values()[2 * image.width() as usize + 2 + 3 * 8], 255, "2.0 is clamped to 255");
    let nan = dir.join("nan.tiff");
    let file = std::io::BufWriter::new(std::fs::File::create(&nan).unwrap());
    let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
    encoder.write_image::<tiff::encoder::colortype::Gray32Float>(2, 1, &[0.0, f32::NAN]).unwrap();
    drop(encoder);
    assert!(matches!(read(&nan, None, false), Err(Error::ImageRead { .. })));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn multi_page_tiff_and_animated_gif_say_only_the_first_frame_is_read() {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame, RgbaImage};
    let dir = scratch("frames");
    let tiff_path = dir.join("pages.tiff");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&tiff_path).unwrap());
        let mut encoder = tiff::encoder::TiffEncoder::new(file).unwrap();
        let first: Vec<u8> = (0..64).map(|i| if i % 9 == 0 { 255 } else { 0 }).collect();
        encoder.write_image::<tiff::encoder::colortype::Gray8>(8, 8, &first).unwrap();
        for _ in 0..2 {
            encoder.write_image::<tiff::encoder::colortype::Gray8>(8, 8, &[255; 64]).unwrap();
        }
    }
    let decoded = read_image(&tiff_path, &ReadOptions::default()).unwrap();
    assert_eq!(decoded.source.frames, Frames::Several(Some(3)));
    assert_eq!(decoded.image.values().iter().filter(|&&p| p != 0).count(), 8, "the first page");
    assert!(decoded.source.describe().contains("3 frames"), "{}", decoded.source.describe());

    let gif_path = dir.join("anim.gif");
    {
        let file = std::fs::File::create(&gif_path).unwrap();
        let frames = [0u8, 255].map(|v| {
            let img =
                RgbaImage::from_fn(
                    8,
                    8,
                    |x, _| if x < 4 { image::Rgba([v, v, v, 255]) } else { image::Rgba([0, 0, 0, 255]) },
                );
            Frame::from_parts(img, 0, 0, Delay::from_numer_denom_ms(100, 1))
        });
        GifEncoder::new(file).encode_frames(frames).unwrap();
    }
    assert!(matches!(probe(&gif_path).unwrap().frames, Frames::Several(_)));
    let single = dir.join("single.png");
    image::GrayImage::new(4, 4).save(&single).unwrap();
    assert_eq!(probe(&single).unwrap().frames, Frames::Single);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn oversized_inputs_are_refused_before_decoding_with_size_and_memory() {
    let dir = scratch("limit");
    let path = dir.join("wide.png");
    image::GrayImage::new(3000, 2000).save(&path).unwrap();
    let options = ReadOptions { max_pixels: 5_999_999, ..ReadOptions::default() };
    match read_image(&path, &options) {
        Err(e @ Error::ImageTooLarge { .. }) => {
            let text = e.to_string();
            assert!(text.contains("3000x2000") && text.contains("6.0 Mpx") && text.contains("5999999"), "{text}");
            assert!(text.contains("MB of host memory"), "{text}");
        }
        other => panic!("expected ImageTooLarge, got {other:?}"),
    }
    assert!(read_image(&path, &ReadOptions { max_pixels: 6_000_000, ..options }).is_ok());
    std::fs::remove_dir_all(dir).unwrap();
}

/// One small image (a pattern with several components) in every format and layout the reader
/// supports, as file bytes.
fn encoded_samples() -> Vec<(String, Vec<u8>)> {
    use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
    use image::{DynamicImage, ImageFormat};
    let gray = image::GrayImage::from_fn(37, 23, |x, y| Luma([if (x / 5 + y / 4) % 3 == 0 { 200 } else { 0 }]));
    let dynamic = DynamicImage::ImageLuma8(gray.clone());
    let layouts = [
        ("l8", dynamic.clone()),
        ("l16", DynamicImage::ImageLuma16(dynamic.to_luma16())),
        ("rgb8", DynamicImage::ImageRgb8(dynamic.to_rgb8())),
        ("rgba8", DynamicImage::ImageRgba8(dynamic.to_rgba8())),
    ];
    let mut out = Vec::new();
    let mut encode = |name: String, image: &DynamicImage, format: ImageFormat| {
        let mut bytes = std::io::Cursor::new(Vec::new());
        if image.write_to(&mut bytes, format).is_ok() {
            out.push((name, bytes.into_inner()));
        }
    };
    for (layout, image) in &layouts {
        for (format, ext) in [(ImageFormat::Png, "png"), (ImageFormat::Tiff, "tiff")] {
            encode(format!("{layout}.{ext}"), image, format);
        }
    }
    let rgb = &layouts[2].1;
    for (format, ext) in
        [(ImageFormat::Jpeg, "jpg"), (ImageFormat::Bmp, "bmp"), (ImageFormat::Gif, "gif"), (ImageFormat::WebP, "webp")]
    {
        encode(format!("rgb8.{ext}"), rgb, format);
    }
    for (subtype, ext) in [
        (PnmSubtype::Bitmap(SampleEncoding::Binary), "pbm"),
        (PnmSubtype::Graymap(SampleEncoding::Binary), "pgm"),
        (PnmSubtype::Graymap(SampleEncoding::Ascii), "ascii.pgm"),
        (PnmSubtype::Pixmap(SampleEncoding::Binary), "ppm"),
    ] {
        let mut bytes = Vec::new();
        let image = match ext {
            "ppm" => rgb.clone(),
            // A bitmap holds 0 and 1.
            "pbm" => DynamicImage::ImageLuma8(image::GrayImage::from_fn(37, 23, |x, y| {
                Luma([u8::from(gray[(x, y)][0] != 0)])
            })),
            _ => dynamic.clone(),
        };
        PnmEncoder::new(&mut bytes)
            .with_subtype(subtype)
            .encode(image.as_bytes(), 37, 23, image.color().into())
            .unwrap();
        out.push((format!("sample.{ext}"), bytes));
    }
    // Gray float TIFF, which the image crate does not decode (read with the tiff crate).
    let mut bytes = std::io::Cursor::new(Vec::new());
    let samples: Vec<f32> = gray.pixels().map(|p| f32::from(p[0]) / 255.0).collect();
    let mut encoder = tiff::encoder::TiffEncoder::new(&mut bytes).unwrap();
    encoder.write_image::<tiff::encoder::colortype::Gray32Float>(37, 23, &samples).unwrap();
    out.push(("gray-f32.tiff".into(), bytes.into_inner()));
    out
}

device_tests! {
    fresh;
    truncated_and_mutated_files_never_panic_or_label_wrongly: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Truncated and mutated files of every format give an error or a correct labeling of what
/// they decode to: never a panic, never a labeling that differs from the reference.
fn truncated_and_mutated_files_never_panic_or_label_wrongly(dev: &common::TestDevice) {
    let dir = scratch(&format!("fuzz-{}", dev.token));
    let samples = encoded_samples();
    let formats: Vec<&str> = samples.iter().map(|(n, _)| n.as_str()).collect();
    for ext in ["png", "tiff", "jpg", "bmp", "gif", "webp", "pbm", "pgm", "ppm"] {
        assert!(formats.iter().any(|f| f.ends_with(ext)), "no {ext} sample among {formats:?}");
    }
    let mut labeler = dev.device.labeler(ccl::Algorithm::BKE).unwrap();
    let mut rng = rand_mt::Mt::new(2026);
    let (mut decoded, mut refused, mut panics) = (0usize, 0usize, Vec::new());
    for (name, bytes) in &samples {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let original = read(&path, None, false).unwrap_or_else(|e| panic!("{name} must decode: {e}"));
        assert!(original.values().iter().any(|&p| p != 0), "{name}");
        let mut mutants: Vec<(String, Vec<u8>)> = Vec::new();
        let len = bytes.len();
        for cut in (0..len).step_by((len / 40).max(1)).chain([1, 2, 8, 16, 64, len - 1]) {
            mutants.push((format!("truncated to {cut}"), bytes[..cut.min(len)].to_vec()));
        }
        for k in 0..120 {
            let mut m = bytes.clone();
            let flips = if k % 4 == 0 { 8 } else { 1 };
            for _ in 0..flips {
                // Headers are where decoders trust sizes: half of the flips hit the first 64 bytes.
                let span = if rng.next_u32().is_multiple_of(2) { len.min(64) } else { len };
                let at = rng.next_u32() as usize % span;
                m[at] = rng.next_u32() as u8;
            }
            mutants.push((format!("mutation {k}"), m));
        }
        for (what, data) in mutants {
            std::fs::write(&path, &data).unwrap();
            let options = ReadOptions { max_pixels: 1 << 22, ..ReadOptions::default() };
            let result = std::panic::catch_unwind(|| read_image(&path, &options));
            let image = match result {
                Err(_) => {
                    panics.push(format!("{name}, {what}"));
                    continue;
                }
                Ok(Err(_)) => {
                    refused += 1;
                    continue;
                }
                Ok(Ok(d)) => d.image,
            };
            decoded += 1;
            let expected = reference::label_as(&image, Connectivity::Eight, ccl::RawLabels::FirstBlock);
            let got = label(&mut labeler, &image);
            assert_eq!(got, expected, "{name}, {what}: {} labels differ from the reference", dev.token);
        }
    }
    eprintln!("fuzz: {} formats, {decoded} mutants decoded and labeled exactly, {refused} refused", samples.len());
    assert!(panics.is_empty(), "the reader panicked on:\n{}", panics.join("\n"));
    assert!(decoded > 0 && refused > 0);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The raw labels of `image` at 8-connectivity, labeled on `labeler`'s device.
fn label(labeler: &mut ccl::AnyLabeler, image: &BinaryImage) -> ccl::LabelImage {
    let options = ccl::Options::new(Connectivity::Eight);
    ccl::run_host(labeler, &options, |l| l.upload(image), |l, d| l.download(d)).unwrap().labels
}
