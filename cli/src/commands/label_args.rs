//! The arguments of `ccl label`, which its folder mode (`super::folder`) reads too.

use std::path::PathBuf;

use ccl::io::{Binarize, ReadOptions};
use ccl::{Algorithm, Connectivity, DeviceId, Result};

use super::args::{self, FolderFormat};
use super::console::note;
use super::device_choice::{self, BackendChoice, DeviceList};

#[derive(clap::Args)]
pub struct LabelArgs {
    /// Input image (PNG, JPEG, TIFF, BMP, PNM, GIF, WebP; 8- or 16-bit, gray or color, float
    /// TIFF), a multi-page TIFF (a volume: one slice per page), a .npy of bool, any integer type
    /// or float32/64 (shape (H, W): an image; (D, H, W): a volume; nonzero is foreground), a
    /// zarr array (a folder NAME.zarr, v2 or v3, of the same types; read a slab at a time), or a
    /// folder of images
    /// (every file with an image extension, each labeled on its own; with --volume, the slices
    /// of one volume). Without it, a built-in sample page is labeled.
    pub(super) input: Option<PathBuf>,
    /// Output file: .npy (uint32, shape (H, W), or (D, H, W) for a volume), .png (colorized;
    /// images only), .tif/.tiff (32-bit labels; for a volume one page per slice) or .zarr (a
    /// zarr v3 array, zstd-compressed, written a slab at a time);
    /// written to a temporary file, then renamed, so it is never left half-written. For a folder
    /// input without --volume, the output folder (made if missing): one NAME.FORMAT per input
    /// NAME.*.
    #[arg(short, long, default_value = "labels.png")]
    pub(super) output: PathBuf,
    /// Read the input as one volume and label it in 3D: a folder's images, sorted by name, are
    /// its slices (z = 0 first, all of one size, each binarized like an image); a TIFF's pages
    /// are its slices (a single page too); a .npy must have shape (D, H, W). Without it, a
    /// folder is a batch of independent images, and only multi-page TIFFs and (D, H, W) .npy
    /// files are volumes.
    #[arg(long)]
    pub(super) volume: bool,
    /// For a folder input: the output format of every file.
    #[arg(long, value_enum, default_value_t = FolderFormat::Npy)]
    pub(super) format: FolderFormat,
    #[arg(long, help = args::algorithm_help(), long_help = args::algorithm_long_help())]
    pub(super) algo: Option<Algorithm>,
    /// Backend; auto prefers CUDA, then an OpenCL GPU, then any OpenCL device, then the CPU.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(super) backend: BackendChoice,
    /// Device identifier from `ccl devices` (cpu, opencl:N, cuda:N); implies its backend.
    #[arg(long)]
    pub(super) device: Option<DeviceId>,
    /// For a folder input: spread the images over these devices, each image to the one that is
    /// free: identifiers separated by commas (`cuda:0,cuda:1`, any mix of backends), or `all`
    /// (every GPU or accelerator that opens). The outputs are those of one device. For one image
    /// or volume: label it in slabs, one slab on each device at a time, joined exactly.
    #[arg(long, value_name = "LIST", value_parser = device_choice::device_list, conflicts_with_all = ["device", "backend"])]
    pub(super) devices: Option<DeviceList>,
    /// For a folder input: threads decoding the inputs, and as many writing the outputs
    /// (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(super) jobs: Option<u64>,
    /// Connectivity: 4 or 8 for images (default 8), 6, 18 or 26 for volumes (default 26).
    #[arg(long, value_parser = args::any_connectivity)]
    pub(super) connectivity: Option<Connectivity>,
    /// Foreground is gray > T, with T in the input's own range: 0-255 for 8-bit images, 0-65535
    /// for 16-bit, the stored values for float (color is converted to gray with Rec. 709
    /// weights at full depth). Default: any nonzero color channel is foreground. For a volume
    /// of TIFF pages or image slices, applied to each slice.
    #[arg(long, value_parser = args::threshold, allow_negative_numbers = true)]
    pub(super) threshold: Option<f64>,
    /// Swap foreground and background (after thresholding): dark ink becomes foreground.
    #[arg(long)]
    pub(super) invert: bool,
    /// Binarize the (gray) page on the device first and label its ink, without the image
    /// leaving the device: METHOD[:window=W,k=K,r=R,formula=F,kernel=K] with METHOD nick,
    /// sauvola, niblack, wolf or otsu, e.g. `nick:window=45,k=-0.1` (see `ccl binarize`).
    #[arg(long, value_parser = args::binarize_spec, conflicts_with_all = ["threshold", "invert", "volume"])]
    pub(super) binarize: Option<ccl::binarize::Params>,
    /// Label a multi-label image: a .npy of integer (or bool) values, classes or a segmentation,
    /// whose components are the connected sets of equal values (as cc3d and scikit-image label a
    /// label image), so two classes that touch stay apart; every value but --background is
    /// foreground. Labeled whole, by TUF for images and 6-connected volumes (KE at 18 and 26)
    /// unless --algo names another that can (LE, OLE, UF, UF_IC, KE, KE_IC, TUF).
    #[arg(long, conflicts_with_all = ["threshold", "invert", "binarize", "volume", "devices", "max_device_bytes"])]
    pub(super) multilabel: bool,
    /// For a .npy of integer (or bool) values: the value of background elements (default 0), one
    /// of the input's type (e.g. -1 for int16 labels); every other value is foreground (with
    /// --multilabel, each value its own class). Labeled whole.
    #[arg(long, value_name = "V", allow_negative_numbers = true, conflicts_with_all = ["threshold", "invert", "binarize", "devices", "max_device_bytes", "volume"])]
    pub(super) background: Option<i128>,
    /// Keep the algorithm's raw labels instead of renumbering them 1..N in raster order.
    #[arg(long)]
    pub(super) raw: bool,
    /// Also write each component's statistics, computed on the device, to this CSV file: one row
    /// per label 1..N with `label,left,top,width,height,area,cx,cy` (OpenCV's
    /// connectedComponentsWithStats order; cx, cy the centroid), for a volume
    /// `label,left,top,front,width,height,depth,area,cx,cy,cz`.
    #[arg(long, value_name = "CSV", conflicts_with = "raw")]
    pub(super) stats: Option<PathBuf>,
    /// Write scikit-image's region properties to the --stats CSV instead, computed on the
    /// device: a comma-separated list of its names (area, bbox, centroid, perimeter,
    /// euler_number, moments_central, moments_normalized, moments_hu, orientation, eccentricity,
    /// axis_major_length, axis_minor_length, intensity_mean, ...; see docs/cli.md), one column
    /// per value as regionprops_table names them (bbox-0, ...), `label` first. One image or
    /// volume at a time.
    #[arg(long, value_name = "NAMES", requires = "stats", value_parser = args::property, value_delimiter = ',')]
    pub(super) properties: Option<Vec<ccl::Property>>,
    /// The pixel spacing along each axis for --properties, rows first (`0.5,0.5`; volumes
    /// `2,1,1`), as scikit-image's `spacing`.
    #[arg(long, value_name = "S,S[,S]", requires = "properties", value_parser = args::spacing, value_delimiter = ',')]
    pub(super) spacing: Option<Vec<f64>>,
    /// The intensity image of the intensity properties (intensity_mean, _min, _max): a gray
    /// image (or .npy) of the labeled image's size. Images only.
    #[arg(long, value_name = "IMAGE", requires = "properties")]
    pub(super) intensity: Option<PathBuf>,
    /// Remove the components of fewer than N pixels (voxels), on the device; the others are
    /// renumbered 1..M in raster order of first appearance.
    #[arg(long, value_name = "N", conflicts_with = "raw", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) min_size: Option<u64>,
    /// Keep only the K largest components (after --min-size; of equal sizes, the first ones), on
    /// the device; they are renumbered 1..K in raster order of first appearance.
    #[arg(long, value_name = "K", conflicts_with = "raw", value_parser = clap::value_parser!(u64).range(0..))]
    pub(super) keep_largest: Option<u64>,
    /// Refuse inputs with more pixels (a volume: voxels) than this, before decoding them (a guard
    /// against files that decode to huge images). Default and maximum: 4294967295, the limit of
    /// 32-bit labels; without it, a .npy past that limit is labeled in slabs with 64-bit labels.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=ccl::MAX_PIXELS))]
    pub(super) max_pixels: Option<u64>,
    /// The width of the output labels: 32 (uint32) or 64 (uint64, written as .npy). Default: 32,
    /// or 64 for a .npy of more than 4294967295 elements. 64-bit labels are made in slabs along
    /// the slowest axis (see --max-device-bytes), each labeled on the device and joined exactly.
    #[arg(long, value_name = "BITS", value_parser = label_bits)]
    pub(super) label_bits: Option<u32>,
    /// Cap the device memory the labeling takes, in bytes: the image or volume is labeled in
    /// slabs of whole rows (slices) that each fit, joined exactly on the host (the same labels as
    /// labeling it whole). Also set by the environment variable CCL_MAX_DEVICE_BYTES.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) max_device_bytes: Option<u64>,
    /// Also say where the wall time went (device, kernels from the cache or compiled, reading,
    /// labeling, writing), for an image, a volume, a --binarize page or a folder (opening the
    /// devices, listing, choosing the algorithm, the images, the volumes).
    #[arg(short, long)]
    pub(super) verbose: bool,
}

/// The algorithm every device of `devices` runs: of their defaults (`Device::default_algorithm`,
/// each reason a device cannot run the first said on standard error), the one ranked last (the
/// devices' labels are then the same).
pub(super) fn common_default(devices: &[ccl::Device], connectivity: Connectivity) -> Result<Algorithm> {
    let ranking = Algorithm::ranking(connectivity);
    let rank = |a: &Algorithm| ranking.iter().position(|r| r == a).unwrap_or(usize::MAX);
    let mut chosen: Option<Algorithm> = None;
    for device in devices {
        let (algorithm, why) = device.default_algorithm(connectivity)?;
        if let Some(why) = why {
            note!("note: {why}");
        }
        if chosen.is_none_or(|c| rank(&algorithm) > rank(&c)) {
            chosen = Some(algorithm);
        }
    }
    chosen.ok_or_else(|| ccl::Error::InvalidParameter { name: "devices".into(), reason: "none given".into() })
}

impl LabelArgs {
    /// `--connectivity` for an image: 8 unless given.
    pub(super) fn image_connectivity(&self) -> Connectivity {
        self.connectivity.unwrap_or(Connectivity::Eight)
    }

    /// `--algo`, or the default for `connectivity` on `device` (`Device::default_algorithm`:
    /// the fastest it runs), saying so on standard error where the device cannot run the first.
    pub(super) fn algorithm(&self, device: &ccl::Device, connectivity: Connectivity) -> Result<Algorithm> {
        if let Some(algorithm) = self.algo {
            return Ok(algorithm);
        }
        let (algorithm, why) = device.default_algorithm(connectivity)?;
        if let Some(why) = why {
            note!("note: {why}");
        }
        Ok(algorithm)
    }

    /// `--algo`, or the algorithm every device of `devices` runs ([`common_default`]).
    pub(super) fn common_algorithm(&self, devices: &[ccl::Device], connectivity: Connectivity) -> Result<Algorithm> {
        match self.algo {
            Some(algorithm) => Ok(algorithm),
            None => common_default(devices, connectivity),
        }
    }

    /// `--jobs`, or one thread a core.
    pub(super) fn jobs(&self) -> usize {
        self.jobs.map_or_else(ccl::batch::cores, |n| n as usize)
    }

    /// How the inputs are read: `--threshold`, `--invert`, `--max-pixels`.
    pub(super) fn read_options(&self) -> ReadOptions {
        ReadOptions {
            binarize: Binarize { threshold: self.threshold, invert: self.invert },
            max_pixels: self.max_pixels(),
        }
    }

    /// The pipeline options of `--raw`, `--stats`, `--min-size` then `--keep-largest` (statistics
    /// and filters imply consecutive labels).
    pub(super) fn options(&self, connectivity: Connectivity) -> ccl::Options {
        let mut options = ccl::Options::new(connectivity);
        if !self.raw {
            options = options.consecutive();
        }
        if self.stats.is_some() {
            options = options.stats(ccl::Stats::Components);
        }
        if let Some(n) = self.min_size {
            options = options.filter(ccl::Filter::MinSize(n));
        }
        if let Some(k) = self.keep_largest {
            options = options.filter(ccl::Filter::Largest(usize::try_from(k).unwrap_or(usize::MAX)));
        }
        options
    }

    /// `--max-pixels`, or its default, the limit of 32-bit labels.
    pub(super) fn max_pixels(&self) -> u64 {
        self.max_pixels.unwrap_or(ccl::MAX_PIXELS)
    }
}

/// `--label-bits`: 32 or 64.
fn label_bits(text: &str) -> std::result::Result<u32, String> {
    match text.trim() {
        "32" => Ok(32),
        "64" => Ok(64),
        _ => Err(format!("{text:?}: labels are 32 or 64 bits wide")),
    }
}
