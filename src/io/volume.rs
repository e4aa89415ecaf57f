//! Binary arrays from NumPy `.npy` files (an image of shape (H, W) or a volume of shape (D, H, W),
//! C order), volume labels out, and reading or writing a volume in any of its formats (`.npy`,
//! multi-page TIFF, a folder of slices).

use std::path::Path;

use super::{read_volume_folder, read_volume_tiff, write_volume_tiff, Binarize, LabelFormat};
use crate::{BinaryImage, BinaryVolume, Error, LabelVolume, Result};

/// Reads a binary volume from a folder of slice images ([`read_volume_folder`]), a `.tif` or
/// `.tiff` (one slice per page, [`read_volume_tiff`]) or a `.npy` of shape (D, H, W)
/// ([`read_volume_npy`]). `binarize` applies to image slices; a `.npy` is binary already, so a
/// threshold or `invert` for one is an [`Error::InvalidParameter`]. Any other file is an
/// [`Error::FileRead`].
pub fn read_volume(path: &Path, binarize: Binarize) -> Result<BinaryVolume> {
    if path.is_dir() {
        return read_volume_folder(path, binarize);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "npy" if binarize != Binarize::default() => Err(Error::InvalidParameter {
            name: if binarize.invert { "invert" } else { "threshold" }.into(),
            reason: "applies to image files; a .npy is read as binary (nonzero is foreground)".into(),
        }),
        "npy" => read_volume_npy(path),
        "tif" | "tiff" => read_volume_tiff(path, binarize),
        _ => Err(Error::FileRead {
            path: path.display().to_string(),
            reason: format!("'.{ext}' is not a volume: give a .npy, a multi-page .tif/.tiff or a folder of slices"),
        }),
    }
}

/// Writes volume labels in the format the extension names: `.npy` ([`write_volume_npy`]) or
/// `.tif`/`.tiff` ([`write_volume_tiff`]); any other is an [`Error::ImageWrite`], before
/// anything is written.
pub fn write_volume(path: &Path, labels: &LabelVolume) -> Result<()> {
    match LabelFormat::from_path(path)? {
        LabelFormat::Npy => write_volume_npy(path, labels),
        LabelFormat::Tiff => write_volume_tiff(path, labels),
        LabelFormat::Png => Err(Error::ImageWrite {
            path: path.display().to_string(),
            reason: "the labels of a volume are written as .npy (uint32, shape (D, H, W)) or .tif/.tiff (one \
                     uint32 page per slice)"
                .into(),
        }),
    }
}

/// A binary array read from a `.npy`: an image or a volume, as its number of axes says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinaryArray {
    /// Shape (H, W).
    Image(BinaryImage),
    /// Shape (D, H, W).
    Volume(BinaryVolume),
}

/// Reads a binary volume from a `.npy` of shape (D, H, W), C order, uint8 or bool: nonzero is
/// foreground. Any other shape, order or element type is an [`Error::FileRead`] saying which.
pub fn read_volume_npy(path: &Path) -> Result<BinaryVolume> {
    match read_binary_npy(path)? {
        BinaryArray::Volume(volume) => Ok(volume),
        BinaryArray::Image(image) => Err(Error::FileRead {
            path: path.display().to_string(),
            reason: format!("shape ({}, {}); a volume has three axes (D, H, W)", image.height(), image.width()),
        }),
    }
}

/// Reads a binary image (shape (H, W)) or volume (shape (D, H, W)) from a `.npy` in C order,
/// uint8 or bool: nonzero is foreground. Any other shape, order or element type is an
/// [`Error::FileRead`] saying which.
pub fn read_binary_npy(path: &Path) -> Result<BinaryArray> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| fail(format!("not a .npy file: {e}")))?;
    let dtype = npy.dtype().descr();
    if !matches!(dtype.trim_matches('\''), "|u1" | "<u1" | ">u1" | "|b1") {
        return Err(fail(format!("voxels of type {dtype}; a volume is uint8 or bool")));
    }
    if npy.order() != npyz::Order::C {
        return Err(fail("Fortran order; a volume is stored in C order (np.ascontiguousarray)".into()));
    }
    let (depth, height, width) = match *npy.shape() {
        [height, width] => (1, height, width),
        [depth, height, width] => (depth, height, width),
        ref other => {
            return Err(fail(format!("shape {other:?}; an image has two axes (H, W), a volume three (D, H, W)")))
        }
    };
    let volume = npy.shape().len() == 3;
    let n = (depth as u128 * height as u128 * width as u128).min(usize::MAX as u128) as usize;
    // One byte per voxel after the header, whose length the format stores after the magic
    // string and the version: 2 bytes (version 1) or 4 (versions 2 and 3), little-endian.
    let data = match bytes[6] {
        1 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
        _ => 12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
    };
    let held = bytes.len().saturating_sub(data);
    if held != n {
        return Err(fail(format!("the file holds {held} values; its shape {:?} has {n}", npy.shape())));
    }
    let voxels = bytes[data..].to_vec();
    let (width, height) = (width as usize, height as usize);
    if volume {
        Ok(BinaryArray::Volume(BinaryVolume::new(width, height, depth as usize, voxels)?))
    } else {
        Ok(BinaryArray::Image(BinaryImage::new(width, height, voxels)?))
    }
}

/// Writes labels as a `.npy` of uint32 with shape (D, H, W), atomically (see
/// [`super::write_atomically`]).
pub fn write_volume_npy(path: &Path, labels: &LabelVolume) -> Result<()> {
    let s = labels.shape();
    super::write_atomically(path, |w| {
        super::output::npy_u32(w, &[s.depth as u64, s.height as u64, s.width as u64], labels.labels())
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}
