//! The 3D Hilbert curve drawn as a volume: YACCLAB's "Hilbert" dataset (TPDS 2020 Sec. 6.1.2,
//! six 128^3 volumes filled with the curve of iterations 1 to 6), one long path that labelers
//! must follow from end to end.

use crate::host_array::check_shape;
use crate::{BinaryImage, Error, Result, Shape};

/// The highest order [`hilbert_volume`] accepts (2^10 points per axis); volumes of order 10 are
/// already past the 2^32 voxels of 32-bit labels.
pub const MAX_HILBERT_ORDER: u32 = 10;

/// The smallest side of a cube holding the curve of `order`: 2^(order+1) - 1, the curve's points
/// two voxels apart.
pub const fn hilbert_side(order: u32) -> usize {
    (1usize << (order + 1)) - 1
}

/// The point at `index` (0 to 8^order - 1) along the 3D Hilbert curve of `order`, each coordinate
/// 0 to 2^order - 1; consecutive indices give points one step apart along one axis. Skilling's
/// transform (AIP Conf. Proc. 707, 2004): the index's bits dealt round-robin to the three axes,
/// Gray-decoded, then the rotations and reflections of the coarser levels undone.
pub fn hilbert_point(order: u32, index: u64) -> [u32; 3] {
    debug_assert!((1..=MAX_HILBERT_ORDER).contains(&order));
    // Deal the index's bits, most significant first, to axes 0, 1, 2, 0, 1, 2, ...
    let mut x = [0u32; 3];
    for level in 0..order {
        for (axis, value) in x.iter_mut().enumerate() {
            let bit = (index >> (3 * (order - 1 - level) + (2 - axis as u32))) & 1;
            *value |= (bit as u32) << (order - 1 - level);
        }
    }
    // Gray decode: each axis takes the parity of the bits dealt before it.
    let last = x[2] >> 1;
    x[2] ^= x[1];
    x[1] ^= x[0];
    x[0] ^= last;
    // From the second-finest level up: reflect axis 0 where an axis's bit is set, else swap the
    // lower bits of axis 0 and that axis.
    let mut q = 2u32;
    while q < 1 << order {
        let lower = q - 1;
        for axis in (0..3).rev() {
            if x[axis] & q != 0 {
                x[0] ^= lower;
            } else {
                let t = (x[0] ^ x[axis]) & lower;
                x[0] ^= t;
                x[axis] ^= t;
            }
        }
        q <<= 1;
    }
    x
}

/// A cube of `side`^3 voxels holding the 3D Hilbert curve of `order` (YACCLAB's Hilbert dataset,
/// TPDS 2020 Sec. 6.1.2: `side` 128, orders 1 to 6). The curve's 2^order points per axis are
/// spread over the cube, `(side - 1) / (2^order - 1)` voxels apart (at least 2), with every voxel
/// between consecutive points set: one path, so one component under 6-, 18- and
/// 26-connectivity, while distinct segments stay apart (no two voxels of non-consecutive
/// segments touch, even at a corner). `side` is at least [`hilbert_side`]`(order)`; voxels
/// beyond the curve (when `side - 1` is no multiple of the spacing) are background.
///
/// An order of 0 or above [`MAX_HILBERT_ORDER`], or a side too small, is an
/// [`Error::InvalidParameter`]; a cube past 2^32 - 1 voxels is [`Error::TooManyVoxels`].
pub fn hilbert_volume(order: u32, side: usize) -> Result<BinaryImage> {
    if !(1..=MAX_HILBERT_ORDER).contains(&order) {
        return Err(Error::InvalidParameter {
            name: "hilbert order".into(),
            reason: format!("{order} is not a Hilbert curve order (1 to {MAX_HILBERT_ORDER})"),
        });
    }
    check_shape(Shape { width: side, height: side, depth: side })?;
    if side < hilbert_side(order) {
        return Err(Error::InvalidParameter {
            name: "hilbert-side".into(),
            reason: format!("{side} is too small for the curve of order {order} (at least {})", hilbert_side(order)),
        });
    }
    let step = (side - 1) / ((1 << order) - 1);
    let mut voxels = vec![0u8; side * side * side];
    let at = |p: [u32; 3]| p.map(|c| c as usize * step);
    let mut previous = at(hilbert_point(order, 0));
    voxels[(previous[2] * side + previous[1]) * side + previous[0]] = 1;
    for index in 1..1u64 << (3 * order) {
        let next = at(hilbert_point(order, index));
        // Walk from the previous point to this one, one voxel at a time along the axis that
        // changes.
        let mut p = previous;
        while p != next {
            for axis in 0..3 {
                if p[axis] < next[axis] {
                    p[axis] += 1;
                } else if p[axis] > next[axis] {
                    p[axis] -= 1;
                }
            }
            voxels[(p[2] * side + p[1]) * side + p[0]] = 1;
        }
        previous = next;
    }
    BinaryImage::volume(side, side, side, voxels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_visits_every_point_once_in_unit_steps() {
        for order in 1..=4 {
            let n = 1u64 << order;
            let mut seen = vec![false; (n * n * n) as usize];
            let mut previous: Option<[u32; 3]> = None;
            for index in 0..n * n * n {
                let p = hilbert_point(order, index);
                assert!(p.iter().all(|&c| u64::from(c) < n), "order {order} index {index}: {p:?}");
                let slot = ((u64::from(p[2]) * n + u64::from(p[1])) * n + u64::from(p[0])) as usize;
                assert!(!seen[slot], "order {order}: {p:?} visited twice");
                seen[slot] = true;
                if let Some(q) = previous {
                    let step: u32 = p.iter().zip(q).map(|(&a, b)| a.abs_diff(b)).sum();
                    assert_eq!(step, 1, "order {order} index {index}: {q:?} to {p:?}");
                }
                previous = Some(p);
            }
            // The curve runs from one corner to a neighbouring corner.
            assert_eq!(hilbert_point(order, 0), [0, 0, 0]);
            let end = hilbert_point(order, n * n * n - 1);
            assert_eq!(end.iter().filter(|&&c| c != 0).count(), 1, "order {order}: ends at {end:?}");
        }
    }
}
