//! The images and volumes a benchmark runs on.

use std::fmt;
use std::path::{Path, PathBuf};

use ccl::io::{list_images, read_binary, Binarize, BinaryArray};
use ccl::{hilbert_volume, random_image, random_volume, Error, Result, Shape};

/// One benchmark input: a named binary image or volume and the parameters it was made with.
#[derive(Clone, Debug)]
pub struct Input {
    /// Name, unique within a run (file stem, or e.g. `2048x2048-d50-g1-s0`).
    pub name: String,
    /// The image or volume.
    pub array: BinaryArray,
    /// Foreground density in percent: the generator's for random inputs, measured otherwise.
    pub density: f64,
    /// Granularity of random inputs (0 for files and Hilbert volumes).
    pub granularity: u32,
}

impl Input {
    /// Its extent (depth 1 for an image).
    pub fn shape(&self) -> Shape {
        self.array.array().shape()
    }

    /// Its values, x fastest (nonzero is foreground).
    pub fn values(&self) -> &[u8] {
        self.array.array().values()
    }

    /// Whether it is a volume (labeled with 6-, 18- or 26-connectivity).
    pub fn is_volume(&self) -> bool {
        matches!(self.array, BinaryArray::Volume(_))
    }
}

/// The extent of generated inputs: an image `WxH` or a volume `WxHxD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// An image of (width, height).
    Image(usize, usize),
    /// A volume of (width, height, depth); a depth of 1 is still a volume.
    Volume(usize, usize, usize),
}

impl Extent {
    /// A cube of `side`^3 voxels.
    pub fn cube(side: usize) -> Self {
        Extent::Volume(side, side, side)
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Extent::Image(w, h) => write!(f, "{w}x{h}"),
            Extent::Volume(w, h, d) => write!(f, "{w}x{h}x{d}"),
        }
    }
}

fn measured_density(values: &[u8]) -> f64 {
    let fg = values.iter().filter(|&&p| p != 0).count();
    100.0 * fg as f64 / values.len() as f64
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

/// Every image file and `.npy` image directly in `dir` (sorted by name), binarized. A file that cannot be read,
/// or an entry with an image extension that is no file (a dangling link), is skipped and
/// listed, not fatal; only an unreadable folder is an error.
pub fn directory_inputs(dir: &Path, binarize: Binarize) -> Result<DirectoryInputs> {
    let listing = list_images(dir)?;
    let mut found = DirectoryInputs { ignored: listing.others, ..Default::default() };
    for (path, why) in listing.unreadable {
        let e = Error::ImageRead { path: path.display().to_string(), reason: why };
        found.skipped.push((path, e));
    }
    for path in listing.images {
        match read_binary(&path, binarize) {
            Ok(image) => {
                let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let density = measured_density(image.values());
                found.inputs.push(Input { name, density, array: BinaryArray::Image(image), granularity: 0 });
            }
            Err(e) => found.skipped.push((path, e)),
        }
    }
    found.skipped.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// `count` random images or volumes of one extent, density and granularity (seeds `seed`,
/// `seed + 1`, ...; [`random_image`], [`random_volume`]).
pub fn random_inputs(extent: Extent, density: u32, granularity: u32, count: u32, seed: u32) -> Result<Vec<Input>> {
    (0..count)
        .map(|k| {
            let s = seed.wrapping_add(k);
            let g = granularity as usize;
            let array = match extent {
                Extent::Image(w, h) => BinaryArray::Image(random_image(w, h, density, g, s)?),
                Extent::Volume(w, h, d) => BinaryArray::Volume(random_volume(w, h, d, density, g, s)?),
            };
            Ok(Input {
                name: format!("{extent}-d{density}-g{granularity}-s{s}"),
                array,
                density: f64::from(density),
                granularity,
            })
        })
        .collect()
}

/// The density experiment: every density x granularity, `count` inputs each.
pub fn density_inputs(
    extent: Extent,
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
            inputs.extend(random_inputs(extent, d, g, count, point_seed)?);
        }
    }
    Ok(inputs)
}

/// The size experiment: one random input per extent (squares or cubes of growing side), at one
/// density.
pub fn size_inputs(extents: &[Extent], density: u32, granularity: u32, seed: u32) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for &extent in extents {
        inputs.extend(random_inputs(extent, density, granularity, 1, seed)?);
    }
    Ok(inputs)
}

/// YACCLAB's Hilbert dataset (TPDS 2020 Sec. 6.1.2): one `side`^3 volume per curve order
/// ([`hilbert_volume`]), named `hilbert-SIDE-oORDER`.
pub fn hilbert_inputs(orders: &[u32], side: usize) -> Result<Vec<Input>> {
    orders
        .iter()
        .map(|&order| {
            let volume = hilbert_volume(order, side)?;
            Ok(Input {
                name: format!("hilbert-{side}-o{order}"),
                density: measured_density(volume.values()),
                array: BinaryArray::Volume(volume),
                granularity: 0,
            })
        })
        .collect()
}
