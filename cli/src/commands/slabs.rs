//! `ccl label` in slabs ([`ccl::slabs`]): 64-bit labels (`--label-bits 64`, or a .npy of more
//! than 2^32 - 1 elements), a device memory cap (`--max-device-bytes`, `CCL_MAX_DEVICE_BYTES`)
//! and one image or volume spread over several devices (`--devices`), a slab each at a time. A .npy of one-byte elements is read in place from a memory map and
//! a .npy output is written in place, so neither the input nor the labels need host memory of
//! their own size.

use std::path::Path;

use ccl::io::{self, LabelFormat, NpyArray, NpyLabel, NpyLabels};
use ccl::slabs::{label_in_slabs_across, LabelWord, SlabPlan, SlabRun};
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

/// The labeling in slabs `args` asks for, if any: `--label-bits 64`, `--max-device-bytes`, a
/// .npy input past 32-bit labels (unless `--max-pixels` bounds it), or `CCL_MAX_DEVICE_BYTES`
/// where slabs apply (one image or volume labeled consecutively, without statistics, filters
/// or `--binarize`). Options that slabs cannot serve, given with the first two, are refused.
pub(super) fn request(args: &LabelArgs) -> Result<Option<SlabRequest>> {
    let folder = args.input.as_deref().is_some_and(Path::is_dir) && !args.volume;
    let across_devices = args.devices.is_some() && !folder;
    let explicit = args.label_bits == Some(64) || args.max_device_bytes.is_some() || across_devices;
    let refused = [
        (folder, "a folder of images (label each file)"),
        (args.binarize.is_some(), "--binarize"),
        (args.raw, "--raw"),
        (args.stats.is_some(), "--stats"),
        (args.min_size.is_some() || args.keep_largest.is_some(), "--min-size and --keep-largest"),
    ];
    if let Some((_, what)) = refused.iter().find(|(on, _)| *on) {
        if explicit {
            return Err(Error::InvalidParameter {
                name: if args.label_bits == Some(64) {
                    "label-bits"
                } else if across_devices {
                    "devices"
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
    Ok((bits == 64 || cap.is_some() || across_devices).then_some(SlabRequest { bits, cap }))
}

/// The input of a labeling in slabs.
enum SlabInput {
    /// A .npy, mapped or converted.
    Npy(NpyArray),
    /// An image or volume read whole.
    Array(ccl::BinaryImage),
}

impl SlabInput {
    fn shape(&self) -> Shape {
        match self {
            Self::Npy(array) => array.shape(),
            Self::Array(array) => array.shape(),
        }
    }

    fn elements(&self) -> &[u8] {
        match self {
            Self::Npy(array) => array.elements(),
            Self::Array(array) => array.values(),
        }
    }
}

/// Runs `ccl label` in slabs: the output format is checked, the input read (a .npy mapped where
/// it can be), labeled slab by slab, and the labels written (a .npy in place; 32-bit labels may
/// also go to PNG or TIFF).
pub(super) fn label(args: &LabelArgs, request: SlabRequest, format: LabelFormat) -> Result<()> {
    if request.bits == 64 && format != LabelFormat::Npy {
        return Err(Error::InvalidParameter {
            name: "output".into(),
            reason: format!("{}: 64-bit labels are written as .npy (uint64)", args.output.display()),
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
    if volume && !format.holds_volumes() {
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
    let algorithm = args.common_algorithm(&devices, connectivity)?;
    let mut labelers =
        devices.iter().map(|device| device.labeler_for(algorithm, connectivity)).collect::<Result<Vec<_>>>()?;
    clock.lap("kernels");
    let run = match request.bits {
        64 => label_npy::<u64>(&mut labelers, &plan, &input, connectivity, &args.output)?,
        _ if format == LabelFormat::Npy => label_npy::<u32>(&mut labelers, &plan, &input, connectivity, &args.output)?,
        _ => {
            let mut labels = vec![0u32; input.shape().len()];
            let run = label_in_slabs_across(&mut labelers, &plan, input.elements(), connectivity, &mut labels)?;
            let labels = ccl::LabelImage::new(input.shape(), labels)?;
            if volume {
                io::write_volume(&args.output, &labels)?;
            } else {
                io::write_labels(&args.output, &labels)?;
            }
            run
        }
    };
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

/// Labels `input` in slabs straight into the .npy `output` of `W` labels, written in place.
fn label_npy<W: LabelWord + NpyLabel>(
    labelers: &mut [ccl::AnyLabeler],
    plan: &SlabPlan,
    input: &SlabInput,
    connectivity: Connectivity,
    output: &Path,
) -> Result<SlabRun> {
    let mut labels = NpyLabels::<W>::create(output, input.shape())?;
    let run = label_in_slabs_across(labelers, plan, input.elements(), connectivity, labels.labels_mut())?;
    labels.finish()?;
    Ok(run)
}
