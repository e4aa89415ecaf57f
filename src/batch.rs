//! Labeling many images: a pipeline of three stages that run at the same time.
//!
//! 1. **Decode**: a pool of [`Pool::jobs`] threads takes the inputs in turn and turns each into
//!    an image (reading and decoding a file, say) with the caller's decoder.
//! 2. **Label**: [`BatchOptions::workers`] labelers per device, on any number of devices (any
//!    mix of backends), each on its own queue or stream; every labeler takes the next decoded
//!    image as soon as it is free, so a faster device labels more of them. On a GPU each labeler
//!    copies through page-locked staging buffers of its own, kept from one image to the next.
//! 3. **Sink**: another pool of [`Pool::jobs`] threads hands each result, with its input, to the
//!    caller's sink (encoding and writing a file, say) as soon as it is ready, in the order they
//!    finish ([`label_many`] calls its sink on the caller's thread instead).
//!
//! **Memory is bounded**: at most [`Pool::max_in_flight`] inputs are in the pipeline at once,
//! counted from the moment a decoder takes one to the moment the sink returns from its result;
//! a decoder waits for one to leave before it takes the next. So at most that many decoded
//! images and label arrays (4 bytes a pixel) exist at once, besides the staging buffers of the
//! labelers and what decoders and sinks hold while they work.
//!
//! **Failures are isolated**: an input that cannot be decoded or labeled reaches the sink as an
//! `Err`, and the others go on. A panic in the decoder, a labeler or the sink stops the intake
//! and reaches the caller once the threads have ended: never a hang.
//!
//! [`label_batch`] labels with devices; [`run_pipeline`] runs any per-device work (binarizing
//! pages, say) with the same decode and sink pools and the same bound.
//!
//! ```no_run
//! use std::path::PathBuf;
//! use ccl::batch::{label_batch, BatchOptions};
//! use ccl::{io, Algorithm, Connectivity, Device, DeviceId};
//!
//! let devices = [Device::open(DeviceId::Cpu)?, Device::auto()?];
//! let options = BatchOptions::new(Algorithm::BKE_IC, Connectivity::Eight);
//! let files: Vec<PathBuf> = vec!["a.png".into(), "b.png".into()];
//! let read = io::ReadOptions::default();
//! label_batch(&devices, &options, files, |path| io::read_image(path, &read).map(|d| d.image), |path, run| {
//!     match run.and_then(|run| io::write_labels(&path.with_extension("npy"), &run.labels)) {
//!         Ok(()) => println!("{}: done", path.display()),
//!         Err(e) => eprintln!("{}: {e}", path.display()),
//!     }
//! })?;
//! # Ok::<(), ccl::Error>(())
//! ```

use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::{
    run_host, Algorithm, AnyLabeler, BinaryImage, Connectivity, Device, DeviceId, Element, Error, LabelImage, Labeler,
    Options, PinnedBuffer, Result, Run,
};

/// The host side of a pipeline: its threads and how many inputs it holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Decoding threads, and as many sink threads; at least 1.
    pub jobs: usize,
    /// Inputs in the pipeline at once (taken by a decoder, their result not yet through the
    /// sink); at least 1.
    pub max_in_flight: usize,
}

impl Pool {
    /// `jobs` threads a stage and, for `labelers` labelers in all, at most `2 × (jobs +
    /// labelers)` inputs at once: enough that every thread has one and the next is ready.
    pub fn new(jobs: usize, labelers: usize) -> Self {
        let jobs = jobs.max(1);
        Pool { jobs, max_in_flight: 2 * (jobs + labelers.max(1)) }
    }
}

/// The number of threads the machine runs at once (1 when it cannot tell): the default of
/// [`BatchOptions::jobs`].
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Labelers a device by default ([`BatchOptions::workers`]): enough that while one waits for
/// its copies and kernels the others turn their images over on the host (copying into their
/// staging buffers, taking their labels out into new arrays), which on a fast GPU is most of an
/// image's time. On the H200 machine, 200 pages of 2048x2048 took 0.62 s with 2 labelers and
/// 0.49 s with 4 (bench-results/h200/issue51-folder/).
pub const WORKERS_PER_DEVICE: usize = 4;

/// How to label a batch.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The stages of each image's run: connectivity, numbering, statistics, filters.
    pub run: Options,
    /// Labelers working at once on each device (each with its own queue or stream); at least 1.
    pub workers: usize,
    /// Decoding threads, and as many sink threads ([`Pool::jobs`]); at least 1.
    pub jobs: usize,
    /// Inputs in the pipeline at once ([`Pool::max_in_flight`]); `None`: [`Pool::new`]'s.
    pub max_in_flight: Option<usize>,
}

impl BatchOptions {
    /// Consecutive labels, [`WORKERS_PER_DEVICE`] labelers a device, a thread a core for
    /// decoding and as many for the sink, [`Pool::new`]'s bound.
    pub fn new(algorithm: Algorithm, connectivity: Connectivity) -> Self {
        Self {
            algorithm,
            run: Options::new(connectivity).consecutive(),
            workers: WORKERS_PER_DEVICE,
            jobs: cores(),
            max_in_flight: None,
        }
    }

    /// The pool for `labelers` labelers in all.
    pub fn pool(&self, labelers: usize) -> Pool {
        let pool = Pool::new(self.jobs, labelers);
        Pool { max_in_flight: self.max_in_flight.unwrap_or(pool.max_in_flight).max(1), ..pool }
    }

    /// [`BatchOptions::workers`] labelers on every device of `devices`, made now (a device or
    /// compiler problem fails here, before any input is taken), interleaved by device. They are
    /// made at once, a thread each: each loads its kernels and runs them once (on the H200
    /// machine 20 ms a labeler, which one after the other held up the start of a folder).
    fn labelers(&self, devices: &[Device]) -> Result<Vec<StagedLabeler>> {
        if devices.is_empty() {
            return Err(Error::InvalidParameter { name: "devices".into(), reason: "a batch needs a device".into() });
        }
        let (algorithm, connectivity) = (self.algorithm, self.run.connectivity);
        let order: Vec<&Device> = (0..self.workers.max(1)).flat_map(|_| devices.iter()).collect();
        std::thread::scope(|scope| {
            let making: Vec<_> = order
                .iter()
                .map(|&device| scope.spawn(move || StagedLabeler::new(device, algorithm, connectivity)))
                .collect();
            making.into_iter().map(|m| m.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
        })
    }
}

/// A labeler with the page-locked buffers it copies through (on a GPU; none on the CPU
/// reference, which labels host memory), grown to the largest image so far.
struct StagedLabeler {
    labeler: AnyLabeler,
    device: Option<Device>,
    input: Option<PinnedBuffer<u8>>,
    output: Option<PinnedBuffer<u32>>,
}

impl StagedLabeler {
    fn new(device: &Device, algorithm: Algorithm, connectivity: Connectivity) -> Result<Self> {
        let labeler = device.labeler_for(algorithm, connectivity)?;
        let device = (device.info().id != DeviceId::Cpu).then(|| device.clone());
        Ok(StagedLabeler { labeler, device, input: None, output: None })
    }

    /// Host in, host out, as [`Labeler::label`].
    fn label(&mut self, image: &BinaryImage, options: &Options) -> Result<Run<LabelImage>> {
        let StagedLabeler { labeler, device, input, output } = self;
        let Some(device) = device else {
            return labeler.label(image, options);
        };
        let n = image.values().len();
        let staged = staging(device, input, n)?;
        staged.copy_from_slice(image.values());
        let staged = &*staged;
        let output = staging(device, output, n)?;
        run_host(
            labeler,
            options,
            |l| l.upload_array(image.shape(), staged),
            |l, labels| {
                l.download_into(labels, output)?;
                LabelImage::new(labels.shape(), output.to_vec())
            },
        )
    }
}

/// The first `n` elements of the buffer in `slot`, made (or remade larger) on `device` first.
fn staging<'a, T: Element>(device: &Device, slot: &'a mut Option<PinnedBuffer<T>>, n: usize) -> Result<&'a mut [T]> {
    if slot.as_ref().is_none_or(|b| b.len() < n) {
        *slot = None;
        *slot = Some(device.pinned_buffer(n)?);
    }
    Ok(&mut slot.as_mut().expect("made above")[..n])
}

/// Labels every item of `items` on `devices` and hands each result, with its item, to `sink`.
/// `decode` makes an item's image on the decoding pool ([`BatchOptions::jobs`] threads);
/// [`BatchOptions::workers`] labelers per device label them (each takes the next image when it
/// is free); `sink` runs on the sink pool (as many threads), in the order the results finish.
/// At most [`BatchOptions::pool`]'s `max_in_flight` items are between `decode` and the end of
/// `sink` at once. An item `decode` or a labeler fails reaches `sink` as an `Err`; the others go
/// on. Fails only when a labeler cannot be made (before any item is taken) or `devices` is
/// empty. The labels are those of each image labeled alone, on any of the devices.
pub fn label_batch<T, I, D, S>(devices: &[Device], options: &BatchOptions, items: I, decode: D, sink: S) -> Result<()>
where
    T: Send,
    I: IntoIterator<Item = T>,
    I::IntoIter: Send,
    D: Fn(&T) -> Result<BinaryImage> + Sync,
    S: Fn(T, Result<Run<LabelImage>>) + Sync,
{
    let labelers = options.labelers(devices)?;
    let pool = options.pool(labelers.len());
    let run = &options.run;
    run_pipeline(pool, items, decode, labelers, |l, image| l.label(&image, run), sink);
    Ok(())
}

/// Labels every image of `inputs` on `device` and hands each result, with its tag, to `sink`
/// on the calling thread, in the order they finish: [`label_batch`] on one device for inputs
/// that come decoded from an iterator (which runs on the decoding pool, one call at a time), and
/// a sink that need not be `Sync`. An input the iterator could not produce (`Err`) is passed on
/// to the sink as it is. Fails only when no labeler can be made.
pub fn label_many<T, I, S>(device: &Device, options: BatchOptions, inputs: I, mut sink: S) -> Result<()>
where
    T: Send,
    I: Iterator<Item = (T, Result<BinaryImage>)> + Send,
    S: FnMut(T, Result<Run<LabelImage>>),
{
    let labelers = options.labelers(std::slice::from_ref(device))?;
    let pool = options.pool(labelers.len());
    let run = &options.run;
    let work = |l: &mut StagedLabeler, image: BinaryImage| l.label(&image, run);
    stages(pool, inputs, &|input| input, labelers, &work, Sink::Caller(&mut sink));
    Ok(())
}

/// The pipeline of [`label_batch`] with any work: `decode` makes each item's input on the
/// decoding pool (`pool.jobs` threads), each of `workers` (a labeler, a binarizer: one per
/// queue or stream) takes the next input when it is free and runs `work` on it, and `sink`
/// receives each item with its result on the sink pool (`pool.jobs` threads). At most
/// `pool.max_in_flight` items are between `decode` and the end of `sink` at once. An `Err` of
/// `decode` reaches `sink` without `work`; a panic anywhere stops the intake and reaches the
/// caller once every thread has ended.
pub fn run_pipeline<T, In, Out, W, I, D, F, S>(pool: Pool, items: I, decode: D, workers: Vec<W>, work: F, sink: S)
where
    T: Send,
    In: Send,
    Out: Send,
    W: Send,
    I: IntoIterator<Item = T>,
    I::IntoIter: Send,
    D: Fn(&T) -> Result<In> + Sync,
    F: Fn(&mut W, In) -> Result<Out> + Sync,
    S: Fn(T, Result<Out>) + Sync,
{
    let decode = |item: T| {
        let input = decode(&item);
        (item, input)
    };
    stages(pool, items.into_iter(), &decode, workers, &work, Sink::Pool(&sink));
}

/// Where results go: a pool of threads, or the caller's thread.
enum Sink<'a, T, Out> {
    Pool(&'a (dyn Fn(T, Result<Out>) + Sync)),
    Caller(&'a mut dyn FnMut(T, Result<Out>)),
}

/// The bound on the inputs in flight: permits that decoders take and the sink gives back, and a
/// stop that a panicking thread pulls so that no decoder waits for a permit forever.
struct Gate {
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl Gate {
    fn new(permits: usize) -> Self {
        Gate { state: Mutex::new((permits.max(1), false)), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, (usize, bool)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a permit, waiting for one; false once stopped.
    fn enter(&self) -> bool {
        let mut state = self.lock();
        while state.0 == 0 && !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        if state.1 {
            return false;
        }
        state.0 -= 1;
        true
    }

    /// Gives a permit back.
    fn leave(&self) {
        self.lock().0 += 1;
        self.changed.notify_one();
    }

    fn stop(&self) {
        self.lock().1 = true;
        self.changed.notify_all();
    }
}

/// Stops the gate when the thread holding it unwinds from a panic.
struct StopOnPanic<'a>(&'a Gate);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// The next message of a receiver shared by several threads; `None` when every sender is gone.
fn next<M>(receiver: &Mutex<Receiver<M>>) -> Option<M> {
    receiver.lock().unwrap_or_else(|p| p.into_inner()).recv().ok()
}

/// The three stages. The channels need no bound of their own: the gate's permits bound what
/// they hold. Every thread ends when its source is exhausted or its consumers are gone, so a
/// panic anywhere (which also stops the gate) unwinds the whole pipeline.
fn stages<T, U, In, Out, W, I>(
    pool: Pool,
    items: I,
    decode: &(dyn Fn(T) -> (U, Result<In>) + Sync),
    workers: Vec<W>,
    work: &(dyn Fn(&mut W, In) -> Result<Out> + Sync),
    sink: Sink<'_, U, Out>,
) where
    T: Send,
    U: Send,
    In: Send,
    Out: Send,
    W: Send,
    I: Iterator<Item = T> + Send,
{
    let gate = Gate::new(pool.max_in_flight);
    let items = Mutex::new(items);
    let (input_tx, input_rx) = channel::<(U, Result<In>)>();
    let input_rx = Arc::new(Mutex::new(input_rx));
    let (output_tx, output_rx) = channel::<(U, Result<Out>)>();
    std::thread::scope(|scope| {
        let (gate, items) = (&gate, &items);
        for _ in 0..pool.jobs.max(1) {
            let input_tx = input_tx.clone();
            scope.spawn(move || {
                let _stop = StopOnPanic(gate);
                while gate.enter() {
                    let item = items.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some(item) = item else {
                        gate.leave();
                        break;
                    };
                    if input_tx.send(decode(item)).is_err() {
                        break;
                    }
                }
            });
        }
        for mut worker in workers {
            let (input_rx, output_tx) = (input_rx.clone(), output_tx.clone());
            scope.spawn(move || {
                let _stop = StopOnPanic(gate);
                while let Some((tag, input)) = next(&input_rx) {
                    let result = input.and_then(|input| work(&mut worker, input));
                    if output_tx.send((tag, result)).is_err() {
                        break;
                    }
                }
            });
        }
        // Only the threads hold the channels now, so each stage ends when the one before does
        // (or when the one after is gone).
        drop((input_tx, input_rx, output_tx));
        match sink {
            Sink::Pool(sink) => {
                let output_rx = Arc::new(Mutex::new(output_rx));
                for _ in 0..pool.jobs.max(1) {
                    let output_rx = output_rx.clone();
                    scope.spawn(move || {
                        let _stop = StopOnPanic(gate);
                        while let Some((tag, result)) = next(&output_rx) {
                            sink(tag, result);
                            gate.leave();
                        }
                    });
                }
            }
            Sink::Caller(sink) => {
                let _stop = StopOnPanic(gate);
                for (tag, result) in output_rx {
                    sink(tag, result);
                    gate.leave();
                }
            }
        }
    });
}
