//! The CPU reference: a sequential union-find labeling that is simple and obviously right, and
//! the partition-equality check every test uses.

use crate::multilabel::{values_of, ImageKind, LabelValue};
use crate::{BinaryImage, Connectivity, Error, LabelImage, RawLabels, Result, Shape};

/// Offsets (dx, dy, dz) of the backward neighbours: those before a voxel in raster order (x
/// fastest, then y, then z) among the 26 around it, as many as the connectivity joins (face
/// neighbours differ in one coordinate, edge ones in two, corner ones in three; 4 and 8 stay in
/// the plane). Joining every foreground voxel with its foreground backward neighbours visits
/// every adjacent pair once.
fn backward_neighbours(connectivity: Connectivity) -> Vec<(isize, isize, isize)> {
    let (planar, most_differing) = match connectivity {
        Connectivity::Four => (true, 1),
        Connectivity::Eight => (true, 2),
        Connectivity::Six => (false, 1),
        Connectivity::Eighteen => (false, 2),
        Connectivity::TwentySix => (false, 3),
    };
    let mut out = Vec::new();
    for dz in -1isize..=1 {
        for dy in -1isize..=1 {
            for dx in -1isize..=1 {
                let differing = [dx, dy, dz].iter().filter(|&&d| d != 0).count();
                let backward = (dz, dy, dx) < (0, 0, 0);
                if backward && differing <= most_differing && !(planar && dz != 0) {
                    out.push((dx, dy, dz));
                }
            }
        }
    }
    out
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grandparent = parent[parent[i as usize] as usize];
        parent[i as usize] = grandparent; // path halving
        i = grandparent;
    }
    i
}

/// Labels `image` on the CPU. Raw labels follow the pixel algorithms' convention
/// ([`RawLabels::FirstPixel`]; [`label_as`] gives the block algorithms' too): every pixel of a
/// component gets (raster index of the component's first pixel) + 1; background is 0. A
/// connectivity of volumes labels the image as a volume of one slice (6 as 4, 18 and 26 as 8).
pub fn label(image: &BinaryImage, connectivity: Connectivity) -> LabelImage {
    label_as(image, connectivity, RawLabels::FirstPixel)
}

/// Labels `image` on the CPU with the raw labels an algorithm of the given convention produces.
/// A volume is labeled whole with a volume connectivity, slice by slice with an image one
/// ([`label_volume_as`] refuses the latter).
pub fn label_as(image: &BinaryImage, connectivity: Connectivity, convention: RawLabels) -> LabelImage {
    let labels = raw_labels_of(image.shape(), image.values(), connectivity, convention);
    LabelImage::new(image.shape(), labels).expect("the size was checked when the image was made")
}

/// Raw labels of row-major values of `shape` (nonzero is foreground) with any connectivity and
/// either convention (an image is a volume of one slice).
pub(crate) fn raw_labels_of(
    shape: Shape,
    values: &[u8],
    connectivity: Connectivity,
    convention: RawLabels,
) -> Vec<u32> {
    raw_labels_with(shape, connectivity, convention, |i| values[i] != 0, |_, j| values[j] != 0)
}

/// Raw labels of `shape` in `convention`, `fg(i)` telling foreground elements and `joins(i, j)`
/// whether foreground neighbours i and j join.
fn raw_labels_with(
    shape: Shape,
    connectivity: Connectivity,
    convention: RawLabels,
    fg: impl Fn(usize) -> bool,
    joins: impl Fn(usize, usize) -> bool,
) -> Vec<u32> {
    let mut labels = first_voxel_labels(shape, connectivity, fg, joins);
    if convention == RawLabels::FirstBlock {
        to_first_block(shape, &mut labels);
    }
    labels
}

/// [`raw_labels_of`] for an image of `kind` held in `bytes`: a multi-label image joins equal
/// neighbours only, its background value being background.
pub(crate) fn raw_labels_of_kind(
    shape: Shape,
    bytes: &[u8],
    kind: ImageKind,
    connectivity: Connectivity,
    convention: RawLabels,
) -> Vec<u32> {
    if kind == ImageKind::Binary {
        return raw_labels_of(shape, bytes, connectivity, convention);
    }
    let (values, background) = values_of(kind, bytes);
    raw_labels_with(shape, connectivity, convention, |i| values[i] != background, |i, j| values[i] == values[j])
}

/// Labels a multi-label image or volume of `shape` on the CPU: the connected sets of equal
/// values, `background` excepted, with `connectivity` (of images, or of volumes, which labels an
/// image as a volume of one slice); first-pixel raw labels as [`label`]'s. Values that do not
/// match the shape are an [`Error::SizeMismatch`] (as [`crate::HostArray::new`]).
pub fn label_values<T: LabelValue>(
    shape: Shape,
    values: &[T],
    background: T,
    connectivity: Connectivity,
) -> Result<LabelImage> {
    crate::host_array::check_len(shape, values.len())?;
    let kind = ImageKind::multilabel(background);
    let labels = raw_labels_of_kind(shape, bytemuck::cast_slice(values), kind, connectivity, RawLabels::FirstPixel);
    LabelImage::new(shape, labels)
}

/// Labels `volume` on the CPU with 6-, 18- or 26-connectivity: every voxel of a component gets
/// (raster index of the component's first voxel, x fastest) + 1; background is 0. A connectivity
/// of images is an [`Error::ConnectivityDimensions`].
pub fn label_volume(volume: &BinaryImage, connectivity: Connectivity) -> Result<LabelImage> {
    label_volume_as(volume, connectivity, RawLabels::FirstPixel)
}

/// Labels `volume` on the CPU with the raw labels an algorithm of the given convention produces
/// (first voxel, or the front top-left voxel of the first 2x2x2 block).
pub fn label_volume_as(volume: &BinaryImage, connectivity: Connectivity, convention: RawLabels) -> Result<LabelImage> {
    if connectivity.dims() != 3 {
        return Err(Error::ConnectivityDimensions { connectivity, what: "a volume" });
    }
    let shape = volume.shape();
    let labels = raw_labels_of(shape, volume.values(), connectivity, convention);
    LabelImage::volume(shape.width, shape.height, shape.depth, labels)
}

/// First-voxel labels of the row-major voxels of `shape`, `fg(i)` telling foreground voxels and
/// `joins(i, j)` whether foreground voxel `i` joins its foreground neighbour `j`. The union-find
/// forest becomes the label array in place: 4 bytes per voxel in all.
fn first_voxel_labels(
    shape: Shape,
    connectivity: Connectivity,
    fg: impl Fn(usize) -> bool,
    joins: impl Fn(usize, usize) -> bool,
) -> Vec<u32> {
    let (w, h, d) = (shape.width, shape.height, shape.depth);
    let index = |x: usize, y: usize, z: usize| (z * h + y) * w + x;
    let neighbours = backward_neighbours(connectivity);
    let mut parent: Vec<u32> = (0..shape.len() as u32).collect();
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let i = index(x, y, z);
                if !fg(i) {
                    continue;
                }
                for &(dx, dy, dz) in &neighbours {
                    let (nx, ny, nz) = (x as isize + dx, y as isize + dy, z as isize + dz);
                    if nx < 0 || ny < 0 || nz < 0 || nx >= w as isize || ny >= h as isize {
                        continue;
                    }
                    let n = index(nx as usize, ny as usize, nz as usize);
                    if !fg(n) || !joins(i, n) {
                        continue;
                    }
                    let a = find(&mut parent, i as u32);
                    let b = find(&mut parent, n as u32);
                    // The smaller root wins, so a root is its component's smallest index.
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
    }
    // Every parent precedes its child in raster order, so one pass in that order links each
    // voxel to its root, and a second turns roots into labels.
    for i in 0..parent.len() {
        parent[i] = parent[parent[i] as usize];
    }
    for (i, l) in parent.iter_mut().enumerate() {
        *l = if fg(i) { *l + 1 } else { 0 };
    }
    parent
}

/// Where two volume labelings differ, as a readable message; `None` when they induce the same
/// partition with background 0 in both.
pub fn volume_partition_difference(expected: &LabelImage, actual: &LabelImage) -> Option<String> {
    if expected.shape() != actual.shape() {
        return Some(format!("size differs: expected {}, got {}", expected.shape(), actual.shape()));
    }
    let (w, h) = (expected.shape().width, expected.shape().height);
    first_difference(expected.values(), actual.values(), |i| {
        format!("(x={}, y={}, z={})", i % w, i / w % h, i / (w * h))
    })
}

/// Relabels first-pixel labels in place by each component's first 2x2 block (2x2x2 in a
/// volume): the raster index of the block's top-left (front top-left) pixel, for the first block
/// (blocks in raster order) holding one of the component's pixels.
fn to_first_block(shape: Shape, labels: &mut [u32]) {
    let (w, h) = (shape.width, shape.height);
    // The front top-left voxel of the 2x2 (2x2x2) block holding voxel i.
    let block_of = |i: usize| {
        let (x, y, z) = (i % w, i / w % h, i / (w * h));
        (z / 2 * 2 * h + y / 2 * 2) * w + x / 2 * 2
    };
    let mut first_block = std::collections::HashMap::new();
    for (i, &l) in labels.iter().enumerate() {
        if l != 0 {
            let b = block_of(i);
            first_block.entry(l).and_modify(|m: &mut usize| *m = (*m).min(b)).or_insert(b);
        }
    }
    for l in labels.iter_mut().filter(|l| **l != 0) {
        *l = first_block[l] as u32 + 1;
    }
}

/// Where two labelings differ, as a readable message; `None` when they induce the same
/// partition with background 0 in both (both renumbered in raster order of first appearance).
pub fn partition_difference(expected: &LabelImage, actual: &LabelImage) -> Option<String> {
    if (expected.width(), expected.height()) != (actual.width(), actual.height()) {
        return Some(format!(
            "size differs: expected {}x{}, got {}x{}",
            expected.width(),
            expected.height(),
            actual.width(),
            actual.height()
        ));
    }
    let w = expected.width();
    first_difference(expected.values(), actual.values(), |i| format!("(x={}, y={})", i % w, i / w))
}

/// The first element where two labelings of the same size differ once both are renumbered in
/// raster order of first appearance, named by `at(index)`, as a readable message.
fn first_difference(expected: &[u32], actual: &[u32], at: impl Fn(usize) -> String) -> Option<String> {
    let (mut e, mut a) = (expected.to_vec(), actual.to_vec());
    let (ne, na) = (crate::host_array::renumber(&mut e), crate::host_array::renumber(&mut a));
    let i = e.iter().zip(&a).position(|(x, y)| x != y)?;
    Some(format!(
        "first difference at {}: expected component {} (raw {}), got {} (raw {}); {ne} vs {na} components",
        at(i),
        e[i],
        expected[i],
        a[i],
        actual[i]
    ))
}

/// Whether two labelings induce the same partition with background 0 in both.
pub fn same_partition(expected: &LabelImage, actual: &LabelImage) -> bool {
    partition_difference(expected, actual).is_none()
}
