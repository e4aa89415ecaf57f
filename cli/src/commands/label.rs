//! `ccl label`: read an image or a volume (a (D, H, W) .npy, a multi-page TIFF, a folder of
//! slices with `--volume`), label it on a device, write the labels. Everything that can be
//! checked before the work is checked first (output format and folder, output not the input,
//! image size and memory, threshold range), and the output is written atomically.

use std::path::Path;

use ccl::io::{self, Frames};
use ccl::{BackendKind, Connectivity, Device, Error, Labeler, Result};

use super::clock::Clock;
use super::console::{note, say};
use super::device_choice::{note_slow_builds, open_device, open_device_announced, open_devices_announced};
pub use super::label_args::LabelArgs;

/// Images from this many pixels on get a note with the host memory they need.
const LARGE_IMAGE_PIXELS: u64 = 100_000_000;

/// Device buffers in host memory per pixel, at most, of labeling an image on an OpenCL device
/// that is not a GPU (a CPU driver such as POCL, whose buffers are host memory): the binary
/// image, the labels and scratch (measured on POCL, 64 Mpx, bytes a pixel beyond the host's 5:
/// TUF 9.4, LE 9.2, BE 8.2, BUF and BKE 7.3, UF, KE and OLE 5.3).
const HOST_DEVICE_BYTES_PER_PIXEL: u64 = 10;

/// Host memory per pixel that `device`'s buffers take: none for a GPU (its own memory) or the
/// CPU reference (it labels in the host's label image).
fn device_bytes_per_pixel(device: &Device) -> u64 {
    let info = device.info();
    let host_memory = info.id.backend() == BackendKind::OpenCl && info.device_type != ccl::DeviceType::Gpu;
    if host_memory {
        HOST_DEVICE_BYTES_PER_PIXEL
    } else {
        0
    }
}

/// Reads the input after checking its size against `--max-pixels` and the host's memory, for
/// labeling on `device` into `output_format`.
fn read_input(
    path: &Path,
    args: &LabelArgs,
    output_format: io::LabelFormat,
    device: &Device,
) -> Result<ccl::BinaryImage> {
    let source = io::probe(path)?;
    let extra = output_format.extra_bytes_per_pixel() + device_bytes_per_pixel(device);
    let needed = io::estimated_peak_bytes(&source, extra);
    let options = args.read_options();
    if source.pixels() <= options.max_pixels {
        if let Some(available) = io::available_memory().filter(|&a| a < needed) {
            return Err(Error::InsufficientMemory {
                what: format!("labeling {} ({}x{})", path.display(), source.width, source.height),
                needed_bytes: needed,
                available_bytes: available,
            });
        }
        if source.pixels() >= LARGE_IMAGE_PIXELS {
            let file = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            note!(
                "note: {} ({:.1} MB) is {}x{} ({:.0} Mpx); reading and labeling it takes about {:.1} GB of host memory",
                path.display(),
                file as f64 / 1e6,
                source.width,
                source.height,
                source.pixels() as f64 / 1e6,
                needed as f64 / 1e9
            );
        }
    }
    let decoded = io::read_image(path, &options)?;
    let s = &decoded.source;
    say!("input: {} ({}x{}, {})", path.display(), s.width, s.height, s.describe());
    if let Frames::Several(count) = s.frames {
        let count = count.map_or("several".to_string(), |n| n.to_string());
        note!("note: {} holds {count} frames or pages; only the first is labeled", path.display());
    }
    Ok(decoded.image)
}

/// `ccl label --volume`: the input (a folder of slices, a TIFF or a .npy) read as one volume.
fn label_volume_input(args: &LabelArgs) -> Result<()> {
    let Some(path) = args.input.as_deref() else {
        return Err(Error::InvalidParameter {
            name: "volume".into(),
            reason: "needs an input: a folder of slices, a TIFF or a .npy of shape (D, H, W)".into(),
        });
    };
    let format = check_outputs(args)?;
    if path.is_dir() {
        let ignored = io::list_images(path)?.others;
        if !ignored.is_empty() {
            let n = ignored.len();
            note!(
                "note: ignoring {n} file{} without an image extension in {}",
                if n == 1 { "" } else { "s" },
                path.display()
            );
        }
    }
    label_volume(args, path, format, Clock::new(args.verbose), || io::read_volume(path, &args.read_options()))
}

/// `ccl label` of a volume (a folder of slices, a multi-page TIFF, a .npy of shape (D, H, W)):
/// the output format is checked, then `read` reads the volume; the labels are written as a .npy
/// of uint32 (D, H, W) or a TIFF of one uint32 page per slice.
fn label_volume(
    args: &LabelArgs,
    path: &Path,
    format: io::LabelFormat,
    mut clock: Clock,
    read: impl FnOnce() -> Result<ccl::BinaryImage>,
) -> Result<()> {
    if !format.holds_volumes() {
        return Err(Error::InvalidParameter {
            name: "output".into(),
            reason: format!(
                "{}: the labels of a volume are written as .npy (uint32, shape (D, H, W)) or .tif/.tiff (one uint32 \
                 page per slice)",
                args.output.display()
            ),
        });
    }
    let volume = read()?;
    clock.lap("read");
    let kind = if path.is_dir() {
        "slices sorted by name"
    } else if io::is_npy(path) {
        ".npy"
    } else {
        "TIFF, one slice per page"
    };
    let s = volume.shape();
    say!("input: {} ({}x{}x{} volume, {kind})", path.display(), s.width, s.height, s.depth);
    let connectivity = args.connectivity.unwrap_or(Connectivity::TwentySix);
    let (device, how) = open_device(args.device, args.backend)?;
    let info = device.info();
    say!("device: {} {} ({how})", info.id, info.name);
    clock.lap("open device");
    let algorithm = args.algorithm(&device, connectivity)?;
    let mut labeler = device.labeler_for(algorithm, connectivity)?;
    clock.lap("kernels");
    if connectivity.dims() != 3 {
        return Err(Error::ConnectivityDimensions { connectivity, what: "a volume" });
    }
    let shape = [s.depth as u64, s.height as u64, s.width as u64];
    let upload = |l: &mut ccl::AnyLabeler| l.upload(&volume);
    let run = run_to_output(args, &mut labeler, &args.options(connectivity), format, &shape, upload)?;
    write_stats(args, &run, true)?;
    let ccl::Run { labels, count, timings, .. } = run;
    note_slow_builds(&device);
    let count = write_rest(args, &mut labeler, labels, count, true, &mut clock)?;
    say!(
        "{count} components ({}x{}x{}, {}, {}) in {:.3} ms labeling; phases ms: {}",
        s.width,
        s.height,
        s.depth,
        algorithm,
        connectivity,
        timings.labeling_ms(),
        timings.phase_list()
    );
    say!("wrote {}", args.output.display());
    clock.report(labeler.build_report());
    Ok(())
}

/// Uploads, runs the stages `options` ask for and downloads the labels into host memory; or,
/// for a `.npy` of counted labels without region properties, writes them to `args.output` (of
/// `shape`) as they arrive from the device, the download overlapping the writing, without a
/// host array of their size: the run's labels are then `None`.
fn run_to_output(
    args: &LabelArgs,
    labeler: &mut ccl::AnyLabeler,
    options: &ccl::Options,
    format: io::LabelFormat,
    shape: &[u64],
    upload: impl FnOnce(&mut ccl::AnyLabeler) -> Result<ccl::DeviceImage>,
) -> Result<ccl::Run<Option<ccl::LabelImage>>> {
    let streamed = format == io::LabelFormat::Npy && options.is_consecutive() && args.properties.is_none();
    ccl::run_host(labeler, options, upload, |l, d| {
        if !streamed {
            return l.download(d).map(Some);
        }
        io::write_labels_npy_from(&args.output, shape, |sink| l.download_pieces(d, sink))?;
        Ok(None)
    })
}

/// What [`run_to_output`] left to write: the region properties and the labels in host memory
/// (`volume`: a (D, H, W) array), or nothing where the labels went out as they arrived.
/// Returns the component count.
fn write_rest(
    args: &LabelArgs,
    labeler: &mut ccl::AnyLabeler,
    labels: Option<ccl::LabelImage>,
    count: Option<u32>,
    volume: bool,
    clock: &mut Clock,
) -> Result<u32> {
    let Some(labels) = labels else {
        clock.lap("label and write");
        // Streamed labels are consecutive, so counted on the device.
        return Ok(count.unwrap_or(0));
    };
    let count = count.unwrap_or_else(|| labels.component_count());
    write_properties(args, labeler, &labels, count, volume)?;
    clock.lap("label");
    if volume {
        io::write_volume(&args.output, &labels)?;
    } else {
        io::write_labels(&args.output, &labels)?;
    }
    clock.lap("write");
    Ok(count)
}

/// Writes the kept components' statistics to `--stats` when given (`volume`: with z columns),
/// unless `--properties` asks for region properties instead ([`write_properties`]).
fn write_stats<T>(args: &LabelArgs, run: &ccl::Run<T>, volume: bool) -> Result<()> {
    if let (Some(path), Some(stats), None) = (&args.stats, &run.stats, &args.properties) {
        io::write_stats_csv(path, stats, volume)?;
    }
    Ok(())
}

/// With `--properties`, writes the region properties of consecutive `labels` (`count` of them)
/// to `--stats`, computed on `labeler`'s device (the labels go back to it); `volume`: a (D, H,
/// W) array, whose properties are 3D.
fn write_properties(
    args: &LabelArgs,
    labeler: &mut ccl::AnyLabeler,
    labels: &ccl::LabelImage,
    count: u32,
    volume: bool,
) -> Result<()> {
    let (Some(path), Some(named)) = (&args.stats, &args.properties) else {
        return Ok(());
    };
    // `label` first, each property once.
    let mut properties = vec![ccl::Property::Label];
    for &p in named {
        if !properties.contains(&p) {
            properties.push(p);
        }
    }
    let shape = labels.shape();
    let axes = if volume { 3 } else { 2 };
    let mut device_labels = labeler.upload_labels(shape, labels.values(), count)?;
    let spacing = args.spacing.as_deref();
    let start = std::time::Instant::now();
    let (table, timings) = match &args.intensity {
        None => labeler.regionprops(&mut device_labels, axes, &properties, spacing, None)?,
        Some(_) if volume => {
            return Err(Error::InvalidParameter {
                name: "intensity".into(),
                reason: "takes the intensity image of an image, not of a volume".into(),
            })
        }
        Some(intensity_path) => {
            let (gray, _) = io::read_gray(intensity_path, args.max_pixels())?;
            if gray.shape() != shape {
                return Err(Error::ShapeMismatch { image: gray.shape(), labels: shape });
            }
            let values: Vec<f32> = gray.values().iter().map(|&v| f32::from(v)).collect();
            let image = labeler.upload_intensity(shape, &values)?;
            let intensity = Some(ccl::regions::Intensity::F32(&image));
            labeler.regionprops(&mut device_labels, axes, &properties, spacing, intensity)?
        }
    };
    let ms = start.elapsed().as_secs_f64() * 1e3;
    io::write_region_table_csv(path, &table)?;
    say!(
        "region properties: {} regions, {} columns in {ms:.3} ms (labels to the device, sums, table); phases ms: {}",
        table.rows(),
        table.columns.len(),
        timings.phase_list()
    );
    Ok(())
}

/// Checks `-o` and `--stats`, against each other and against the input (a folder volume's
/// slices included), before any work ([`super::outputs::check`]); returns the labels' format.
fn check_outputs(args: &LabelArgs) -> Result<io::LabelFormat> {
    let format = io::LabelFormat::from_path(&args.output)?;
    let mut outputs = vec![("-o", args.output.as_path())];
    outputs.extend(args.stats.as_deref().map(|stats| ("--stats", stats)));
    let inputs = args.input.as_deref().map(io::input_files).unwrap_or_default();
    super::outputs::check(&outputs, &inputs)?;
    Ok(format)
}

/// Whether `--stats`, `--min-size` or `--keep-largest` asks for statistics on the device.
fn wants_stats(args: &LabelArgs) -> bool {
    args.stats.is_some() || args.min_size.is_some() || args.keep_largest.is_some()
}

/// An image's pixels: decoded into memory, or a `.npy` of bytes mapped.
enum Pixels {
    Owned(ccl::BinaryImage),
    Mapped(io::NpyArray),
}

impl Pixels {
    fn shape(&self) -> ccl::Shape {
        match self {
            Self::Owned(image) => image.shape(),
            Self::Mapped(array) => array.shape(),
        }
    }

    /// One byte a pixel, nonzero is foreground.
    fn elements(&self) -> &[u8] {
        match self {
            Self::Owned(image) => image.values(),
            Self::Mapped(array) => array.elements(),
        }
    }
}

/// `ccl label --multilabel`: a `.npy` of integer values labeled whole as a multi-label image
/// (the connected sets of equal values, `--background` excepted; `ccl::multilabel`), with
/// `Algorithm::default_multilabel_for` unless `--algo` names another; the labels, statistics and
/// filters as for a binary
/// image or volume.
fn label_multilabel(args: &LabelArgs) -> Result<()> {
    let refuse = |reason: &str| Error::InvalidParameter { name: "multilabel".into(), reason: reason.into() };
    let Some(path) = args.input.as_deref().filter(|p| io::is_npy(p)) else {
        return Err(refuse("reads a .npy of integer values (classes, a segmentation), shape (H, W) or (D, H, W)"));
    };
    if args.label_bits == Some(64) {
        return Err(refuse("labels an image or volume whole, into 32-bit labels (not --label-bits 64)"));
    }
    let format = check_outputs(args)?;
    let mut clock = Clock::new(args.verbose);
    let values = io::read_values_npy(path, args.max_pixels())?;
    let kind = values.kind(args.background.unwrap_or(0))?;
    let s = values.shape;
    if values.volume && !format.holds_volumes() {
        return Err(Error::InvalidParameter {
            name: "output".into(),
            reason: format!("{}: the labels of a volume are written as .npy or .tif/.tiff", args.output.display()),
        });
    }
    clock.lap("read");
    let (what, bits) = (if values.signed { "int" } else { "uint" }, 8 * u32::from(values.width));
    say!(
        "input: {} ({}x{}x{}, .npy of {what}{bits} values, multi-label, background {})",
        path.display(),
        s.width,
        s.height,
        s.depth,
        args.background.unwrap_or(0)
    );
    let default = if values.volume { Connectivity::TwentySix } else { Connectivity::Eight };
    let connectivity = args.connectivity.unwrap_or(default);
    if values.volume && connectivity.dims() != 3 {
        return Err(Error::ConnectivityDimensions { connectivity, what: "a volume" });
    }
    if !values.volume && connectivity.dims() != 2 {
        return Err(Error::ConnectivityDimensions { connectivity, what: "an image" });
    }
    let algorithm = args.algo.unwrap_or_else(|| ccl::Algorithm::default_multilabel_for(connectivity));
    algorithm.check_kind(kind, connectivity)?;
    let device = open_device_announced(args.device, args.backend)?;
    clock.lap("open device");
    let mut labeler = device.labeler_for(algorithm, connectivity)?;
    clock.lap("kernels");
    let upload = |l: &mut ccl::AnyLabeler| l.upload_bytes(s, &values.bytes, kind);
    let volume = values.volume;
    let shape: Vec<u64> = match volume {
        true => vec![s.depth as u64, s.height as u64, s.width as u64],
        false => vec![s.height as u64, s.width as u64],
    };
    let run = run_to_output(args, &mut labeler, &args.options(connectivity), format, &shape, upload)?;
    write_stats(args, &run, volume)?;
    note_slow_builds(&device);
    drop(values);
    let count = write_rest(args, &mut labeler, run.labels, run.count, volume, &mut clock)?;
    say!(
        "{count} components ({}x{}x{}, {algorithm}, {connectivity}, multi-label) in {:.3} ms labeling; phases ms: {}",
        s.width,
        s.height,
        s.depth,
        run.timings.labeling_ms(),
        run.timings.phase_list()
    );
    say!("wrote {}", args.output.display());
    clock.report(labeler.build_report());
    Ok(())
}

/// Runs `ccl label`.
pub fn label(args: LabelArgs) -> Result<()> {
    if args.multilabel {
        if args.input.as_deref().is_some_and(Path::is_dir) {
            return Err(Error::InvalidParameter {
                name: "multilabel".into(),
                reason: "takes one .npy of integer values, not a folder".into(),
            });
        }
        return label_multilabel(&args);
    }
    if args.background.is_some() {
        let npy = args.input.as_deref().is_some_and(io::is_npy);
        if args.label_bits == Some(64) || !npy || io::is_zarr(&args.output) {
            return Err(Error::InvalidParameter {
                name: "background".into(),
                reason: "reads one .npy of integer values, labeled whole into 32-bit labels, not written as zarr \
                         (image files take --threshold and --invert)"
                    .into(),
            });
        }
    }
    // One image or volume in slabs: 64-bit labels, a device memory cap, or several devices
    // (a .npy with a background value is labeled whole).
    let slabs = if args.background.is_none() { super::slabs::request(&args)? } else { None };
    if let Some(request) = slabs {
        if args.properties.is_some() {
            return Err(Error::InvalidParameter {
                name: "properties".into(),
                reason: "takes one image or volume labeled whole, not in slabs (--label-bits 64, --max-device-bytes, \
                         --devices)"
                    .into(),
            });
        }
        let output = if io::is_zarr(&args.output) {
            super::slabs::check_zarr_output(&args)?;
            super::slabs::SlabOutput::Zarr
        } else {
            super::slabs::SlabOutput::File(check_outputs(&args)?)
        };
        return super::slabs::label(&args, request, output);
    }
    if args.volume {
        return label_volume_input(&args);
    }
    if let Some(folder) = args.input.as_deref().filter(|p| p.is_dir()) {
        if wants_stats(&args) {
            return Err(Error::InvalidParameter {
                name: if args.stats.is_some() { "stats" } else { "min-size / keep-largest" }.into(),
                reason: "takes one image or volume, not a folder of images".into(),
            });
        }
        if let Some(params) = &args.binarize {
            let connectivity = args.image_connectivity();
            let devices = open_devices_announced(args.devices.as_ref(), args.device, args.backend)?;
            let labeling = super::folder::PageLabeling {
                algorithm: args.common_algorithm(&devices, connectivity)?,
                connectivity,
                raw: args.raw,
            };
            let ext = args.format.extension();
            return super::folder::pages_folder(
                folder,
                &args.output,
                ext,
                params,
                Some(labeling),
                &devices,
                args.jobs(),
                args.max_pixels(),
            );
        }
        return super::folder::label_folder(folder, &args);
    }
    let format = check_outputs(&args)?;
    if let Some(params) = args.binarize {
        return label_binarized(&args, &params);
    }
    let mut clock = Clock::new(args.verbose);
    // Opened before reading an image file, whose memory check counts the device's buffers.
    let mut opened = None;
    let image = match &args.input {
        Some(path) if io::is_npy(path) => {
            if args.threshold.is_some() || args.invert {
                return Err(Error::InvalidParameter {
                    name: if args.invert { "invert" } else { "threshold" }.into(),
                    reason: "applies to image files; a .npy is read as binary (nonzero is foreground)".into(),
                });
            }
            if let Some(background) = args.background {
                // Every value but the background is foreground.
                let values = io::read_values_npy(path, args.max_pixels())?;
                let image = values.foreground(background)?;
                if values.volume {
                    return label_volume(&args, path, format, clock, || Ok(image));
                }
                say!(
                    "input: {} ({}x{} image, .npy, background {background})",
                    path.display(),
                    image.width(),
                    image.height()
                );
                Pixels::Owned(image)
            } else if let Some(array) = io::NpyArray::map_image(path, Some(args.max_pixels()))? {
                // An image of bytes is read in place from a memory map, without a copy.
                let s = array.shape();
                say!("input: {} ({}x{} image, .npy, mapped)", path.display(), s.width, s.height);
                Pixels::Mapped(array)
            } else {
                match io::read_binary_npy(path, args.max_pixels())? {
                    io::BinaryArray::Image(image) => {
                        say!("input: {} ({}x{} image, .npy)", path.display(), image.width(), image.height());
                        Pixels::Owned(image)
                    }
                    io::BinaryArray::Volume(volume) => return label_volume(&args, path, format, clock, || Ok(volume)),
                }
            }
        }
        // A TIFF of several pages is a volume, one slice per page.
        Some(path) if io::tiff_pages(path).is_ok_and(|n| n > 1) => {
            return label_volume(&args, path, format, clock, || io::read_volume_tiff(path, &args.read_options()))
        }
        Some(path) => {
            let (device, how) = open_device(args.device, args.backend)?;
            clock.lap("open device");
            let image = read_input(path, &args, format, &device)?;
            opened = Some((device, how));
            Pixels::Owned(image)
        }
        None => {
            say!("input: built-in sample page (1024x768); pass an image path to label your own");
            Pixels::Owned(ccl::sample_image())
        }
    };
    clock.lap("read");
    let (device, how) = match opened {
        Some(opened) => opened,
        None => {
            let opened = open_device(args.device, args.backend)?;
            clock.lap("open device");
            opened
        }
    };
    let info = device.info();
    say!("device: {} {} ({how})", info.id, info.name);
    let algorithm = args.algorithm(&device, args.image_connectivity())?;
    let mut labeler = device.labeler_for(algorithm, args.image_connectivity())?;
    clock.lap("kernels");
    // An image takes 4- or 8-connectivity (a volume's would join as 8 on one slice).
    let connectivity = args.image_connectivity();
    if connectivity.dims() != 2 {
        return Err(Error::ConnectivityDimensions { connectivity, what: "an image" });
    }
    // Consecutive labels are renumbered (and counted) on the device.
    let upload = |l: &mut ccl::AnyLabeler| l.upload_array(image.shape(), image.elements());
    let (width, height) = (image.shape().width, image.shape().height);
    let shape = [height as u64, width as u64];
    let result = run_to_output(&args, &mut labeler, &args.options(connectivity), format, &shape, upload)?;
    write_stats(&args, &result, false)?;
    note_slow_builds(&device);
    drop(image);
    let timings = result.timings;
    let count = write_rest(&args, &mut labeler, result.labels, result.count, false, &mut clock)?;
    say!(
        "{count} components ({width}x{height}, {}, {}) in {:.3} ms labeling; phases ms: {}",
        algorithm,
        args.image_connectivity(),
        timings.labeling_ms(),
        timings.phase_list()
    );
    say!("wrote {}", args.output.display());
    clock.report(labeler.build_report());
    // The process ends here: the driver frees the device's context at exit, faster than
    // releasing its buffers, modules and streams one by one first.
    std::mem::forget(labeler);
    std::mem::forget(device);
    Ok(())
}

/// `ccl label --binarize`: the gray page goes to the device once, is binarized there, labeled
/// there (ink is foreground), and only the labels come back.
fn label_binarized(args: &LabelArgs, params: &ccl::binarize::Params) -> Result<()> {
    let Some(path) = &args.input else {
        return Err(Error::InvalidParameter { name: "binarize".into(), reason: "needs an input page".into() });
    };
    let mut clock = Clock::new(args.verbose);
    let (page, source) = io::read_gray(path, args.max_pixels())?;
    clock.lap("read");
    say!(
        "input: {} ({}x{}, {}), binarized with {}",
        path.display(),
        page.width(),
        page.height(),
        source.describe(),
        params.describe()
    );
    let device = open_device_announced(args.device, args.backend)?;
    clock.lap("open device");
    let mut binarizer = device.binarizer()?;
    binarizer.prepare(params)?;
    let algorithm = args.algorithm(&device, args.image_connectivity())?;
    let mut labeler = device.labeler_for(algorithm, args.image_connectivity())?;
    clock.lap("kernels");
    let start = std::time::Instant::now();
    let gray = binarizer.upload(&page)?;
    let upload_ms = start.elapsed().as_secs_f64() * 1e3;
    let (ink, binarized) = binarizer.binarize_on_device(&gray, params)?;
    let connectivity = args.image_connectivity();
    let run = labeler.run(&ink, &args.options(connectivity))?;
    write_stats(args, &run, false)?;
    let ccl::Run { labels, count, timings: labeled, .. } = run;
    note_slow_builds(&device);
    let start = std::time::Instant::now();
    let labels = labeler.download(&labels)?;
    let download_ms = start.elapsed().as_secs_f64() * 1e3;
    let count = count.unwrap_or_else(|| labels.component_count());
    write_properties(args, &mut labeler, &labels, count, false)?;
    clock.lap("binarize and label");
    io::write_labels(&args.output, &labels)?;
    clock.lap("write");
    say!(
        "{count} components ({}x{}, {}, {connectivity}); device ms: binarize {:.3}, label {:.3}; upload {upload_ms:.3}, download {download_ms:.3}",
        page.width(),
        page.height(),
        algorithm,
        binarized.labeling_ms(),
        labeled.labeling_ms()
    );
    say!("wrote {}", args.output.display());
    let builds = labeler.build_report().map(|l| {
        let b = binarizer.build_report();
        ccl::BuildReport {
            programs: l.programs + b.programs,
            from_cache: l.from_cache + b.from_cache,
            build_ms: l.build_ms + b.build_ms,
            warm_up_ms: l.warm_up_ms + b.warm_up_ms,
        }
    });
    clock.report(builds);
    std::mem::forget((binarizer, labeler));
    std::mem::forget(device);
    Ok(())
}
