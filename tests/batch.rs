//! `ccl::batch`: every input reaches the sink with exact labels, inputs that could not be
//! produced pass through as errors, and a panic in the sink or the decoder ends the batch (a
//! panic, never a hang). `label_many` runs on every device, one test each (`cargo test --test
//! batch -- ::cuda` runs the CUDA one); `label_batch` spreads one batch over every device
//! present at once, and keeps within its bounds (images in flight, bytes of decoded images
//! waiting); the workers are made while the decoders start, and their failure is returned.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use ccl::batch::{label_batch, label_many, run_pipeline, run_pipeline_with, BatchLabeler, BatchOptions, Pool};
use ccl::{reference, Algorithm, BinaryImage, Connectivity, Device, Error, Result};
use common::images::random;

/// Tagged inputs: `n` random images, and input 3 an error (a file that could not be read, say).
fn inputs(n: u32) -> impl Iterator<Item = (u32, Result<BinaryImage>)> + Send {
    (0..n).map(|i| {
        let image = if i == 3 {
            Err(Error::EmptyImage { width: 0, height: 0 })
        } else {
            Ok(random(96, 40 + i as usize, 45, 1, i))
        };
        (i, image)
    })
}

device_tests! {
    every_input_reaches_the_sink_with_consecutive_labels_and_errors_pass_through: [cpu, opencl_cpu, opencl_gpu, cuda],
}

fn every_input_reaches_the_sink_with_consecutive_labels_and_errors_pass_through(dev: &common::TestDevice) {
    const N: u32 = 24;
    let options = BatchOptions { workers: 3, ..BatchOptions::new(Algorithm::BKE_IC, Connectivity::Eight) };
    let mut seen = vec![false; N as usize];
    label_many(&dev.device, options, inputs(N), |tag, result| {
        assert!(!seen[tag as usize], "{}: input {tag} reached the sink twice", dev.token);
        seen[tag as usize] = true;
        if tag == 3 {
            assert!(
                matches!(result, Err(Error::EmptyImage { width: 0, height: 0 })),
                "{}: input 3 should fail: {result:?}",
                dev.token
            );
            return;
        }
        let labeling = result.unwrap_or_else(|e| panic!("{}: input {tag}: {e}", dev.token));
        let image = random(96, 40 + tag as usize, 45, 1, tag);
        let (expected, count) = reference::label(&image, Connectivity::Eight).into_consecutive();
        assert_eq!(labeling.labels, expected, "{}: input {tag}: labels differ from the reference", dev.token);
        assert_eq!(labeling.count, Some(count), "{}: input {tag}: component count", dev.token);
    })
    .unwrap();
    assert!(seen.iter().all(|s| *s), "{}: inputs missing from the sink: {seen:?}", dev.token);
}

#[test]
fn a_panicking_sink_ends_the_batch_instead_of_hanging() {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let device = Device::open("cpu".parse().unwrap()).unwrap();
        let options = BatchOptions { workers: 2, ..BatchOptions::new(Algorithm::UF, Connectivity::Four) };
        // Many more inputs than the channels hold, so the producer is still sending when the
        // sink panics.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = label_many(&device, options, inputs(200), |_, _| panic!("the sink fails"));
        }));
        let _ = done_tx.send(outcome.is_err());
    });
    match done_rx.recv_timeout(Duration::from_secs(120)) {
        Ok(panicked) => assert!(panicked, "the sink's panic should reach the caller"),
        Err(_) => panic!("label_many hung after its sink panicked"),
    }
}

/// The image of input `i` of [`label_batch`]'s tests (sizes vary, so the labelers' staging
/// buffers grow and are reused).
fn image_of(i: u32) -> Result<BinaryImage> {
    if i == 3 {
        Err(Error::EmptyImage { width: 0, height: 0 })
    } else {
        Ok(random(64 + (i as usize % 5) * 16, 40 + i as usize, 45, 1, i))
    }
}

#[test]
fn a_batch_over_several_devices_labels_every_image_as_alone() {
    const N: u32 = 40;
    let present = common::shared_devices();
    let devices: Vec<Device> =
        present.iter().filter(|d| d.token == "cpu" || d.token == "opencl-cpu").map(|d| d.device.clone()).collect();
    if !present.iter().any(|d| d.token == "opencl-cpu") {
        assert!(!common::is_required("opencl-cpu"), "CCL_REQUIRE_BACKENDS requires opencl-cpu, which is not present");
        eprintln!("note: no OpenCL CPU device; the batch runs on the CPU reference alone");
    }
    let options = BatchOptions { workers: 2, jobs: 3, ..BatchOptions::new(Algorithm::BKE_IC, Connectivity::Eight) };
    let seen = Mutex::new(vec![false; N as usize]);
    label_batch(
        &devices,
        &options,
        0..N,
        |&i| image_of(i),
        |i, result| {
            assert!(
                !std::mem::replace(&mut seen.lock().unwrap()[i as usize], true),
                "input {i} reached the sink twice"
            );
            if i == 3 {
                assert!(matches!(result, Err(Error::EmptyImage { .. })), "input 3 should fail: {result:?}");
                return;
            }
            let labeling = result.unwrap_or_else(|e| panic!("input {i}: {e}"));
            let (expected, count) = reference::label(&image_of(i).unwrap(), Connectivity::Eight).into_consecutive();
            assert_eq!(labeling.labels, expected, "input {i}: labels differ from the image labeled alone");
            assert_eq!(labeling.count, Some(count), "input {i}: component count");
            // Filled again by a later input, of another size.
            options.spares.give(labeling.labels);
        },
    )
    .unwrap();
    assert!(seen.into_inner().unwrap().iter().all(|s| *s), "inputs missing from the sink");
}

#[test]
fn no_more_images_than_the_bound_are_in_flight() {
    let device = Device::open("cpu".parse().unwrap()).unwrap();
    let options = BatchOptions {
        workers: 3,
        jobs: 3,
        max_in_flight: Some(2),
        ..BatchOptions::new(Algorithm::UF, Connectivity::Four)
    };
    let (live, peak, done) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let labelers = options.labelers(&[device]).unwrap();
    let work = |l: &mut BatchLabeler, image: BinaryImage| {
        let now = live.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(now, Ordering::SeqCst);
        l.label(&image, &options.run)
    };
    run_pipeline(
        options.pool(3),
        // Inputs that all decode (input 3 would reach the sink without work).
        4..34u32,
        |&i| image_of(i),
        labelers,
        work,
        |_, _| {
            std::thread::sleep(Duration::from_millis(5));
            done.fetch_add(1, Ordering::SeqCst);
            live.fetch_sub(1, Ordering::SeqCst);
        },
    );
    assert_eq!(done.into_inner(), 30, "every input reaches the sink");
    let peak = peak.into_inner();
    assert!((1..=2).contains(&peak), "{peak} images were in flight at once; the bound is 2");
}

#[test]
fn decoded_images_waiting_for_a_worker_stay_within_their_bytes() {
    // Images of 1000 bytes, room for 2.5 of them, 3 decoders and one slow worker: at most 2
    // wait when a decoder looks for room, and each of the 3 may add one.
    let pool = Pool { jobs: 3, max_in_flight: 4, max_waiting_bytes: 2500 };
    let (waiting, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let decode = |_: &u32| {
        let image = BinaryImage::image(100, 10, vec![1; 1000]);
        peak.fetch_max(waiting.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        image
    };
    let work = |_: &mut (), image: BinaryImage| {
        waiting.fetch_sub(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(2));
        Ok(image.values().len())
    };
    let done = AtomicUsize::new(0);
    run_pipeline(pool, 0..40u32, decode, vec![()], work, |_, r| {
        assert_eq!(r.unwrap(), 1000);
        done.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(done.into_inner(), 40);
    let peak = peak.into_inner();
    assert!((1..=5).contains(&peak), "{peak} decoded images waited at once; at most 2 + 3 should");
}

#[test]
fn workers_are_made_while_the_decoders_start_and_their_failure_is_returned() {
    let decoded = AtomicUsize::new(0);
    let decode = |&i: &u32| {
        decoded.fetch_add(1, Ordering::SeqCst);
        image_of(i)
    };
    // Workers made only once 4 images are decoded: the decoders cannot be waiting for them.
    let slow_to_make = || {
        let start = std::time::Instant::now();
        while decoded.load(Ordering::SeqCst) < 4 {
            assert!(start.elapsed() < Duration::from_secs(60), "the decoders waited for the workers");
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(vec![(); 2])
    };
    let done = AtomicUsize::new(0);
    let pool = Pool::new(2, 2);
    run_pipeline_with(
        pool,
        0..20u32,
        decode,
        slow_to_make,
        |_, image| Ok(image),
        |_, _| {
            done.fetch_add(1, Ordering::SeqCst);
        },
    )
    .unwrap();
    assert_eq!(done.into_inner(), 20, "every input reaches the sink");

    // Workers that cannot be made: their error, no result in the sink, no hang.
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let fail = || Err::<Vec<()>, _>(Error::InvalidParameter { name: "devices".into(), reason: "none".into() });
        let outcome = run_pipeline_with(
            Pool::new(2, 1),
            0..200u32,
            |&i| image_of(i),
            fail,
            |_, image| Ok(image),
            |i, _| panic!("input {i} reached the sink without workers"),
        );
        let _ = done_tx.send(outcome);
    });
    match done_rx.recv_timeout(Duration::from_secs(120)) {
        Ok(outcome) => assert!(matches!(outcome, Err(Error::InvalidParameter { .. })), "{outcome:?}"),
        Err(_) => panic!("run_pipeline_with hung after its workers failed"),
    }
}

#[test]
fn a_panicking_decoder_ends_the_batch_instead_of_hanging() {
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let device = Device::open("cpu".parse().unwrap()).unwrap();
        let options = BatchOptions { jobs: 2, ..BatchOptions::new(Algorithm::UF, Connectivity::Four) };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let decode = |&i: &u32| if i == 7 { panic!("the decoder fails") } else { image_of(i) };
            let _ = label_batch(&[device], &options, 0..200u32, decode, |_, _| {});
        }));
        let _ = done_tx.send(outcome.is_err());
    });
    match done_rx.recv_timeout(Duration::from_secs(120)) {
        Ok(panicked) => assert!(panicked, "the decoder's panic should reach the caller"),
        Err(_) => panic!("label_batch hung after its decoder panicked"),
    }
}
