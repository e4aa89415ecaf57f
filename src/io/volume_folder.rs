//! Volumes as a folder of slice images: every image file directly in the folder, sorted by name,
//! is one slice (z = 0 first), binarized as a 2D input is.

use std::path::Path;

use super::{list_images, probe, read_image, Frames, ReadOptions};
use crate::{BinaryImage, Error, Result, Shape};

/// Reads the image files directly in `folder` (those [`list_images`] finds, sorted by name) as
/// the slices of a binary volume, each binarized as a 2D input ([`super::read_binary`]). Every
/// header is read first: a folder without images, an entry with an image extension that is no
/// readable file (a dangling link), a slice of several pages or frames (a slice is one image),
/// or slices of different sizes, is an [`Error::FileRead`] naming the entry (and, for sizes,
/// the first slice of another size and both sizes); more than `options.max_pixels` voxels in
/// all an [`Error::VolumeTooLarge`]; all before any slice is decoded.
pub fn read_volume_folder(folder: &Path, options: &ReadOptions) -> Result<BinaryImage> {
    let listing = list_images(folder)?;
    if let Some((entry, why)) = listing.unreadable.first() {
        return Err(Error::FileRead {
            path: entry.display().to_string(),
            reason: format!("{why}; every image entry of a folder of slices is a slice"),
        });
    }
    let slices = listing.images;
    let Some(first) = slices.first() else {
        return Err(Error::FileRead {
            path: folder.display().to_string(),
            reason: "no image file in the folder (a volume needs at least one slice)".into(),
        });
    };
    let size = |path: &Path| {
        let source = probe(path)?;
        if let Frames::Several(n) = source.frames {
            let n = n.map_or("several".to_string(), |n| n.to_string());
            return Err(Error::FileRead {
                path: path.display().to_string(),
                reason: format!("it holds {n} pages or frames; a slice of a volume is one image"),
            });
        }
        Ok((source.width, source.height))
    };
    let (width, height) = size(first)?;
    for slice in &slices[1..] {
        let (w, h) = size(slice)?;
        if (w, h) != (width, height) {
            return Err(Error::FileRead {
                path: slice.display().to_string(),
                reason: format!(
                    "the slice is {w}x{h} but the first slice, {}, is {width}x{height}; the slices of a volume all have one size",
                    first.display()
                ),
            });
        }
    }
    let shape = Shape { width: width as usize, height: height as usize, depth: slices.len() };
    super::input::check_volume_extent(folder, shape, options.max_pixels)?;
    let options = ReadOptions { max_pixels: crate::MAX_PIXELS, ..*options }; // (the slices: checked above)
    let mut voxels = Vec::with_capacity(shape.len());
    for slice in &slices {
        let image = read_image(slice, &options)?.image;
        // A file changed since its header was read must not shift the slices after it.
        if (image.width(), image.height()) != (shape.width, shape.height) {
            return Err(Error::FileRead {
                path: slice.display().to_string(),
                reason: format!(
                    "the slice changed size while the folder was read (now {}x{})",
                    image.width(),
                    image.height()
                ),
            });
        }
        voxels.extend_from_slice(image.values());
    }
    BinaryImage::volume(shape.width, shape.height, shape.depth, voxels)
}
