//! Labeling many images: a pipeline in which the images come from an iterator on one thread
//! (decoding, say), several labelers of one device label them in parallel (each on its own
//! queue or stream, so one's copies overlap another's kernels), and each result goes to a sink
//! on the caller's thread (writing a file, say) as soon as it is ready. The three stages run at
//! the same time; a failed image is reported to the sink and the others go on.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use crate::{Algorithm, BinaryImage, Connectivity, Device, LabelImage, Labeler, Options, Result, Run};

/// How to label a batch.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The stages of each image's run: connectivity, numbering, statistics, filters.
    pub run: Options,
    /// Labelers working at once (each with its own queue or stream); at least 1.
    pub workers: usize,
}

impl BatchOptions {
    /// Consecutive labels, two labelers.
    pub fn new(algorithm: Algorithm, connectivity: Connectivity) -> Self {
        Self { algorithm, run: Options::new(connectivity).consecutive(), workers: 2 }
    }
}

/// Labels every image of `inputs` on `device` and hands each result, with its tag, to `sink`
/// on the calling thread, in the order they finish. An input the iterator could not produce
/// (`Err`) is passed on to the sink as it is. Fails only when no labeler can be made.
pub fn label_many<T, I, S>(device: &Device, options: BatchOptions, inputs: I, mut sink: S) -> Result<()>
where
    T: Send,
    I: Iterator<Item = (T, Result<BinaryImage>)> + Send,
    S: FnMut(T, Result<Run<LabelImage>>),
{
    let workers = options.workers.max(1);
    // Labelers are made first: a device or compiler problem fails the batch before it starts.
    let labelers = (0..workers)
        .map(|_| device.labeler_for(options.algorithm, options.run.connectivity))
        .collect::<Result<Vec<_>>>()?;
    let (input_tx, input_rx) = sync_channel::<(T, Result<BinaryImage>)>(workers);
    // Shared by the workers only, so that it is dropped when the last of them ends (even by a
    // panic) and the producer's `send` fails instead of waiting forever.
    let input_rx = Arc::new(Mutex::new(input_rx));
    let (output_tx, output_rx) = sync_channel::<(T, Result<Run<LabelImage>>)>(workers);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for item in inputs {
                if input_tx.send(item).is_err() {
                    break;
                }
            }
        });
        for mut labeler in labelers {
            let (input_rx, output_tx, run_options) = (input_rx.clone(), output_tx.clone(), options.run.clone());
            scope.spawn(move || {
                while let Some((tag, image)) = next(&input_rx) {
                    let result = image.and_then(|image| labeler.label(&image, &run_options));
                    if output_tx.send((tag, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop((input_rx, output_tx));
        for (tag, result) in output_rx {
            sink(tag, result);
        }
    });
    Ok(())
}

/// The next input for a worker; `None` when the inputs are exhausted.
fn next<T>(input: &Mutex<Receiver<T>>) -> Option<T> {
    input.lock().unwrap_or_else(|p| p.into_inner()).recv().ok()
}
