//! Folders of images: `ccl label DIR -o OUTDIR` (every image labeled), and `ccl binarize DIR
//! -o OUTDIR` / `ccl label DIR --binarize ... -o OUTDIR` (every gray page binarized, and
//! labeled, on the device), with a progress bar. Both run the pipeline of [`ccl::batch`]:
//! decoding on `--jobs` threads, several labelers (or binarizers) a device on the devices of
//! `--devices` (each image to the one that is free), writing on `--jobs` threads. A file that cannot be read or
//! written, and an entry with an image extension that is no readable file (a dangling link), is
//! named and skipped; the exit status is 1 at the end when any failed, and every output
//! already written stays (each is written atomically). Inputs are image files and `.npy` arrays;
//! a multi-page TIFF or a `.npy` of shape (D, H, W) is labeled as a volume and an animated file
//! on its first frame with a note, as each is alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use ccl::batch::{run_pipeline, run_pipeline_with, BatchLabeler, BatchOptions, Pool, SpareLabels, WORKERS_PER_DEVICE};
use ccl::binarize::Params;
use ccl::io::Frames;
use ccl::{io, Algorithm, AnyLabeler, Connectivity, Device, Labeler};
use ccl::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::clock::{Clock, Stage, StageClock};
use super::console::{note, say};
use super::device_choice::{announce_devices, note_slow_builds, open_devices, DeviceList};
use super::label_args::LabelArgs;

/// The work of a folder job: each input image with its output, and the entries that look like
/// images but cannot be read as files (already named on standard error; each counts as failed).
struct Plan {
    jobs: Vec<(PathBuf, PathBuf)>,
    unreadable: usize,
}

/// The files of a folder job: each input image of `folder` with its output,
/// `out_dir/STEM.ext`. An output folder that is a file or names a file of a known output
/// format, an input folder without images, and two inputs that would write one file are
/// refused; nothing is made ([`make_outputs`] makes the output folder). Entries with an image
/// extension that are no readable file (dangling or looping links, FIFOs) are named here, one
/// `error:` line each.
fn plan(folder: &Path, out_dir: &Path, ext: &str) -> Result<Plan> {
    if io::LabelFormat::from_path(out_dir).is_ok() && !out_dir.is_dir() {
        return Err(bad_output(out_dir, "for a folder input, -o names the output folder".into()));
    }
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(bad_output(
            out_dir,
            "it is a file, not a folder; for a folder input, -o names the output folder".into(),
        ));
    }
    let listing = io::list_images(folder)?;
    if !listing.others.is_empty() {
        let n = listing.others.len();
        note!(
            "note: ignoring {n} file{} without an image extension in {}",
            if n == 1 { "" } else { "s" },
            folder.display()
        );
    }
    for (path, why) in &listing.unreadable {
        note!("error: {}", Error::ImageRead { path: path.display().to_string(), reason: why.clone() });
    }
    if listing.images.is_empty() {
        let reason = match listing.unreadable.len() {
            0 => "no image file in the folder".to_string(),
            n => format!("no readable image file in the folder ({n} named above cannot be read)"),
        };
        return Err(Error::FileRead { path: folder.display().to_string(), reason });
    }
    // Every input's output, refusing two inputs that would write the same file.
    let mut writers: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut jobs = Vec::with_capacity(listing.images.len());
    for input in listing.images {
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let output = out_dir.join(format!("{stem}.{ext}"));
        if let Some(other) = writers.insert(output.clone(), input.clone()) {
            return Err(bad_output(
                out_dir,
                format!("{} and {} would both write {}", other.display(), input.display(), output.display()),
            ));
        }
        jobs.push((input, output));
    }
    Ok(Plan { jobs, unreadable: listing.unreadable.len() })
}

/// The error of an output folder `out_dir` that cannot be written, and why.
fn bad_output(out_dir: &Path, reason: String) -> Error {
    Error::ImageWrite { path: out_dir.display().to_string(), reason }
}

/// Makes the output folder of `plan` if missing, refuses it when it is the input folder, and
/// checks every output ([`super::outputs::check`]: no link, device or input file is written
/// over).
fn make_outputs(folder: &Path, out_dir: &Path, plan: &Plan) -> Result<()> {
    std::fs::create_dir_all(out_dir).map_err(|e| bad_output(out_dir, e.to_string()))?;
    if same_file::is_same_file(folder, out_dir).unwrap_or(false) {
        return Err(Error::OutputIsInput { path: folder.display().to_string() });
    }
    let outputs: Vec<(&str, &Path)> = plan.jobs.iter().map(|(_, output)| ("-o", output.as_path())).collect();
    super::outputs::check(&outputs, &io::input_files(folder))
}

/// A progress bar over `n` files.
fn progress(n: usize) -> ProgressBar {
    let bar = ProgressBar::new(n as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// Reports a file's failure above the bar (naming the file where the error does not).
fn report_failure(bar: &ProgressBar, path: &Path, e: &Error) {
    match e.path() {
        Some(_) => bar.suspend(|| note!("error: {e}")),
        None => bar.suspend(|| note!("error: {}: {e}", path.display())),
    }
}

/// The end of a folder job: Ok, or [`Error::BatchFailed`] when any file failed.
fn outcome(failed: usize, total: usize) -> Result<()> {
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::BatchFailed { failed, total })
    }
}

/// What a folder job did so far: files written, their components, files that failed.
#[derive(Default)]
struct Tally {
    written: usize,
    components: u64,
    failed: usize,
}

impl Tally {
    /// Counts one file's outcome (its component count, or its error, reported above the bar).
    fn record(&mut self, bar: &ProgressBar, path: &Path, result: Result<u32>) {
        match result {
            Ok(count) => {
                self.written += 1;
                self.components += u64::from(count);
            }
            Err(e) => {
                report_failure(bar, path, &e);
                self.failed += 1;
            }
        }
        bar.inc(1);
    }
}

/// Says above the bar that `path` holds several frames or pages of which only the first is
/// used (as a one-file command says).
fn note_frames(bar: &ProgressBar, path: &Path, frames: Frames, what: &str) {
    if let Frames::Several(count) = frames {
        let count = count.map_or("several".to_string(), |n| n.to_string());
        bar.suspend(|| note!("note: {} holds {count} frames or pages; only the first is {what}", path.display()));
    }
}

/// Labels every image of `folder` into `args.output` (a folder), on the devices of
/// `--devices` (else the one of `--device`), decoding and writing on `--jobs` threads each
/// ([`ccl::batch::run_pipeline_with`]). The devices open on a thread of their own while the
/// folder is listed and its first images decode (a CUDA context takes 0.2 s); a device that does
/// not open fails the job before the output folder is made. A multi-page TIFF or a (D, H, W)
/// `.npy` is labeled as a volume, as alone (`OUTDIR/NAME.npy` of shape (D, H, W), or `.tiff` of a
/// page per slice), on the first device; an animated file on its first frame, with a note, as
/// alone.
pub fn label_folder(folder: &Path, args: &LabelArgs) -> Result<()> {
    let out_dir = &args.output;
    let ext = args.format.extension();
    let clock = Mutex::new(Clock::new(args.verbose));
    let lap = |name| clock.lock().unwrap_or_else(|p| p.into_inner()).lap(name);
    std::thread::scope(|scope| {
        let opening = Mutex::new(Some(scope.spawn(|| open_devices(args.devices.as_ref(), args.device, args.backend))));
        let join_opening = || {
            let handle = opening.lock().unwrap_or_else(|p| p.into_inner()).take().expect("the devices are joined once");
            handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        let opened = Mutex::new(None::<Vec<Device>>);
        // The devices: the opening thread's, announced once the output folder is made.
        let devices = |plan: &Plan| -> Result<Vec<Device>> {
            let mut opened = opened.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(devices) = &*opened {
                return Ok(devices.clone());
            }
            let devices = join_opening()?;
            lap("open devices");
            make_outputs(folder, out_dir, plan)?;
            let devices = announce_devices(devices);
            *opened = Some(devices.clone());
            Ok(devices)
        };
        let plan = match plan(folder, out_dir, ext) {
            Ok(plan) => plan,
            // A device that does not open is named first, as if it had been opened first.
            Err(e) => return Err(join_opening().err().unwrap_or(e)),
        };
        lap("list");
        let (volumes, images): (Vec<_>, Vec<_>) = plan.jobs.iter().partition(|(input, _)| is_volume(input));
        let volume_count = match volumes.len() {
            0 => String::new(),
            1 => " and 1 volume (a multi-page TIFF or a (D, H, W) .npy)".to_string(),
            n => format!(" and {n} volumes (multi-page TIFFs or (D, H, W) .npy)"),
        };
        let announce = || {
            let n = images.len();
            say!("labeling {n} images{volume_count} of {} into {} (.{ext})", folder.display(), out_dir.display());
        };

        let bar = progress(plan.jobs.len());
        let start = Instant::now();
        let tally = Mutex::new(Tally { failed: plan.unreadable, ..Tally::default() });
        if !images.is_empty() {
            let read = args.read_options();
            let stages = StageClock::new();
            let decode = |(input, _): &&(PathBuf, PathBuf)| {
                let decoded = stages.time(Stage::Decode, || io::read_image(input, &read));
                if let Ok(d) = &decoded {
                    note_frames(&bar, input, d.source.frames, "labeled");
                }
                decoded.map(|d| d.image)
            };
            let connectivity = args.image_connectivity();
            let mut run = ccl::Options::new(connectivity).consecutive();
            if args.raw {
                run.numbering = ccl::LabelNumbering::Raw;
            }
            let spares = std::sync::Arc::new(SpareLabels::default());
            let labeler_count = AtomicUsize::new(0);
            let options = |algorithm| BatchOptions {
                jobs: args.jobs(),
                run: run.clone(),
                spares: spares.clone(),
                ..BatchOptions::new(algorithm, connectivity)
            };
            let expected_devices = match &args.devices {
                Some(DeviceList::Ids(ids)) => ids.len(),
                _ => 1,
            };
            let pool = options(Algorithm::UF).pool(WORKERS_PER_DEVICE * expected_devices);
            let labelers = || {
                let devices = devices(&plan)?;
                announce();
                let options = options(args.common_algorithm(&devices, connectivity)?);
                lap("algorithm");
                let labelers = options.labelers(&devices);
                stages.labelers_ready();
                labelers.inspect(|l| labeler_count.store(l.len(), Ordering::Relaxed))
            };
            let work =
                |l: &mut BatchLabeler, image: ccl::BinaryImage| stages.time(Stage::Label, || l.label(&image, &run));
            run_pipeline_with(pool, images.iter().copied(), decode, labelers, work, |(path, output), result| {
                let count = result.and_then(|run| {
                    let count = run.count.unwrap_or_else(|| run.labels.component_count());
                    let written = stages.time(Stage::Write, || io::write_labels(output, &run.labels)).map(|()| count);
                    spares.give(run.labels);
                    written
                });
                lock(&tally).record(&bar, path, count);
            })?;
            lap("labelers and images");
            if args.verbose {
                stages.report(pool.jobs, labeler_count.load(Ordering::Relaxed));
            }
        }
        let devices = devices(&plan)?;
        if images.is_empty() {
            announce();
        }
        let mut tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
        let images_written = tally.written;
        let mut labeler = None;
        for (input, output) in &volumes {
            tally.record(&bar, input, label_volume_file(&devices[0], args, &mut labeler, input, output));
        }
        if !volumes.is_empty() {
            lap("volumes");
        }
        bar.finish_and_clear();
        devices.iter().for_each(note_slow_builds);
        clock.lock().unwrap_or_else(|p| p.into_inner()).report(None);
        let seconds = start.elapsed().as_secs_f64();
        let volumes_written = match tally.written - images_written {
            _ if volumes.is_empty() => String::new(),
            1 => " and 1 volume".to_string(),
            n => format!(" and {n} volumes"),
        };
        say!(
            "labeled {images_written} images{volumes_written} ({} components) in {seconds:.2} s ({:.1} files/s); {} failed",
            tally.components,
            tally.written as f64 / seconds.max(1e-9),
            tally.failed
        );
        outcome(tally.failed, plan.jobs.len() + plan.unreadable)
    })
}

/// Whether a folder's file is a volume: a multi-page TIFF, or a `.npy` of three axes.
fn is_volume(input: &Path) -> bool {
    if io::is_npy(input) {
        return io::npy_shape(input).is_ok_and(|shape| shape.len() == 3);
    }
    io::tiff_pages(input).is_ok_and(|n| n > 1)
}

/// The tally of a folder job, whose sinks run on several threads.
fn lock(tally: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    tally.lock().unwrap_or_else(|p| p.into_inner())
}

/// Labels the multi-page TIFF or (D, H, W) `.npy` `input` as a volume into `output` (as `ccl label` of the file
/// alone does: `--connectivity` 26 unless given), with `labeler`, made at the first volume.
/// Returns the component count.
fn label_volume_file(
    device: &Device,
    args: &LabelArgs,
    labeler: &mut Option<(AnyLabeler, Connectivity)>,
    input: &Path,
    output: &Path,
) -> Result<u32> {
    if !io::LabelFormat::from_path(output)?.holds_volumes() {
        return Err(Error::ImageWrite {
            path: output.display().to_string(),
            reason: format!(
                "{} is a volume (a multi-page TIFF or a (D, H, W) .npy), whose labels are written as .npy or .tiff \
                 (--format npy or tiff)",
                input.display()
            ),
        });
    }
    let volume = io::read_volume(input, &args.read_options())?;
    let (labeler, connectivity) = match labeler {
        Some(l) => l,
        None => {
            let connectivity = args.connectivity.unwrap_or(Connectivity::TwentySix);
            let algorithm = args.algorithm(device, connectivity)?;
            labeler.insert((device.labeler_for(algorithm, connectivity)?, connectivity))
        }
    };
    if connectivity.dims() != 3 {
        return Err(Error::ConnectivityDimensions { connectivity: *connectivity, what: "a volume" });
    }
    let mut options = ccl::Options::new(*connectivity);
    if !args.raw {
        options = options.consecutive();
    }
    let result = labeler.label(&volume, &options)?;
    let count = result.count.unwrap_or_else(|| result.labels.component_count());
    io::write_volume(output, &result.labels)?;
    Ok(count)
}

/// What `pages_folder` does with each page after binarizing it: label its ink (`algorithm` at
/// `connectivity`, consecutive labels unless `raw`), or nothing (the ink is written).
pub struct PageLabeling {
    pub algorithm: Algorithm,
    pub connectivity: Connectivity,
    pub raw: bool,
}

/// What a worker of `pages_folder` makes of a page: its labels, or its ink.
enum PageOut {
    Labels(ccl::LabelImage),
    Ink(ccl::BinaryImage),
}

/// Binarizes every gray page of `folder` with `params` on `devices` and writes, into `out_dir`
/// as `STEM.ext`, either the ink (DIBCO's 0 / 255, `labeling` None) or the labels of its ink:
/// the page goes to the device once and only the result comes back. Pages are decoded and
/// written on `jobs` threads each while several binarizers a device work
/// ([`ccl::batch::run_pipeline`]), each page on the device that is free; pages of more than
/// `max_pixels` are refused (and skipped).
#[allow(clippy::too_many_arguments)]
pub fn pages_folder(
    folder: &Path,
    out_dir: &Path,
    ext: &str,
    params: &Params,
    labeling: Option<PageLabeling>,
    devices: &[Device],
    jobs: usize,
    max_pixels: u64,
) -> Result<()> {
    params.validate()?;
    let plan = plan(folder, out_dir, ext)?;
    make_outputs(folder, out_dir, &plan)?;
    let Plan { jobs: files, unreadable } = plan;
    // Workers on every device, each a binarizer (and a labeler) of its own, made before any work.
    let mut workers = Vec::new();
    for _ in 0..ccl::batch::WORKERS_PER_DEVICE {
        for device in devices {
            let mut binarizer = device.binarizer()?;
            binarizer.prepare(params)?;
            let labeler = labeling.as_ref().map(|l| device.labeler_for(l.algorithm, l.connectivity)).transpose()?;
            workers.push((binarizer, labeler));
        }
    }
    let what = if labeling.is_some() { "binarizing and labeling" } else { "binarizing" };
    say!(
        "{what} {} pages of {} into {} (.{ext}) with {}",
        files.len(),
        folder.display(),
        out_dir.display(),
        params.describe()
    );
    let bar = progress(files.len());
    let start = Instant::now();
    let tally = Mutex::new(Tally { failed: unreadable, ..Tally::default() });
    let decode = |(input, _): &&(PathBuf, PathBuf)| {
        let page = io::read_gray(input, max_pixels);
        if let Ok((_, source)) = &page {
            note_frames(&bar, input, source.frames, "binarized");
        }
        page.map(|(page, _)| page)
    };
    let work = |(binarizer, labeler): &mut (ccl::binarize::Binarizer, Option<AnyLabeler>), page: ccl::GrayImage| match (
        labeler, &labeling,
    ) {
        (Some(labeler), Some(l)) => {
            let gray = binarizer.upload(&page)?;
            drop(page);
            let (ink, _) = binarizer.binarize_on_device(&gray, params)?;
            drop(gray);
            let numbering = if l.raw { ccl::LabelNumbering::Raw } else { ccl::LabelNumbering::Consecutive };
            let run = labeler.run(&ink, &ccl::Options::new(l.connectivity).numbering(numbering))?;
            Ok(PageOut::Labels(labeler.download(&run.labels)?))
        }
        _ => Ok(PageOut::Ink(binarizer.binarize(&page, params)?.0)),
    };
    let pool = Pool::new(jobs, workers.len());
    run_pipeline(pool, files.iter(), decode, workers, work, |(input, output), page| {
        let done = page.and_then(|page| match page {
            PageOut::Labels(labels) => io::write_labels(output, &labels),
            PageOut::Ink(ink) => io::write_binary(output, &ink),
        });
        lock(&tally).record(&bar, input, done.map(|()| 0));
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    bar.finish_and_clear();
    devices.iter().for_each(note_slow_builds);
    let seconds = start.elapsed().as_secs_f64();
    say!(
        "wrote {} pages in {seconds:.2} s ({:.1} pages/s); {} failed",
        tally.written,
        tally.written as f64 / seconds.max(1e-9),
        tally.failed
    );
    outcome(tally.failed, files.len() + unreadable)
}
