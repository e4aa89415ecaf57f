//! Folders of images: `ccl label DIR -o OUTDIR` (every image labeled, pipelined: decoding,
//! labeling on the device by two labelers at once, writing), and `ccl binarize DIR -o OUTDIR` /
//! `ccl label DIR --binarize ... -o OUTDIR` (every gray page binarized, and labeled, on the
//! device while the next page is decoded), with a progress bar. A file that cannot be read or
//! written is named and skipped; the exit status is non-zero at the end when any failed, and
//! every output already written stays (each is written atomically).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use ccl::batch::{label_many, BatchOptions};
use ccl::binarize::Params;
use ccl::{io, Algorithm, Connectivity, Device, Labeler};
use ccl::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::console::{note, say};
use super::label::{open_device_announced, LabelArgs};

/// The files of a folder job: each input image of `folder` with its output,
/// `out_dir/STEM.ext`. The output folder is made if missing; an output folder that is a file
/// of a known output format, that is the input folder, an input folder without images, and two
/// inputs that would write one file are refused, and every output is checked
/// ([`super::outputs::check`]: no link, device or input file is written over).
fn plan(folder: &Path, out_dir: &Path, ext: &str) -> Result<Vec<(PathBuf, PathBuf)>> {
    let bad_output = |reason: String| Error::ImageWrite { path: out_dir.display().to_string(), reason };
    if io::LabelFormat::from_path(out_dir).is_ok() && !out_dir.is_dir() {
        return Err(bad_output("for a folder input, -o names the output folder".into()));
    }
    std::fs::create_dir_all(out_dir).map_err(|e| bad_output(e.to_string()))?;
    if same_file::is_same_file(folder, out_dir).unwrap_or(false) {
        return Err(Error::OutputIsInput { path: folder.display().to_string() });
    }
    let (images, ignored) = io::list_images(folder)?;
    if !ignored.is_empty() {
        let n = ignored.len();
        note!(
            "note: ignoring {n} file{} without an image extension in {}",
            if n == 1 { "" } else { "s" },
            folder.display()
        );
    }
    if images.is_empty() {
        return Err(Error::FileRead {
            path: folder.display().to_string(),
            reason: "no image file in the folder".into(),
        });
    }
    // Every input's output, refusing two inputs that would write the same file.
    let mut writers: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut jobs = Vec::with_capacity(images.len());
    for input in images {
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let output = out_dir.join(format!("{stem}.{ext}"));
        if let Some(other) = writers.insert(output.clone(), input.clone()) {
            return Err(bad_output(format!(
                "{} and {} would both write {}",
                other.display(),
                input.display(),
                output.display()
            )));
        }
        jobs.push((input, output));
    }
    let outputs: Vec<(&str, &Path)> = jobs.iter().map(|(_, output)| ("-o", output.as_path())).collect();
    super::outputs::check(&outputs, &io::input_files(folder))?;
    Ok(jobs)
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

/// Labels every image of `folder` into `args.output` (a folder).
pub fn label_folder(folder: &Path, args: &LabelArgs) -> Result<()> {
    let out_dir = &args.output;
    let ext = args.format.extension();
    let jobs = plan(folder, out_dir, ext)?;
    let device = open_device_announced(args.device, args.backend)?;
    say!("labeling {} images of {} into {} (.{ext})", jobs.len(), folder.display(), out_dir.display());

    let read = args.read_options();
    let inputs = jobs.iter().map(|(input, output)| ((input, output), io::read_image(input, &read).map(|d| d.image)));
    let options = BatchOptions {
        consecutive: !args.raw,
        ..BatchOptions::new(args.algorithm(&device, args.image_connectivity())?, args.image_connectivity())
    };
    let bar = progress(jobs.len());
    let start = Instant::now();
    let (mut written, mut components, mut failed) = (0usize, 0u64, Vec::new());
    label_many(&device, options, inputs, |(path, output), result| {
        let done = result.and_then(|labeling| {
            let count = labeling.components.unwrap_or_else(|| labeling.labels.component_count());
            io::write_labels(output, &labeling.labels).map(|()| count)
        });
        match done {
            Ok(count) => {
                written += 1;
                components += u64::from(count);
            }
            Err(e) => {
                report_failure(&bar, path, &e);
                failed.push(path);
            }
        }
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    say!(
        "labeled {written} images ({components} components) in {seconds:.2} s ({:.1} images/s); {} failed",
        written as f64 / seconds.max(1e-9),
        failed.len()
    );
    outcome(failed.len(), jobs.len())
}

/// What `pages_folder` does with each page after binarizing it: label its ink (`algorithm` at
/// `connectivity`, consecutive labels unless `raw`), or nothing (the ink is written).
pub struct PageLabeling {
    pub algorithm: Algorithm,
    pub connectivity: Connectivity,
    pub raw: bool,
}

/// Binarizes every gray page of `folder` with `params` on `device` and writes, into `out_dir`
/// as `STEM.ext`, either the ink (DIBCO's 0 / 255, `labeling` None) or the labels of its ink:
/// the page goes to the device once and only the result comes back. The next page is decoded
/// on another thread meanwhile; pages of more than `max_pixels` are refused (and skipped).
pub fn pages_folder(
    folder: &Path,
    out_dir: &Path,
    ext: &str,
    params: &Params,
    labeling: Option<PageLabeling>,
    device: &Device,
    max_pixels: u64,
) -> Result<()> {
    params.validate()?;
    let jobs = plan(folder, out_dir, ext)?;
    let mut binarizer = device.binarizer()?;
    binarizer.prepare(params)?;
    // Each labeling with its labeler.
    let mut labeling =
        labeling.map(|l| device.labeler_for(l.algorithm, l.connectivity).map(|labeler| (l, labeler))).transpose()?;
    let what = if labeling.is_some() { "binarizing and labeling" } else { "binarizing" };
    say!(
        "{what} {} pages of {} into {} (.{ext}) with {}",
        jobs.len(),
        folder.display(),
        out_dir.display(),
        params.describe()
    );
    let bar = progress(jobs.len());
    let start = Instant::now();
    let (mut written, mut failed) = (0usize, 0usize);
    std::thread::scope(|scope| {
        let (send, pages) = sync_channel(2);
        let jobs = &jobs;
        scope.spawn(move || {
            for (input, output) in jobs {
                if send.send((input, output, io::read_gray(input, max_pixels))).is_err() {
                    break;
                }
            }
        });
        for (input, output, page) in pages {
            let done = page.and_then(|(page, _)| match &mut labeling {
                Some((l, labeler)) => {
                    let gray = binarizer.upload(&page)?;
                    let (ink, _) = binarizer.binarize_on_device(&gray, params)?;
                    drop(gray);
                    let labels = if l.raw {
                        labeler.label_on_device(&ink, l.connectivity)?.0
                    } else {
                        labeler.label_on_device_consecutive(&ink, l.connectivity)?.0
                    };
                    io::write_labels(output, &labeler.download(&labels)?)
                }
                None => io::write_binary(output, &binarizer.binarize(&page, params)?.0),
            });
            match done {
                Ok(()) => written += 1,
                Err(e) => {
                    report_failure(&bar, input, &e);
                    failed += 1;
                }
            }
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    say!(
        "wrote {written} pages in {seconds:.2} s ({:.1} pages/s); {failed} failed",
        written as f64 / seconds.max(1e-9)
    );
    outcome(failed, jobs.len())
}
