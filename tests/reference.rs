//! The CPU reference against answers known by construction, so that the oracle itself can fail.

mod common;

use ccl::reference::{label, label_as, partition_difference, same_partition};
use ccl::{BinaryImage, Connectivity, LabelImage, RawLabels};

fn img(rows: &[&str]) -> BinaryImage {
    let (w, h) = (rows[0].len(), rows.len());
    BinaryImage::image_from_fn(w, h, |x, y| rows[y].as_bytes()[x] == b'#').unwrap()
}

#[test]
fn checkerboard_is_all_singletons_under_4_and_one_component_under_8() {
    let image = BinaryImage::image_from_fn(9, 7, |x, y| (x + y) % 2 == 0).unwrap();
    let fg = image.values().iter().filter(|&&p| p != 0).count() as u32;
    assert_eq!(label(&image, Connectivity::Four).component_count(), fg);
    assert_eq!(label(&image, Connectivity::Eight).component_count(), 1);
}

#[test]
fn raw_labels_are_first_pixel_index_plus_one() {
    let image = img(&["..#.", "#.#.", "##.#"]);
    let l = label(&image, Connectivity::Four);
    assert_eq!(l.values(), &[0, 0, 3, 0, 5, 0, 3, 0, 5, 5, 0, 12]);
    let l = label(&image, Connectivity::Eight);
    assert_eq!(l.values(), &[0, 0, 3, 0, 3, 0, 3, 0, 3, 3, 0, 3]);
}

#[test]
fn u_shape_merges_late() {
    // Two arms that only join at the bottom: the classic case for a one-pass labeler.
    let image = img(&["#..#", "#..#", "####"]);
    assert_eq!(label(&image, Connectivity::Four).component_count(), 1);
}

#[test]
fn nonzero_values_are_foreground() {
    let a = BinaryImage::image(3, 1, vec![2, 0, 255]).unwrap();
    assert_eq!(label(&a, Connectivity::Eight).values(), &[1, 0, 3]);
}

#[test]
fn partition_check_ignores_numbering_but_not_background() {
    let a = LabelImage::image(4, 1, vec![5, 0, 9, 9]).unwrap();
    let b = LabelImage::image(4, 1, vec![1, 0, 2, 2]).unwrap();
    assert!(same_partition(&a, &b));
    let merged = LabelImage::image(4, 1, vec![1, 0, 1, 1]).unwrap();
    assert!(!same_partition(&a, &merged));
    let background_labeled = LabelImage::image(4, 1, vec![1, 3, 2, 2]).unwrap();
    let diff = partition_difference(&a, &background_labeled).expect("must differ");
    assert!(diff.contains("x=1"), "{diff}");
}

#[test]
fn consecutive_numbering_is_raster_order() {
    let l = LabelImage::image(5, 1, vec![7, 0, 3, 7, 9]).unwrap();
    let (c, n) = l.to_consecutive();
    assert_eq!(c.values(), &[1, 0, 2, 1, 3]);
    assert_eq!(n, 3);
}

#[test]
fn block_convention_labels_from_the_first_block() {
    // The component starts at (2, 0) but also holds (1, 1), which lies in block 0.
    let image = img(&["..#.", ".#..", "....", "...#"]);
    let by_pixel = label_as(&image, Connectivity::Eight, RawLabels::FirstPixel);
    assert_eq!(by_pixel.values()[2], 3);
    let by_block = label_as(&image, Connectivity::Eight, RawLabels::FirstBlock);
    assert_eq!(by_block.values(), &[0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11]);
}
