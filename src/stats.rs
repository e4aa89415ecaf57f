//! Component statistics: per component of a consecutive labeling (1..N), its area, bounding box
//! and centroid, in label order, as OpenCV's `connectedComponentsWithStats` and skimage's
//! `regionprops` give them (issue 13). Computed on the device by
//! [`crate::Labeler::component_stats`], and here on the host as the reference.

use crate::Shape;

/// The statistics of one component. Images have `front` 0 and `depth` 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComponentStat {
    /// Smallest x of its pixels.
    pub left: u32,
    /// Smallest y.
    pub top: u32,
    /// Smallest z (0 for images).
    pub front: u32,
    /// Bounding-box extent along x, in pixels.
    pub width: u32,
    /// Extent along y.
    pub height: u32,
    /// Extent along z (1 for images).
    pub depth: u32,
    /// Number of pixels.
    pub area: u64,
    /// Sums of its pixels' x, y and z coordinates (exact: 64-bit integers).
    pub sums: [u64; 3],
}

impl ComponentStat {
    /// The centroid (mean x, y, z), each the exact sum divided by the area in f64.
    pub fn centroid(&self) -> [f64; 3] {
        self.sums.map(|s| s as f64 / self.area as f64)
    }
}

/// The statistics of every component of a consecutive labeling, in label order: entry `k` is
/// label `k + 1`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentStats {
    /// One entry per component.
    pub components: Vec<ComponentStat>,
}

impl ComponentStats {
    /// The number of components.
    pub fn len(&self) -> usize {
        self.components.len()
    }

    /// Whether there is no component.
    pub fn is_empty(&self) -> bool {
        self.components.is_empty()
    }

    /// Which components have at least `min_area` pixels (for [`crate::Filter`]).
    pub fn at_least(&self, min_area: u64) -> Vec<bool> {
        self.components.iter().map(|c| c.area >= min_area).collect()
    }

    /// Which components are among the `k` largest (by area; of equal areas, the smaller label
    /// first).
    pub fn largest(&self, k: usize) -> Vec<bool> {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(self.components[i].area), i));
        let mut keep = vec![false; self.len()];
        for &i in order.iter().take(k) {
            keep[i] = true;
        }
        keep
    }

    /// The statistics of the components `keep` selects, in order: those of the labels
    /// [`crate::Filter`] leaves.
    pub fn kept(&self, keep: &[bool]) -> ComponentStats {
        let components = self.components.iter().zip(keep).filter(|(_, &k)| k).map(|(c, _)| *c).collect();
        ComponentStats { components }
    }

    /// Statistics from the device's raw arrays of `n` components (see `kernels/stats.kernel`):
    /// areas; the box as min x, min y, max x, max y and, for volumes, min z, max z (4 or 6
    /// arrays of `n`); the coordinate sums x, y and, for volumes, z (2 or 3 arrays). Without z
    /// arrays every component lies in slice 0 (front 0, depth 1).
    pub(crate) fn from_arrays(n: usize, area: &[u32], boxes: &[u32], sums: &[u64]) -> Self {
        let volume = boxes.len() == 6 * n;
        let components = (0..n)
            .map(|k| {
                // A label without pixels (only possible from of_labels with a larger n) has an
                // empty box: all zero.
                let empty = area[k] == 0;
                let z = if volume { [boxes[4 * n + k], boxes[5 * n + k]] } else { [0, 0] };
                let min = [boxes[k], boxes[n + k], z[0]].map(|v| if empty { 0 } else { v });
                let max = [boxes[2 * n + k], boxes[3 * n + k], z[1]];
                ComponentStat {
                    left: min[0],
                    top: min[1],
                    front: min[2],
                    width: if empty { 0 } else { max[0] - min[0] + 1 },
                    height: if empty { 0 } else { max[1] - min[1] + 1 },
                    depth: if empty { 0 } else { max[2] - min[2] + 1 },
                    area: u64::from(area[k]),
                    sums: [sums[k], sums[n + k], if volume { sums[2 * n + k] } else { 0 }],
                }
            })
            .collect();
        ComponentStats { components }
    }

    /// The statistics of consecutive `labels` (1..`n`, background 0) of `shape`, computed on the
    /// host: the reference the device's are checked against. Labels above `n` are ignored; a
    /// label up to `n` without pixels gets an empty entry (all zero).
    pub fn of_labels(labels: &[u32], shape: Shape, n: u32) -> Self {
        let n = n as usize;
        let mut area = vec![0u32; n];
        // The volumes' layout, which images' statistics take too (z is 0 there).
        let mut boxes = vec![0u32; 6 * n];
        let (min_rows, max_rows) = ([0, 1, 4], [2, 3, 5]);
        for a in min_rows {
            boxes[a * n..(a + 1) * n].fill(u32::MAX);
        }
        let mut sums = vec![0u64; 3 * n];
        let (w, h) = (shape.width, shape.height);
        for (i, &l) in labels.iter().enumerate() {
            if l == 0 || l as usize > n {
                continue;
            }
            let k = l as usize - 1;
            let c = [(i % w) as u32, (i / w % h) as u32, (i / (w * h)) as u32];
            area[k] += 1;
            for a in 0..3 {
                let (lo, hi) = (min_rows[a] * n + k, max_rows[a] * n + k);
                boxes[lo] = boxes[lo].min(c[a]);
                boxes[hi] = boxes[hi].max(c[a]);
                sums[a * n + k] += u64::from(c[a]);
            }
        }
        Self::from_arrays(n, &area, &boxes, &sums)
    }
}

/// OpenCV's `connectedComponentsWithStats` tables, built on the device
/// ([`crate::Stats::OpenCv`]): row 0 the background, row k the component labeled k.
#[derive(Clone, Debug, Default)]
pub struct OpenCvStats {
    /// Rows: N + 1.
    pub rows: usize,
    /// Dimensions of the array (3 for a volume, even of one slice): `stats` has 2 dims + 1
    /// columns, `centroids` dims.
    pub dims: usize,
    /// Row-major, per row: left, top, width, height, area (volumes: left, top, front, width,
    /// height, depth, area). The background's row covers its pixels (zeros when it has none).
    pub stats: Vec<i64>,
    /// Row-major, per row: the mean x, y (, z), each exact coordinate sum rounded to f64 and
    /// divided by the area (NaN for a background of no pixels).
    pub centroids: Vec<f64>,
}

impl OpenCvStats {
    /// The tables of consecutive `labels` (1..`n`, background 0) of `shape` with `dims`
    /// dimensions, computed on the host (the reference the device's are checked against).
    pub fn of_labels(labels: &[u32], shape: Shape, dims: usize, n: u32) -> Self {
        let components = ComponentStats::of_labels(labels, shape, n);
        let (w, h) = (shape.width, shape.height);
        let mut background = ComponentStat { left: u32::MAX, top: u32::MAX, front: u32::MAX, ..Default::default() };
        let (mut high, mut pixels) = ([0u32; 3], 0u64);
        for (i, _) in labels.iter().enumerate().filter(|(_, &l)| l == 0) {
            let c = [(i % w) as u32, (i / w % h) as u32, (i / (w * h)) as u32];
            let low = [&mut background.left, &mut background.top, &mut background.front];
            for (a, low) in low.into_iter().enumerate() {
                *low = (*low).min(c[a]);
                high[a] = high[a].max(c[a]);
                background.sums[a] += u64::from(c[a]);
            }
            pixels += 1;
        }
        background.area = pixels;
        if pixels == 0 {
            background = ComponentStat::default();
        } else {
            background.width = high[0] - background.left + 1;
            background.height = high[1] - background.top + 1;
            background.depth = high[2] - background.front + 1;
        }
        let rows = components.components.len() + 1;
        let mut stats = Vec::with_capacity(rows * (2 * dims + 1));
        let mut centroids = Vec::with_capacity(rows * dims);
        for c in std::iter::once(&background).chain(&components.components) {
            let (low, size) = ([c.left, c.top, c.front], [c.width, c.height, c.depth]);
            stats.extend(low[..dims].iter().chain(&size[..dims]).map(|&v| i64::from(v)));
            stats.push(c.area as i64);
            centroids.extend(c.sums[..dims].iter().map(|&s| s as f64 / c.area as f64));
        }
        Self { rows, dims, stats, centroids }
    }
}

/// The new label of each component of a consecutive labeling when only those `keep` selects
/// stay (1..M in label order; 0 for a removed one), and M.
pub(crate) fn keep_map(keep: &[bool]) -> (Vec<u32>, u32) {
    let mut kept = 0;
    let map = keep
        .iter()
        .map(|&k| {
            kept += u32::from(k);
            if k {
                kept
            } else {
                0
            }
        })
        .collect();
    (map, kept)
}
