//! A batch of images stacked along the rows, labeled as one (`label_stacked_into`, what
//! `ccl.label_batch` runs on a GPU batch): every item's labels equal the reference's labeling of
//! the item alone, consecutive from 1 in raster order, with the same count, on every tile kernel
//! of TUF the device runs and at 4- and 8-connectivity; items whose contents would join across the
//! border between them (full items, vertical stripes, checkerboards that 8-connectivity joins
//! diagonally) stay apart. Where the batch cannot run as one (another algorithm, items whose
//! height is not a multiple of 32, the CPU reference) the call answers `None` and leaves the labels
//! alone; a height the item count does not divide is refused. One test per device (`cargo test
//! --test stacked_batch -- ::cuda` runs the CUDA one), one at a time: the forced tile kernel is
//! the process's.

mod common;

use std::sync::{Mutex, PoisonError};

use ccl::reference;
use ccl::testing::TufTileKernel;
use ccl::{Algorithm, AnyLabeler, BinaryImage, Connectivity, Error, Labeler, Options, RawLabels, Shape};
use common::images::random;

device_tests! {
    stacked_items_are_labeled_as_alone: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// `count` items of `width` x `height`: random ones of several densities, and those whose
/// contents touch the borders between items everywhere.
fn items(width: usize, height: usize, count: usize) -> Vec<BinaryImage> {
    let patterns: [fn(usize, usize) -> bool; 4] =
        [|_, _| true, |x, _| x % 3 == 0, |x, y| (x + y) % 2 == 0, |x, y| (x * 7 + y * 3) % 5 < 2];
    (0..count)
        .map(|k| match k % 6 {
            k4 @ 0..=3 => BinaryImage::image_from_fn(width, height, patterns[k4]).expect("image"),
            4 => random(width, height, 55, 1, k as u32 + 1),
            _ => random(width, height, 30, 2, k as u32 + 7),
        })
        .collect()
}

/// The items one under the other, as one image.
fn stack(items: &[BinaryImage]) -> BinaryImage {
    let (width, height) = (items[0].width(), items[0].height());
    let values: Vec<u8> = items.iter().flat_map(|item| item.values().iter().copied()).collect();
    let shape = Shape::image(width, height * items.len());
    BinaryImage::new(shape, values).expect("stacked image")
}

/// Labels `items` stacked, as one; `None` where the labeler answers so (the labels are then
/// checked untouched).
fn label_stacked(
    labeler: &mut AnyLabeler,
    items: &[BinaryImage],
    connectivity: Connectivity,
) -> Option<(Vec<u32>, Vec<u32>)> {
    let stacked = stack(items);
    let image = labeler.upload(&stacked).expect("upload");
    // A label array of the stacked shape, holding a labeling already (to see it left alone).
    let mut labels = labeler.run(&image, &Options::new(connectivity)).expect("label").labels;
    let before = labeler.download(&labels).expect("download");
    let counts = labeler.label_stacked_into(&image, items.len(), connectivity, &mut labels).expect("stacked");
    let after = labeler.download(&labels).expect("download").values().to_vec();
    match counts {
        Some(counts) => Some((counts, after)),
        None => {
            assert_eq!(before.values(), &after[..], "labels touched by a batch that was not labeled");
            None
        }
    }
}

fn stacked_items_are_labeled_as_alone(d: &common::TestDevice) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut checked = 0;
    let kernels = [None, Some(TufTileKernel::Small), Some(TufTileKernel::Groups), Some(TufTileKernel::Wide)];
    for kernel in kernels {
        ccl::testing::force_tuf_tile_kernel(kernel);
        let labeler = match kernel {
            None => Some(d.device.labeler(Algorithm::TUF).expect("labeler")),
            Some(kernel) => common::tuf_labeler_with(&d.device, kernel),
        };
        let Some(mut labeler) = labeler else { continue };
        for connectivity in [Connectivity::Four, Connectivity::Eight] {
            for (width, height, count) in [(131, 32, 7), (256, 64, 6), (64, 32, 1), (300, 96, 4), (33, 32, 12)] {
                let items = items(width, height, count);
                let what = format!("{} {kernel:?} {connectivity} {width}x{height} x{count}", d.token);
                let Some((counts, labels)) = label_stacked(&mut labeler, &items, connectivity) else {
                    assert_eq!(d.token, "cpu", "{what}: a GPU device labels the batch as one");
                    continue;
                };
                assert_eq!(counts.len(), count, "{what}");
                for (k, (item, chunk)) in items.iter().zip(labels.chunks(width * height)).enumerate() {
                    let (alone, n) = reference::label_as(item, connectivity, RawLabels::FirstPixel).into_consecutive();
                    assert_eq!(counts[k], n, "{what}: item {k}'s count");
                    assert!(alone.values() == chunk, "{what}: item {k}'s labels differ from its own labeling");
                    checked += 1;
                }
            }
        }
    }
    ccl::testing::force_tuf_tile_kernel(None);
    if d.token != "cpu" {
        assert!(checked > 0);
    }
    let mut labeler = d.device.labeler(Algorithm::TUF).expect("labeler");

    // Not as one: items of 40 rows (not a multiple of 32), another algorithm.
    let uneven = items(50, 40, 3);
    assert!(label_stacked(&mut labeler, &uneven, Connectivity::Eight).is_none(), "{}: 40-row items", d.token);
    let mut uf = d.device.labeler(Algorithm::UF).expect("labeler");
    assert!(label_stacked(&mut uf, &items(50, 32, 3), Connectivity::Eight).is_none(), "{}: UF", d.token);

    // A height the count does not divide.
    let image = labeler.upload(&stack(&items(16, 32, 3))).expect("upload");
    let mut labels = labeler.run(&image, &Options::new(Connectivity::Four)).expect("label").labels;
    match labeler.label_stacked_into(&image, 5, Connectivity::Four, &mut labels) {
        Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, "items"),
        other => panic!("{}: 5 items in 96 rows gave {other:?}", d.token),
    }
    eprintln!("{checked} stacked items exact on {}", d.token);
}
