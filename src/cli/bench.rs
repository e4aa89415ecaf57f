//! `ccl bench`: the command-line front of [`ccl::bench`].

use std::path::{Path, PathBuf};

use ccl::bench::{self, BenchOptions, Input, Mode, RecordWriter};
use ccl::io::Binarize;
use ccl::{Algorithm, Connectivity, DeviceId, Error, Result};
use clap::{Args, Subcommand};
use npyz::WriterBuilder;

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
    /// Re-draw the tables and plots from results files (ccl's and the peers script's).
    Plot(PlotArgs),
}

#[derive(Args)]
pub struct Common {
    /// Algorithms, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    algos: Vec<Algorithm>,
    /// Devices, comma-separated: cuda:N, opencl:N, cpu (default: every device found).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<DeviceId>,
    /// Connectivity (4 or 8); algorithms that do not support it are skipped.
    #[arg(long, default_value = "8", value_parser = parse_connectivity)]
    connectivity: Connectivity,
    /// Timed runs per input; the minimum is kept.
    #[arg(long, default_value_t = 10)]
    runs: u32,
    /// Untimed warm-up runs per input.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Output folder for results.csv, summary.md and the plots (default: bench-out/MODE).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write the inputs (images/NAME.npy, uint8 0/1, and images/inputs.csv) for the peers
    /// script.
    #[arg(long)]
    save_images: bool,
}

#[derive(Args)]
pub struct DatasetArgs {
    #[command(flatten)]
    common: Common,
    /// Folder of images (every file the `image` crate reads); without it, random images.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// With --dataset: foreground is gray > T (default: nonzero).
    #[arg(long)]
    threshold: Option<u8>,
    /// With --dataset: swap foreground and background (dark ink is foreground).
    #[arg(long)]
    invert: bool,
    /// Without --dataset: size of the random images, WxH.
    #[arg(long, default_value = "2048x2048", value_parser = parse_size)]
    size: (usize, usize),
    /// Without --dataset: density of the random images, percent.
    #[arg(long, default_value_t = 50)]
    density: u32,
    /// Without --dataset: number of random images.
    #[arg(long, default_value_t = 3)]
    images: u32,
    /// MT19937 seed of the first random image.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct DensityArgs {
    #[command(flatten)]
    common: Common,
    /// Image size, WxH.
    #[arg(long, default_value = "2048x2048", value_parser = parse_size)]
    size: (usize, usize),
    /// Densities, percent: FROM:TO:STEP or a comma list.
    #[arg(long, default_value = "0:100:10", value_parser = parse_range)]
    densities: Densities,
    /// Granularities, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    granularities: Vec<u32>,
    /// Images per point.
    #[arg(long, default_value_t = 3)]
    images: u32,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct SizeArgs {
    #[command(flatten)]
    common: Common,
    /// Side lengths of the square images, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "256,512,1024,2048,4096,8192,16384")]
    sizes: Vec<usize>,
    /// Density, percent.
    #[arg(long, default_value_t = 50)]
    density: u32,
    /// Granularity.
    #[arg(long, default_value_t = 1)]
    granularity: u32,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(Args)]
pub struct PlotArgs {
    /// Results files (CSV written by `ccl bench` or scripts/peers.py).
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    results: Vec<PathBuf>,
    /// Which summary and plots: average, steps, density, size (default: the mode in the files).
    #[arg(long)]
    mode: Option<String>,
    /// Output folder for summary.md and plots.
    #[arg(long)]
    out: PathBuf,
}

fn parse_size(s: &str) -> std::result::Result<(usize, usize), String> {
    let (w, h) = s.split_once(['x', 'X']).unwrap_or((s, s));
    let n = |v: &str| v.trim().parse::<usize>().map_err(|_| format!("'{s}' is not WxH"));
    Ok((n(w)?, n(h)?))
}

/// A list of densities, percent.
#[derive(Clone, Debug)]
pub struct Densities(Vec<u32>);

fn parse_range(s: &str) -> std::result::Result<Densities, String> {
    let bad = || format!("'{s}' is not FROM:TO:STEP or a comma list of percentages");
    let values: Vec<u32> = if let Some((from, rest)) = s.split_once(':') {
        let (to, step) = rest.split_once(':').unwrap_or((rest, "1"));
        let (from, to, step): (u32, u32, u32) =
            (from.parse().map_err(|_| bad())?, to.parse().map_err(|_| bad())?, step.parse().map_err(|_| bad())?);
        if step == 0 {
            return Err(bad());
        }
        (from..=to).step_by(step as usize).collect()
    } else {
        s.split(',').map(|v| v.trim().parse().map_err(|_| bad())).collect::<std::result::Result<_, _>>()?
    };
    if values.iter().any(|&v| v > 100) {
        return Err(format!("'{s}': densities are percentages, 0 to 100"));
    }
    Ok(Densities(values))
}

fn parse_connectivity(s: &str) -> std::result::Result<Connectivity, String> {
    s.trim()
        .parse()
        .ok()
        .and_then(Connectivity::from_neighbours)
        .ok_or_else(|| format!("'{s}': connectivity is 4 or 8"))
}

fn options(common: &Common, mode: Mode) -> Result<BenchOptions> {
    let connectivity = common.connectivity;
    let algorithms = if common.algos.is_empty() { Algorithm::ALL.to_vec() } else { common.algos.clone() };
    let devices = if common.devices.is_empty() {
        ccl::discover().devices.into_iter().map(|d| d.id).collect()
    } else {
        common.devices.clone()
    };
    Ok(BenchOptions {
        mode,
        algorithms,
        devices,
        connectivity,
        runs: common.runs,
        warmup: common.warmup,
        progress: true,
    })
}

fn save_inputs(dir: &Path, inputs: &[Input]) -> Result<()> {
    let images = dir.join("images");
    let werr = |p: &Path, e: String| Error::ImageWrite { path: p.display().to_string(), reason: e };
    std::fs::create_dir_all(&images).map_err(|e| werr(&images, e.to_string()))?;
    let manifest = images.join("inputs.csv");
    let mut list = csv::Writer::from_path(&manifest).map_err(|e| werr(&manifest, e.to_string()))?;
    list.write_record(["name", "file", "width", "height", "density", "granularity"])
        .map_err(|e| werr(&manifest, e.to_string()))?;
    for input in inputs {
        let file = format!("{}.npy", input.name);
        let path = images.join(&file);
        let (w, h) = (input.image.width() as u64, input.image.height() as u64);
        npyz::WriteOptions::<u8>::new()
            .default_dtype()
            .shape(&[h, w])
            .writer(std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| werr(&path, e.to_string()))?))
            .begin_nd()
            .and_then(|mut wr| {
                wr.extend(input.image.pixels().iter().map(|&p| u8::from(p != 0)))?;
                wr.finish()
            })
            .map_err(|e| werr(&path, e.to_string()))?;
        let row = [
            input.name.clone(),
            file,
            w.to_string(),
            h.to_string(),
            input.density.to_string(),
            input.granularity.to_string(),
        ];
        list.write_record(&row).map_err(|e| werr(&manifest, e.to_string()))?;
    }
    list.flush().map_err(|e| werr(&manifest, e.to_string()))
}

fn measure(common: &Common, mode: Mode, inputs: Vec<Input>) -> Result<()> {
    let opts = options(common, mode)?;
    let out = common.out.clone().unwrap_or_else(|| PathBuf::from("bench-out").join(mode.name()));
    if common.save_images {
        save_inputs(&out, &inputs)?;
    }
    let results = out.join("results.csv");
    println!(
        "{} inputs x {} devices x {} algorithms, {} runs each after {} warm-up; writing {}",
        inputs.len(),
        opts.devices.len(),
        opts.algorithms.len(),
        opts.runs,
        opts.warmup,
        results.display()
    );
    let mut writer = RecordWriter::create(&results)?;
    let records = bench::run(&opts, &inputs, &mut writer)?;
    report(&records, mode, &out)
}

fn report(records: &[bench::Record], mode: Mode, out: &Path) -> Result<()> {
    let summary = bench::summary_markdown(records, mode);
    println!("\n{summary}");
    let path = out.join("summary.md");
    std::fs::create_dir_all(out)
        .map_err(|e| Error::ImageWrite { path: out.display().to_string(), reason: e.to_string() })?;
    std::fs::write(&path, &summary)
        .map_err(|e| Error::ImageWrite { path: path.display().to_string(), reason: e.to_string() })?;
    let plots = bench::write_plots(records, mode, out)?;
    println!("wrote {} and {} plots in {}", path.display(), plots.len(), out.display());
    Ok(())
}

fn dataset_inputs(a: &DatasetArgs) -> Result<Vec<Input>> {
    match &a.dataset {
        Some(dir) => bench::directory_inputs(dir, Binarize { threshold: a.threshold, invert: a.invert }),
        None => bench::random_inputs(a.size, a.density, 1, a.images, a.seed),
    }
}

/// Runs one `ccl bench` command.
pub fn bench(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Average(a) => measure(&a.common, Mode::Average, dataset_inputs(&a)?),
        BenchCommand::Steps(a) => measure(&a.common, Mode::Steps, dataset_inputs(&a)?),
        BenchCommand::Density(d) => {
            let inputs = bench::density_inputs(d.size, &d.densities.0, &d.granularities, d.images, d.seed)?;
            measure(&d.common, Mode::Density, inputs)
        }
        BenchCommand::Size(s) => {
            let inputs = bench::size_inputs(&s.sizes, s.density, s.granularity, s.seed)?;
            measure(&s.common, Mode::Size, inputs)
        }
        BenchCommand::Plot(p) => {
            let records = bench::read_records(&p.results)?;
            let name = p.mode.clone().or_else(|| records.first().map(|r| r.mode.clone())).unwrap_or_default();
            let mode = Mode::from_name(&name).ok_or_else(|| Error::ImageRead {
                path: p.results[0].display().to_string(),
                reason: format!("unknown mode '{name}' (average, steps, density, size)"),
            })?;
            report(&records, mode, &p.out)
        }
    }
}
