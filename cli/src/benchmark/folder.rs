//! `ccl bench folder`: the folder path of `ccl label DIR -o OUT --format npy`, stage by stage on
//! the same files, so that its figure reads against its floor. Each stage runs over every file
//! with the pipeline of [`ccl::batch`] (`jobs` decoding threads, as many writing threads, the
//! same bound on the images in flight), wall clock, several rounds:
//!
//! - `decode`: every file read and binarized, nothing written;
//! - `write`: every file's labels written as `.npy` (uint32) from memory, nothing read;
//! - `codecs`: read and written together, each binary image widened to uint32 in place of its
//!   labels: the floor of the folder path, no device involved;
//! - `label`: the folder path itself, [`ccl::batch::label_batch`] on the devices between the
//!   same reader and writer, as `ccl label DIR` runs it.
//!
//! Outputs go to a scratch folder, emptied after each stage; they are written as every ccl
//! output is ([`ccl::io::write_labels`]: atomically, and synced unless
//! [`ccl::io::set_synced_writes`] turned that off), so the floor pays what the path pays.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ccl::batch::{label_batch, run_pipeline, BatchOptions};
use ccl::io::{self, ReadOptions};
use ccl::{Device, Error, LabelImage, Result};

/// The stages, in the order they run and are reported.
pub const STAGES: [&str; 4] = ["decode", "write", "codecs", "label"];

/// One folder benchmark: the files, where outputs go, the devices and the pipeline's settings.
pub struct FolderBench<'a> {
    /// The input images.
    pub files: &'a [PathBuf],
    /// A folder of its own for the outputs (made if missing, emptied after each stage).
    pub scratch: &'a Path,
    /// The devices of the `label` stage.
    pub devices: &'a [Device],
    /// The algorithm, run options, threads and bound of every stage.
    pub options: BatchOptions,
    /// How the files are read and binarized.
    pub read: ReadOptions,
    /// Timed rounds of each stage.
    pub rounds: u32,
}

/// One stage's wall times, a round each.
#[derive(Clone, Debug)]
pub struct StageTimes {
    /// One of [`STAGES`].
    pub stage: &'static str,
    /// Seconds, in the order measured.
    pub seconds: Vec<f64>,
    /// Input bytes (the files' sizes) and pixels read by the stage, or labels written by it.
    pub bytes: u64,
    /// Images the stage went through.
    pub images: usize,
}

impl StageTimes {
    /// The median round, in seconds.
    pub fn median(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }
}

/// Runs every stage `rounds` times (the first round of all stages is a warm-up, not kept: it
/// builds the kernels and fills the file cache). `progress` hears each round (0 the warm-up)
/// and stage as it starts.
/// Fails when a file cannot be read or written, or a device fails: a benchmark of a path that
/// fails measures nothing.
pub fn run(bench: &FolderBench, mut progress: impl FnMut(u32, &str)) -> Result<Vec<StageTimes>> {
    if bench.files.is_empty() {
        return Err(Error::InvalidParameter { name: "folder".into(), reason: "no image to time".into() });
    }
    let input_bytes: u64 = bench.files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
    // The labels the `write` stage writes: each file's, labeled once up front.
    let labels = labels_of(bench)?;
    let label_bytes: u64 = labels.iter().map(|l| 4 * l.values().len() as u64).sum();
    let mut times: Vec<StageTimes> = STAGES
        .iter()
        .map(|&stage| StageTimes {
            stage,
            seconds: Vec::new(),
            bytes: if stage == "write" { label_bytes } else { input_bytes },
            images: bench.files.len(),
        })
        .collect();
    for round in 0..=bench.rounds {
        for entry in times.iter_mut() {
            progress(round, entry.stage);
            let seconds = time_stage(bench, entry.stage, &labels)?;
            if round > 0 {
                entry.seconds.push(seconds);
            }
        }
    }
    Ok(times)
}

/// Every file's labels, through the `label` stage's devices (kept in memory).
fn labels_of(bench: &FolderBench) -> Result<Vec<LabelImage>> {
    let out: Vec<std::sync::Mutex<Option<Result<LabelImage>>>> =
        bench.files.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let decode = |(_, path): &(usize, &PathBuf)| io::read_image(path, &bench.read).map(|d| d.image);
    label_batch(bench.devices, &bench.options, bench.files.iter().enumerate(), decode, |(i, _), run| {
        *out[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(run.map(|r| r.labels));
    })?;
    out.into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner()).expect("every file reaches the sink"))
        .collect()
}

/// The `.npy` output of `path` in the scratch folder.
fn output(bench: &FolderBench, index: usize) -> PathBuf {
    bench.scratch.join(format!("{index:06}.npy"))
}

/// One round of `stage`, in seconds; the scratch folder is emptied afterwards (not timed).
fn time_stage(bench: &FolderBench, stage: &str, labels: &[LabelImage]) -> Result<f64> {
    std::fs::create_dir_all(bench.scratch)
        .map_err(|e| Error::FileWrite { path: bench.scratch.display().to_string(), reason: e.to_string() })?;
    let pool = bench.options.pool(bench.options.jobs);
    let first_error = std::sync::Mutex::new(None::<Error>);
    let fail = |e: Error| {
        first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    };
    let files = || bench.files.iter().enumerate();
    let read = |(_, path): &(usize, &PathBuf)| io::read_image(path, &bench.read).map(|d| d.image);
    // The stages without a device: a worker a thread, doing nothing or widening.
    let idle = || vec![(); bench.options.jobs.max(1)];
    let start = Instant::now();
    match stage {
        "decode" => {
            run_pipeline(pool, files(), read, idle(), |_, image| Ok(image), |_, r| r.map(drop).unwrap_or_else(fail));
        }
        "write" => {
            let none = |_: &(usize, &PathBuf)| Ok(());
            run_pipeline(
                pool,
                files(),
                none,
                idle(),
                |_, ()| Ok(()),
                |(i, _), r| r.and_then(|()| io::write_labels(&output(bench, i), &labels[i])).unwrap_or_else(fail),
            );
        }
        "codecs" => {
            let widen = |_: &mut (), image: ccl::BinaryImage| {
                LabelImage::new(image.shape(), image.values().iter().map(|&p| u32::from(p)).collect())
            };
            run_pipeline(pool, files(), read, idle(), widen, |(i, _), r| {
                r.and_then(|l| io::write_labels(&output(bench, i), &l)).unwrap_or_else(fail)
            });
        }
        _ => {
            label_batch(bench.devices, &bench.options, files(), read, |(i, _), run| {
                run.and_then(|run| {
                    let written = io::write_labels(&output(bench, i), &run.labels);
                    bench.options.spares.give(run.labels);
                    written
                })
                .unwrap_or_else(fail)
            })?;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    for i in 0..bench.files.len() {
        let _ = std::fs::remove_file(output(bench, i));
    }
    Ok(seconds)
}

/// The results as a markdown table: each stage's median and minimum, images/s, MB/s and its
/// ratio to the `codecs` floor.
pub fn summary_markdown(times: &[StageTimes], setting: &str) -> String {
    let floor = times.iter().find(|t| t.stage == "codecs").map(StageTimes::median);
    let mut s = format!(
        "{setting}\n\n| stage | median s | min s | images/s | MB/s | x codecs |\n|---|---:|---:|---:|---:|---:|\n"
    );
    for t in times {
        let median = t.median();
        let min = t.seconds.iter().copied().fold(f64::INFINITY, f64::min);
        let ratio = floor.map_or(String::new(), |f| format!("{:.2}", median / f));
        s += &format!(
            "| {} | {median:.3} | {min:.3} | {:.1} | {:.0} | {ratio} |\n",
            t.stage,
            t.images as f64 / median,
            t.bytes as f64 / 1e6 / median
        );
    }
    s
}
