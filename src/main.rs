//! The `ccl` command line: list devices, label images.

use std::path::PathBuf;
use std::process::ExitCode;

use ccl::io::{read_binary, write_labels, Binarize};
use ccl::{Algorithm, BackendKind, Connectivity, Device, DeviceId, DeviceInfo, Labeler};
use clap::{Parser, Subcommand, ValueEnum};

mod cli_bench;

#[derive(Parser)]
#[command(name = "ccl", version, about = "GPU connected-components labeling on OpenCL and CUDA")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every device (CUDA, OpenCL, CPU reference) with the identifier to pass to --device.
    Devices,
    /// Label the connected components of an image.
    Label(LabelArgs),
    /// Benchmark algorithms and backends (tables, results.csv, plots).
    #[command(subcommand)]
    Bench(cli_bench::BenchCommand),
    /// Write a random binary image (MT19937, the papers' density x granularity images) as PNG.
    Generate(GenerateArgs),
}

#[derive(clap::Args)]
struct GenerateArgs {
    /// Output PNG (foreground 255, background 0).
    #[arg(short, long)]
    output: PathBuf,
    /// Width in pixels.
    #[arg(long, default_value_t = 2048)]
    width: usize,
    /// Height in pixels.
    #[arg(long, default_value_t = 2048)]
    height: usize,
    /// Foreground density, percent (0-100).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    density: u32,
    /// Side of the squares each random draw decides (1 = per pixel).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    granularity: u64,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

#[derive(clap::Args)]
struct LabelArgs {
    /// Input image (any format the `image` crate reads; color is converted to gray). Without
    /// it, a built-in sample page is labeled.
    input: Option<PathBuf>,
    /// Output file: .npy (uint32, shape (H, W)), .png (colorized) or .tiff (32-bit labels).
    #[arg(short, long, default_value = "labels.png")]
    output: PathBuf,
    /// Algorithm: LE, OLE, BE, UF, UF_IC, KE, KE_IC, BUF, BUF_IC, BKE, BKE_IC (any case, - or _).
    #[arg(long, default_value = "uf")]
    algo: Algorithm,
    /// Backend; auto prefers CUDA, then an OpenCL GPU, then any OpenCL device, then the CPU.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Device identifier from `ccl devices` (cpu, opencl:N, cuda:N); implies its backend.
    #[arg(long)]
    device: Option<DeviceId>,
    /// Pixel connectivity.
    #[arg(long, value_enum, default_value_t = ConnectivityChoice::Eight)]
    connectivity: ConnectivityChoice,
    /// Foreground is gray > T (default: any nonzero pixel).
    #[arg(long)]
    threshold: Option<u8>,
    /// Swap foreground and background (after thresholding): dark ink becomes foreground.
    #[arg(long)]
    invert: bool,
    /// Keep the algorithm's raw labels instead of renumbering them 1..N in raster order.
    #[arg(long)]
    raw: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ConnectivityChoice {
    #[value(name = "4")]
    Four,
    #[value(name = "8")]
    Eight,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendChoice {
    Auto,
    Cpu,
    Opencl,
    Cuda,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices => devices(),
        Command::Label(args) => label(args),
        Command::Generate(args) => generate(args),
        Command::Bench(command) => cli_bench::bench(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn devices() -> ccl::Result<()> {
    let found = ccl::discover();
    for d in &found.devices {
        println!("{d}");
    }
    for (backend, reason) in &found.unavailable {
        println!("# {backend}: {reason}");
    }
    Ok(())
}

/// The device to use, and a sentence saying how it was chosen.
fn choose_device(args: &LabelArgs) -> ccl::Result<(DeviceInfo, String)> {
    let first_of = |backend: BackendKind| -> ccl::Result<DeviceInfo> {
        let found = ccl::discover();
        found.devices.into_iter().find(|d| d.id.backend() == backend).ok_or_else(|| {
            let reason = found.unavailable.iter().find(|(b, _)| *b == backend).map(|(_, r)| r.clone());
            ccl::Error::BackendUnavailable { backend, reason: reason.unwrap_or_else(|| "no device".into()) }
        })
    };
    if let Some(id) = args.device {
        let wanted = match args.backend {
            BackendChoice::Auto => None,
            BackendChoice::Cpu => Some(BackendKind::Cpu),
            BackendChoice::Opencl => Some(BackendKind::OpenCl),
            BackendChoice::Cuda => Some(BackendKind::Cuda),
        };
        if wanted.is_some_and(|b| b != id.backend()) {
            return Err(ccl::Error::UnknownDevice {
                id: id.to_string(),
                reason: "it does not belong to the backend given with --backend".into(),
            });
        }
        let info = ccl::discover().devices.into_iter().find(|d| d.id == id);
        let info = info.unwrap_or(DeviceInfo { id, name: id.to_string(), ..DeviceInfo::cpu() });
        return Ok((info, "given with --device".into()));
    }
    Ok(match args.backend {
        BackendChoice::Auto => (ccl::auto_device(), "chosen by --backend auto".into()),
        BackendChoice::Cpu => (DeviceInfo::cpu(), "--backend cpu".into()),
        BackendChoice::Opencl => (first_of(BackendKind::OpenCl)?, "first OpenCL device".into()),
        BackendChoice::Cuda => (first_of(BackendKind::Cuda)?, "first CUDA device".into()),
    })
}

fn label(args: LabelArgs) -> ccl::Result<()> {
    let connectivity = match args.connectivity {
        ConnectivityChoice::Four => Connectivity::Four,
        ConnectivityChoice::Eight => Connectivity::Eight,
    };
    let image = match &args.input {
        Some(path) => read_binary(path, Binarize { threshold: args.threshold, invert: args.invert })?,
        None => {
            println!("input: built-in sample page (1024x768); pass an image path to label your own");
            ccl::sample_image()
        }
    };
    let (info, how) = choose_device(&args)?;
    println!("device: {} {} ({how})", info.id, info.name);
    let device = Device::open(info.id)?;
    let mut labeler = device.labeler(args.algo)?;
    let result = labeler.label(&image, connectivity)?;
    let (consecutive, count) = result.labels.to_consecutive();
    let output = if args.raw { &result.labels } else { &consecutive };
    write_labels(&args.output, output)?;
    let t = &result.timings;
    let phases: Vec<String> = t.phases.iter().map(|p| format!("{} {:.3}", p.phase, p.ms)).collect();
    println!(
        "{count} components ({}x{}, {}, {connectivity}) in {:.3} ms labeling; phases ms: {}",
        image.width(),
        image.height(),
        args.algo,
        t.labeling_ms(),
        phases.join(", ")
    );
    println!("wrote {}", args.output.display());
    Ok(())
}

fn generate(args: GenerateArgs) -> ccl::Result<()> {
    let image = ccl::random_image(args.width, args.height, args.density, args.granularity as usize, args.seed)?;
    let pixels = image.pixels().iter().map(|&p| p * 255).collect();
    let gray = image::GrayImage::from_raw(image.width() as u32, image.height() as u32, pixels)
        .expect("the buffer has width x height pixels");
    gray.save(&args.output)
        .map_err(|e| ccl::Error::ImageWrite { path: args.output.display().to_string(), reason: e.to_string() })?;
    println!(
        "wrote {} ({}x{}, density {}%, granularity {}, seed {})",
        args.output.display(),
        args.width,
        args.height,
        args.density,
        args.granularity,
        args.seed
    );
    Ok(())
}
