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
//! **The workers are made while decoding starts** ([`run_pipeline_with`]): opening a device and
//! making its labelers (0.2 s for a CUDA context on the H200 machine) takes no time from the
//! decoders, which fill the queue of decoded inputs meanwhile. A worker that cannot be made
//! stops the pipeline before any result reaches the sink.
//!
//! **Memory is bounded**, by two limits:
//! - decoded inputs waiting for a worker take at most [`Pool::max_waiting_bytes`] (each decoding
//!   thread checks for room before it decodes, so the queue may pass the limit by one input a
//!   decoding thread; one input always has room);
//! - at most [`Pool::max_in_flight`] inputs are between a worker's taking them and the sink's
//!   return from their result; a worker waits for one to leave before it takes the next.
//!
//! So at most `max_waiting_bytes` of decoded images plus one a decoding thread, and
//! `max_in_flight` images with their label arrays (4 bytes a pixel) exist at once, besides the
//! staging buffers of the labelers.
//!
//! **Label arrays are recycled**: a sink done with its labels gives the array back
//! ([`SpareLabels::give`] on [`BatchOptions::spares`]) and a labeler fills it with the next
//! image's labels, so a result costs no fresh memory (no page faults, no unmapping).
//!
//! **Failures are isolated**: an input that cannot be decoded or labeled reaches the sink as an
//! `Err`, and the others go on. A panic in the decoder, a labeler or the sink stops the intake
//! and reaches the caller once the threads have ended: never a hang.
//!
//! [`label_batch`] labels with devices; [`run_pipeline`] and [`run_pipeline_with`] run any
//! per-device work (binarizing pages, or labelers made on devices still opening) with the same
//! decode and sink pools and the same bounds.
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
//!     let written = run.and_then(|run| {
//!         let written = io::write_labels(&path.with_extension("npy"), &run.labels);
//!         options.spares.give(run.labels);
//!         written
//!     });
//!     match written {
//!         Ok(()) => println!("{}: done", path.display()),
//!         Err(e) => eprintln!("{}: {e}", path.display()),
//!     }
//! })?;
//! # Ok::<(), ccl::Error>(())
//! ```

use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::{
    run_host, Algorithm, AnyLabeler, BinaryImage, Connectivity, Device, DeviceId, Element, Error, HostArray,
    LabelImage, Labeler, Options, PinnedBuffer, Result, Run,
};

/// The host side of a pipeline: its threads and how much it holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Decoding threads, and as many sink threads; at least 1.
    pub jobs: usize,
    /// Inputs between a worker's taking them and the sink's return from their result; at
    /// least 1.
    pub max_in_flight: usize,
    /// Bytes of decoded inputs waiting for a worker ([`HostBytes`]); a decoding thread waits
    /// for room before it decodes, and one input always has room.
    pub max_waiting_bytes: usize,
}

/// [`Pool::max_waiting_bytes`] by default: 1 GiB of decoded inputs, 256 pages of 2048x2048,
/// which a pool of 16 decoding threads fills in about the time a CUDA context takes to open.
pub const WAITING_BYTES: usize = 1 << 30;

impl Pool {
    /// `jobs` threads a stage and, for `labelers` labelers in all, at most `2 × (jobs +
    /// labelers)` inputs in flight (enough that every thread has one and the next is ready) and
    /// [`WAITING_BYTES`] of decoded inputs waiting.
    pub fn new(jobs: usize, labelers: usize) -> Self {
        let jobs = jobs.max(1);
        Pool { jobs, max_in_flight: 2 * (jobs + labelers.max(1)), max_waiting_bytes: WAITING_BYTES }
    }
}

/// The host memory a decoded input holds, which [`Pool::max_waiting_bytes`] counts.
pub trait HostBytes {
    /// Bytes held.
    fn host_bytes(&self) -> usize;
}

impl<T: Element> HostBytes for HostArray<T> {
    fn host_bytes(&self) -> usize {
        std::mem::size_of_val(self.values())
    }
}

impl HostBytes for () {
    fn host_bytes(&self) -> usize {
        0
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
    /// Bytes of decoded inputs waiting for a labeler ([`Pool::max_waiting_bytes`]).
    pub max_waiting_bytes: usize,
    /// Label arrays a sink gave back, which the labelers fill again (shared by the clones of
    /// these options).
    pub spares: Arc<SpareLabels>,
}

/// Label arrays given back after use ([`SpareLabels::give`]), which the labelers of a batch fill
/// with the next image's labels instead of new arrays: a new 2048x2048 array costs 4096 page
/// faults as it is filled and an unmapping when freed, on threads that are busy decoding and
/// writing. They hold no more arrays than were in flight at once ([`Pool::max_in_flight`]).
#[derive(Debug, Default)]
pub struct SpareLabels(Mutex<Vec<Vec<u32>>>);

impl SpareLabels {
    /// Gives the array of `labels` back (once its sink is done with it, written, say).
    pub fn give(&self, labels: LabelImage) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(labels.into_values());
    }

    /// `values` in an array given back, or in a new one when there is none.
    fn filled_with(&self, values: &[u32]) -> Vec<u32> {
        let spare = self.0.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut array = spare.unwrap_or_else(|| vec![0; values.len()]);
        array.resize(values.len(), 0);
        copy_in_pieces(&mut array, values);
        array
    }
}

/// Copies `src` into `dst` (of the same length) a MiB at a time on rayon's threads: one thread
/// copies 16 MiB of labels in 2-3 ms on the H200 machine, which made a labeler's host side
/// longer than its device's work.
fn copy_in_pieces<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    let piece = (1 << 20) / std::mem::size_of::<T>().max(1);
    dst.par_chunks_mut(piece).zip(src.par_chunks(piece)).for_each(|(d, s)| d.copy_from_slice(s));
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
            max_waiting_bytes: WAITING_BYTES,
            spares: Arc::default(),
        }
    }

    /// The pool for `labelers` labelers in all.
    pub fn pool(&self, labelers: usize) -> Pool {
        let pool = Pool::new(self.jobs, labelers);
        Pool {
            max_in_flight: self.max_in_flight.unwrap_or(pool.max_in_flight).max(1),
            max_waiting_bytes: self.max_waiting_bytes,
            ..pool
        }
    }

    /// [`BatchOptions::workers`] labelers on every device of `devices`, made now (a device or
    /// compiler problem fails here, before any input is taken), interleaved by device. They are
    /// made at once, a thread each: each loads its kernels and runs them once (on the H200
    /// machine 20 ms a labeler, which one after the other held up the start of a folder).
    pub fn labelers(&self, devices: &[Device]) -> Result<Vec<BatchLabeler>> {
        if devices.is_empty() {
            return Err(Error::InvalidParameter { name: "devices".into(), reason: "a batch needs a device".into() });
        }
        let (algorithm, connectivity) = (self.algorithm, self.run.connectivity);
        let order: Vec<&Device> = (0..self.workers.max(1)).flat_map(|_| devices.iter()).collect();
        std::thread::scope(|scope| {
            let making: Vec<_> = order
                .iter()
                .map(|&device| {
                    let spares = self.spares.clone();
                    scope.spawn(move || BatchLabeler::new(device, algorithm, connectivity, spares))
                })
                .collect();
            making.into_iter().map(|m| m.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
        })
    }
}

/// A labeler of a batch ([`BatchOptions::labelers`]), with the page-locked buffers it copies
/// through (on a GPU; none on the CPU reference, which labels host memory), grown to the
/// largest image so far.
pub struct BatchLabeler {
    labeler: AnyLabeler,
    device: Option<Device>,
    input: Option<PinnedBuffer<u8>>,
    output: Option<PinnedBuffer<u32>>,
    spares: Arc<SpareLabels>,
}

impl BatchLabeler {
    fn new(
        device: &Device,
        algorithm: Algorithm,
        connectivity: Connectivity,
        spares: Arc<SpareLabels>,
    ) -> Result<Self> {
        let labeler = device.labeler_for(algorithm, connectivity)?;
        let device = (device.info().id != DeviceId::Cpu).then(|| device.clone());
        Ok(BatchLabeler { labeler, device, input: None, output: None, spares })
    }

    /// Host in, host out, as [`Labeler::label`]; the labels in an array of the options'
    /// [`SpareLabels`] when one was given back.
    pub fn label(&mut self, image: &BinaryImage, options: &Options) -> Result<Run<LabelImage>> {
        let BatchLabeler { labeler, device, input, output, spares } = self;
        let Some(device) = device else {
            return labeler.label(image, options);
        };
        let n = image.values().len();
        let staged = staging(device, input, n)?;
        copy_in_pieces(staged, image.values());
        let staged = &*staged;
        let output = staging(device, output, n)?;
        run_host(
            labeler,
            options,
            |l| l.upload_array(image.shape(), staged),
            |l, labels| {
                l.download_into(labels, output)?;
                LabelImage::new(labels.shape(), spares.filled_with(output))
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
/// The labelers are made while the decoders start, and [`BatchOptions::pool`]'s bounds hold.
/// An item `decode` or a labeler fails reaches `sink` as an `Err`; the others go on. Fails only
/// when a labeler cannot be made (before any result reaches `sink`) or `devices` is empty. The
/// labels are those of each image labeled alone, on any of the devices.
pub fn label_batch<T, I, D, S>(devices: &[Device], options: &BatchOptions, items: I, decode: D, sink: S) -> Result<()>
where
    T: Send,
    I: IntoIterator<Item = T>,
    I::IntoIter: Send,
    D: Fn(&T) -> Result<BinaryImage> + Sync,
    S: Fn(T, Result<Run<LabelImage>>) + Sync,
{
    let pool = options.pool(options.workers.max(1) * devices.len());
    let run = &options.run;
    let labelers = || options.labelers(devices);
    run_pipeline_with(pool, items, decode, labelers, |l: &mut BatchLabeler, image| l.label(&image, run), sink)
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
    let work = |l: &mut BatchLabeler, image: BinaryImage| l.label(&image, run);
    stages(pool, inputs, &|input| input, Box::new(move || Ok(labelers)), &work, Sink::Caller(&mut sink))
}

/// The pipeline of [`label_batch`] with any work and workers made already: `decode` makes each
/// item's input on the decoding pool (`pool.jobs` threads), each of `workers` (a labeler, a
/// binarizer: one per queue or stream) takes the next input when it is free and runs `work` on
/// it, and `sink` receives each item with its result on the sink pool (`pool.jobs` threads),
/// within `pool`'s bounds. An `Err` of `decode` reaches `sink` without `work`; a panic anywhere
/// stops the intake and reaches the caller once every thread has ended.
pub fn run_pipeline<T, In, Out, W, I, D, F, S>(pool: Pool, items: I, decode: D, workers: Vec<W>, work: F, sink: S)
where
    T: Send,
    In: Send + HostBytes,
    Out: Send,
    W: Send,
    I: IntoIterator<Item = T>,
    I::IntoIter: Send,
    D: Fn(&T) -> Result<In> + Sync,
    F: Fn(&mut W, In) -> Result<Out> + Sync,
    S: Fn(T, Result<Out>) + Sync,
{
    run_pipeline_with(pool, items, decode, move || Ok(workers), work, sink).expect("the workers were made already")
}

/// [`run_pipeline`] with workers that `make_workers` makes on a thread of its own while the
/// decoders start (opening devices, making labelers). When it fails, the pipeline stops before
/// any result reaches `sink` and its error is returned.
pub fn run_pipeline_with<T, In, Out, W, I, D, M, F, S>(
    pool: Pool,
    items: I,
    decode: D,
    make_workers: M,
    work: F,
    sink: S,
) -> Result<()>
where
    T: Send,
    In: Send + HostBytes,
    Out: Send,
    W: Send,
    I: IntoIterator<Item = T>,
    I::IntoIter: Send,
    D: Fn(&T) -> Result<In> + Sync,
    M: FnOnce() -> Result<Vec<W>> + Send,
    F: Fn(&mut W, In) -> Result<Out> + Sync,
    S: Fn(T, Result<Out>) + Sync,
{
    let decode = |item: T| {
        let input = decode(&item);
        (item, input)
    };
    stages(pool, items.into_iter(), &decode, Box::new(make_workers), &work, Sink::Pool(&sink))
}

/// Where results go: a pool of threads, or the caller's thread.
enum Sink<'a, T, Out> {
    Pool(&'a (dyn Fn(T, Result<Out>) + Sync)),
    Caller(&'a mut dyn FnMut(T, Result<Out>)),
}

/// What the pipeline holds: permits for inputs in flight, the bytes of decoded inputs waiting
/// for a worker, and whether it was stopped (a panicking thread or a worker that could not be
/// made pulls the stop, so that no thread waits forever).
#[derive(Default)]
struct Held {
    in_flight: usize,
    waiting_bytes: usize,
    stopped: bool,
}

/// The pipeline's two bounds ([`Pool`]), with one lock and one condition variable.
struct Gate {
    held: Mutex<Held>,
    changed: Condvar,
    max_in_flight: usize,
    max_waiting_bytes: usize,
}

impl Gate {
    fn new(pool: Pool) -> Self {
        Gate {
            held: Mutex::new(Held::default()),
            changed: Condvar::new(),
            max_in_flight: pool.max_in_flight.max(1),
            max_waiting_bytes: pool.max_waiting_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `blocked` is false or the gate stops; then runs `then` unless stopped.
    fn wait_then(&self, blocked: impl Fn(&Held) -> bool, then: impl FnOnce(&mut Held)) -> bool {
        let mut held = self.lock();
        while blocked(&held) && !held.stopped {
            held = self.changed.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        if held.stopped {
            return false;
        }
        then(&mut held);
        true
    }

    fn change(&self, f: impl FnOnce(&mut Held)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }

    /// A decoder waits for room among the waiting inputs; false once stopped.
    fn room_to_decode(&self) -> bool {
        let max = self.max_waiting_bytes;
        self.wait_then(|h| h.waiting_bytes > 0 && h.waiting_bytes >= max, |_| ())
    }

    /// A decoded input of `bytes` joins the waiting ones.
    fn decoded(&self, bytes: usize) {
        self.change(|h| h.waiting_bytes += bytes);
    }

    /// A worker takes a permit to take an input, waiting for one; false once stopped.
    fn enter(&self) -> bool {
        let max = self.max_in_flight;
        self.wait_then(|h| h.in_flight >= max, |h| h.in_flight += 1)
    }

    /// A worker took an input of `bytes` off the waiting ones.
    fn taken(&self, bytes: usize) {
        self.change(|h| h.waiting_bytes -= bytes);
    }

    /// A result left the sink, or a worker gives back the permit it did not use.
    fn leave(&self) {
        self.change(|h| h.in_flight -= 1);
    }

    fn stop(&self) {
        self.change(|h| h.stopped = true);
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

/// A decoded input with its size, as it waits for a worker.
type Decoded<U, In> = (U, Result<In>, usize);

/// The three stages, the workers made on a thread of their own while the decoders start. The
/// channels need no bound of their own: the gate's bounds bound what they hold. Every thread
/// ends when its source is exhausted or its consumers are gone, so a panic anywhere (which also
/// stops the gate) unwinds the whole pipeline, and workers that cannot be made stop the gate
/// and drop the channels, which ends every other thread.
fn stages<'a, T, U, In, Out, W, I>(
    pool: Pool,
    items: I,
    decode: &(dyn Fn(T) -> (U, Result<In>) + Sync),
    make_workers: Box<dyn FnOnce() -> Result<Vec<W>> + Send + 'a>,
    work: &(dyn Fn(&mut W, In) -> Result<Out> + Sync),
    sink: Sink<'_, U, Out>,
) -> Result<()>
where
    T: Send,
    U: Send,
    In: Send + HostBytes,
    Out: Send,
    W: Send,
    I: Iterator<Item = T> + Send,
{
    let gate = Gate::new(pool);
    let items = Mutex::new(items);
    let failure = Mutex::new(None::<Error>);
    let (input_tx, input_rx) = channel::<Decoded<U, In>>();
    let input_rx = Arc::new(Mutex::new(input_rx));
    let (output_tx, output_rx) = channel::<(U, Result<Out>)>();
    std::thread::scope(|scope| {
        let (gate, items, failure) = (&gate, &items, &failure);
        for _ in 0..pool.jobs.max(1) {
            let input_tx = input_tx.clone();
            scope.spawn(move || {
                let _stop = StopOnPanic(gate);
                while gate.room_to_decode() {
                    let item = items.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some(item) = item else { break };
                    let (tag, input) = decode(item);
                    let bytes = input.as_ref().map_or(0, HostBytes::host_bytes);
                    gate.decoded(bytes);
                    if input_tx.send((tag, input, bytes)).is_err() {
                        break;
                    }
                }
            });
        }
        scope.spawn(move || {
            let _stop = StopOnPanic(gate);
            let workers = match make_workers() {
                Ok(workers) => workers,
                Err(e) => {
                    *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    gate.stop();
                    return;
                }
            };
            for mut worker in workers {
                let (input_rx, output_tx) = (input_rx.clone(), output_tx.clone());
                scope.spawn(move || {
                    let _stop = StopOnPanic(gate);
                    while gate.enter() {
                        let Some((tag, input, bytes)) = next(&input_rx) else {
                            gate.leave();
                            break;
                        };
                        gate.taken(bytes);
                        let result = input.and_then(|input| work(&mut worker, input));
                        if output_tx.send((tag, result)).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        // Only the threads hold the channels now, so each stage ends when the one before does
        // (or when the one after is gone).
        drop(input_tx);
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
    failure.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
}
