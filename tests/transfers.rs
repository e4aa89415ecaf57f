//! Copies between host memory and device buffers of every size around the OpenCL backend's
//! staging thresholds (backends/opencl/src/staging.rs: uploads of 16 MiB and up, downloads of 4 MiB
//! and up staged in 16 MiB chunks),
//! from and into ordinary memory and memory of `alloc_host`'s, with staging on and off: every
//! byte round-trips, and the copies that should be staged are, the others not; so do large
//! copies from several threads at once (on one runtime and on queues of it). Then a large
//! image labeled through upload, run and download on every device equals the CPU reference,
//! from ordinary and page-locked memory, and streamed in pieces (also when the pieces' sink
//! fails). `cargo test --test transfers -- ::opencl_cpu` runs the
//! POCL ones.

mod common;

use ccl::{Algorithm, Connectivity, Labeler, Options};
use common::images::random;

device_tests! {
    a_large_image_labels_as_the_reference_through_host_memory: [cpu, opencl_cpu, opencl_gpu, cuda],
    a_failing_sink_stops_a_streamed_download_with_its_own_error: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// A 4096 x 4096 image (16 MiB up, 64 MiB of labels down: staged on OpenCL, and on CUDA) from
/// ordinary memory and from the device's page-locked memory, labeled, and its raw labels
/// downloaded into both: they equal the CPU reference's.
fn a_large_image_labels_as_the_reference_through_host_memory(d: &common::TestDevice) {
    let n = 4096;
    let image = random(n, n, 45, 1, 21);
    let algorithm = Algorithm::UF;
    let connectivity = Connectivity::Eight;
    let want = ccl::reference::label_as(&image, connectivity, algorithm.raw_labels());
    let mut labeler = d.device.labeler_for(algorithm, connectivity).expect("labeler");
    let mut pinned = d.device.pinned_buffer::<u8>(image.values().len()).expect("host array");
    pinned.copy_from_slice(image.values());
    let mut pinned_labels = d.device.pinned_buffer::<u32>(image.values().len()).expect("host labels");
    for (from, elements) in [("ordinary", image.values()), ("page-locked", &pinned[..])] {
        let on_device = labeler.upload_array(image.shape(), elements).expect("upload");
        let labels = labeler.run(&on_device, &Options::new(connectivity)).expect("label").labels;
        let what = format!("{}: image from {from} memory", d.token);
        assert!(labeler.download(&labels).expect("download") == want, "{what}: labels into ordinary memory");
        labeler.download_into(&labels, &mut pinned_labels).expect("download into page-locked memory");
        assert!(pinned_labels[..] == *want.values(), "{what}: labels into page-locked memory");
        let pieces = streamed(&mut labeler, &labels);
        assert!(pieces.len() == 4, "{what}: {} pieces of 16 MiB streamed, not 4", pieces.len());
        assert!(pieces.concat() == *want.values(), "{what}: labels streamed in pieces");
    }
}

/// The pieces `download_pieces` hands its sink, each checked against the promised bound.
fn streamed(labeler: &mut ccl::AnyLabeler, labels: &ccl::DeviceLabels) -> Vec<Vec<u32>> {
    let mut pieces = Vec::new();
    labeler
        .download_pieces(labels, &mut |piece| {
            assert!(!piece.is_empty() && piece.len() <= ccl::LABEL_PIECE, "a piece of {} labels", piece.len());
            pieces.push(piece.to_vec());
            Ok(())
        })
        .expect("streamed download");
    pieces
}

/// A sink that fails at the second piece of a streamed download of 36 MiB of labels (three
/// pieces) stops it with its own error; the labeler then downloads them whole and in pieces
/// again (nothing left pending in its staging).
fn a_failing_sink_stops_a_streamed_download_with_its_own_error(d: &common::TestDevice) {
    let (width, height) = (3072, 3072);
    let image = random(width, height, 50, 1, 7);
    let connectivity = Connectivity::Four;
    let (want, _) = ccl::reference::label(&image, connectivity).to_consecutive();
    let mut labeler = d.device.labeler_for(Algorithm::UF, connectivity).expect("labeler");
    let on_device = labeler.upload(&image).expect("upload");
    let labels = labeler.run(&on_device, &Options::new(connectivity).consecutive()).expect("label").labels;
    let mut seen = 0;
    let failed = labeler.download_pieces(&labels, &mut |_| {
        seen += 1;
        match seen {
            2 => Err(ccl::Error::InvalidParameter { name: "sink".into(), reason: "full".into() }),
            _ => Ok(()),
        }
    });
    assert_eq!(seen, 2, "{}: pieces after the sink failed", d.token);
    match failed {
        Err(ccl::Error::InvalidParameter { name, .. }) => assert_eq!(name, "sink", "{}", d.token),
        other => panic!("{}: the sink's error, not {other:?}", d.token),
    }
    assert!(labeler.download(&labels).expect("download") == want, "{}: whole after the failure", d.token);
    assert!(streamed(&mut labeler, &labels).concat() == *want.values(), "{}: in pieces after the failure", d.token);
}

#[cfg(feature = "opencl")]
mod opencl {
    use ccl_backend::Gpu;

    const MIB: usize = 1 << 20;
    /// Around the thresholds: below, at and past 4 MiB, past one and two 16 MiB chunks, none a
    /// multiple of a chunk but one.
    const SIZES: [usize; 7] = [1, 4 * MIB - 1, 4 * MIB, 16 * MIB, 16 * MIB + 3, 32 * MIB + 1, 40 * MIB + 5];

    /// `len` bytes no buffer holds by chance, none repeating at any chunk's offset (the top
    /// byte of a multiplicative hash of the index).
    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len as u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8 ^ seed).collect()
    }

    crate::device_tests! {
        opencl;
        every_size_round_trips_and_large_copies_of_ordinary_memory_are_staged: [opencl_cpu, opencl_gpu],
        staged_copies_from_several_threads_round_trip: [opencl_cpu, opencl_gpu],
    }

    /// Staged copies of one write and one read of `len` bytes of ordinary memory: uploads of
    /// 16 MiB and more, downloads of 4 MiB and more (backends/opencl/src/staging.rs).
    fn expected_staged(stage: bool, len: usize) -> u64 {
        u64::from(stage && len >= 16 * MIB) + u64::from(stage && len >= 4 * MIB)
    }

    fn every_size_round_trips_and_large_copies_of_ordinary_memory_are_staged(desc: &ccl_opencl::DeviceDesc) {
        let device = &desc.name;
        for stage in [true, false] {
            let gpu =
                ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device").with_staging(stage);
            for (i, &len) in SIZES.iter().enumerate() {
                let what = format!("{device}: {len} bytes, staging {}", if stage { "on" } else { "off" });
                let data = pattern(len, i as u8);
                // A buffer two bytes longer: a copy covers its first `len` bytes only.
                let mut buffer = gpu.alloc(len + 2).expect("alloc");
                let staged = gpu.staged_copies();
                gpu.write(&mut buffer, &data).expect("write");
                let mut out = vec![0u8; len];
                gpu.read(&buffer, &mut out).expect("read");
                assert!(out == data, "{what}: ordinary memory did not round-trip");
                let want = expected_staged(stage, len);
                assert_eq!(gpu.staged_copies() - staged, want, "{what}: staged copies");

                // In pieces: in order, each 8-byte aligned and at most READ_PIECE bytes.
                let mut pieces = Vec::new();
                gpu.read_pieces(&buffer, len, &mut |piece| {
                    assert!(piece.len() <= ccl_backend::READ_PIECE, "{what}: a piece of {} bytes", piece.len());
                    assert!((piece.as_ptr() as usize).is_multiple_of(8), "{what}: a piece not 8-byte aligned");
                    pieces.extend_from_slice(piece);
                    Ok(())
                })
                .expect("read in pieces");
                assert!(pieces == data, "{what}: pieces did not round-trip");

                // From and into alloc_host's memory: never staged.
                let mut host = gpu.alloc_host(len).expect("alloc_host");
                host.as_mut_slice().copy_from_slice(&pattern(len, i as u8 + 100));
                let staged = gpu.staged_copies();
                gpu.write(&mut buffer, host.as_slice()).expect("write from alloc_host");
                gpu.read(&buffer, &mut out).expect("read");
                assert!(out[..] == *host.as_slice(), "{what}: from alloc_host's memory");
                gpu.write(&mut buffer, &data).expect("write");
                gpu.read(&buffer, host.as_mut_slice()).expect("read into alloc_host");
                assert!(*host.as_slice() == data[..], "{what}: into alloc_host's memory");
                let want = expected_staged(stage, len);
                assert_eq!(gpu.staged_copies() - staged, want, "{what}: only the ordinary memory's copies staged");
            }
        }
    }

    /// Large copies from several threads at once, on queues of their own and two on one runtime
    /// (whose staging buffers they then take in turn), each round-trip their own bytes.
    fn staged_copies_from_several_threads_round_trip(desc: &ccl_opencl::DeviceDesc) {
        let gpu = ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device").with_staging(true);
        let queues: Vec<Box<dyn Gpu>> = (0..2).map(|_| gpu.new_queue().expect("queue")).collect();
        let handles: Vec<&dyn Gpu> =
            [&gpu as &dyn Gpu, &gpu].into_iter().chain(queues.iter().map(|q| q.as_ref())).collect();
        let len = 20 * MIB + 7;
        std::thread::scope(|scope| {
            for (t, handle) in handles.into_iter().enumerate() {
                scope.spawn(move || {
                    for round in 0..3u8 {
                        let data = pattern(len, t as u8 * 16 + round);
                        let mut buffer = handle.alloc(len).expect("alloc");
                        handle.write(&mut buffer, &data).expect("write");
                        let mut out = vec![0u8; len];
                        handle.read(&buffer, &mut out).expect("read");
                        assert!(out == data, "{}: thread {t}, round {round}", desc.name);
                    }
                });
            }
        });
        assert_eq!(gpu.staged_copies(), 2 * 2 * 3, "{}: the runtime's own threads' copies", desc.name);
    }
}
