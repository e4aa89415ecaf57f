//! The images a benchmark runs on.

use std::path::{Path, PathBuf};

use crate::io::{list_images, read_binary, Binarize};
use crate::{random_image, BinaryImage, Error, Result};

/// One benchmark input: a named binary image and the parameters it was made with.
#[derive(Clone, Debug)]
pub struct Input {
    /// Name, unique within a run (file stem, or e.g. `2048x2048-d50-g1-s0`).
    pub name: String,
    /// The image.
    pub image: BinaryImage,
    /// Foreground density in percent: the generator's for random images, measured otherwise.
    pub density: f64,
    /// Granularity of random images (0 for files).
    pub granularity: u32,
}

fn measured_density(image: &BinaryImage) -> f64 {
    let fg = image.pixels().iter().filter(|&&p| p != 0).count();
    100.0 * fg as f64 / image.pixels().len() as f64
}

/// The images of a folder: those read, those skipped (with why) and files ignored for not
/// having an image extension.
#[derive(Debug, Default)]
pub struct DirectoryInputs {
    /// Readable images, sorted by file name.
    pub inputs: Vec<Input>,
    /// Files with an image extension that could not be read, and the error.
    pub skipped: Vec<(PathBuf, Error)>,
    /// Files without an image extension.
    pub ignored: Vec<PathBuf>,
}

/// Every image file directly in `dir` (sorted by name), binarized. A file that cannot be read
/// is skipped and listed, not fatal; only an unreadable folder is an error.
pub fn directory_inputs(dir: &Path, binarize: Binarize) -> Result<DirectoryInputs> {
    let (images, ignored) = list_images(dir)?;
    let mut found = DirectoryInputs { ignored, ..Default::default() };
    for path in images {
        match read_binary(&path, binarize) {
            Ok(image) => {
                let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                found.inputs.push(Input { name, density: measured_density(&image), image, granularity: 0 });
            }
            Err(e) => found.skipped.push((path, e)),
        }
    }
    Ok(found)
}

/// `count` random images of one size, density and granularity (seeds `seed`, `seed + 1`, ...).
pub fn random_inputs(
    (width, height): (usize, usize),
    density: u32,
    granularity: u32,
    count: u32,
    seed: u32,
) -> Result<Vec<Input>> {
    (0..count)
        .map(|k| {
            let s = seed.wrapping_add(k);
            Ok(Input {
                name: format!("{width}x{height}-d{density}-g{granularity}-s{s}"),
                image: random_image(width, height, density, granularity as usize, s)?,
                density: f64::from(density),
                granularity,
            })
        })
        .collect()
}

/// The density experiment: every density x granularity, `count` images each.
pub fn density_inputs(
    size: (usize, usize),
    densities: &[u32],
    granularities: &[u32],
    count: u32,
    seed: u32,
) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for &g in granularities {
        for &d in densities {
            // A different seed per point, as independent draws (modulo 2^32 for large values).
            let point_seed = seed.wrapping_add(d.wrapping_mul(1000)).wrapping_add(g.wrapping_mul(100_000));
            inputs.extend(random_inputs(size, d, g, count, point_seed)?);
        }
    }
    Ok(inputs)
}

/// The size experiment: one square image per side length, at one density.
pub fn size_inputs(sides: &[usize], density: u32, granularity: u32, seed: u32) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for &side in sides {
        inputs.extend(random_inputs((side, side), density, granularity, 1, seed)?);
    }
    Ok(inputs)
}
