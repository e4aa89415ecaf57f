//! Reading or writing a volume in any of its formats (`.npy`, multi-page TIFF, a folder of
//! slices), volume labels out.

use std::path::Path;

use super::npy_input::{read_volume_npy, refuse_binarize};
use super::{read_volume_folder, read_volume_tiff, write_volume_tiff, LabelFormat, ReadOptions};
use crate::{BinaryImage, Error, LabelImage, Result};

/// Reads a binary volume from a folder of slice images ([`read_volume_folder`]), a `.tif` or
/// `.tiff` (one slice per page, [`read_volume_tiff`]) or a `.npy` of shape (D, H, W)
/// ([`read_volume_npy`]). `options.binarize` applies to image slices; a `.npy` is binary
/// already, so a threshold or `invert` for one is an [`Error::InvalidParameter`]. A volume of
/// more than `options.max_pixels` voxels is an [`Error::VolumeTooLarge`], from the headers,
/// before any slice is read. Any other file is an [`Error::FileRead`].
pub fn read_volume(path: &Path, options: &ReadOptions) -> Result<BinaryImage> {
    if path.is_dir() {
        return read_volume_folder(path, options);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "npy" => {
            refuse_binarize(options)?;
            read_volume_npy(path, options.max_pixels)
        }
        "tif" | "tiff" => read_volume_tiff(path, options),
        _ => Err(Error::FileRead {
            path: path.display().to_string(),
            reason: format!("'.{ext}' is not a volume: give a .npy, a multi-page .tif/.tiff or a folder of slices"),
        }),
    }
}

/// Writes volume labels in the format the extension names: `.npy` ([`write_volume_npy`]) or
/// `.tif`/`.tiff` ([`write_volume_tiff`]); any other is an [`Error::ImageWrite`], before
/// anything is written.
pub fn write_volume(path: &Path, labels: &LabelImage) -> Result<()> {
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

/// Writes labels as a `.npy` of uint32 with shape (D, H, W), atomically (see
/// [`super::write_atomically`]).
pub fn write_volume_npy(path: &Path, labels: &LabelImage) -> Result<()> {
    let s = labels.shape();
    super::write_atomically(path, |w| {
        super::output::npy_u32(w, &[s.depth as u64, s.height as u64, s.width as u64], labels.values())
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}
