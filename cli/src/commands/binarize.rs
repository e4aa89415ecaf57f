//! `ccl binarize`: threshold a gray page on a device and write ink 0 / background 255 (DIBCO's
//! convention).

use std::path::PathBuf;

use ccl::binarize::{KernelKind, Method, NickFormula, Params};
use ccl::{io, Result};

use super::args::{parse, FolderFormat};
use super::console::say;
use super::device_choice::{
    device_list, note_slow_builds, open_device_announced, open_devices_announced, BackendChoice, DeviceList,
};

/// The method and parameters, as `ccl binarize` takes them.
#[derive(clap::Args, Clone, Debug)]
pub struct MethodArgs {
    /// Thresholding method.
    #[arg(long, default_value = "nick", value_parser = parse::<Method>)]
    pub method: Method,
    /// Side of the square window in pixels, 1-2048 (default: the method's, nick 45, niblack,
    /// sauvola, wolf 15); an even window reaches one pixel further right and down.
    #[arg(long)]
    pub window: Option<u32>,
    /// The method's k (default: nick -0.1, niblack -0.2, sauvola and wolf 0.5).
    #[arg(long, allow_hyphen_values = true)]
    pub k: Option<f64>,
    /// Sauvola's dynamic range of the deviation, R.
    #[arg(long, default_value_t = 128.0)]
    pub r: f64,
    /// Nick's threshold: paper = m + k sqrt((S2 - m^2) / NP) (the seed paper's Eq. 1), doxa = m +
    /// k sqrt(S2 / NP), opencv = ximgproc's (replicated border, T rounded to u8, odd windows).
    #[arg(long, default_value = "paper", value_parser = parse::<NickFormula>)]
    pub formula: NickFormula,
    /// Kernel computing the window sums: the paper's global, global-shared, shared (O(W^2) per
    /// pixel), or fast (O(1) per pixel). All give the same result.
    #[arg(long, default_value = "fast", value_parser = parse::<KernelKind>)]
    pub kernel: KernelKind,
}

impl MethodArgs {
    /// The parameters these arguments give.
    pub fn params(&self) -> Params {
        let defaults = self.method.defaults();
        Params {
            window: self.window.unwrap_or(defaults.window),
            k: self.k.unwrap_or(defaults.k),
            r: self.r,
            formula: self.formula,
            kernel: self.kernel,
            ..defaults
        }
    }
}

#[derive(clap::Args)]
pub struct BinarizeArgs {
    /// Input page: any image format `ccl label` reads, or a .npy of uint8 or uint16 in C order,
    /// shape (H, W) gray or (H, W, 3|4) RGB(A); color becomes gray as OpenCV's
    /// cvtColor(RGB2GRAY): (4899 R + 9617 G + 1868 B + 8192) >> 14; 16-bit samples are brought
    /// to 8 bits (v / 257, rounded). A folder: every image in it (see --format).
    pub(super) input: PathBuf,
    /// Output: .png or .tiff (8-bit gray) or .npy (uint8), ink 0 and background 255; for a
    /// folder input, the output folder (made if missing).
    #[arg(short, long)]
    pub(super) output: PathBuf,
    /// For a folder input: the format of every output page, written as OUTDIR/NAME.FORMAT.
    #[arg(long, value_enum, default_value_t = FolderFormat::Png)]
    pub(super) format: FolderFormat,
    #[command(flatten)]
    pub(super) method: MethodArgs,
    /// Backend; auto prefers CUDA, then an OpenCL GPU, then any OpenCL device, then the CPU.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(super) backend: BackendChoice,
    /// Device identifier from `ccl devices` (cpu, opencl:N, cuda:N); implies its backend.
    #[arg(long)]
    pub(super) device: Option<ccl::DeviceId>,
    /// For a folder input: spread the pages over these devices, each page to the one that is
    /// free: identifiers separated by commas (`cuda:0,cuda:1`), or `all` (every GPU or
    /// accelerator that opens). The outputs are those of one device.
    #[arg(long, value_name = "LIST", value_parser = device_list, conflicts_with_all = ["device", "backend"])]
    pub(super) devices: Option<DeviceList>,
    /// For a folder input: threads decoding the pages, and as many writing the outputs
    /// (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(super) jobs: Option<u64>,
    /// Refuse inputs with more pixels than this, before decoding them.
    #[arg(long, default_value_t = ccl::MAX_PIXELS, value_parser = clap::value_parser!(u64).range(1..=ccl::MAX_PIXELS))]
    pub(super) max_pixels: u64,
}

/// Runs `ccl binarize`.
pub fn binarize(args: BinarizeArgs) -> Result<()> {
    let params = args.method.params();
    params.validate()?;
    if args.input.is_dir() {
        let devices = open_devices_announced(args.devices.as_ref(), args.device, args.backend)?;
        let ext = args.format.extension();
        let jobs = args.jobs.map_or_else(ccl::batch::cores, |n| n as usize);
        return super::folder::pages_folder(
            &args.input,
            &args.output,
            ext,
            &params,
            None,
            &devices,
            jobs,
            args.max_pixels,
        );
    }
    if args.devices.is_some() {
        return Err(ccl::Error::InvalidParameter {
            name: "devices".into(),
            reason: "spreads a folder of pages over devices; for one file, give --device".into(),
        });
    }
    io::LabelFormat::from_path(&args.output)?;
    super::outputs::check(&[("-o", &args.output)], &io::input_files(&args.input))?;
    let (page, source) = io::read_gray(&args.input, args.max_pixels)?;
    say!("input: {} ({}x{}, {})", args.input.display(), page.width(), page.height(), source.describe());
    let device = open_device_announced(args.device, args.backend)?;
    let mut binarizer = device.binarizer()?;
    let (ink, timings) = binarizer.binarize(&page, &params)?;
    note_slow_builds(&device);
    io::write_binary(&args.output, &ink)?;
    let count = ink.values().iter().filter(|&&p| p != 0).count();
    say!(
        "{} ({} kernel): {count} ink pixels ({:.2} %) in {:.3} ms on the device; phases ms: {}",
        params.describe(),
        if params.method.is_local() { params.kernel.name() } else { "histogram" },
        100.0 * count as f64 / ink.values().len() as f64,
        timings.labeling_ms(),
        timings.phase_list()
    );
    say!("wrote {}", args.output.display());
    std::mem::forget(binarizer);
    std::mem::forget(device);
    Ok(())
}
