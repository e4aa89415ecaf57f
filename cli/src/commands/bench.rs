//! `ccl bench`: the command-line front of [`ccl_cli::benchmark`]. Inputs, devices and algorithms are
//! checked before anything runs: an empty set or an impossible range is an error, repeats are
//! dropped with a note.

use std::path::{Path, PathBuf};

use ccl::io::{write_atomically, Binarize};
use ccl::{Algorithm, BackendKind, Connectivity, DeviceId, Error, Result};
use ccl_cli::benchmark::{self, BenchOptions, Extent, Input, Mode, RecordWriter};
use clap::{Args, Subcommand};

use super::args;
use super::console::{note, say};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Mean over a dataset of the per-image minimum time (TPDS 2020 Sec. 6.2).
    Average(DatasetArgs),
    /// Like average, broken down by phase (allocation, each kernel phase, deallocation).
    Steps(DatasetArgs),
    /// MT19937 images over densities and granularities (the papers' Fig. 4 / Fig. 15).
    Density(DensityArgs),
    /// One density, growing image sizes.
    Size(SizeArgs),
    /// What a user feels: a host image in, consecutive labels in host memory out, every copy
    /// included, host clock; images/s.
    EndToEnd(DatasetArgs),
    /// Binarization kernels over window sizes (the ICPADS 2015 paper's three and the fast one),
    /// and binarize + label on the device, on a large tiled page and the real pages.
    Binarize(BinarizeBenchArgs),
    /// The folder path (`ccl label DIR -o OUT --format npy`) stage by stage on one folder:
    /// decoding alone, writing alone, both (the codecs: the floor) and the whole path, wall
    /// clock over several rounds.
    Folder(FolderBenchArgs),
    /// Re-draw the tables and plots from results files (ccl's and the peers script's).
    Plot(PlotArgs),
}

/// How the device-resident runs of a benchmark are timed.
#[derive(Args)]
pub struct TimingArg {
    /// How each device-resident run is timed: `queued` (its commands queued behind a short spin
    /// on the device, so the figure is their device time, as in a pipeline) or `idle` (on an
    /// idle device, as a lone call: on CUDA the host's launch latency lands in the figure; the
    /// results committed before this option were timed so). End-to-end runs and the CPU
    /// reference use the host clock.
    #[arg(long, default_value = "queued", value_parser = |s: &str| s.parse::<benchmark::Timing>().map_err(|e| e.to_string()))]
    timing: benchmark::Timing,
}

#[derive(Args)]
pub struct Common {
    /// Algorithms, comma-separated (default: all of them; see `ccl label --help`).
    #[arg(long, value_delimiter = ',')]
    algos: Vec<Algorithm>,
    /// Devices, comma-separated: cuda:N, opencl:N, cpu (default: every device found).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<DeviceId>,
    /// Connectivity: 4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26);
    /// algorithms that do not support it are skipped.
    #[arg(long, value_parser = args::any_connectivity)]
    connectivity: Option<Connectivity>,
    /// Timed runs per input, 1-10000; the minimum is kept.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// Untimed warm-up runs per input, 0-10000.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    warmup: u32,
    #[command(flatten)]
    timing: TimingArg,
    /// Output folder for results.csv, summary.md and the plots (default: bench-out/MODE).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the inputs (images/NAME.npy, uint8 0/1, shape (H, W) or (D, H, W) for
    /// volumes, and images/inputs.csv) for the peers script.
    #[arg(long)]
    save_images: bool,
    /// Also time each algorithm into consecutive labels (rows NAME+consecutive), and followed by
    /// the component statistics on the device (relabeling included, rows NAME+stats); not with
    /// end-to-end.
    #[arg(long)]
    stats: bool,
}

#[derive(Args)]
pub struct DatasetArgs {
    #[command(flatten)]
    common: Common,
    /// Folder of images (every file with an image extension; undecodable ones are skipped and
    /// named); without it, random images.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// With --dataset: foreground is gray > T, in each image's own sample range (default:
    /// nonzero).
    #[arg(long, value_parser = args::threshold, allow_negative_numbers = true)]
    threshold: Option<f64>,
    /// With --dataset: swap foreground and background (dark ink is foreground).
    #[arg(long)]
    invert: bool,
    /// Without --dataset: extent of the random inputs, WxH (images) or WxHxD (volumes).
    #[arg(long, default_value = "2048x2048", value_parser = args::extent)]
    size: Extent,
    /// Instead of --dataset: the Hilbert volumes of these curve orders, FROM:TO or a comma list
    /// (YACCLAB's Hilbert dataset: 1:6 in 128^3).
    #[arg(long, value_parser = args::orders, conflicts_with = "dataset")]
    hilbert: Option<args::Orders>,
    /// With --hilbert: the side of the cubes, 3-1625 (at least 2^(order+1) - 1).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(3..=1625))]
    hilbert_side: u32,
    /// Without --dataset: density of the random images, percent (0-100).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    density: u32,
    /// Without --dataset: number of random inputs, 1-10000.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    images: u32,
    /// MT19937 seed of the first random image.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct DensityArgs {
    #[command(flatten)]
    common: Common,
    /// Extent, WxH (images; the papers' 2048x2048) or WxHxD (volumes; the papers' 256x256x256).
    #[arg(long, default_value = "2048x2048", value_parser = args::extent)]
    size: Extent,
    /// Densities, percent: FROM:TO:STEP or a comma list.
    #[arg(long, default_value = "0:100:10", value_parser = args::densities)]
    densities: args::Densities,
    /// Granularities, comma-separated, each 1-65535.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=65535))]
    granularities: Vec<u32>,
    /// Images per point, 1-10000.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    images: u32,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct SizeArgs {
    #[command(flatten)]
    common: Common,
    /// Side lengths of the squares (or cubes), comma-separated, each 1-65535 (cubes up to
    /// 1625, the most that 32-bit labels address).
    #[arg(long, value_delimiter = ',', default_value = "256,512,1024,2048,4096,8192,16384", value_parser = args::square_side)]
    sizes: Vec<usize>,
    /// 2: square images; 3: cubes (volumes) of the same sides.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    dims: u8,
    /// Density, percent (0-100).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    density: u32,
    /// Granularity, 1-65535.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65535))]
    granularity: u32,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct BinarizeBenchArgs {
    /// Devices, comma-separated: cuda:N, opencl:N, cpu (default: every device found).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<DeviceId>,
    /// Window sides, comma-separated (the paper's 9, 15, 33 and larger ones).
    #[arg(long, value_delimiter = ',', default_value = "9,15,33,45,101,201")]
    windows: Vec<u32>,
    /// Kernels, comma-separated: global, global-shared, shared, fast (default: all).
    #[arg(long, value_delimiter = ',', value_parser = |s: &str| s.parse::<ccl::binarize::KernelKind>().map_err(|e| e.to_string()))]
    kernels: Vec<ccl::binarize::KernelKind>,
    #[command(flatten)]
    method: super::binarize::MethodArgs,
    /// DIBCO folder (YEAR/Originals/*.png): its first page is tiled into the large page, and
    /// the pages are measured too; without it, a synthetic page is tiled.
    #[arg(long)]
    pages: Option<PathBuf>,
    /// Most real pages measured.
    #[arg(long, default_value_t = 40)]
    page_limit: usize,
    /// Size of the tiled page, WxH (the paper's largest images are about 10 Mpx).
    #[arg(long, default_value = "2500x4000", value_parser = args::size)]
    size: (usize, usize),
    /// On CPU devices, the paper's O(W^2) kernels run only up to this window.
    #[arg(long, default_value_t = 45)]
    cpu_paper_window: u32,
    /// Labeling algorithm of the binarize + label rows (default: the library's for
    /// 8-connectivity, TUF).
    #[arg(long)]
    algo: Option<Algorithm>,
    /// Timed runs per configuration (median and minimum kept), 1-10000.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// Untimed runs first, 0-10000.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    warmup: u32,
    #[command(flatten)]
    timing: TimingArg,
    /// Output folder for results.csv, summary.md and plots (default: bench-out/binarize).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the tiled page as images/page.npy (uint8) for scripts/peers.py --binarize.
    #[arg(long)]
    save_images: bool,
}

#[derive(Args)]
pub struct FolderBenchArgs {
    /// The folder of images (every file with an image extension).
    folder: PathBuf,
    /// Devices of the labeling stage, comma-separated identifiers or `all`, as `ccl label
    /// --devices` takes them (default: the device `ccl label` picks).
    #[arg(long, value_name = "LIST", value_parser = super::device_choice::device_list)]
    devices: Option<super::device_choice::DeviceList>,
    /// Algorithm (default: the one `ccl label` picks for the devices).
    #[arg(long)]
    algo: Option<Algorithm>,
    /// Threads decoding, and as many writing, in every stage (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
    /// Labelers a device (default: the library's, as `ccl label DIR` runs).
    #[arg(long, default_value_t = ccl::batch::WORKERS_PER_DEVICE as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    workers: u64,
    /// Timed rounds of each stage (after one untimed round), 1-100; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Where the outputs are written while timed (made, emptied after each stage; default:
    /// OUT/scratch). Put it on the disk whose speed matters.
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// Output folder for summary.md (default: bench-out/folder).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
pub struct PlotArgs {
    /// Results files (CSV written by `ccl bench` or scripts/peers.py).
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    results: Vec<PathBuf>,
    /// Which summary and plots: average, steps, density, size or end-to-end (default: the mode
    /// in the files).
    #[arg(long)]
    mode: Option<String>,
    /// Output folder for summary.md and plots.
    #[arg(long)]
    out: PathBuf,
}

/// `items` without repeats, in order; names each repeat dropped.
fn distinct<T: PartialEq + Copy + std::fmt::Display>(items: &[T], what: &str) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for &item in items {
        if out.contains(&item) {
            note!("note: {what} {item} is listed more than once; it runs once");
        } else {
            out.push(item);
        }
    }
    out
}

/// The options of a run on images, or on volumes (`volumes`): the connectivity defaults to 8
/// or 26.
fn options(common: &Common, mode: Mode, volumes: bool) -> Result<BenchOptions> {
    let default = if volumes { Connectivity::TwentySix } else { Connectivity::Eight };
    let connectivity = common.connectivity.unwrap_or(default);
    let algorithms =
        if common.algos.is_empty() { Algorithm::ALL.to_vec() } else { distinct(&common.algos, "algorithm") };
    let devices = if common.devices.is_empty() {
        ccl::discover().devices.into_iter().map(|d| d.id).collect()
    } else {
        distinct(&common.devices, "device")
    };
    let options = BenchOptions {
        mode,
        algorithms,
        devices,
        connectivity,
        runs: common.runs,
        warmup: common.warmup,
        progress: true,
        stats: common.stats,
        timing: common.timing.timing,
    };
    options.validate()?;
    Ok(options)
}

fn save_inputs(dir: &Path, inputs: &[Input]) -> Result<()> {
    let images = dir.join("images");
    let werr = |p: &Path, e: String| Error::FileWrite { path: p.display().to_string(), reason: e };
    std::fs::create_dir_all(&images).map_err(|e| werr(&images, e.to_string()))?;
    let mut manifest = csv::Writer::from_writer(Vec::new());
    let mut rows = vec![["name", "file", "width", "height", "depth", "density", "granularity"].map(String::from)];
    for input in inputs {
        let file = format!("{}.npy", input.name);
        let path = images.join(&file);
        let s = input.shape();
        let values = input.values().iter().map(|&p| u8::from(p != 0));
        if input.is_volume() {
            write_volume_npy_u8(&path, s, values)?;
        } else {
            ccl::io::write_npy_u8(&path, (s.width, s.height), values)?;
        }
        let (d, g) = (input.density.to_string(), input.granularity.to_string());
        rows.push([input.name.clone(), file, s.width.to_string(), s.height.to_string(), s.depth.to_string(), d, g]);
    }
    let path = images.join("inputs.csv");
    for row in rows {
        manifest.write_record(&row).map_err(|e| werr(&path, e.to_string()))?;
    }
    let bytes = manifest.into_inner().map_err(|e| werr(&path, e.to_string()))?;
    write_atomically(&path, |out| std::io::Write::write_all(out, &bytes)).map_err(|e| werr(&path, e.to_string()))
}

/// Writes a volume's `values` (x fastest) as a `.npy` of uint8 with shape (D, H, W), atomically.
fn write_volume_npy_u8(path: &Path, shape: ccl::Shape, values: impl IntoIterator<Item = u8>) -> Result<()> {
    let dims = [shape.depth as u64, shape.height as u64, shape.width as u64];
    write_atomically(path, |w| {
        use npyz::WriterBuilder;
        let mut writer = npyz::WriteOptions::<u8>::new().default_dtype().shape(&dims).writer(w).begin_nd()?;
        writer.extend(values)?;
        writer.finish()
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}

fn measure(common: &Common, mode: Mode, inputs: Vec<Input>) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::InvalidParameter { name: "inputs".into(), reason: "there is no input image".into() });
    }
    let opts = options(common, mode, inputs[0].is_volume())?;
    opts.check_inputs(&inputs)?;
    let out = common.out.clone().unwrap_or_else(|| PathBuf::from("bench-out").join(mode.name()));
    if common.save_images {
        save_inputs(&out, &inputs)?;
    }
    let results = out.join("results.csv");
    let runnable = opts.runnable_algorithms();
    let per_device: Vec<String> = opts
        .devices
        .iter()
        .map(|d| match d.backend() {
            BackendKind::Cpu => format!("{d} (CPU reference)"),
            _ => format!("{d} ({} algorithm{})", runnable.len(), if runnable.len() == 1 { "" } else { "s" }),
        })
        .collect();
    say!(
        "{} {} on {}, {}; {} runs each after {} warm-up; writing {}",
        inputs.len(),
        if inputs[0].is_volume() { "volumes" } else { "images" },
        per_device.join(", "),
        opts.connectivity,
        opts.runs,
        opts.warmup,
        results.display()
    );
    let mut writer = RecordWriter::create(&results)?;
    let records = benchmark::run(&opts, &inputs, &mut writer)?;
    report(&records, mode, &out)
}

fn report(records: &[benchmark::Record], mode: Mode, out: &Path) -> Result<()> {
    let summary = benchmark::summary_markdown(records, mode);
    say!("\n{summary}");
    let path = out.join("summary.md");
    std::fs::create_dir_all(out)
        .map_err(|e| Error::FileWrite { path: out.display().to_string(), reason: e.to_string() })?;
    write_atomically(&path, |w| std::io::Write::write_all(w, summary.as_bytes()))
        .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })?;
    let plots = benchmark::write_plots(records, mode, out)?;
    say!("wrote {} and {} plots in {}", path.display(), plots.len(), out.display());
    Ok(())
}

fn dataset_inputs(a: &DatasetArgs) -> Result<Vec<Input>> {
    if let Some(orders) = &a.hilbert {
        return benchmark::hilbert_inputs(&distinct(&orders.0, "order"), a.hilbert_side as usize);
    }
    match &a.dataset {
        Some(dir) => {
            let found = benchmark::directory_inputs(dir, Binarize { threshold: a.threshold, invert: a.invert })?;
            for (path, e) in &found.skipped {
                note!("warning: skipping {}: {e}", path.display());
            }
            if !found.ignored.is_empty() {
                let names: Vec<String> = found.ignored.iter().map(|p| p.display().to_string()).collect();
                note!("note: ignoring {} files without an image extension: {}", names.len(), names.join(", "));
            }
            if found.inputs.is_empty() {
                return Err(Error::FileRead {
                    path: dir.display().to_string(),
                    reason: format!("no readable image in the folder ({} skipped)", found.skipped.len()),
                });
            }
            Ok(found.inputs)
        }
        None => benchmark::random_inputs(a.size, a.density, 1, a.images, a.seed),
    }
}

/// Runs one `ccl bench` command.
pub fn bench(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Average(a) => measure(&a.common, Mode::Average, dataset_inputs(&a)?),
        BenchCommand::Steps(a) => measure(&a.common, Mode::Steps, dataset_inputs(&a)?),
        BenchCommand::EndToEnd(a) => measure(&a.common, Mode::EndToEnd, dataset_inputs(&a)?),
        BenchCommand::Density(d) => {
            let granularities = distinct(&d.granularities, "granularity");
            let densities = distinct(&d.densities.0, "density");
            let inputs = benchmark::density_inputs(d.size, &densities, &granularities, d.images, d.seed)?;
            measure(&d.common, Mode::Density, inputs)
        }
        BenchCommand::Size(s) => {
            let sides = distinct(&s.sizes, "size");
            let extents: Vec<Extent> =
                sides.iter().map(|&n| if s.dims == 3 { Extent::cube(n) } else { Extent::Image(n, n) }).collect();
            let inputs = benchmark::size_inputs(&extents, s.density, s.granularity, s.seed)?;
            measure(&s.common, Mode::Size, inputs)
        }
        BenchCommand::Binarize(b) => bench_binarize(b),
        BenchCommand::Folder(f) => bench_folder(f),
        BenchCommand::Plot(p) => {
            let records = benchmark::read_records(&p.results)?;
            let name = p.mode.clone().or_else(|| records.first().map(|r| r.mode.clone())).unwrap_or_default();
            let mode = Mode::from_name(&name).ok_or_else(|| Error::InvalidParameter {
                name: "mode".into(),
                reason: format!("'{name}' is not a mode (one of {})", Mode::ALL.map(Mode::name).join(", ")),
            })?;
            if records.is_empty() {
                return Err(Error::FileRead {
                    path: p.results[0].display().to_string(),
                    reason: "the results files hold no record".into(),
                });
            }
            report(&records, mode, &p.out)
        }
    }
}

/// `ccl bench binarize`.
fn bench_binarize(args: BinarizeBenchArgs) -> Result<()> {
    let ids = if args.devices.is_empty() {
        ccl::discover().devices.into_iter().map(|d| d.id).collect()
    } else {
        distinct(&args.devices, "device")
    };
    let devices = ids.into_iter().map(ccl::Device::open).collect::<Result<Vec<_>>>()?;
    let kernels = if args.kernels.is_empty() { ccl::binarize::KernelKind::ALL.to_vec() } else { args.kernels.clone() };
    let params = args.method.params();
    let bench = benchmark::binarize::BinarizeBench {
        devices,
        windows: args.windows.clone(),
        kernels,
        params,
        runs: args.runs,
        warmup: args.warmup,
        cpu_paper_window: args.cpu_paper_window,
        algorithm: args.algo.unwrap_or_else(|| Algorithm::default_for(Connectivity::Eight)),
        timing: args.timing.timing,
    };
    for &window in &bench.windows {
        ccl::binarize::Params { window, ..params }.validate()?;
    }
    let pages = benchmark::binarize::pages(args.pages.as_deref(), args.size, args.page_limit)?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("bench-out/binarize"));
    let werr = |p: &Path, e: String| Error::FileWrite { path: p.display().to_string(), reason: e };
    std::fs::create_dir_all(&out).map_err(|e| werr(&out, e.to_string()))?;
    if args.save_images {
        let (name, page) = &pages[0];
        let path = out.join("images").join("page.npy");
        std::fs::create_dir_all(out.join("images")).map_err(|e| werr(&path, e.to_string()))?;
        ccl::io::write_npy_u8(&path, (page.width(), page.height()), page.values().iter().copied())?;
        say!("saved {name} as {}", path.display());
    }
    let path = out.join("results.csv");
    let mut writer = csv::Writer::from_path(&path).map_err(|e| werr(&path, e.to_string()))?;
    let records = benchmark::binarize::run(&bench, &pages, |r| {
        say!(
            "{} {} {} W={} {}: median {:.4} ms (min {:.4})",
            r.device_id,
            r.image,
            r.setting,
            r.window,
            r.kernel,
            r.median_ms,
            r.min_ms
        );
        writer.serialize(r).and_then(|()| writer.flush().map_err(Into::into)).map_err(|e| werr(&path, e.to_string()))
    })?;
    let summary = benchmark::binarize::summary(&records);
    let md = out.join("summary.md");
    write_atomically(&md, |o| std::io::Write::write_all(o, summary.as_bytes()))
        .map_err(|e| werr(&md, e.to_string()))?;
    let plot = out.join("windows.svg");
    benchmark::binarize::plot(&records, &pages[0].0, &plot)?;
    say!("{summary}");
    say!("wrote {}, {}, {}", path.display(), md.display(), plot.display());
    Ok(())
}

/// `ccl bench folder`.
fn bench_folder(args: FolderBenchArgs) -> Result<()> {
    let devices = super::device_choice::open_devices_announced(
        args.devices.as_ref(),
        None,
        super::device_choice::BackendChoice::Auto,
    )?;
    let listing = ccl::io::list_images(&args.folder)?;
    if listing.images.is_empty() {
        return Err(Error::FileRead {
            path: args.folder.display().to_string(),
            reason: "no image file in the folder".into(),
        });
    }
    let connectivity = Connectivity::Eight;
    let algorithm = match args.algo {
        Some(a) => a,
        None => super::label_args::common_default(&devices, connectivity)?,
    };
    let mut options = ccl::batch::BatchOptions::new(algorithm, connectivity);
    options.jobs = args.jobs.map_or_else(ccl::batch::cores, |n| n as usize);
    options.workers = args.workers as usize;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("bench-out/folder"));
    let scratch = args.scratch.clone().unwrap_or_else(|| out.join("scratch"));
    let werr = |p: &Path, e: String| Error::FileWrite { path: p.display().to_string(), reason: e };
    std::fs::create_dir_all(&out).map_err(|e| werr(&out, e.to_string()))?;
    let ids: Vec<String> = devices.iter().map(|d| d.info().id.to_string()).collect();
    let setting = format!(
        "{} images of {}, {algorithm} on {}, {} jobs, {} labelers a device, outputs in {} ({}), {} rounds",
        listing.images.len(),
        args.folder.display(),
        ids.join(","),
        options.jobs,
        options.workers,
        scratch.display(),
        if ccl::io::synced_writes() { "synced" } else { "not synced" },
        args.rounds
    );
    let bench = benchmark::folder::FolderBench {
        files: &listing.images,
        scratch: &scratch,
        devices: &devices,
        options,
        read: ccl::io::ReadOptions::default(),
        rounds: args.rounds,
    };
    let times = benchmark::folder::run(&bench, |round, stage| note!("round {round}: {stage}"))?;
    let _ = std::fs::remove_dir(&scratch);
    let summary = benchmark::folder::summary_markdown(&times, &setting);
    let md = out.join("summary.md");
    write_atomically(&md, |o| std::io::Write::write_all(o, summary.as_bytes()))
        .map_err(|e| werr(&md, e.to_string()))?;
    say!("{summary}");
    say!("wrote {}", md.display());
    Ok(())
}
