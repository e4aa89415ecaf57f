//! `ccl label` in slabs ([`ccl::slabs`]): 64-bit labels (`--label-bits 64`, or a .npy of more
//! than 2^32 - 1 elements), a device memory cap (`--max-device-bytes`, `CCL_MAX_DEVICE_BYTES`),
//! one image or volume spread over several devices (`--devices`, a slab each at a time) and zarr
//! arrays in or out. A .npy of one-byte elements is read in place from a memory map and a .npy
//! output is written in place, a zarr array is read and written a slab at a time, so neither the
//! input nor the labels need host memory of their own size.

use std::path::Path;

use ccl::io::{self, LabelFormat, NpyArray, NpyLabel, NpyLabels, ZarrInput, ZarrLabel, ZarrLabels};
use ccl::slabs::{label_slabs_with, Dense, DenseLabels, ElementSource, SlabPlan, SlabRun};
use ccl::{Connectivity, Error, Result, Shape};

use super::clock::Clock;
use super::console::say;
use super::device_choice::{note_slow_builds, open_devices_announced};
use super::label_args::LabelArgs;

/// How a labeling in slabs was asked for.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlabRequest {
    /// The label width, 32 or 64.
    bits: u32,
    /// The device memory cap in bytes, if any.
    cap: Option<u64>,
}

/// The labeling in slabs `args` asks for, if any: `--label-bits 64`, `--max-device-bytes`,
/// `--devices` on one image or volume, a zarr input or output, a .npy input past 32-bit labels
/// (unless `--max-pixels` bounds it), or `CCL_MAX_DEVICE_BYTES` where slabs apply (one image or
/// volume labeled consecutively, not `--raw` or `--binarize`; statistics and filters are made
/// in slabs too). Options that slabs cannot serve, given with any of the first four, are
/// refused.
pub(super) fn request(args: &LabelArgs) -> Result<Option<SlabRequest>> {
    let folder = args.input.as_deref().is_some_and(|p| p.is_dir() && !io::is_zarr(p)) && !args.volume;
    let across_devices = args.devices.is_some() && !folder;
    let zarr = args.input.as_deref().is_some_and(io::is_zarr) || io::is_zarr(&args.output);
    let explicit = args.label_bits == Some(64) || args.max_device_bytes.is_some() || across_devices || zarr;
    let refused = [
        (folder, "a folder of images (label each file)"),
        (args.binarize.is_some(), "--binarize"),
        (args.raw, "--raw"),
    ];
    if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
        if explicit {
            return Err(Error::InvalidParameter {
                name: if args.label_bits == Some(64) {
                    "label-bits"
                } else if across_devices {
                    "devices"
                } else if zarr {
                    "output"
                } else {
                    "max-device-bytes"
                }
                .into(),
                reason: format!("labels one image or volume in slabs, consecutively; not with {what}"),
            });
        }
        return Ok(None);
    }
    let cap = match args.max_device_bytes {
        Some(bytes) => Some(bytes),
        None => ccl::slabs::max_device_bytes_from_env()?,
    };
    let elements = match args.input.as_deref() {
        Some(path) if io::is_npy(path) && path.is_file() => {
            io::npy_shape(path)?.iter().map(|&n| u128::from(n)).product()
        }
        Some(path) if io::is_zarr(path) => io::ZarrInput::open(path)?.shape().len() as u128,
        _ => 0,
    };
    let past_32_bits = elements > u128::from(ccl::MAX_PIXELS) && args.max_pixels.is_none();
    if args.label_bits == Some(32) && past_32_bits {
        return Err(Error::InvalidParameter {
            name: "label-bits".into(),
            reason: format!("32-bit labels number at most {} elements; the input has {elements}", ccl::MAX_PIXELS),
        });
    }
    let bits = if args.label_bits == Some(64) || (past_32_bits && args.label_bits.is_none()) { 64 } else { 32 };
    Ok((bits == 64 || cap.is_some() || across_devices || zarr).then_some(SlabRequest { bits, cap }))
}

/// The input of a labeling in slabs.
enum SlabInput {
    /// A .npy, mapped or converted.
    Npy(NpyArray),
    /// An image or volume read whole.
    Array(ccl::BinaryImage),
    /// A zarr array, read a slab at a time.
    Zarr(Box<ZarrInput>),
}

impl SlabInput {
    fn shape(&self) -> Shape {
        match self {
            Self::Npy(array) => array.shape(),
            Self::Array(array) => array.shape(),
            Self::Zarr(array) => array.shape(),
        }
    }

    /// Where a labeling in slabs reads the elements.
    fn source(&self) -> Box<dyn ElementSource + '_> {
        match self {
            Self::Npy(array) => Box::new(Dense::new(array.elements(), array.shape())),
            Self::Array(array) => Box::new(Dense::new(array.values(), array.shape())),
            Self::Zarr(array) => Box::new(&**array),
        }
    }
}

/// Where `ccl label` in slabs writes: a zarr array, or a file of a [`LabelFormat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlabOutput {
    Zarr,
    File(LabelFormat),
}

/// Elements a zarr chunk of labels holds at most, where the input gives no chunks.
const ZARR_CHUNK_ELEMENTS: usize = 16 << 20;

/// Runs `ccl label` in slabs: the output format is checked, the input read (a .npy mapped where
/// it can be), labeled slab by slab, and the labels written (a .npy in place; 32-bit labels may
/// also go to PNG or TIFF).
pub(super) fn label(args: &LabelArgs, request: SlabRequest, output: SlabOutput) -> Result<()> {
    if request.bits == 64 && !matches!(output, SlabOutput::Zarr | SlabOutput::File(LabelFormat::Npy)) {
        return Err(Error::InvalidParameter {
            name: "output".into(),
            reason: format!("{}: 64-bit labels are written as .npy or .zarr (uint64)", args.output.display()),
        });
    }
    let mut clock = Clock::new(args.verbose);
    let options = args.read_options();
    let (input, volume) = match args.input.as_deref() {
        Some(path) if io::is_npy(path) => {
            if args.threshold.is_some() || args.invert {
                return Err(Error::InvalidParameter {
                    name: if args.invert { "invert" } else { "threshold" }.into(),
                    reason: "applies to image files; a .npy is read as binary (nonzero is foreground)".into(),
                });
            }
            let dims = io::npy_shape(path)?.len();
            let array = NpyArray::open(path, args.max_pixels)?;
            let how = if array.is_mapped() { "mapped" } else { "converted to one byte an element" };
            say!("input: {} ({} {}, .npy, {how})", path.display(), array.shape(), kind(dims == 3));
            (SlabInput::Npy(array), dims == 3)
        }
        Some(path) if io::is_zarr(path) => {
            if args.threshold.is_some() || args.invert {
                return Err(Error::InvalidParameter {
                    name: if args.invert { "invert" } else { "threshold" }.into(),
                    reason: "applies to image files; a zarr array is read as binary (nonzero is foreground)".into(),
                });
            }
            let array = ZarrInput::open(path)?;
            let volume = array.is_volume();
            let chunks = array.chunk_shape();
            say!("input: {} ({} {}, zarr, chunks {chunks:?})", path.display(), array.shape(), kind(volume));
            (SlabInput::Zarr(Box::new(array)), volume)
        }
        Some(path) if args.volume || io::tiff_pages(path).is_ok_and(|n| n > 1) => {
            let volume = io::read_volume(path, &options)?;
            say!("input: {} ({} volume)", path.display(), volume.shape());
            (SlabInput::Array(volume), true)
        }
        Some(path) => {
            let image = io::read_image(path, &options)?.image;
            say!("input: {} ({} image)", path.display(), image.shape());
            (SlabInput::Array(image), false)
        }
        None => {
            say!("input: built-in sample page (1024x768); pass an image path to label your own");
            (SlabInput::Array(ccl::sample_image()), false)
        }
    };
    clock.lap("read");
    if volume && matches!(output, SlabOutput::File(format) if !format.holds_volumes()) {
        return Err(Error::InvalidParameter {
            name: "output".into(),
            reason: format!("{}: the labels of a volume are written as .npy or .tif/.tiff", args.output.display()),
        });
    }
    let default = if volume { Connectivity::TwentySix } else { Connectivity::Eight };
    let connectivity = args.connectivity.unwrap_or(default);
    if (connectivity.dims() == 3) != volume {
        let what = if volume { "a volume" } else { "an image" };
        return Err(Error::ConnectivityDimensions { connectivity, what });
    }
    let devices = open_devices_announced(args.devices.as_ref(), args.device, args.backend)?;
    clock.lap("open device");
    let plan = SlabPlan::new(input.shape(), request.cap)?.spread_over(devices.len());
    // Zarr chunks of labels: the input's, else whole planes up to ZARR_CHUNK_ELEMENTS; slabs of
    // whole chunks where they hold one, so that no chunk is written twice.
    let chunks = match &input {
        SlabInput::Zarr(array) => array.chunk_shape(),
        _ => {
            let shape = input.shape();
            let plane = if volume { shape.width * shape.height } else { shape.width };
            let mut chunks = vec![(ZARR_CHUNK_ELEMENTS / plane).clamp(1, plan.planes_per_slab()) as u64];
            chunks.extend(if volume {
                vec![shape.height as u64, shape.width as u64]
            } else {
                vec![shape.width as u64]
            });
            chunks
        }
    };
    let zarr = output == SlabOutput::Zarr || matches!(input, SlabInput::Zarr(_));
    let plan = if zarr { plan.aligned_to(chunks[0] as usize) } else { plan };
    let algorithm = args.common_algorithm(&devices, connectivity)?;
    let mut labelers =
        devices.iter().map(|device| device.labeler_for(algorithm, connectivity)).collect::<Result<Vec<_>>>()?;
    clock.lap("kernels");
    let to = Target { path: &args.output, output, volume, chunks: &chunks };
    let options = args.options(connectivity);
    let run = match (request.bits, output) {
        (64, _) => label_into::<u64>(&mut labelers, &plan, &input, &options, &to)?,
        (_, SlabOutput::Zarr | SlabOutput::File(LabelFormat::Npy)) => {
            label_into::<u32>(&mut labelers, &plan, &input, &options, &to)?
        }
        _ => {
            let mut labels = vec![0u32; input.shape().len()];
            let mut sink = DenseLabels::new(&mut labels, input.shape());
            let run = label_slabs_with(&mut labelers, &plan, &options, &*input.source(), &mut sink)?;
            let labels = ccl::LabelImage::new(input.shape(), labels)?;
            if volume {
                io::write_volume(&args.output, &labels)?;
            } else {
                io::write_labels(&args.output, &labels)?;
            }
            run
        }
    };
    if let (Some(path), Some(stats)) = (&args.stats, &run.stats) {
        io::write_stats_csv(path, stats, volume)?;
    }
    for device in &devices {
        note_slow_builds(device);
    }
    clock.lap("label and write");
    say!(
        "{} components ({}, {algorithm}, {connectivity}) in {} slab{} of {} planes, {}-bit labels; {:.3} ms labeling, {:.3} ms upload, {:.3} ms download",
        run.count,
        input.shape(),
        run.slabs,
        if run.slabs == 1 { "" } else { "s" },
        plan.planes_per_slab(),
        request.bits,
        run.timings.labeling_ms(),
        run.timings.phase_ms(ccl::Phase::Upload),
        run.timings.phase_ms(ccl::Phase::Download),
    );
    say!("wrote {}", args.output.display());
    clock.report(labelers[0].build_report());
    // The process ends here: the drivers free the devices' contexts at exit.
    std::mem::forget(labelers);
    std::mem::forget(devices);
    Ok(())
}

/// An image or a volume, as the input is read.
fn kind(volume: bool) -> &'static str {
    if volume {
        "volume"
    } else {
        "image"
    }
}

/// Where the labels of a labeling in slabs go.
struct Target<'a> {
    path: &'a Path,
    output: SlabOutput,
    volume: bool,
    /// The chunks of a zarr output, slowest axis first.
    chunks: &'a [u64],
}

/// Labels `input` in slabs straight into the zarr array or .npy of `W` labels `to` names,
/// written a slab at a time (a .npy in place through its memory map).
fn label_into<W: ZarrLabel + NpyLabel>(
    labelers: &mut [ccl::AnyLabeler],
    plan: &SlabPlan,
    input: &SlabInput,
    options: &ccl::Options,
    to: &Target<'_>,
) -> Result<SlabRun> {
    let shape = input.shape();
    let source = input.source();
    if to.output == SlabOutput::Zarr {
        let mut labels = ZarrLabels::<W>::create(to.path, shape, to.volume, to.chunks)?;
        let run = label_slabs_with(labelers, plan, options, &*source, &mut labels)?;
        labels.finish()?;
        return Ok(run);
    }
    let mut labels = NpyLabels::<W>::create(to.path, shape)?;
    let run = label_slabs_with(labelers, plan, options, &*source, &mut DenseLabels::new(labels.labels_mut(), shape))?;
    labels.finish()?;
    Ok(run)
}

/// Checks a zarr output before any work: not the input, in a folder that exists; then removes
/// what a killed run left there ([`super::outputs::sweep`]).
pub(super) fn check_zarr_output(args: &LabelArgs) -> Result<()> {
    let output = &args.output;
    let refuse = |reason: String| Error::OutputRefused { path: output.display().to_string(), reason };
    if let Some(input) = args.input.as_deref() {
        let same = match (input.canonicalize(), output.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => input == output.as_path(),
        };
        if same {
            return Err(Error::OutputIsInput { path: output.display().to_string() });
        }
    }
    let parent = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(refuse(format!("its folder {} does not exist", parent.display())));
    }
    super::outputs::sweep(parent);
    Ok(())
}
