//! Reading input images and writing label images (`.npy`, `.png`, `.tiff`).

use std::path::Path;

use npyz::WriterBuilder;

use crate::{BinaryImage, Error, LabelImage, Result};

/// How gray values become foreground.
#[derive(Clone, Copy, Debug, Default)]
pub struct Binarize {
    /// Foreground is `p > threshold`; `None` means any nonzero pixel is foreground.
    pub threshold: Option<u8>,
    /// Swap foreground and background (dark ink on white paper becomes foreground).
    pub invert: bool,
}

/// Reads any image format the `image` crate decodes, converts it to 8-bit gray and binarizes it.
pub fn read_binary(path: &Path, binarize: Binarize) -> Result<BinaryImage> {
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let gray = image::ImageReader::open(path)
        .map_err(|e| err(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| err(e.to_string()))?
        .decode()
        .map_err(|e| err(e.to_string()))?
        .into_luma8();
    let (w, h) = (gray.width() as usize, gray.height() as usize);
    let pixels = gray
        .into_raw()
        .into_iter()
        .map(|p| {
            let fg = match binarize.threshold {
                Some(t) => p > t,
                None => p != 0,
            };
            u8::from(fg != binarize.invert)
        })
        .collect();
    BinaryImage::new(w, h, pixels).map_err(|e| err(e.to_string()))
}

/// Output formats, chosen by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelFormat {
    /// NumPy `.npy`: `<u4`, shape (H, W), C order.
    Npy,
    /// PNG, labels colorized, background black.
    Png,
    /// TIFF, 32-bit gray labels.
    Tiff,
}

impl LabelFormat {
    /// The format for a path's extension.
    pub fn from_path(path: &Path) -> Result<Self> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "npy" => Ok(LabelFormat::Npy),
            "png" => Ok(LabelFormat::Png),
            "tif" | "tiff" => Ok(LabelFormat::Tiff),
            _ => Err(Error::ImageWrite {
                path: path.display().to_string(),
                reason: format!("unknown output extension '{ext}' (use .npy, .png or .tiff)"),
            }),
        }
    }
}

/// Writes labels in the format given by the path's extension.
pub fn write_labels(path: &Path, labels: &LabelImage) -> Result<()> {
    let err = |reason: String| Error::ImageWrite { path: path.display().to_string(), reason };
    match LabelFormat::from_path(path)? {
        LabelFormat::Npy => write_npy(path, labels).map_err(|e| err(e.to_string())),
        LabelFormat::Png => colorize(labels).save(path).map_err(|e| err(e.to_string())),
        LabelFormat::Tiff => write_tiff(path, labels).map_err(err),
    }
}

fn write_npy(path: &Path, labels: &LabelImage) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut writer = npyz::WriteOptions::<u32>::new()
        .default_dtype()
        .shape(&[labels.height() as u64, labels.width() as u64])
        .writer(file)
        .begin_nd()?;
    writer.extend(labels.labels().iter().copied())?;
    writer.finish()
}

fn write_tiff(path: &Path, labels: &LabelImage) -> std::result::Result<(), String> {
    let file = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| e.to_string())?);
    let mut encoder = tiff::encoder::TiffEncoder::new(file).map_err(|e| e.to_string())?;
    encoder
        .write_image::<tiff::encoder::colortype::Gray32>(labels.width() as u32, labels.height() as u32, labels.labels())
        .map_err(|e| e.to_string())
}

/// Colorizes labels: each label gets a stable bright color from a hash, background is black.
pub fn colorize(labels: &LabelImage) -> image::RgbImage {
    image::RgbImage::from_fn(labels.width() as u32, labels.height() as u32, |x, y| {
        let l = labels.get(x as usize, y as usize);
        if l == 0 {
            return image::Rgb([0, 0, 0]);
        }
        // Fibonacci hashing spreads consecutive labels over distant hues.
        let h = l.wrapping_mul(0x9E37_79B9);
        let [a, b, c, _] = h.to_le_bytes();
        image::Rgb([64 | a, 64 | b, 64 | c])
    })
}
