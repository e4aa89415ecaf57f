//! `ccl::batch::label_many`: every input reaches the sink with exact labels, inputs that could
//! not be produced pass through as errors, and a panic in the sink ends the batch (a panic,
//! never a hang). The batch runs on every device, one test each (`cargo test --test batch --
//! ::cuda` runs the CUDA one).

mod common;

use std::sync::mpsc;
use std::time::Duration;

use ccl::batch::{label_many, BatchOptions};
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
