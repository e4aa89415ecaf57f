//! `ccl label DIR -o OUTDIR`: every image of a folder, pipelined (decoding, labeling on the
//! device by two labelers at once, writing), with a progress bar. A file that cannot be read or
//! written is named and skipped; the exit status is non-zero at the end when any failed, and
//! every output already written stays (each is written atomically).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ccl::batch::{label_many, BatchOptions};
use ccl::io;
use ccl::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::console::{note, say};
use super::label::{open_device, LabelArgs};

/// Labels every image of `folder` into `args.output` (a folder).
pub fn label_folder(folder: &Path, args: &LabelArgs) -> Result<()> {
    let out_dir = &args.output;
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
    let ext = args.format.extension();
    let mut writers: HashMap<PathBuf, &PathBuf> = HashMap::new();
    let mut jobs: Vec<(&PathBuf, PathBuf)> = Vec::with_capacity(images.len());
    for input in &images {
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let output = out_dir.join(format!("{stem}.{ext}"));
        if let Some(other) = writers.insert(output.clone(), input) {
            return Err(bad_output(format!(
                "{} and {} would both write {}",
                other.display(),
                input.display(),
                output.display()
            )));
        }
        jobs.push((input, output));
    }
    let (device, how) = open_device(args.device, args.backend)?;
    say!("device: {} {} ({how})", device.info().id, device.info().name);
    say!("labeling {} images of {} into {} (.{ext})", images.len(), folder.display(), out_dir.display());

    let read = args.read_options();
    let inputs = jobs.iter().map(|(input, output)| ((*input, output), io::read_image(input, &read).map(|d| d.image)));
    let options = BatchOptions {
        consecutive: !args.raw,
        ..BatchOptions::new(args.algorithm(args.image_connectivity()), args.image_connectivity())
    };
    let bar = ProgressBar::new(images.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
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
                // Labeling errors do not name the file; reading and writing errors do.
                match e.path() {
                    Some(_) => bar.suspend(|| note!("error: {e}")),
                    None => bar.suspend(|| note!("error: {}: {e}", path.display())),
                }
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
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::BatchFailed { failed: failed.len(), total: images.len() })
    }
}
