//! Arrays labeled in slabs along the slowest axis (`ccl::slabs`): for every connectivity, on
//! images and volumes whose components cross many slab faces (spirals, snakes, diagonal
//! staircases that touch across a face only at a corner, full and empty arrays, random
//! textures), with device memory caps that cut them into one-plane slabs, uneven slabs and a
//! single slab, the labels equal the reference's consecutive labeling of the whole array bit for
//! bit, in 32- and 64-bit labels, also from a label base past 2^32 (the 64-bit path on small
//! arrays). Caps too small for a plane, sizes that do not match and labels past 32 bits are
//! refused with typed errors. One test per device; the union-find on its own below.

mod common;

use ccl::slabs::{self, LabelMerger, LabelWord, SlabPlan, DEVICE_BYTES_PER_ELEMENT};
use ccl::{reference, Algorithm, BinaryImage, Connectivity, Error, Shape};
use common::images::{diagonals, random, snake, spiral};

device_tests! {
    slabs_equal_the_whole_labeling: [cpu, opencl_cpu, opencl_gpu, cuda],
    slabs_across_several_labelers_equal_the_whole_labeling: [cpu, opencl_cpu, opencl_gpu, cuda],
    statistics_and_filters_in_slabs_equal_the_whole_labelings: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Images and volumes whose components cross slab faces in every way.
fn arrays() -> Vec<(&'static str, BinaryImage)> {
    let volume = |w, h, d, f: fn(usize, usize, usize) -> bool| BinaryImage::volume_from_fn(w, h, d, f).expect("volume");
    vec![
        ("spiral", spiral(37)),
        ("snake", snake(23, 41)),
        ("diagonals", diagonals(19, 33)),
        ("anti-diagonals", BinaryImage::image_from_fn(17, 29, |x, y| (x + 40 - y) % 3 == 0).expect("image")),
        ("full", BinaryImage::image_from_fn(9, 13, |_, _| true).expect("image")),
        ("empty", BinaryImage::image_from_fn(9, 13, |_, _| false).expect("image")),
        ("random", random(41, 57, 50, 1, 7)),
        ("one column", random(1, 40, 60, 1, 3)),
        ("volume random", ccl::random_volume(13, 11, 17, 45, 1, 5).expect("volume")),
        ("volume corners", volume(7, 6, 15, |x, y, z| (x + y + z) % 2 == 0 && (x + z) % 3 != 1)),
        ("volume diagonal rods", volume(8, 8, 16, |x, y, z| x == z % 8 && y == (z + 3) % 8 || (x + y) % 7 == z % 7)),
        ("volume full", volume(5, 4, 9, |_, _, _| true)),
        ("volume one slice", ccl::random_volume(12, 9, 1, 50, 1, 2).expect("volume")),
    ]
}

/// Plane counts per slab to force: one plane, uneven slabs, all but one plane, all of them.
fn plane_counts(planes: usize) -> Vec<usize> {
    let mut counts = vec![1, 2, 3, 7, planes.saturating_sub(1).max(1), planes];
    counts.dedup();
    counts
}

/// The reference's consecutive labels of `image` (a volume labeled whole).
fn expected(image: &BinaryImage, connectivity: Connectivity) -> (Vec<u32>, u32) {
    let (labels, count) = reference::label(image, connectivity).into_consecutive();
    (labels.values().to_vec(), count)
}

/// Labels `image` in slabs of `planes` planes from `base`, in labels of `W`.
fn in_slabs<W: LabelWord>(
    labeler: &mut ccl::AnyLabeler,
    image: &BinaryImage,
    connectivity: Connectivity,
    planes: usize,
    base: u64,
) -> (Vec<W>, slabs::SlabRun) {
    let shape = image.shape();
    let plane = if shape.depth == 1 { shape.width } else { shape.width * shape.height };
    let cap = (planes * plane) as u64 * DEVICE_BYTES_PER_ELEMENT;
    let plan = SlabPlan::new(shape, Some(cap)).expect("plan").with_label_base(base);
    assert_eq!(plan.planes_per_slab(), planes.min(if shape.depth == 1 { shape.height } else { shape.depth }));
    let mut out = vec![W::default(); shape.len()];
    let run = slabs::label_in_slabs(labeler, &plan, image.values(), connectivity, &mut out).expect("slabs");
    assert_eq!(run.slabs, plan.slabs());
    (out, run)
}

fn slabs_equal_the_whole_labeling(d: &common::TestDevice) {
    for (name, image) in arrays() {
        let connectivities: &[Connectivity] =
            if image.shape().depth == 1 { &Connectivity::PLANAR } else { &Connectivity::VOLUMETRIC };
        let planes = if image.shape().depth == 1 { image.height() } else { image.shape().depth };
        for &connectivity in connectivities {
            let (want, count) = expected(&image, connectivity);
            let mut labeler = d.device.labeler(Algorithm::default_for(connectivity)).expect("labeler");
            for per_slab in plane_counts(planes) {
                let what = format!("{name} {connectivity:?}, {per_slab} planes a slab on {}", d.token);
                let (got, run) = in_slabs::<u32>(&mut labeler, &image, connectivity, per_slab, 0);
                assert_eq!(run.count, u64::from(count), "{what}: count");
                assert!(got == want, "{what}: labels differ from the whole labeling");
                let (wide, run) = in_slabs::<u64>(&mut labeler, &image, connectivity, per_slab, 0);
                assert_eq!(run.count, u64::from(count), "{what}: 64-bit count");
                assert!(wide.iter().zip(&want).all(|(&w, &n)| w == u64::from(n)), "{what}: 64-bit labels differ");
            }
            // Labels from a base past 2^32: every label shifted by it, background still 0.
            let base = (1u64 << 32) + 5;
            let (wide, _) = in_slabs::<u64>(&mut labeler, &image, connectivity, 2, base);
            let shifted = wide.iter().zip(&want).all(|(&w, &n)| w == if n == 0 { 0 } else { base + u64::from(n) });
            assert!(shifted, "{name} {connectivity:?}: labels from a base past 2^32 on {}", d.token);
        }
    }
    // Every algorithm of an image at 8-connectivity, in slabs of 5 rows.
    let image = spiral(29);
    let (want, _) = expected(&image, Connectivity::Eight);
    for &algorithm in Algorithm::ALL.iter().filter(|a| a.supports(Connectivity::Eight)) {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        let (got, _) = in_slabs::<u32>(&mut labeler, &image, Connectivity::Eight, 5, 0);
        assert!(got == want, "{} in slabs on {}", algorithm.name(), d.token);
    }
}

/// Three labelers of the device (as three devices would be) label the slabs in waves, on their
/// own threads: the labels are the whole labeling's, for waves that fill and waves that do not.
fn slabs_across_several_labelers_equal_the_whole_labeling(d: &common::TestDevice) {
    for (name, image, connectivity) in [
        ("spiral", spiral(37), Connectivity::Eight),
        ("random", random(41, 57, 50, 1, 7), Connectivity::Four),
        ("volume random", ccl::random_volume(13, 11, 17, 45, 1, 5).expect("volume"), Connectivity::TwentySix),
    ] {
        let (want, count) = expected(&image, connectivity);
        let algorithm = Algorithm::default_for(connectivity);
        let mut labelers: Vec<_> = (0..3).map(|_| d.device.labeler(algorithm).expect("labeler")).collect();
        let planes = if image.shape().depth == 1 { image.height() } else { image.shape().depth };
        for devices in [2, 3, 4, 7, planes] {
            let plan = SlabPlan::new(image.shape(), None).expect("plan").spread_over(devices);
            assert_eq!(plan.planes_per_slab(), planes.div_ceil(devices), "{name} spread over {devices}");
            let mut out = vec![0u64; image.shape().len()];
            let run = slabs::label_in_slabs_across(&mut labelers, &plan, image.values(), connectivity, &mut out)
                .expect("slabs across labelers");
            assert_eq!(run.count, u64::from(count), "{name}, {} slabs on {}", plan.slabs(), d.token);
            let same = out.iter().zip(&want).all(|(&w, &n)| w == u64::from(n));
            assert!(same, "{name}, {} slabs across 3 labelers on {}: labels differ", plan.slabs(), d.token);
        }
    }
    let none: &mut [ccl::AnyLabeler] = &mut [];
    let plan = SlabPlan::new(Shape::image(4, 4), None).expect("plan");
    let refused = slabs::label_in_slabs_across(none, &plan, &[0; 16], Connectivity::Eight, &mut [0u32; 16]);
    assert!(matches!(refused, Err(Error::InvalidParameter { .. })), "{refused:?}");
}

/// Statistics and filters made in slabs (two labelers) are those of the whole labeling with the
/// same options: labels, count and every component's box, area and coordinate sums.
fn statistics_and_filters_in_slabs_equal_the_whole_labelings(d: &common::TestDevice) {
    use ccl::{Filter, Labeler, Options, Stats};
    for (name, image, connectivity) in [
        ("random", random(41, 57, 45, 1, 7), Connectivity::Eight),
        ("spiral", spiral(31), Connectivity::Four),
        ("volume", ccl::random_volume(13, 11, 17, 40, 1, 5).expect("volume"), Connectivity::TwentySix),
    ] {
        let algorithm = Algorithm::default_for(connectivity);
        let mut labelers: Vec<_> = (0..2).map(|_| d.device.labeler(algorithm).expect("labeler")).collect();
        let base = Options::new(connectivity).consecutive();
        for options in [
            base.clone().stats(Stats::Components),
            base.clone().filter(Filter::MinSize(3)),
            base.clone().stats(Stats::Components).filter(Filter::MinSize(2)).filter(Filter::Largest(4)),
        ] {
            let whole = ccl::run_host(&mut labelers[0], &options, |l| l.upload(&image), |l, d| l.download(d))
                .expect("whole labeling");
            let planes = if image.shape().depth == 1 { image.height() } else { image.shape().depth };
            for per_slab in [1, 4, planes] {
                let cap = (per_slab * image.shape().len() / planes) as u64 * DEVICE_BYTES_PER_ELEMENT;
                let plan = SlabPlan::new(image.shape(), Some(cap)).expect("plan");
                let mut out = vec![0u64; image.shape().len()];
                let mut sink = slabs::DenseLabels::new(&mut out, image.shape());
                let source = slabs::Dense::new(image.values(), image.shape());
                let run = slabs::label_slabs_with(&mut labelers, &plan, &options, &source, &mut sink).expect("slabs");
                let what = format!("{name} {options:?}, {per_slab} planes a slab on {}", d.token);
                assert_eq!(run.count, u64::from(whole.count.expect("counted")), "{what}: count");
                let same = out.iter().zip(whole.labels.values()).all(|(&a, &b)| a == u64::from(b));
                assert!(same, "{what}: labels");
                assert_eq!(
                    run.stats.as_ref().map(|s| &s.components),
                    whole.stats.as_ref().map(|s| &s.components),
                    "{what}"
                );
            }
        }
    }
}

/// A source that fails from plane `from` on, as a file that ends or a read that fails would.
struct FailingFrom<'a> {
    dense: slabs::Dense<'a>,
    from: usize,
}

impl slabs::ElementSource for FailingFrom<'_> {
    fn elements(&self, planes: std::ops::Range<usize>) -> ccl::Result<std::borrow::Cow<'_, [u8]>> {
        if planes.end > self.from {
            return Err(Error::FileRead { path: "failing".into(), reason: format!("planes {planes:?}") });
        }
        self.dense.elements(planes)
    }
}

/// An error of the source in the middle of the slabs stops every labeler and comes back, with
/// one labeler and with several (no thread left waiting).
#[test]
fn an_error_in_the_middle_stops_the_labelers() {
    let image = random(40, 60, 50, 1, 3);
    let device = ccl::Device::open(ccl::DeviceId::Cpu).expect("cpu");
    let plan = SlabPlan::new(image.shape(), Some(40 * 4 * DEVICE_BYTES_PER_ELEMENT)).expect("plan");
    assert_eq!(plan.slabs(), 15);
    for labelers in [1, 2, 3] {
        let mut labelers: Vec<_> = (0..labelers).map(|_| device.labeler(Algorithm::TUF).expect("labeler")).collect();
        for from in [0, 7, 33, 59] {
            let source = FailingFrom { dense: slabs::Dense::new(image.values(), image.shape()), from };
            let mut out = vec![0u32; image.values().len()];
            let mut sink = slabs::DenseLabels::new(&mut out, image.shape());
            let run = slabs::label_slabs_through(&mut labelers, &plan, Connectivity::Eight, &source, &mut sink);
            assert!(
                matches!(run, Err(Error::FileRead { .. })),
                "{} labelers, failing from {from}: {run:?}",
                labelers.len()
            );
        }
    }
}

#[test]
fn bad_slab_requests_are_refused() {
    let shape = Shape::image(100, 10);
    let small = SlabPlan::new(shape, Some(100 * DEVICE_BYTES_PER_ELEMENT - 1));
    assert!(matches!(small, Err(Error::InvalidParameter { ref reason, .. }) if reason.contains("cap")), "{small:?}");
    assert!(SlabPlan::new(Shape::image(0, 10), None).is_err(), "empty array");
    let plan = SlabPlan::new(shape, Some(300 * DEVICE_BYTES_PER_ELEMENT)).expect("plan");
    assert_eq!((plan.planes_per_slab(), plan.slabs()), (3, 4));
    let mut labeler = ccl::Device::open(ccl::DeviceId::Cpu).expect("cpu").labeler(Algorithm::TUF).expect("cpu");
    let mut out = vec![0u32; 1000];
    let short = slabs::label_in_slabs(&mut labeler, &plan, &[1u8; 999], Connectivity::Eight, &mut out);
    assert!(matches!(short, Err(Error::InvalidParameter { ref name, .. }) if name == "elements"), "{short:?}");
    let wrong = slabs::label_in_slabs(&mut labeler, &plan, &[1u8; 1000], Connectivity::Six, &mut out);
    assert!(wrong.is_ok(), "an image of one slice takes 6 as 4: {wrong:?}");
    let volume = SlabPlan::new(Shape { width: 4, height: 4, depth: 4 }, None).expect("plan");
    let mut out = vec![0u32; 64];
    let planar = slabs::label_in_slabs(&mut labeler, &volume, &[1u8; 64], Connectivity::Eight, &mut out);
    assert!(matches!(planar, Err(Error::ConnectivityDimensions { .. })), "{planar:?}");
    // 32-bit labels from a base near 2^32 do not fit: refused, naming the width.
    let near = SlabPlan::new(shape, None).expect("plan").with_label_base(u64::from(u32::MAX) - 3);
    let mut out = vec![0u32; 1000];
    let over = slabs::label_in_slabs(&mut labeler, &near, &[1u8; 1000], Connectivity::Four, &mut out);
    assert!(over.is_ok(), "one component from MAX-3 fits: {over:?}");
    let stripes: Vec<u8> = (0..1000).map(|i| (i % 2) as u8).collect();
    let over = slabs::label_in_slabs(&mut labeler, &near, &stripes, Connectivity::Four, &mut out);
    assert!(matches!(over, Err(Error::InvalidParameter { ref reason, .. }) if reason.contains("32-bit")), "{over:?}");
}

#[test]
fn the_merger_numbers_sets_by_their_smallest_label() {
    let mut merger = LabelMerger::<u32>::new();
    assert_eq!(merger.add_labels(4).expect("labels"), 0);
    assert_eq!(merger.add_labels(3).expect("labels"), 4);
    merger.union_pairs(&[7, 2, 0], &[2, 5, 3]).expect("pairs");
    merger.union(6, 1);
    let (map, sets) = merger.into_consecutive();
    let numbers: Vec<u32> = (0..=7).map(|l| map.get(l)).collect();
    // Sets {1,6}, {2,5,7}, {3}, {4}: numbered by smallest label.
    assert_eq!(numbers, [0, 1, 2, 3, 4, 2, 1, 2]);
    assert_eq!(sets, 4);
    let mut merger = LabelMerger::<u32>::new();
    merger.add_labels(2).expect("labels");
    assert!(merger.union_pairs(&[3], &[1]).is_err(), "a label past N");
    assert!(merger.union_pairs(&[1, 2], &[1]).is_err(), "uneven pairs");
    assert!(merger.add_labels(u64::from(u32::MAX)).is_err(), "past 32 bits");
    let mut wide = LabelMerger::<u64>::with_base(1 << 40);
    wide.add_labels(3).expect("labels");
    wide.union((1 << 40) + 3, (1 << 40) + 1);
    let (map, sets) = wide.into_consecutive();
    assert_eq!((map.get((1 << 40) + 3), map.get((1 << 40) + 2), sets), ((1 << 40) + 1, (1 << 40) + 2, 2));
}
