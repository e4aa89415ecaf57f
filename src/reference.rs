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
    let (w, h) = (image.width(), image.height());
    let mut parent: Vec<u32> = (0..(w * h) as u32).collect();
    for y in 0..h {
        for x in 0..w {
            if !image.is_foreground(x, y) {
                continue;
            }
            for &(dx, dy) in backward_neighbours(connectivity) {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx < 0 || ny < 0 || nx >= w as isize || !image.is_foreground(nx as usize, ny as usize) {
                    continue;
                }
                let a = find(&mut parent, (y * w + x) as u32);
                let b = find(&mut parent, ny as u32 * w as u32 + nx as u32);
                // The smaller root wins, so a root is its component's smallest index.
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    let labels = (0..w * h).map(|i| if image.pixels()[i] == 0 { 0 } else { find(&mut parent, i as u32) + 1 }).collect();
    LabelImage::new(w, h, labels).expect("the size was checked when the image was made")
}

/// Labels `image` on the CPU with the raw labels an algorithm of the given convention produces.
pub fn label_as(image: &BinaryImage, connectivity: Connectivity, convention: RawLabels) -> LabelImage {
    let by_first_pixel = label(image, connectivity);
    match convention {
        RawLabels::FirstPixel => by_first_pixel,
        RawLabels::FirstBlock => {
            let w = image.width();
            // Smallest block top-left index over each component, keyed by the component's
            // first-pixel label.
            let block_of = |i: usize| (i / w / 2 * 2) * w + (i % w / 2 * 2);
            let mut first_block = std::collections::HashMap::new();
            for (i, &l) in by_first_pixel.labels().iter().enumerate() {
                if l != 0 {
                    let b = block_of(i);
                    first_block.entry(l).and_modify(|m: &mut usize| *m = (*m).min(b)).or_insert(b);
                }
            }
            let labels =
                by_first_pixel.labels().iter().map(|&l| if l == 0 { 0 } else { first_block[&l] as u32 + 1 }).collect();
            LabelImage::new(w, image.height(), labels).expect("same size")
        }
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
