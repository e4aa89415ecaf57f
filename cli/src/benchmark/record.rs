//! One CSV row per measured run, and the machine description written with it.

use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};

use ccl::{Error, Result};

/// One labeling run (or, for peers, one timed call), as written to `results.csv`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// `average`, `steps`, `density` or `size`.
    pub mode: String,
    /// Host description (CPU, OS).
    pub machine: String,
    /// Device identifier (`cuda:0`, `opencl:1`, `cpu`, or a peer such as `npp`).
    pub device_id: String,
    /// Device name.
    pub device: String,
    /// Driver / platform version.
    pub driver: String,
    /// `cuda`, `opencl`, `cpu`, or a peer library.
    pub backend: String,
    /// Algorithm name.
    pub algorithm: String,
    /// 4 or 8 (images), 6, 18 or 26 (volumes).
    pub connectivity: u32,
    /// Input name.
    pub image: String,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Depth in slices: 1 for images (and in results files written before volumes, which lack
    /// the column).
    #[serde(default = "one")]
    pub depth: usize,
    /// Foreground density, percent.
    pub density: f64,
    /// Random-image granularity (0 for files).
    pub granularity: u32,
    /// Run index (0-based, after warm-up).
    pub run: u32,
    /// Labeling time in ms: allocation, kernels, flag read-backs, final synchronisation.
    pub labeling_ms: f64,
    /// Host-to-device copy of this input, ms (measured once per input and device).
    pub upload_ms: f64,
    /// Device-to-host copy of the labels, ms (measured once per input and device).
    pub download_ms: f64,
    /// Iterations of iterative algorithms, 0 otherwise.
    pub iterations: u32,
    /// Per-phase times, `phase=ms;phase=ms;...` in execution order (repeated phases summed).
    pub phases: String,
    /// How the run was timed: `queued` or `idle` (device marks, [`super::Timing`]), `host` (the
    /// host clock: the CPU reference, end-to-end runs and the peers script's CPU libraries);
    /// `idle` in results files written before the column existed.
    #[serde(default = "idle")]
    pub timing: String,
}

fn idle() -> String {
    super::Timing::Idle.name().into()
}

fn one() -> usize {
    1
}

impl Record {
    /// Whether the input was a volume (labeled with 6-, 18- or 26-connectivity).
    pub fn is_volume(&self) -> bool {
        matches!(self.connectivity, 6 | 18 | 26)
    }

    /// Pixels or voxels of the input.
    pub fn elements(&self) -> usize {
        self.width * self.height * self.depth
    }

    /// The input's extent: `WxH` for an image, `WxHxD` for a volume.
    pub fn extent(&self) -> String {
        if self.is_volume() {
            format!("{}x{}x{}", self.width, self.height, self.depth)
        } else {
            format!("{}x{}", self.width, self.height)
        }
    }

    /// The phases as (name, ms) pairs.
    pub fn phase_list(&self) -> Vec<(String, f64)> {
        self.phases
            .split(';')
            .filter_map(|kv| kv.split_once('='))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect()
    }
}

/// The CSV header: [`Record`]'s field names in order.
pub const HEADER: [&str; 21] = [
    "mode",
    "machine",
    "device_id",
    "device",
    "driver",
    "backend",
    "algorithm",
    "connectivity",
    "image",
    "width",
    "height",
    "depth",
    "density",
    "granularity",
    "run",
    "labeling_ms",
    "upload_ms",
    "download_ms",
    "iterations",
    "phases",
    "timing",
];

/// Appends records to a CSV file, flushing each row, so that an interrupted run keeps them.
pub struct RecordWriter {
    writer: csv::Writer<File>,
    path: String,
}

impl RecordWriter {
    /// Creates (truncates) `path` and writes the header at once, so even a run that records
    /// nothing leaves a well-formed file.
    pub fn create(path: &Path) -> Result<Self> {
        let err = |e: String| Error::FileWrite { path: path.display().to_string(), reason: e };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let file = File::create(path).map_err(|e| err(e.to_string()))?;
        let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(file);
        writer.write_record(HEADER).and_then(|()| Ok(writer.flush()?)).map_err(|e| err(e.to_string()))?;
        Ok(Self { writer, path: path.display().to_string() })
    }

    /// Writes one record and flushes it to disk.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        let err = |reason: String| Error::FileWrite { path: self.path.clone(), reason };
        self.writer.serialize(record).map_err(|e| err(e.to_string()))?;
        self.writer.flush().map_err(|e| err(e.to_string()))
    }
}

/// Reads records from one or more CSV files (ccl's and the peers script's).
pub fn read_records(paths: &[impl AsRef<Path>]) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let err = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
        let mut reader = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
        for row in reader.deserialize() {
            out.push(row.map_err(|e| err(e.to_string()))?);
        }
    }
    Ok(out)
}

/// A one-line description of the host: CPU model, core count, OS.
pub fn machine_description() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("PRETTY_NAME=")).map(|l| l[12..].trim_matches('"').to_string()))
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    format!("{cpu} x{cores}, {os}")
}
