//! One 2D input of either kind: an image file ([`super::input`]) or a `.npy` array
//! ([`super::npy_input`]), told apart by the extension.

use std::path::Path;

use super::input::{read_image_file, Binarize, DecodedImage, ReadOptions};
use super::npy::is_npy;
use super::npy_input::read_npy_image;
use crate::{BinaryImage, Result};

/// Reads and binarizes an image file, or reads a `.npy` of shape (H, W) (nonzero is foreground;
/// a threshold or `invert` for one is an error), refusing it before decoding when it has more
/// than `options.max_pixels` pixels, and checking a threshold against the file's sample range.
pub fn read_image(path: &Path, options: &ReadOptions) -> Result<DecodedImage> {
    if is_npy(path) {
        return read_npy_image(path, options);
    }
    read_image_file(path, options)
}

/// Reads any image the `image` crate decodes, or a `.npy` of shape (H, W), as a binary image
/// ([`read_image`] without a pixel limit).
pub fn read_binary(path: &Path, binarize: Binarize) -> Result<BinaryImage> {
    Ok(read_image(path, &ReadOptions { binarize, ..ReadOptions::default() })?.image)
}
