//! The region sums on the host, pixel by pixel: the CPU reference. The device's differ from
//! these only in the order their floating-point sums are added in.

use super::{euler, RegionRequest, RegionSums};
use crate::{ComponentStats, Shape};

/// The label at (x, y, z), 0 outside the array or above `n`.
fn label_at(labels: &[u32], shape: Shape, n: u32, [x, y, z]: [i64; 3]) -> u32 {
    let (w, h, d) = (shape.width as i64, shape.height as i64, shape.depth as i64);
    if x < 0 || y < 0 || z < 0 || x >= w || y >= h || z >= d {
        return 0;
    }
    let label = labels[((z * h + y) * w + x) as usize];
    if label <= n {
        label
    } else {
        0
    }
}

pub(super) fn sums(
    labels: &[u32],
    shape: Shape,
    n: u32,
    axes: u8,
    request: &RegionRequest<'_>,
    intensity: Option<&[f64]>,
) -> RegionSums {
    let stats = ComponentStats::of_labels(labels, shape, n);
    let centroids: Vec<[f64; 3]> = stats.components.iter().map(|c| c.centroid()).collect();
    let mut out = RegionSums { axes, order: request.order, ..RegionSums::default() };
    let side = usize::from(request.order) + 1;
    let m = if request.order == 0 { 0 } else { side.pow(u32::from(axes)) };
    let mut central = vec![0.0; m * n as usize];
    let mut bounds = vec![[0.0, f64::INFINITY, f64::NEG_INFINITY]; n as usize];
    let (w, h) = (shape.width, shape.height);
    for (i, &label) in labels.iter().enumerate() {
        if label == 0 || label > n {
            continue;
        }
        let k = label as usize - 1;
        let (x, y, z) = (i % w, i / w % h, i / w / h);
        if m > 0 {
            let c = centroids[k];
            let d = [x as f64 - c[0], y as f64 - c[1], z as f64 - c[2]];
            let planes = if axes == 3 { side } else { 1 };
            for a in 0..planes {
                for b in 0..side {
                    for e in 0..side {
                        let value = d[2].powi(a as i32) * d[1].powi(b as i32) * d[0].powi(e as i32);
                        central[k * m + (a * side + b) * side + e] += value;
                    }
                }
            }
        }
        if let Some(values) = intensity {
            let v = values[i];
            let entry = &mut bounds[k];
            entry[0] += v;
            entry[1] = entry[1].min(v);
            entry[2] = entry[2].max(v);
        }
    }
    out.central = central;
    if intensity.is_some() {
        out.intensity = Some(bounds);
    }
    if request.shape {
        out.euler = Some(euler_sums(labels, shape, n, axes));
        if axes == 2 {
            out.perimeter = Some(perimeter_classes(labels, shape, n));
        }
    }
    out.stats = stats;
    out
}

/// Each component's sum of Euler coefficients over the windows of the array padded by one
/// pixel of background (see `kernels/regionprops.kernel`, `region_shape`).
fn euler_sums(labels: &[u32], shape: Shape, n: u32, axes: u8) -> Vec<i64> {
    let table = euler::coefficients(axes);
    let corners = if axes == 3 { 8 } else { 4 };
    let depth = if axes == 3 { shape.depth as i64 } else { 0 };
    let mut sums = vec![0i64; n as usize];
    for z in 0..=depth {
        for y in 0..=shape.height as i64 {
            for x in 0..=shape.width as i64 {
                let corner: Vec<u32> = (0..corners)
                    .map(|i: i64| label_at(labels, shape, n, [x - (i >> 1 & 1), y - (i & 1), z - (i >> 2)]))
                    .collect();
                for (i, &label) in corner.iter().enumerate() {
                    if label == 0 || corner[..i].contains(&label) {
                        continue;
                    }
                    let pattern: usize = (0..corners as usize).filter(|&j| corner[j] == label).map(|j| 1 << j).sum();
                    sums[label as usize - 1] += i64::from(table[pattern]);
                }
            }
        }
    }
    sums
}

/// Each component's border pixels (those with a 4-neighbour outside it) of an image in
/// scikit-image's perimeter classes: by the code 1 + 2 (each border 4-neighbour of the same
/// component) + 10 (each such diagonal neighbour), 5, 7, 15, 17, 25, 27 a unit length, 21 and 33
/// sqrt 2, 13 and 23 (1 + sqrt 2) / 2.
fn perimeter_classes(labels: &[u32], shape: Shape, n: u32) -> Vec<[u64; 3]> {
    let at = |x: i64, y: i64| label_at(labels, shape, n, [x, y, 0]);
    let border = |x: i64, y: i64, label: u32| {
        at(x, y) == label && [(-1, 0), (1, 0), (0, -1), (0, 1)].iter().any(|&(dx, dy)| at(x + dx, y + dy) != label)
    };
    let mut classes = vec![[0u64; 3]; n as usize];
    for y in 0..shape.height as i64 {
        for x in 0..shape.width as i64 {
            let label = at(x, y);
            if label == 0 || !border(x, y, label) {
                continue;
            }
            let mut code = 1;
            for dy in -1..=1i64 {
                for dx in -1..=1i64 {
                    if (dx, dy) != (0, 0) && border(x + dx, y + dy, label) {
                        code += if dx == 0 || dy == 0 { 2 } else { 10 };
                    }
                }
            }
            let class = match code {
                5 | 7 | 15 | 17 | 25 | 27 => 0,
                21 | 33 => 1,
                13 | 23 => 2,
                _ => continue,
            };
            classes[label as usize - 1][class] += 1;
        }
    }
    classes
}
