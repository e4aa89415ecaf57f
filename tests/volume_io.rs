//! Volume files: multi-page TIFF (classic and BigTIFF) and folders of slice images in, each slice
//! binarized exactly as the same image read in 2D; labels out as multi-page uint32 TIFF; sizes
//! that differ, empty folders and files that are no volume as typed errors.

use std::path::Path;

use ccl::io::{self, Binarize, ReadOptions};
use ccl::reference::label_volume;
use ccl::{random_volume, BinaryImage, Connectivity, Error, LabelImage};
use tiff::encoder::{colortype, TiffEncoder, TiffValue};

/// Writes `pages` (width, height, samples) as a TIFF of color type `C`, BigTIFF when `big`.
fn write_tiff<C: colortype::ColorType>(path: &Path, big: bool, pages: &[(u32, u32, Vec<C::Inner>)])
where
    [C::Inner]: TiffValue,
{
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    if big {
        let mut encoder = TiffEncoder::new_big(file).unwrap();
        for (w, h, data) in pages {
            encoder.write_image::<C>(*w, *h, data).unwrap();
        }
    } else {
        let mut encoder = TiffEncoder::new(file).unwrap();
        for (w, h, data) in pages {
            encoder.write_image::<C>(*w, *h, data).unwrap();
        }
    }
}

/// The slices of a volume as 8-bit gray pages, foreground 200 and background 0.
fn gray_pages(volume: &BinaryImage) -> Vec<(u32, u32, Vec<u8>)> {
    let s = volume.shape();
    let slice = s.width * s.height;
    (0..s.depth)
        .map(|z| {
            let data =
                volume.values()[z * slice..(z + 1) * slice].iter().map(|&v| if v != 0 { 200 } else { 0 }).collect();
            (s.width as u32, s.height as u32, data)
        })
        .collect()
}

/// Slice `z` of a volume, one byte per pixel.
fn slice_of(volume: &BinaryImage, z: usize) -> &[u8] {
    let s = volume.shape();
    &volume.values()[z * s.width * s.height..(z + 1) * s.width * s.height]
}

/// Pseudo-random bytes (a fixed LCG), for samples of every value.
fn bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8
        })
        .collect()
}

/// The binarizations every reader is checked with.
fn binarizations() -> [Binarize; 4] {
    [
        Binarize::default(),
        Binarize { threshold: None, invert: true },
        Binarize { threshold: Some(100.0), invert: false },
        Binarize { threshold: Some(100.0), invert: true },
    ]
}

#[test]
fn a_multi_page_tiff_is_a_volume_of_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let volume = random_volume(13, 7, 5, 45, 1, 3).unwrap();
    for big in [false, true] {
        let path = dir.path().join(format!("vol-{big}.tif"));
        write_tiff::<colortype::Gray8>(&path, big, &gray_pages(&volume));
        assert_eq!(io::tiff_pages(&path).unwrap(), 5);
        assert_eq!(io::read_volume_tiff(&path, &ReadOptions::default()).unwrap(), volume, "BigTIFF {big}");
        assert_eq!(io::read_volume(&path, &ReadOptions::default()).unwrap(), volume, "BigTIFF {big}");
    }
}

/// Writes the pages `pages` (each number seeds one page's samples) of one kind, 9x6.
fn write_kind(kind: &str, path: &Path, pages: &[usize]) {
    let (w, h) = (9u32, 6u32);
    let n = (w * h) as usize;
    match kind {
        "gray8" => {
            let pages: Vec<_> = pages.iter().map(|&z| (w, h, bytes(n, z as u32))).collect();
            write_tiff::<colortype::Gray8>(path, false, &pages);
        }
        "rgb8" => {
            let pages: Vec<_> = pages.iter().map(|&z| (w, h, bytes(3 * n, 10 + z as u32))).collect();
            write_tiff::<colortype::RGB8>(path, false, &pages);
        }
        _ => {
            // Values 0-255, so a threshold of 100 splits them as it does 8-bit ones.
            let pages: Vec<_> =
                pages.iter().map(|&z| (w, h, bytes(n, 20 + z as u32).into_iter().map(u16::from).collect())).collect();
            write_tiff::<colortype::Gray16>(path, false, &pages);
        }
    }
}

/// Pages of every kind (8-bit gray, 8-bit RGB, 16-bit gray) give, slice by slice, what the same
/// page alone read as a 2D image gives, with every binarization.
#[test]
fn tiff_pages_are_binarized_as_the_same_images_in_2d() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 4;
    for kind in ["gray8", "rgb8", "gray16"] {
        let path = dir.path().join(format!("{kind}.tiff"));
        write_kind(kind, &path, &(0..depth).collect::<Vec<_>>());
        for binarize in binarizations() {
            let volume = io::read_volume_tiff(&path, &ReadOptions { binarize, ..ReadOptions::default() }).unwrap();
            assert_eq!((volume.shape().width, volume.shape().height, volume.shape().depth), (9, 6, depth));
            for z in 0..depth {
                let page = dir.path().join(format!("{kind}-{z}.tiff"));
                write_kind(kind, &page, &[z]);
                let image = io::read_binary(&page, binarize).unwrap();
                assert_eq!(slice_of(&volume, z), image.values(), "{kind} page {z} {binarize:?}");
            }
        }
    }
    // The threshold is checked against the pages' own range, as for an image.
    let err = io::read_volume_tiff(
        &dir.path().join("gray8.tiff"),
        &ReadOptions { binarize: Binarize { threshold: Some(300.0), invert: false }, ..ReadOptions::default() },
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { .. }) && err.to_string().contains("0-255"), "{err}");
}

/// Reads a TIFF of uint32 gray pages back as labels, checking each page's type.
fn read_label_tiff(path: &Path) -> LabelImage {
    let mut decoder = tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let (width, height) = decoder.dimensions().unwrap();
    let (mut labels, mut depth) = (Vec::new(), 0);
    loop {
        assert_eq!(decoder.colortype().unwrap(), tiff::ColorType::Gray(32));
        assert_eq!(decoder.dimensions().unwrap(), (width, height));
        match decoder.read_image().unwrap() {
            tiff::decoder::DecodingResult::U32(page) => labels.extend(page),
            _ => panic!("page {depth} is not uint32"),
        }
        depth += 1;
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().unwrap();
    }
    LabelImage::volume(width as usize, height as usize, depth, labels).unwrap()
}

#[test]
fn labels_written_as_tiff_read_back_as_uint32_pages() {
    let dir = tempfile::tempdir().unwrap();
    let labels = label_volume(&random_volume(17, 9, 6, 50, 1, 11).unwrap(), Connectivity::TwentySix).unwrap();
    for name in ["labels.tif", "labels.TIFF"] {
        let path = dir.path().join(name);
        io::write_volume(&path, &labels).unwrap();
        assert_eq!(read_label_tiff(&path), labels, "{name}");
    }
    io::write_volume_tiff(&dir.path().join("direct.tiff"), &labels).unwrap();
    assert_eq!(read_label_tiff(&dir.path().join("direct.tiff")), labels);
    // 32-bit integer pages are no input (as for 2D images): a typed error naming the page.
    let err = io::read_volume_tiff(&dir.path().join("direct.tiff"), &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::ImageRead { .. }) && err.to_string().contains("page 1:"), "{err}");
    io::write_volume(&dir.path().join("labels.npy"), &labels).unwrap();
    let err = io::write_volume(&dir.path().join("labels.png"), &labels).unwrap_err();
    assert!(matches!(err, Error::ImageWrite { .. }) && err.to_string().contains(".tif"), "{err}");
    assert!(!dir.path().join("labels.png").exists());
}

/// Writes slice `z` of `volume` as an 8-bit gray PNG with foreground 255.
fn write_png_slice(path: &Path, volume: &BinaryImage, z: usize) {
    let s = volume.shape();
    let pixels = slice_of(volume, z).iter().map(|&v| v * 255).collect();
    image::GrayImage::from_raw(s.width as u32, s.height as u32, pixels).unwrap().save(path).unwrap();
}

#[test]
fn a_folder_of_slices_is_a_volume_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    let volume = random_volume(11, 8, 5, 40, 1, 5).unwrap();
    // Written last slice first, so the order can only come from the names.
    for z in (0..5).rev() {
        write_png_slice(&dir.path().join(format!("slice_{z:02}.png")), &volume, z);
    }
    std::fs::write(dir.path().join("notes.txt"), "not an image").unwrap();
    std::fs::create_dir(dir.path().join("sub.png")).unwrap();
    assert_eq!(io::read_volume_folder(dir.path(), &ReadOptions::default()).unwrap(), volume);
    assert_eq!(io::read_volume(dir.path(), &ReadOptions::default()).unwrap(), volume);

    // Slices of mixed formats and depths, each binarized as the same image in 2D.
    let mixed = tempfile::tempdir().unwrap();
    let (w, h) = (7u32, 5u32);
    let n = (w * h) as usize;
    image::GrayImage::from_raw(w, h, bytes(n, 1)).unwrap().save(mixed.path().join("a.png")).unwrap();
    image::RgbImage::from_raw(w, h, bytes(3 * n, 2)).unwrap().save(mixed.path().join("b.tif")).unwrap();
    let wide: Vec<u16> = bytes(n, 3).into_iter().map(u16::from).collect();
    image::ImageBuffer::<image::Luma<u16>, _>::from_raw(w, h, wide).unwrap().save(mixed.path().join("c.png")).unwrap();
    for binarize in binarizations() {
        let volume = io::read_volume_folder(mixed.path(), &ReadOptions { binarize, ..ReadOptions::default() }).unwrap();
        assert_eq!(volume.shape().depth, 3);
        for (z, name) in ["a.png", "b.tif", "c.png"].iter().enumerate() {
            let image = io::read_binary(&mixed.path().join(name), binarize).unwrap();
            assert_eq!(slice_of(&volume, z), image.values(), "{name} {binarize:?}");
        }
    }
}

#[test]
fn slices_or_pages_of_different_sizes_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.tif");
    write_tiff::<colortype::Gray8>(&path, false, &[(4, 4, vec![1; 16]), (4, 4, vec![0; 16]), (5, 4, vec![1; 20])]);
    let err = io::read_volume_tiff(&path, &ReadOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::FileRead { .. }) && err.path() == Some(path.to_str().unwrap()), "{err}");
    assert!(text.contains("page 3 is 5x4") && text.contains("page 1 is 4x4"), "{text}");

    let slices = dir.path().join("slices");
    std::fs::create_dir(&slices).unwrap();
    for (name, (w, h)) in [("a.png", (4, 4)), ("b.png", (4, 4)), ("c.png", (4, 5)), ("d.png", (3, 3))] {
        image::GrayImage::new(w, h).save(slices.join(name)).unwrap();
    }
    let err = io::read_volume_folder(&slices, &ReadOptions::default()).unwrap_err();
    let text = err.to_string();
    let named = slices.join("c.png");
    assert!(matches!(err, Error::FileRead { .. }) && err.path() == Some(named.to_str().unwrap()), "{err}");
    assert!(text.contains("is 4x5") && text.contains("a.png, is 4x4"), "{text}");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "no slices").unwrap();
    let err = io::read_volume_folder(&empty, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::FileRead { .. }) && err.to_string().contains("no image file"), "{err}");
}

#[test]
fn a_single_page_is_one_slice_and_other_files_are_no_volume() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.tiff");
    write_tiff::<colortype::Gray8>(&one, false, &[(6, 3, (0..18).collect())]);
    assert_eq!(io::tiff_pages(&one).unwrap(), 1);
    let volume = io::read_volume_tiff(&one, &ReadOptions::default()).unwrap();
    assert_eq!((volume.shape().width, volume.shape().height, volume.shape().depth), (6, 3, 1));
    assert_eq!(volume.values(), io::read_binary(&one, Binarize::default()).unwrap().values());

    let png = dir.path().join("page.png");
    image::GrayImage::new(4, 4).save(&png).unwrap();
    let err = io::read_volume(&png, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::FileRead { .. }) && err.to_string().contains("not a volume"), "{err}");
    // Not a TIFF at all, whatever its name: a typed error, no panic.
    let fake = dir.path().join("fake.tif");
    std::fs::copy(&png, &fake).unwrap();
    for err in [io::read_volume_tiff(&fake, &ReadOptions::default()).unwrap_err(), io::tiff_pages(&fake).unwrap_err()] {
        assert!(matches!(err, Error::FileRead { .. }) && err.to_string().contains("not a readable TIFF"), "{err}");
    }
    let truncated = dir.path().join("truncated.tif");
    write_tiff::<colortype::Gray8>(&truncated, false, &[(64, 64, vec![7; 4096]), (64, 64, vec![7; 4096])]);
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 200]).unwrap();
    assert!(io::read_volume_tiff(&truncated, &ReadOptions::default()).is_err());
    // A .npy is binary already: no threshold.
    let npy = dir.path().join("vol.npy");
    io::write_npy_u8(&npy, (4, 4), [1; 16]).unwrap();
    let err = io::read_volume(
        &npy,
        &ReadOptions { binarize: Binarize { threshold: Some(1.0), invert: false }, ..ReadOptions::default() },
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidParameter { .. }), "{err}");
}

/// A volume of more voxels than the caller's limit is refused from the headers, before any slice
/// is read: a TIFF, a folder of slices, and a .npy whose header claims far more than the file
/// holds (refused as too large, not as truncated); one at the limit is read.
#[test]
fn volumes_past_the_voxel_limit_are_refused_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let tiff = dir.path().join("pages.tif");
    write_tiff::<colortype::Gray8>(&tiff, false, &[(4, 3, vec![1; 12]), (4, 3, vec![0; 12])]);
    let slices = dir.path().join("slices");
    std::fs::create_dir(&slices).unwrap();
    for name in ["a.png", "b.png"] {
        image::GrayImage::new(4, 3).save(slices.join(name)).unwrap();
    }
    let npy = dir.path().join("claims.npy");
    {
        // A header for (1000, 1000, 1000) bytes, followed by 24 of them.
        let header = "{'descr': '|u1', 'fortran_order': False, 'shape': (1000, 1000, 1000), }";
        let mut text = header.to_string();
        while !(10 + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        bytes.extend_from_slice(&[1; 24]);
        std::fs::write(&npy, bytes).unwrap();
    }
    let limit = |max_pixels| ReadOptions { max_pixels, ..ReadOptions::default() };
    for (path, says) in [(&tiff, "4x3x2 (0.0 M voxels)"), (&slices, "4x3x2"), (&npy, "1000x1000x1000")] {
        let err = io::read_volume(path, &limit(23)).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::VolumeTooLarge { limit: 23, .. }), "{}: {err:?}", path.display());
        assert!(err.path() == Some(path.to_str().unwrap()) && text.contains(says), "{text}");
        assert!(text.contains("more than the limit of 23 voxels (--max-pixels)"), "{text}");
    }
    assert!(matches!(io::read_volume_npy(&npy, 999_999_999), Err(Error::VolumeTooLarge { .. })));
    // Under the limit of 32-bit labels alone, the file is read, and found short.
    let err = io::read_volume(&npy, &limit(u64::MAX)).unwrap_err();
    assert!(matches!(err, Error::FileRead { .. }) && err.to_string().contains("holds 24 values"), "{err}");
    assert_eq!(io::read_volume(&tiff, &limit(24)).unwrap().shape().depth, 2);
    assert_eq!(io::read_volume(&slices, &limit(24)).unwrap().shape().depth, 2);
}
