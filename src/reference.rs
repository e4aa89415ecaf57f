//! The CPU reference: a sequential union-find labeling that is simple and obviously right, and
//! the partition-equality check every test uses.

use crate::{BinaryImage, Connectivity, LabelImage, RawLabels};

/// Offsets (dx, dy) of the backward neighbours: those before a pixel in raster order. Joining
/// every foreground pixel with its foreground backward neighbours visits every adjacent pair once.
/// (A 3D reference adds a dz and the 6/18/26 tables.)
fn backward_neighbours(connectivity: Connectivity) -> &'static [(isize, isize)] {
    match connectivity {
        Connectivity::Four => &[(-1, 0), (0, -1)],
        Connectivity::Eight => &[(-1, 0), (-1, -1), (0, -1), (1, -1)],
    }
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grandparent = parent[parent[i as usize] as usize];
        parent[i as usize] = grandparent; // path halving
        i = grandparent;
    }
    i
}

/// Labels `image` on the CPU. Raw labels follow the GPU algorithms' convention: every pixel of a
/// component gets (raster index of the component's first pixel) + 1; background is 0.
pub fn label(image: &BinaryImage, connectivity: Connectivity) -> LabelImage {
    label_as(image, connectivity, RawLabels::FirstPixel)
}

/// Labels `image` on the CPU with the raw labels an algorithm of the given convention produces.
pub fn label_as(image: &BinaryImage, connectivity: Connectivity, convention: RawLabels) -> LabelImage {
    let (w, h) = (image.width(), image.height());
    let labels = raw_labels(w, h, image.pixels(), connectivity, convention);
    LabelImage::new(w, h, labels).expect("the size was checked when the image was made")
}

/// [`label_as`] over row-major pixels (`width * height` of them, nonzero is foreground). The
/// union-find forest becomes the label array in place: 4 bytes per pixel in all.
pub(crate) fn raw_labels(
    w: usize,
    h: usize,
    pixels: &[u8],
    connectivity: Connectivity,
    convention: RawLabels,
) -> Vec<u32> {
    let fg = |x: usize, y: usize| pixels[y * w + x] != 0;
    let mut parent: Vec<u32> = (0..(w * h) as u32).collect();
    for y in 0..h {
        for x in 0..w {
            if !fg(x, y) {
                continue;
            }
            for &(dx, dy) in backward_neighbours(connectivity) {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx < 0 || ny < 0 || nx >= w as isize || !fg(nx as usize, ny as usize) {
                    continue;
                }
                let a = find(&mut parent, (y * w + x) as u32);
                let b = find(&mut parent, ny as u32 * w as u32 + nx as u32);
                // The smaller root wins, so a root is its component's smallest index.
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    // Every parent precedes its child in raster order, so one pass in that order links each
    // pixel to its root, and a second turns roots into labels.
    for i in 0..parent.len() {
        parent[i] = parent[parent[i] as usize];
    }
    for (i, l) in parent.iter_mut().enumerate() {
        *l = if pixels[i] == 0 { 0 } else { *l + 1 };
    }
    if convention == RawLabels::FirstBlock {
        to_first_block(w, &mut parent);
    }
    parent
}

/// Relabels first-pixel labels in place by each component's first 2x2 block: the raster index
/// of the top-left pixel of the first block (blocks in raster order) holding one of its pixels.
fn to_first_block(w: usize, labels: &mut [u32]) {
    let block_of = |i: usize| (i / w / 2 * 2) * w + (i % w / 2 * 2);
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
    let (e, ne) = expected.to_consecutive();
    let (a, na) = actual.to_consecutive();
    if let Some(i) = e.labels().iter().zip(a.labels()).position(|(x, y)| x != y) {
        let (x, y) = (i % e.width(), i / e.width());
        return Some(format!(
            "first difference at (x={x}, y={y}): expected component {} (raw {}), got {} (raw {}); {ne} vs {na} components",
            e.labels()[i],
            expected.labels()[i],
            a.labels()[i],
            actual.labels()[i]
        ));
    }
    None
}

/// Whether two labelings induce the same partition with background 0 in both.
pub fn same_partition(expected: &LabelImage, actual: &LabelImage) -> bool {
    partition_difference(expected, actual).is_none()
}
