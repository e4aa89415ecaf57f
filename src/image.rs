//! Host images: the binary input and the label output.

use crate::shape::MAX_PIXELS;
use crate::{Error, Result};

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
        let pixels =
            (0..height).flat_map(|y| (0..width).map(move |x| (x, y))).map(|(x, y)| u8::from(f(x, y))).collect();
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

    /// The pixels, row-major, as a vector.
    pub fn into_pixels(self) -> Vec<u8> {
        self.pixels
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

    /// The labels, row-major, as a vector.
    pub fn into_labels(self) -> Vec<u32> {
        self.labels
    }

    /// The label at (x, y).
    pub fn get(&self, x: usize, y: usize) -> u32 {
        self.labels[y * self.width + x]
    }

    /// The same partition numbered 1..=N in raster order of first appearance (background 0),
    /// and N, the number of components.
    pub fn to_consecutive(&self) -> (LabelImage, u32) {
        self.clone().into_consecutive()
    }

    /// [`LabelImage::to_consecutive`] in place, without a second label array.
    pub fn into_consecutive(mut self) -> (LabelImage, u32) {
        let n = renumber(&mut self.labels);
        (self, n)
    }

    /// The number of distinct nonzero labels.
    pub fn component_count(&self) -> u32 {
        let distinct: std::collections::HashSet<u32> = self.labels.iter().copied().filter(|&l| l != 0).collect();
        distinct.len() as u32
    }
}

/// Renumbers nonzero labels 1..=N in order of first appearance, in place; returns N.
pub(crate) fn renumber(labels: &mut [u32]) -> u32 {
    let mut map = std::collections::HashMap::new();
    let mut next = 0u32;
    for l in labels.iter_mut().filter(|l| **l != 0) {
        *l = *map.entry(*l).or_insert_with(|| {
            next += 1;
            next
        });
    }
    next
}

/// A random image as in the papers' density/granularity experiments: the image is cut into
/// `granularity` x `granularity` squares, and each square, in raster order, is foreground when
/// the next MT19937 output (std::mt19937 seeded with `seed`) is below `density_percent`% of 2^32.
/// A density above 100 or a granularity of 0 is an [`Error::InvalidParameter`].
pub fn random_image(
    width: usize,
    height: usize,
    density_percent: u32,
    granularity: usize,
    seed: u32,
) -> Result<BinaryImage> {
    if density_percent > 100 {
        return Err(Error::InvalidParameter {
            name: "density".into(),
            reason: format!("{density_percent} is not a percentage (0 to 100)"),
        });
    }
    if granularity == 0 {
        return Err(Error::InvalidParameter { name: "granularity".into(), reason: "it must be at least 1".into() });
    }
    let g = granularity;
    check_size(width, height)?;
    let mut rng = rand_mt::Mt::new(seed);
    let (bw, bh) = (width.div_ceil(g), height.div_ceil(g));
    let threshold = (u64::from(density_percent) << 32) / 100;
    let squares: Vec<bool> = (0..bw * bh).map(|_| u64::from(rng.next_u32()) < threshold).collect();
    BinaryImage::from_fn(width, height, |x, y| squares[(y / g) * bw + x / g])
}

/// A built-in sample page (1024 x 768): random "ink" blobs like characters on a page, concentric
/// rings, a spiral and a snake (long chains), so `ccl label` runs with no input file.
pub fn sample_image() -> BinaryImage {
    let (w, h) = (1024usize, 768usize);
    let mut rng = rand_mt::Mt::new(2026);
    // Text-like lines of small blobs in the upper part.
    let mut blobs: Vec<(usize, usize, usize, usize)> = Vec::new();
    for line in 0..12usize {
        let cy = 30 + line * 32;
        let mut x = 20;
        while x < w - 40 {
            let rx = 3 + (rng.next_u32() % 7) as usize;
            let ry = 4 + (rng.next_u32() % 8) as usize;
            blobs.push((x + rx, cy, rx, ry));
            x += 2 * rx + 3 + (rng.next_u32() % 12) as usize;
        }
    }
    // Each blob drawn over its bounding box only.
    let mut ink = vec![false; w * h];
    for &(cx, cy, rx, ry) in &blobs {
        for y in cy.saturating_sub(ry)..=(cy + ry).min(h - 1) {
            for x in cx.saturating_sub(rx)..=(cx + rx).min(w - 1) {
                let (dx, dy) = ((x as f64 - cx as f64) / rx as f64, (y as f64 - cy as f64) / ry as f64);
                ink[y * w + x] |= dx * dx + dy * dy <= 1.0;
            }
        }
    }
    BinaryImage::from_fn(w, h, |x, y| {
        let (xf, yf) = (x as f64, y as f64);
        let in_blob = ink[y * w + x];
        // Concentric rings, lower left.
        let r = ((xf - 200.0).powi(2) + (yf - 600.0).powi(2)).sqrt();
        let ring = r < 150.0 && (r as usize / 6).is_multiple_of(2);
        // Archimedean spiral, lower middle: one long component.
        let (dx, dy) = (xf - 520.0, yf - 600.0);
        let rr = (dx * dx + dy * dy).sqrt();
        let theta = dy.atan2(dx) + std::f64::consts::PI;
        let spiral = rr < 150.0 && ((rr - 12.0 * theta / std::f64::consts::TAU * 2.0).rem_euclid(24.0)) < 6.0;
        // Snake, lower right: a one-pixel-wide path back and forth.
        let snake = (760..1000).contains(&x)
            && (460..740).contains(&y)
            && ((y - 460) % 4 == 0 || (x == 760 && (y - 460) % 8 >= 4) || (x == 999 && (y - 460) % 8 < 4));
        in_blob || ring || spiral || snake
    })
    .expect("the sample size is valid")
}
