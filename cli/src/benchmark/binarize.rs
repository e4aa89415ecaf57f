//! `ccl bench binarize`: binarization kernels over window sizes on every device, and binarize +
//! label on the device end to end. Device time of each run (allocation, statistics, threshold
//! kernels; upload and download excluded), minimum and median over the timed runs.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Timing;
use ccl::binarize::{GrayImage, KernelKind, Method, Params};
use ccl::{io, Algorithm, Connectivity, Device, Error, Labeler, Result};

/// One measured configuration.
#[derive(Clone, Debug, Serialize)]
pub struct BinarizeRecord {
    /// What the machine is.
    pub machine: String,
    /// `cuda:0`, `opencl:1`, `cpu`.
    pub device_id: String,
    /// Device name.
    pub device: String,
    /// Method with its parameters (`nick window=45 k=-0.1 formula=paper`).
    pub setting: String,
    /// Window side.
    pub window: u32,
    /// Kernel (`global`, `global-shared`, `shared`, `fast`), or `fast+ALGO` for binarize and
    /// label into consecutive labels on the device (as `ccl label --binarize` does).
    pub kernel: String,
    /// Input name.
    pub image: String,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Timed runs.
    pub runs: u32,
    /// How each run was timed: `queued` or `idle` ([`Timing`]), `host` for the CPU reference.
    pub timing: String,
    /// Minimum device milliseconds over the runs.
    pub min_ms: f64,
    /// Median device milliseconds over the runs.
    pub median_ms: f64,
}

/// What to measure.
#[derive(Clone)]
pub struct BinarizeBench {
    /// Devices to measure.
    pub devices: Vec<Device>,
    /// Window sides.
    pub windows: Vec<u32>,
    /// Kernels.
    pub kernels: Vec<KernelKind>,
    /// The method and its other parameters (window and kernel are swept).
    pub params: Params,
    /// Timed runs per configuration.
    pub runs: u32,
    /// Untimed runs first.
    pub warmup: u32,
    /// On CPU devices the paper's O(W^2) kernels run only up to this window.
    pub cpu_paper_window: u32,
    /// Labeling algorithm of the end-to-end rows.
    pub algorithm: Algorithm,
    /// How each run is timed.
    pub timing: Timing,
}

/// The pages measured: a large page tiled from a real one (`size`), then the real pages.
pub fn pages(folder: Option<&Path>, size: (usize, usize), limit: usize) -> Result<Vec<(String, GrayImage)>> {
    let files: Vec<PathBuf> = match folder {
        Some(folder) => io::dibco_pages(folder)?.into_iter().map(|(original, _)| original).collect(),
        None => Vec::new(),
    };
    let read = |f: &PathBuf| -> Result<(String, GrayImage)> {
        let name = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok((name, io::read_gray(f, ccl::MAX_PIXELS)?.0))
    };
    // The first page is read once, for the tiling and (within `limit`) as itself.
    let first = files.first().map(read).transpose()?;
    let tiled_page = tiled(first.as_ref().map(|(_, p)| p), size)?;
    let mut out = vec![(format!("tiled-{}x{}", size.0, size.1), tiled_page)];
    out.extend(first.filter(|_| limit > 0));
    for f in files.iter().skip(1).take(limit.saturating_sub(1)) {
        out.push(read(f)?);
    }
    Ok(out)
}

/// A `width` x `height` page made by mirroring `source` (or, without one, a synthetic page of
/// strokes on an uneven background) across the plane.
fn tiled(source: Option<&GrayImage>, (width, height): (usize, usize)) -> Result<GrayImage> {
    let pixels = (0..width * height)
        .map(|i| {
            let (x, y) = (i % width, i / width);
            match source {
                Some(s) => {
                    let fold = |c: usize, n: usize| if (c / n).is_multiple_of(2) { c % n } else { n - 1 - c % n };
                    s.values()[fold(y, s.height()) * s.width() + fold(x, s.width())]
                }
                None => {
                    let stroke = (x / 3 + y / 5) % 11 == 0 || (x * x + y) % 29 < 3;
                    if stroke {
                        60
                    } else {
                        170 + (x * 40 / width) as u8 + (y * 30 / height) as u8
                    }
                }
            }
        })
        .collect();
    GrayImage::image(width, height, pixels)
}

fn min_median(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

/// Runs the benchmark, calling `record` after each configuration.
pub fn run(
    bench: &BinarizeBench,
    pages: &[(String, GrayImage)],
    mut record: impl FnMut(&BinarizeRecord) -> Result<()>,
) -> Result<Vec<BinarizeRecord>> {
    let machine = super::record::machine_description();
    let mut out = Vec::new();
    for device in &bench.devices {
        let info = device.info().clone();
        let is_cpu = !matches!(info.device_type, ccl::DeviceType::Gpu);
        // The CPU reference has one way of computing the sums, whatever kernel is named.
        let reference = info.id == ccl::DeviceId::Cpu;
        let kernels = if reference { vec![KernelKind::Fast] } else { bench.kernels.clone() };
        let mut binarizer = device.binarizer()?;
        let mut labeler = device.labeler_for(bench.algorithm, Connectivity::Eight)?;
        for (name, page) in pages {
            let on_device = binarizer.upload(page)?;
            let mut push = |kernel: String, window: u32, times: Vec<f64>, setting: String| -> Result<()> {
                let (min_ms, median_ms) = min_median(times);
                let r = BinarizeRecord {
                    machine: machine.clone(),
                    device_id: info.id.to_string(),
                    device: info.name.clone(),
                    setting,
                    window,
                    kernel,
                    image: name.clone(),
                    width: page.width(),
                    height: page.height(),
                    runs: bench.runs,
                    timing: if reference { "host".into() } else { bench.timing.name().into() },
                    min_ms,
                    median_ms,
                };
                record(&r)?;
                out.push(r);
                Ok(())
            };
            for &window in &bench.windows {
                for &kernel in &kernels {
                    if kernel != KernelKind::Fast && is_cpu && window > bench.cpu_paper_window {
                        continue;
                    }
                    let params = Params { window, kernel, ..bench.params };
                    binarizer.prepare(&params)?; // checks the parameters too
                    let mut times = Vec::new();
                    for run in 0..bench.warmup + bench.runs {
                        if bench.timing == Timing::Queued {
                            binarizer.hold_queue()?;
                        }
                        let (_, t) = binarizer.binarize_on_device(&on_device, &params)?;
                        if run >= bench.warmup {
                            times.push(t.labeling_ms());
                        }
                    }
                    let name = if reference { "reference" } else { kernel.name() };
                    push(name.into(), window, times, params.describe())?;
                    if !params.method.is_local() {
                        break;
                    }
                }
                // Binarize, then label into consecutive labels, all on the device.
                let params = Params { window, kernel: KernelKind::Fast, ..bench.params };
                let mut times = Vec::new();
                for run in 0..bench.warmup + bench.runs {
                    if bench.timing == Timing::Queued {
                        binarizer.hold_queue()?;
                    }
                    let (ink, b) = binarizer.binarize_on_device(&on_device, &params)?;
                    if bench.timing == Timing::Queued {
                        labeler.hold_queue()?;
                    }
                    let l = labeler.run(&ink, &ccl::Options::new(Connectivity::Eight).consecutive())?.timings;
                    if run >= bench.warmup {
                        times.push(b.labeling_ms() + l.labeling_ms());
                    }
                }
                let name = if reference { "reference" } else { "fast" };
                push(format!("{name}+{}", bench.algorithm), window, times, params.describe())?;
                if params.method == Method::Otsu {
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// A Markdown table: one row per (device, image, window), one column per kernel (median ms).
pub fn summary(records: &[BinarizeRecord]) -> String {
    let kernels = super::report::ordered(records.iter().map(|r| r.kernel.clone()));
    let rows = super::report::ordered(records.iter().map(|r| (r.device_id.clone(), r.image.clone(), r.window)));
    let mut s = format!(
        "| device | image | window | {} |\n|---|---|---|{}\n",
        kernels.join(" | "),
        "---|".repeat(kernels.len())
    );
    for (device, image, window) in rows {
        let cells: Vec<String> = kernels
            .iter()
            .map(|k| {
                records
                    .iter()
                    .find(|r| r.device_id == device && r.image == image && r.window == window && &r.kernel == k)
                    .map_or("-".into(), |r| format!("{:.3}", r.median_ms))
            })
            .collect();
        s.push_str(&format!("| {device} | {image} | {window} | {} |\n", cells.join(" | ")));
    }
    s
}

/// Median ms against the window, one line per device and kernel, for `image` (log scale).
pub fn plot(records: &[BinarizeRecord], image: &str, path: &Path) -> Result<()> {
    use plotters::prelude::*;
    super::plot::register_font();
    let err = |e: String| Error::FileWrite { path: path.display().to_string(), reason: e };
    let chosen: Vec<&BinarizeRecord> = records.iter().filter(|r| r.image == image).collect();
    if chosen.is_empty() {
        return Ok(());
    }
    let max_w = chosen.iter().map(|r| r.window).max().unwrap_or(1) as f64;
    let (lo, hi) = chosen.iter().fold((f64::MAX, 0f64), |(lo, hi), r| (lo.min(r.median_ms), hi.max(r.median_ms)));
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("binarization, {image}: median device ms against window"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..max_w * 1.05, ((lo * 0.8).max(1e-4)..hi * 1.25).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart.configure_mesh().x_desc("window W").y_desc("ms").draw().map_err(|e| err(e.to_string()))?;
    let series = super::report::ordered(chosen.iter().map(|r| (r.device_id.clone(), r.kernel.clone())));
    for (i, (device, kernel)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mut points: Vec<(f64, f64)> = chosen
            .iter()
            .filter(|r| &r.device_id == device && &r.kernel == kernel)
            .map(|r| (r.window as f64, r.median_ms))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(format!("{device} {kernel}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
