//! Host images: the binary input and the label output.

use crate::{Error, Result};

/// Most pixels an image may have: labels are 32-bit and 0 is background, so every pixel index
/// plus one must fit in a `u32`.
pub const MAX_PIXELS: u64 = u32::MAX as u64;

/// Checks a width x height against the limits of 32-bit labels.
pub(crate) fn check_size(width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::EmptyImage { width, height });
    }
    if (width as u128) * (height as u128) > MAX_PIXELS as u128 {
        return Err(Error::TooManyPixels { width, height });
    }
    Ok(())
}

/// A binary image, row-major, one byte per pixel: any nonzero value is foreground.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryImage {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl BinaryImage {
    /// Wraps row-major pixels; fails when the size is empty, too large, or does not match.
    pub fn new(width: usize, height: usize, pixels: Vec<u8>) -> Result<Self> {
        check_size(width, height)?;
        if pixels.len() != width * height {
            return Err(Error::SizeMismatch { width, height, len: pixels.len() });
        }
        Ok(Self { width, height, pixels })
    }

    /// Builds an image from a predicate on (x, y).
    pub fn from_fn(width: usize, height: usize, mut f: impl FnMut(usize, usize) -> bool) -> Result<Self> {
        check_size(width, height)?;
        let pixels = (0..height).flat_map(|y| (0..width).map(move |x| (x, y))).map(|(x, y)| u8::from(f(x, y))).collect();
        Ok(Self { width, height, pixels })
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Row-major pixel values.
    pub fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// Whether pixel (x, y) is foreground.
    pub fn is_foreground(&self, x: usize, y: usize) -> bool {
        self.pixels[y * self.width + x] != 0
    }
}

/// A label image, row-major, 32-bit: 0 is background.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelImage {
    width: usize,
    height: usize,
    labels: Vec<u32>,
}

impl LabelImage {
    /// Wraps row-major labels; fails when the size does not match.
    pub fn new(width: usize, height: usize, labels: Vec<u32>) -> Result<Self> {
        check_size(width, height)?;
        if labels.len() != width * height {
            return Err(Error::SizeMismatch { width, height, len: labels.len() });
        }
        Ok(Self { width, height, labels })
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Row-major labels.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// The label at (x, y).
    pub fn get(&self, x: usize, y: usize) -> u32 {
        self.labels[y * self.width + x]
    }

    /// The same partition numbered 1..=N in raster order of first appearance (background 0),
    /// and N, the number of components.
    pub fn to_consecutive(&self) -> (LabelImage, u32) {
        let mut map = std::collections::HashMap::new();
        let mut next = 0u32;
        let labels = self
            .labels
            .iter()
            .map(|&l| {
                if l == 0 {
                    0
                } else {
                    *map.entry(l).or_insert_with(|| {
                        next += 1;
                        next
                    })
                }
            })
            .collect();
        (LabelImage { width: self.width, height: self.height, labels }, next)
    }

    /// The number of distinct nonzero labels.
    pub fn component_count(&self) -> u32 {
        self.to_consecutive().1
    }
}
