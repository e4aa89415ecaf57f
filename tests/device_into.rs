//! Labeling into existing labels ([`Labeler::run_into`]) on every device: one label
//! array reused over several images and volumes gives, once relabeled, the labels of
//! [`Labeler::label`] with consecutive numbering, and labeled straight into consecutive labels, the
//! reference's; labels of another shape are refused. Borrowed device
//! memory (`borrow_image`, `borrow_labels`): refused by the CPU reference and OpenCL, labeled in
//! place on CUDA, and checked there (another device's or host memory, too short, misaligned).
//! One test per device (`cargo test --test device_into -- ::cuda` runs the CUDA ones).

mod common;

use ccl::testing::Stages;
use ccl::{
    random_volume, Algorithm, BackendError, BinaryImage, Connectivity, Error, Labeler, Numbering, Options, Phase, Shape,
};
use common::images::{random, spiral};

/// Images of one size (so that one label array takes them all), from empty to full.
fn images(width: usize, height: usize) -> Vec<(String, BinaryImage)> {
    let mut out = vec![
        ("background".to_string(), BinaryImage::image_from_fn(width, height, |_, _| false).unwrap()),
        ("foreground".to_string(), BinaryImage::image_from_fn(width, height, |_, _| true).unwrap()),
    ];
    for (density, granularity, seed) in [(10, 1, 1), (45, 1, 2), (60, 2, 3), (90, 1, 4), (50, 3, 5)] {
        out.push((format!("d{density} g{granularity}"), random(width, height, density, granularity, seed)));
    }
    out
}

device_tests! {
    labels_reused_over_many_images_equal_host_labeling: [cpu, opencl_cpu, opencl_gpu, cuda],
    consecutive_labels_into_reused_labels_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    volume_labels_reused_equal_label_volume: [cpu, opencl_cpu, opencl_gpu, cuda],
    labels_of_another_shape_are_refused_and_left_as_they_were: [cpu, opencl_cpu, opencl_gpu, cuda],
    borrowing_is_refused_where_it_cannot_work: [cpu, opencl_cpu, opencl_gpu, cuda],
    #[cfg(feature = "cuda")]
    borrowed_cuda_memory_is_labeled_in_place: [cuda],
    upload_array_equals_upload: [cpu, opencl_cpu, opencl_gpu, cuda],
    statistics_into_borrowed_memory: [cpu, opencl_cpu, opencl_gpu, cuda],
    opencv_tables_into_borrowed_memory: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn labels_reused_over_many_images_equal_host_labeling(d: &common::TestDevice) {
    let mut runs = 0;
    // First-pixel and first-block raw labels.
    for algorithm in [Algorithm::UF, Algorithm::BKE_IC] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for connectivity in algorithm.connectivities().iter().copied().filter(|c| c.dims() == 2) {
            let cases = images(131, 77);
            let first = labeler.upload(&cases[0].1).expect("upload");
            let mut labels = labeler.run(&first, &Options::new(connectivity)).expect("label").labels;
            // Relabeled before the loop: the reused array holds consecutive labels, which
            // labeling into it must replace by raw ones.
            labeler.relabel(&mut labels).expect("relabel");
            for (name, image) in &cases {
                let what = format!("{} {algorithm} {connectivity} {name}", d.token);
                let on_device = labeler.upload(image).expect("upload");
                let options = Options::new(connectivity);
                let timings = labeler.run_into(&on_device, &mut labels, &options).expect("label into").timings;
                assert_eq!(labels.numbering(), Some(Numbering::Raw(algorithm.raw_labels())), "{what}");
                assert!(!timings.phases.iter().any(|p| p.phase == Phase::Allocation), "{what}: {timings:?}");
                let raw = labeler.label(image, &Options::new(connectivity)).expect("label");
                assert_eq!(labeler.download(&labels).expect("download"), raw.labels, "{what}: raw labels");
                let (n, _) = labeler.relabel(&mut labels).expect("relabel");
                let want = labeler.label(image, &Options::new(connectivity).consecutive()).expect("label");
                assert_eq!(Some(n), want.count, "{what}: count");
                assert_eq!(labeler.download(&labels).expect("download"), want.labels, "{what}");
                runs += 1;
            }
        }
    }
    assert!(runs > 0, "{}: nothing ran", d.token);
}

/// Consecutive labels into one reused array (a consecutive `run_into`: TUF renumbers
/// in its last pass, UF labels and relabels) equal the CPU reference's renumbering, count
/// included.
fn consecutive_labels_into_reused_labels_equal_the_reference(d: &common::TestDevice) {
    let mut runs = 0;
    for algorithm in [Algorithm::TUF, Algorithm::UF] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for connectivity in [Connectivity::Four, Connectivity::Eight] {
            // Small (one tile per TUF work-group) and wide (8 tiles per work-group).
            for (width, height) in [(131, 77), (2100, 70)] {
                let cases = images(width, height);
                let first = labeler.upload(&cases[0].1).expect("upload");
                let mut labels = labeler.run(&first, &Options::new(connectivity)).expect("label").labels;
                for (name, image) in &cases {
                    let what = format!("{} {algorithm} {connectivity} {width}x{height} {name}", d.token);
                    let on_device = labeler.upload(image).expect("upload");
                    let options = Options::new(connectivity).consecutive();
                    let run = labeler.run_into(&on_device, &mut labels, &options).expect("label into, consecutive");
                    let (n, timings) = (run.count.expect("counted"), run.timings);
                    let (want, want_n) =
                        ccl::reference::label_as(image, connectivity, algorithm.raw_labels()).into_consecutive();
                    assert_eq!(n, want_n, "{what}: count");
                    assert_eq!(labels.numbering(), Some(Numbering::Consecutive(n)), "{what}");
                    assert_eq!(labeler.download(&labels).expect("download"), want, "{what}");
                    assert_eq!(timings.phases.last().map(|p| p.phase), Some(Phase::Relabel), "{what}: {timings:?}");
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 0, "{}: nothing ran", d.token);
}

fn volume_labels_reused_equal_label_volume(d: &common::TestDevice) {
    let mut labeler = d.device.labeler(Algorithm::KE).expect("labeler");
    let connectivity = Connectivity::TwentySix;
    let volumes: Vec<_> =
        [(20, 1), (45, 2), (70, 3)].iter().map(|&(p, seed)| random_volume(23, 17, 9, p, 1, seed).unwrap()).collect();
    let first = labeler.upload(&volumes[0]).expect("upload");
    let mut labels = labeler.run(&first, &Options::new(connectivity)).expect("label").labels;
    for (i, volume) in volumes.iter().enumerate() {
        let on_device = labeler.upload(volume).expect("upload");
        labeler.run_into(&on_device, &mut labels, &Options::new(connectivity)).expect("label into");
        let (n, _) = labeler.relabel(&mut labels).expect("relabel");
        let want = labeler.label(volume, &Options::new(connectivity).consecutive()).expect("label_volume");
        assert_eq!(Some(n), want.count, "{} volume {i}", d.token);
        assert_eq!(labeler.download(&labels).expect("download"), want.labels, "{} volume {i}", d.token);
    }
}

fn labels_of_another_shape_are_refused_and_left_as_they_were(d: &common::TestDevice) {
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let image = spiral(31);
    let on_device = labeler.upload(&image).unwrap();
    let eight = Options::new(Connectivity::Eight);
    let mut labels = labeler.run(&on_device, &eight.clone().consecutive()).unwrap().labels;
    let before = labeler.download(&labels).unwrap();
    // The same pixel count in another shape, and another pixel count.
    for other in [random(31 * 31, 1, 50, 1, 9), random(30, 31, 50, 1, 9)] {
        let on_device = labeler.upload(&other).unwrap();
        match labeler.run_into(&on_device, &mut labels, &eight) {
            Err(Error::ShapeMismatch { image, labels }) => {
                assert_eq!((image, labels), (Shape::image(other.width(), other.height()), Shape::image(31, 31)));
            }
            other => panic!("{}: expected ShapeMismatch, got {other:?}", d.token),
        }
    }
    let small = labeler.upload(&random(3, 5, 50, 1, 1)).unwrap();
    let message = labeler.run_into(&small, &mut labels, &eight).unwrap_err().to_string();
    assert!(message.contains("3x5") && message.contains("31x31"), "{message}");
    assert_eq!(labels.numbering(), Some(Numbering::Consecutive(1)), "{}", d.token);
    assert_eq!(labeler.download(&labels).unwrap(), before, "{}", d.token);
}

/// An address that is not device memory: every device refuses it before using it.
fn host_address(bytes: &[u8]) -> u64 {
    bytes.as_ptr() as u64
}

fn borrowing_is_refused_where_it_cannot_work(d: &common::TestDevice) {
    let host = vec![1u8; 64];
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let shape = Shape::image(8, 8);
    // SAFETY: no device uses the address: the CPU reference and OpenCL refuse to borrow,
    // CUDA refuses host memory after asking the driver about it.
    let image = unsafe { labeler.borrow_image(shape, host_address(&host), None) };
    // SAFETY: as above.
    let labels = unsafe { labeler.borrow_labels(shape, host_address(&host)) };
    for result in [image.map(|_| ()), labels.map(|_| ())] {
        match (d.token, result) {
            ("cuda", Err(Error::Backend(BackendError::InvalidMemory { reason, .. }))) => {
                assert!(reason.contains("not memory of cuda:"), "{reason}")
            }
            ("cuda", other) => panic!("cuda: expected InvalidMemory, got {other:?}"),
            (_, Err(Error::Backend(BackendError::Unsupported { what, .. }))) => {
                assert!(what.contains("borrow"), "{what}")
            }
            (token, other) => panic!("{token}: expected Unsupported, got {other:?}"),
        }
    }
    // An empty shape is refused as an upload would be, before any memory is looked at.
    // SAFETY: refused before the address is used.
    let empty = unsafe { labeler.borrow_image(Shape::image(0, 8), host_address(&host), None) }.map(|_| ());
    match (d.token, empty) {
        ("cpu", Err(Error::Backend(BackendError::Unsupported { .. }))) | (_, Err(Error::EmptyImage { .. })) => {}
        (token, other) => panic!("{token}: an empty image gave {other:?}"),
    }
    match ccl::cuda_pointer_device(host_address(&host)) {
        Err(Error::Backend(BackendError::InvalidMemory { .. }))
        | Err(Error::Backend(BackendError::Unavailable { .. })) => {}
        other => panic!("a host address: {other:?}"),
    }
}

/// Borrows device memory of another CUDA handle (as a CuPy array would be), labels it in
/// place, and reads the labels back through that handle.
#[cfg(feature = "cuda")]
fn borrowed_cuda_memory_is_labeled_in_place(d: &common::TestDevice) {
    use ccl_backend::Gpu;
    let ccl::DeviceId::Cuda(ordinal) = d.device.info().id else { unreachable!("a cuda device") };
    assert_eq!(ccl::cuda_pointer_device(0).ok(), None, "address 0 is nobody's memory");
    let owner = ccl_cuda::Runtime::new(ordinal).expect("CUDA runtime");
    for algorithm in [Algorithm::UF, Algorithm::BKE] {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        for (name, image) in images(97, 61) {
            let shape = Shape::image(image.width(), image.height());
            let mut pixels = owner.alloc(shape.len()).unwrap();
            owner.write(&mut pixels, image.values()).unwrap();
            let out = owner.alloc(shape.len() * 4).unwrap();
            let (pixels_at, out_at) = (owner.device_address(&pixels).unwrap(), owner.device_address(&out).unwrap());
            assert_eq!(ccl::cuda_pointer_device(out_at).unwrap(), ordinal);
            // SAFETY: both buffers are device memory of this device of the right sizes,
            // alive until the end of this iteration, and used by nothing else meanwhile.
            let (borrowed, mut labels) = unsafe {
                (
                    labeler.borrow_image(shape, pixels_at, Some(1)).expect("borrow image"),
                    labeler.borrow_labels(shape, out_at).expect("borrow labels"),
                )
            };
            assert_eq!(labels.numbering(), None);
            assert!(matches!(labeler.relabel(&mut labels), Err(Error::InvalidParameter { .. })));
            labeler.label_on_device_into(&borrowed, Connectivity::Eight, &mut labels).expect("label into");
            let (n, _) = labeler.relabel(&mut labels).expect("relabel");
            drop((borrowed, labels));
            let mut got = vec![0u32; shape.len()];
            owner.read(&out, bytemuck::cast_slice_mut(&mut got)).unwrap();
            let want = labeler.label(&image, &Options::new(Connectivity::Eight).consecutive()).unwrap();
            assert_eq!(Some(n), want.count, "{algorithm} {name}");
            assert_eq!(got, want.labels.values(), "{algorithm} {name}");
        }
        // Too short an allocation, a misaligned label pointer: refused before any launch.
        let small = owner.alloc(64).unwrap();
        let at = owner.device_address(&small).unwrap();
        // SAFETY: refused after asking the driver, before the memory is used.
        let long = unsafe { labeler.borrow_labels(Shape::image(30_000, 30_000), at) };
        let reason = |r: &ccl::Result<_>| match r {
            Err(Error::Backend(BackendError::InvalidMemory { reason, .. })) => reason.clone(),
            other => panic!("expected InvalidMemory, got {:?}", other.as_ref().map(|_| ())),
        };
        assert!(reason(&long).contains("past the end"));
        // SAFETY: as above.
        let odd = unsafe { labeler.borrow_labels(Shape::image(2, 2), at + 1) };
        assert!(reason(&odd).contains("aligned"));
    }
}

/// `upload_array`: a dense array of any shape copied from a borrowed slice (ordinary and
/// page-locked host memory) labels as the same image or volume uploaded from its own type does;
/// a length that does not match the shape, or an empty shape, is refused before any copy.
fn upload_array_equals_upload(d: &common::TestDevice) {
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let image = random(97, 41, 45, 1, 9);
    let mut pinned = d.device.pinned_buffer::<u8>(image.values().len()).expect("host array");
    pinned.copy_from_slice(image.values());
    let want = labeler.label(&image, &Options::new(Connectivity::Eight).consecutive()).expect("label").labels;
    for elements in [image.values(), &pinned[..]] {
        let on_device = labeler.upload_array(Shape::image(97, 41), elements).expect("upload_array");
        let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
        labeler.relabel(&mut labels).expect("relabel");
        assert_eq!(labeler.download(&labels).expect("download"), want, "{}", d.token);
    }
    let volume = random_volume(13, 11, 7, 40, 1, 5).unwrap();
    let shape = volume.shape();
    let want = labeler.label(&volume, &Options::new(Connectivity::TwentySix).consecutive()).expect("volume").labels;
    let on_device = labeler.upload_array(shape, volume.values()).expect("upload_array volume");
    let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::TwentySix).expect("label volume");
    labeler.relabel(&mut labels).expect("relabel");
    assert_eq!(labeler.download(&labels).expect("download"), want, "{}", d.token);

    let short = labeler.upload_array(Shape::image(97, 41), &image.values()[1..]).err().expect("refused");
    assert!(matches!(short, Error::SizeMismatch { .. }), "{short}");
    let short = labeler.upload_array(shape, &volume.values()[1..]).err().expect("refused");
    assert!(matches!(short, Error::VolumeSizeMismatch { .. }), "{short}");
    let empty = labeler.upload_array(Shape::image(0, 5), &[]).err().expect("refused");
    assert!(matches!(empty, Error::EmptyImage { .. }), "{empty}");
}

/// Statistics written into borrowed device memory (`component_stats_borrowed`): on CUDA, the
/// raw table equals `component_stats`' statistics for images and volumes; raw labels are refused,
/// and so is every device without borrowed memory.
fn statistics_into_borrowed_memory(d: &common::TestDevice) {
    let mut labeler = d.device.labeler(Algorithm::BKE).expect("labeler");
    let image = random(150, 70, 45, 1, 17);
    let on_device = labeler.upload(&image).expect("upload");
    let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
    // SAFETY: refused before any memory is used (raw labels).
    let raw = unsafe { labeler.component_stats_borrowed(&labels, 0, 0, 0) };
    if d.token != "cuda" {
        assert!(
            matches!(raw, Err(Error::Backend(BackendError::Unsupported { .. })) | Err(Error::InvalidParameter { .. })),
            "{raw:?}"
        );
        labeler.relabel(&mut labels).expect("relabel");
        // SAFETY: refused before any memory is used (no device memory to borrow).
        let err = unsafe { labeler.component_stats_borrowed(&labels, 0, 0, 0) };
        assert!(matches!(err, Err(Error::Backend(BackendError::Unsupported { .. }))), "{}: {err:?}", d.token);
        return;
    }
    assert!(matches!(raw, Err(Error::InvalidParameter { .. })), "{raw:?}");
    #[cfg(feature = "cuda")]
    {
        borrowed_statistics_equal_component_stats(&d.device, &mut labeler, &mut labels);
    }
}

/// A runtime of CUDA device `device` that owns the memory lent to the labeler, and the raw
/// labels of a random volume (26-connectivity).
#[cfg(feature = "cuda")]
fn cuda_runtime_and_volume(
    device: &ccl::Device,
    labeler: &mut ccl::AnyLabeler,
) -> (ccl_cuda::Runtime, ccl::DeviceLabels) {
    let ccl::DeviceId::Cuda(ordinal) = device.info().id else { unreachable!("a cuda device") };
    let owner = ccl_cuda::Runtime::new(ordinal).expect("CUDA runtime");
    let volume = random_volume(19, 13, 11, 40, 1, 3).unwrap();
    let on_device = labeler.upload(&volume).expect("upload");
    let (labels, _) = labeler.label_on_device(&on_device, Connectivity::TwentySix).expect("label");
    (owner, labels)
}

/// On a CUDA device: the raw table written into borrowed memory for `labels` (an image) and a
/// random volume equals `component_stats`' statistics.
#[cfg(feature = "cuda")]
fn borrowed_statistics_equal_component_stats(
    device: &ccl::Device,
    labeler: &mut ccl::AnyLabeler,
    labels: &mut ccl::DeviceLabels,
) {
    use ccl_backend::Gpu;
    let (owner, mut volume_labels) = cuda_runtime_and_volume(device, labeler);
    for (what, labels) in [("image", labels), ("volume", &mut volume_labels)] {
        let (n, _) = labeler.relabel(labels).expect("relabel");
        let (want, _) = labeler.component_stats(labels).expect("stats");
        let (n, axes) = (n as usize, if labels.shape().depth > 1 { 3 } else { 2 });
        let (area, boxes, sums) =
            (owner.alloc(4 * n).unwrap(), owner.alloc(8 * axes * n).unwrap(), owner.alloc(8 * axes * n).unwrap());
        let at = |b| owner.device_address(b).unwrap();
        // SAFETY: three device buffers of this device of the table's sizes, alive until read.
        unsafe { labeler.component_stats_borrowed(labels, at(&area), at(&boxes), at(&sums)) }.expect("stats");
        let (mut a, mut b, mut s) = (vec![0u32; n], vec![0u32; 2 * axes * n], vec![0u64; axes * n]);
        owner.read(&area, bytemuck::cast_slice_mut(&mut a)).unwrap();
        owner.read(&boxes, bytemuck::cast_slice_mut(&mut b)).unwrap();
        owner.read(&sums, bytemuck::cast_slice_mut(&mut s)).unwrap();
        for (k, c) in want.components.iter().enumerate() {
            assert_eq!(u64::from(a[k]), c.area, "{what} {k}");
            assert_eq!([b[k], b[n + k]], [c.left, c.top], "{what} {k}");
            assert_eq!([b[2 * n + k], b[3 * n + k]], [c.left + c.width - 1, c.top + c.height - 1], "{what} {k}");
            assert_eq!([s[k], s[n + k]], [c.sums[0], c.sums[1]], "{what} {k}");
            if axes == 3 {
                assert_eq!([b[4 * n + k], b[5 * n + k]], [c.front, c.front + c.depth - 1], "{what} {k}");
                assert_eq!(s[2 * n + k], c.sums[2], "{what} {k}");
            }
        }
    }
}

/// OpenCV's tables written into borrowed device memory (`opencv_stats_borrowed`): on CUDA they
/// equal `opencv_stats`' for an image (`dims` 2 and 3) and a volume; raw labels and `dims` that
/// do not fit the array are refused, and so is every device without borrowed memory.
fn opencv_tables_into_borrowed_memory(d: &common::TestDevice) {
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let image = random(150, 70, 45, 1, 17);
    let on_device = labeler.upload(&image).expect("upload");
    let (mut labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("label");
    // SAFETY: refused before any memory is used (raw labels).
    let raw = unsafe { labeler.opencv_stats_borrowed(&labels, 2, 0, 0) };
    labeler.relabel(&mut labels).expect("relabel");
    if d.token != "cuda" {
        assert!(
            matches!(raw, Err(Error::Backend(BackendError::Unsupported { .. })) | Err(Error::InvalidParameter { .. })),
            "{raw:?}"
        );
        // SAFETY: refused before any memory is used (no device memory to borrow).
        let err = unsafe { labeler.opencv_stats_borrowed(&labels, 2, 0, 0) };
        assert!(matches!(err, Err(Error::Backend(BackendError::Unsupported { .. }))), "{}: {err:?}", d.token);
        return;
    }
    assert!(matches!(raw, Err(Error::InvalidParameter { .. })), "{raw:?}");
    for dims in [1, 4] {
        // SAFETY: refused before any memory is used (dimensions).
        let err = unsafe { labeler.opencv_stats_borrowed(&labels, dims, 0, 0) };
        assert!(matches!(err, Err(Error::InvalidParameter { .. })), "dims {dims}: {err:?}");
    }
    #[cfg(feature = "cuda")]
    {
        borrowed_opencv_tables_equal_opencv_stats(&d.device, &mut labeler, &mut labels);
    }
}

/// On a CUDA device: OpenCV's tables written into borrowed memory for `labels` (an image, with
/// dims 2 and 3) and a random volume equal `opencv_stats`'.
#[cfg(feature = "cuda")]
fn borrowed_opencv_tables_equal_opencv_stats(
    device: &ccl::Device,
    labeler: &mut ccl::AnyLabeler,
    labels: &mut ccl::DeviceLabels,
) {
    let (owner, mut volume_labels) = cuda_runtime_and_volume(device, labeler);
    labeler.relabel(&mut volume_labels).expect("relabel");
    compare_borrowed_opencv(&owner, labeler, labels, 2, "image");
    compare_borrowed_opencv(&owner, labeler, labels, 3, "one slice");
    compare_borrowed_opencv(&owner, labeler, &mut volume_labels, 3, "volume");
}

/// `opencv_stats_borrowed` into `owner`'s memory with `dims` against `opencv_stats`.
#[cfg(feature = "cuda")]
fn compare_borrowed_opencv(
    owner: &ccl_cuda::Runtime,
    labeler: &mut ccl::AnyLabeler,
    labels: &mut ccl::DeviceLabels,
    dims: usize,
    what: &str,
) {
    use ccl_backend::Gpu;
    let (want, _) = labeler.opencv_stats(labels, dims as u8).expect("tables");
    let rows = want.rows;
    let (stats, centroids) = (owner.alloc(8 * rows * (2 * dims + 1)).unwrap(), owner.alloc(8 * rows * dims).unwrap());
    let at = |b| owner.device_address(b).unwrap();
    // SAFETY: two device buffers of this device of the tables' sizes, alive until read.
    unsafe { labeler.opencv_stats_borrowed(labels, dims as u8, at(&stats), at(&centroids)) }.expect("tables");
    let (mut s, mut c) = (vec![0i64; rows * (2 * dims + 1)], vec![0f64; rows * dims]);
    owner.read(&stats, bytemuck::cast_slice_mut(&mut s)).unwrap();
    owner.read(&centroids, bytemuck::cast_slice_mut(&mut c)).unwrap();
    assert_eq!(s, want.stats, "{what}");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&c), bits(&want.centroids), "{what}");
}
