//! Sample binary inputs: random squares and cubes (the papers' density/granularity images),
//! and a text-like page.

use crate::host_array::{check_shape, BinaryImage};
use crate::{Error, Result, Shape};

/// Checks a width x height against the limits of 32-bit labels.
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
    // The volume's cubes of depth 1 are the image's squares, drawn in the same order.
    random_volume(width, height, 1, density_percent, granularity, seed)
}

/// A random volume as the papers' 3D density/granularity experiments (YACCLAB's): the volume is
/// cut into `granularity`^3 cubes, and each cube, in raster order (x fastest), is foreground when
/// the next MT19937 output (std::mt19937 seeded with `seed`) is below `density_percent`% of 2^32.
/// A density above 100 or a granularity of 0 is an [`Error::InvalidParameter`].
pub fn random_volume(
    width: usize,
    height: usize,
    depth: usize,
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
    check_shape(Shape { width, height, depth })?;
    let g = granularity;
    let mut rng = rand_mt::Mt::new(seed);
    let (bw, bh, bd) = (width.div_ceil(g), height.div_ceil(g), depth.div_ceil(g));
    let threshold = (u64::from(density_percent) << 32) / 100;
    let cubes: Vec<bool> = (0..bw * bh * bd).map(|_| u64::from(rng.next_u32()) < threshold).collect();
    BinaryImage::volume_from_fn(width, height, depth, |x, y, z| cubes[((z / g) * bh + y / g) * bw + x / g])
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
    BinaryImage::image_from_fn(w, h, |x, y| {
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
