//! Reading input images: foreground is decided on the file's own samples, at full precision, for
//! every bit depth and channel layout the `image` crate decodes.
//!
//! - Without a threshold, a pixel is foreground when any color channel is nonzero (alpha is
//!   ignored): a 16-bit value of 1 and an RGB (1, 0, 0) pixel are foreground.
//! - With a threshold `T`, a pixel is foreground when its gray value is `> T`, where gray is the
//!   sample itself for gray images and `(2126 R + 7152 G + 722 B) / 10000` (Rec. 709 luma,
//!   integer division, as the `image` crate converts to gray) at the file's own depth for color
//!   images. `T` is in the file's range: 0-255 for 8-bit samples (images of 1, 2 or 4 bits are
//!   expanded to 8 bits by the decoders), 0-65535 for 16-bit, any finite value for 32-bit float
//!   (compared with the stored values; gray = 0.2126 R + 0.7152 G + 0.0722 B).
//! - `invert` swaps foreground and background after that.
//! - Multi-page TIFF, animated GIF, PNG and WebP: the first frame is read, and [`SourceInfo`]
//!   says there are more.

use std::fs::File;
use std::io::BufReader;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use image::{ColorType, ImageDecoder, ImageFormat, ImageReader, Limits};

use super::gray_float::GrayFloatPage;
use super::npy::{fortran_to_c_order, numpy_shape};
use crate::{BinaryImage, Error, Result, MAX_PIXELS};

/// How sample values become foreground.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Binarize {
    /// Foreground is `gray > threshold`, in the input's own sample range (see the module
    /// documentation); `None` means any nonzero color channel is foreground.
    pub threshold: Option<f64>,
    /// Swap foreground and background (dark ink on white paper becomes foreground).
    pub invert: bool,
}

/// How to read an input image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadOptions {
    /// How samples become foreground.
    pub binarize: Binarize,
    /// Larger images are refused before decoding ([`Error::ImageTooLarge`]), and volumes of more
    /// voxels ([`Error::VolumeTooLarge`]); at most [`MAX_PIXELS`], the limit of 32-bit labels.
    pub max_pixels: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { binarize: Binarize::default(), max_pixels: MAX_PIXELS }
    }
}

/// The type of an input's decoded samples, which sets the range of the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleType {
    /// 8-bit unsigned (0-255); also images of 1, 2 or 4 bits, expanded by the decoder.
    U8,
    /// 16-bit unsigned (0-65535).
    U16,
    /// 32-bit float (any value).
    F32,
}

impl SampleType {
    /// The largest value a threshold may take, `None` for float samples.
    pub fn max_value(self) -> Option<f64> {
        match self {
            SampleType::U8 => Some(255.0),
            SampleType::U16 => Some(65535.0),
            SampleType::F32 => None,
        }
    }

    fn bits(self) -> u32 {
        match self {
            SampleType::U8 => 8,
            SampleType::U16 => 16,
            SampleType::F32 => 32,
        }
    }
}

/// How many frames (pages) an input holds; only the first is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frames {
    /// One image.
    Single,
    /// Several pages or animation frames, with the count when the format gives it cheaply.
    Several(Option<usize>),
}

/// What an input file holds, as read from its header.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceInfo {
    /// Container format, e.g. `PNG`.
    pub format: String,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
    /// Type of the decoded samples.
    pub samples: SampleType,
    /// Color channels (1 gray, 3 RGB), alpha not counted.
    pub color_channels: u8,
    /// Whether there is an alpha channel (ignored for the foreground test).
    pub alpha: bool,
    /// Bits per pixel as stored, when the decoder expands them (e.g. 1 for a bilevel image).
    pub stored_bits_per_pixel: u16,
    /// Frames or pages in the file.
    pub frames: Frames,
    /// Bytes the decoded image takes in memory.
    pub decoded_bytes: u64,
}

impl SourceInfo {
    /// Pixels in the (first) image.
    pub fn pixels(&self) -> u64 {
        self.width * self.height
    }

    /// Short description, e.g. `PNG, 16-bit gray` or `TIFF, 8-bit RGB + alpha, 3 pages`.
    pub fn describe(&self) -> String {
        let kind = match self.samples {
            SampleType::F32 => "32-bit float".to_string(),
            s => format!("{}-bit", s.bits()),
        };
        let color = if self.color_channels == 1 { "gray" } else { "RGB" };
        let alpha = if self.alpha { " + alpha" } else { "" };
        let decoded_bpp = u16::from(self.color_channels + u8::from(self.alpha)) * self.samples.bits() as u16;
        let stored = if self.stored_bits_per_pixel != 0 && self.stored_bits_per_pixel < decoded_bpp {
            format!(" (stored as {} bits per pixel)", self.stored_bits_per_pixel)
        } else {
            String::new()
        };
        let frames = match self.frames {
            Frames::Single => String::new(),
            Frames::Several(Some(n)) => format!(", {n} frames (the first is read)"),
            Frames::Several(None) => ", several frames (the first is read)".into(),
        };
        format!("{}, {kind} {color}{alpha}{stored}{frames}", self.format)
    }
}

/// A decoded, binarized input and what its file held.
#[derive(Clone, Debug)]
pub struct DecodedImage {
    /// Foreground 1, background 0.
    pub image: BinaryImage,
    /// The file's format, depth, channels and frames.
    pub source: SourceInfo,
}

/// The pages of a DIBCO-style folder, sorted: every image in `folder/YEAR/Originals/`, each
/// with its ground truth `folder/YEAR/GT/NAME_gt.png` when that exists.
pub fn dibco_pages(folder: &Path) -> Result<Vec<(PathBuf, Option<PathBuf>)>> {
    let years = std::fs::read_dir(folder)
        .map_err(|e| Error::FileRead { path: folder.display().to_string(), reason: e.to_string() })?;
    let mut out = Vec::new();
    for year in years.flatten() {
        let Ok(originals) = super::list_images(&year.path().join("Originals")) else { continue };
        for original in originals.images {
            let stem = original.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let truth = year.path().join("GT").join(format!("{stem}_gt.png"));
            out.push((original, truth.is_file().then_some(truth)));
        }
    }
    out.sort();
    Ok(out)
}

/// Reads an image's header only: size, sample type, channels, frames.
pub fn probe(path: &Path) -> Result<SourceInfo> {
    let (decoder, format) = open_decoder(path)?;
    source_info(path, &decoder, format, count_frames(path, format))
}

/// Reads and binarizes an image file, refusing it before decoding when it has more than
/// `options.max_pixels` pixels, and checking the threshold against the file's sample range.
pub(super) fn read_image_file(path: &Path, options: &ReadOptions) -> Result<DecodedImage> {
    let (decoder, format) = open_decoder(path)?;
    let frames = count_frames(path, format);
    read_decoded(path, decoder, format, frames, options)
}

/// Binarizes the image an opened `decoder` of `path` holds (a file's first frame, or one page
/// of a multi-page TIFF) as [`read_image`] does: the size is checked against
/// `options.max_pixels` and the threshold against the samples' range before decoding.
pub(super) fn read_decoded(
    path: &Path,
    decoder: Decoder,
    format: Option<ImageFormat>,
    frames: Frames,
    options: &ReadOptions,
) -> Result<DecodedImage> {
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let source = source_info(path, &decoder, format, frames)?;
    let decoder = limited(path, decoder, &source, options.max_pixels, |source| {
        check_threshold(path, options.binarize.threshold, source.samples)
    })?;
    let (w, h) = (source.width as usize, source.height as usize);
    let binarize = options.binarize;
    // A decoder that panics on a malformed file is an unreadable file, not a crash.
    let pixels = catch_unwind(AssertUnwindSafe(|| decode_binary(decoder, w * h, binarize)))
        .map_err(|_| err("the decoder failed on malformed data".into()))?
        .map_err(err)?;
    let image = BinaryImage::image(w, h, pixels).map_err(|e| err(e.to_string()))?;
    Ok(DecodedImage { image, source })
}

/// Peak host memory, in bytes, of reading an image and labeling it: the decoded samples, the
/// binary image and the decoder's own buffers while decoding, then the binary image, the 32-bit
/// labels and `extra_bytes_per_pixel` more (the output's, e.g. 4 for a colorized PNG, and the
/// device's buffers where they are host memory).
pub fn estimated_peak_bytes(source: &SourceInfo, extra_bytes_per_pixel: u64) -> u64 {
    let row_bytes = source.decoded_bytes / source.height.max(1);
    let decoder = if source.format == "PNG" { PNG_DECODER_ROWS.saturating_mul(row_bytes) } else { 0 };
    peak_bytes(source.pixels(), source.decoded_bytes.saturating_add(decoder), extra_bytes_per_pixel)
}

/// The PNG decoder's buffers, in rows of decoded samples: it keeps several rows at once (the
/// previous one, the inflated stream ahead, a scratch row), which only matters for very wide
/// images: a 64000000x1 gray PNG peaked at 11, a 16000000x4 one at 19.
const PNG_DECODER_ROWS: u64 = 24;

/// [`estimated_peak_bytes`] of `pixels` pixels whose decoding takes `decoding_bytes` (samples
/// and decoder buffers).
fn peak_bytes(pixels: u64, decoding_bytes: u64, extra_bytes_per_pixel: u64) -> u64 {
    let decoding = decoding_bytes.saturating_add(pixels);
    let labeling = pixels.saturating_mul(5u64.saturating_add(extra_bytes_per_pixel));
    decoding.max(labeling)
}

/// Refuses a `width` x `height` image whose samples take `decoded_bytes` when it has more than
/// `max_pixels` pixels (or than [`MAX_PIXELS`]): [`Error::ImageTooLarge`], with the host memory
/// reading and labeling it would take; and one that would not fit the host's memory
/// ([`Error::InsufficientMemory`]). Called before decoding.
pub(crate) fn check_pixels(
    path: &Path,
    (width, height): (u64, u64),
    decoded_bytes: u64,
    max_pixels: u64,
) -> Result<()> {
    let pixels = width.saturating_mul(height);
    match over_limit(pixels, decoded_bytes, max_pixels) {
        Some((limit, memory_bytes)) => {
            Err(Error::ImageTooLarge { path: path.display().to_string(), width, height, limit, memory_bytes })
        }
        None => check_memory(
            || format!("reading and labeling {} ({width}x{height})", path.display()),
            pixels,
            decoded_bytes,
        ),
    }
}

/// Refuses to read what would not fit the host's memory ([`available_memory`]) once decoded
/// and labeled: `count` pixels or voxels whose samples take `decoded_bytes`
/// ([`Error::InsufficientMemory`], naming the task `what` gives).
fn check_memory(what: impl FnOnce() -> String, count: u64, decoded_bytes: u64) -> Result<()> {
    let needed = peak_bytes(count, decoded_bytes, 0);
    match available_memory().filter(|&available| available < needed) {
        Some(available_bytes) => Err(Error::InsufficientMemory { what: what(), needed_bytes: needed, available_bytes }),
        None => Ok(()),
    }
}

/// Refuses a `width` x `height` x `depth` volume whose samples take `decoded_bytes` when it has
/// more than `max_voxels` voxels (or than [`MAX_PIXELS`]): [`Error::VolumeTooLarge`], with the
/// host memory reading and labeling it would take; and one that would not fit the host's memory
/// ([`Error::InsufficientMemory`]). Called before decoding.
pub(crate) fn check_voxels(
    path: &Path,
    (width, height, depth): (u64, u64, u64),
    decoded_bytes: u64,
    max_voxels: u64,
) -> Result<()> {
    let voxels = width.saturating_mul(height).saturating_mul(depth);
    match over_limit(voxels, decoded_bytes, max_voxels) {
        Some((limit, memory_bytes)) => {
            Err(Error::VolumeTooLarge { path: path.display().to_string(), width, height, depth, limit, memory_bytes })
        }
        None => check_memory(
            || format!("reading and labeling {} ({width}x{height}x{depth})", path.display()),
            voxels,
            decoded_bytes,
        ),
    }
}

/// Refuses a volume of `shape` read from slices (a TIFF's pages, a folder's images) that is
/// empty or past 32-bit labels ([`crate::volume`]'s check), or has more than `max_voxels`
/// voxels ([`check_voxels`], counting a byte a decoded voxel).
pub(crate) fn check_volume_extent(path: &Path, shape: crate::Shape, max_voxels: u64) -> Result<()> {
    crate::host_array::check_shape(shape)?;
    let voxels = shape.len() as u64;
    check_voxels(path, (shape.width as u64, shape.height as u64, shape.depth as u64), voxels, max_voxels)
}

/// The limit (`max` or [`MAX_PIXELS`], the lower) and the host memory reading and labeling would
/// take, where `count` pixels or voxels whose samples take `decoded_bytes` pass that limit.
fn over_limit(count: u64, decoded_bytes: u64, max: u64) -> Option<(u64, u64)> {
    let limit = max.min(MAX_PIXELS);
    (count > limit).then(|| (limit, peak_bytes(count, decoded_bytes, 0)))
}

/// Memory this process can still take without swapping, when known: the system's
/// (`MemAvailable`), or less where an address-space limit (`ulimit -v`) leaves less.
#[allow(clippy::unnecessary_cast)] // rlim_t is narrower than u64 on 32-bit Linux.
pub fn available_memory() -> Option<u64> {
    let system = kib_field("/proc/meminfo", "MemAvailable:");
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the limit into `limit`.
    let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0 && limit.rlim_cur != libc::RLIM_INFINITY;
    let headroom =
        limited.then(|| (limit.rlim_cur as u64).saturating_sub(kib_field("/proc/self/status", "VmSize:").unwrap_or(0)));
    match (system, headroom) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A `NAME: N kB` line of a /proc file, in bytes.
fn kib_field(file: &str, name: &str) -> Option<u64> {
    let info = std::fs::read_to_string(file).ok()?;
    let line = info.lines().find(|l| l.starts_with(name))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn check_threshold(path: &Path, threshold: Option<f64>, samples: SampleType) -> Result<()> {
    let Some(t) = threshold else {
        return Ok(());
    };
    let bad = |reason: String| Error::InvalidParameter { name: "threshold".into(), reason };
    if !t.is_finite() {
        return Err(bad(format!("{t} is not a number")));
    }
    if let Some(max) = samples.max_value() {
        if !(0.0..=max).contains(&t) {
            return Err(bad(format!(
                "{t} is outside 0-{max}, the range of {}'s {}-bit samples",
                path.display(),
                samples.bits()
            )));
        }
    }
    Ok(())
}

/// An opened decoder of one image, its header read.
pub(super) enum Decoder {
    /// An image the `image` crate decodes.
    Image(Box<dyn ImageDecoder>),
    /// A gray float TIFF page, which it does not ([`GrayFloatPage`]).
    GrayFloat(Box<GrayFloatPage>),
}

impl Decoder {
    fn dimensions(&self) -> (u32, u32) {
        match self {
            Decoder::Image(d) => d.dimensions(),
            Decoder::GrayFloat(page) => page.dimensions(),
        }
    }
}

/// Opens a decoder and reads the header, then [`limited`].
fn open_limited(
    path: &Path,
    max_pixels: u64,
    check: impl FnOnce(&SourceInfo) -> Result<()>,
) -> Result<(Decoder, SourceInfo)> {
    let (decoder, format) = open_decoder(path)?;
    let source = source_info(path, &decoder, format, count_frames(path, format))?;
    Ok((limited(path, decoder, &source, max_pixels, check)?, source))
}

/// Refuses an image of more than `max_pixels` pixels (or than [`MAX_PIXELS`]) before decoding,
/// runs `check` on its description, and limits what the decoder may allocate to the image's real
/// size (the decoded buffer plus room for the decoder's own buffers) instead of the crate's
/// fixed default.
fn limited(
    path: &Path,
    mut decoder: Decoder,
    source: &SourceInfo,
    max_pixels: u64,
    check: impl FnOnce(&SourceInfo) -> Result<()>,
) -> Result<Decoder> {
    check_pixels(path, (source.width, source.height), source.decoded_bytes, max_pixels)?;
    check(source)?;
    let max_alloc = source.decoded_bytes.saturating_mul(2).saturating_add(512 << 20);
    match &mut decoder {
        Decoder::Image(d) => {
            let mut limits = Limits::no_limits();
            limits.max_alloc = Some(max_alloc);
            d.set_limits(limits)
                .map_err(|e| Error::ImageRead { path: path.display().to_string(), reason: e.to_string() })?;
        }
        Decoder::GrayFloat(page) => page.set_max_alloc(max_alloc),
    }
    Ok(decoder)
}

fn open_decoder(path: &Path) -> Result<(Decoder, Option<ImageFormat>)> {
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let mut reader = ImageReader::open(path)
        .map_err(|e| err(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| err(e.to_string()))?;
    // The header is read without limits; the size is checked against the caller's limit and
    // the decoder's allocation limit set from the real size before any pixel is decoded.
    reader.no_limits();
    let format = reader.format();
    let decoder =
        catch_unwind(AssertUnwindSafe(|| reader.into_decoder().map(|d| Box::new(d) as Box<dyn ImageDecoder>)))
            .map_err(|_| err("the decoder failed on a malformed header".into()))?;
    match decoder {
        Ok(d) => Ok((Decoder::Image(d), format)),
        // The image crate decodes float TIFF as RGB(A) only: a gray float page is read apart.
        Err(e) => match format {
            Some(ImageFormat::Tiff) => File::open(path)
                .ok()
                .and_then(|f| GrayFloatPage::open(Box::new(BufReader::new(f))))
                .map(|page| (Decoder::GrayFloat(Box::new(page)), format))
                .ok_or_else(|| err(e.to_string())),
            _ => Err(err(e.to_string())),
        },
    }
}

fn source_info(path: &Path, decoder: &Decoder, format: Option<ImageFormat>, frames: Frames) -> Result<SourceInfo> {
    let (width, height) = decoder.dimensions();
    let format = format.map(|f| format!("{f:?}").to_uppercase()).unwrap_or_else(|| "image".into());
    let decoder = match decoder {
        Decoder::Image(d) => d,
        Decoder::GrayFloat(page) => {
            return Ok(SourceInfo {
                format,
                width: width.into(),
                height: height.into(),
                samples: SampleType::F32,
                color_channels: 1,
                alpha: false,
                stored_bits_per_pixel: 32,
                frames,
                decoded_bytes: page.total_bytes(),
            })
        }
    };
    let color = decoder.color_type();
    let samples = match color {
        ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8 => SampleType::U8,
        ColorType::L16 | ColorType::La16 | ColorType::Rgb16 | ColorType::Rgba16 => SampleType::U16,
        ColorType::Rgb32F | ColorType::Rgba32F => SampleType::F32,
        other => {
            return Err(Error::ImageRead {
                path: path.display().to_string(),
                reason: format!("unsupported sample layout {other:?}"),
            })
        }
    };
    let color_channels = if color.has_color() { 3 } else { 1 };
    Ok(SourceInfo {
        format,
        width: width.into(),
        height: height.into(),
        samples,
        color_channels,
        alpha: color.has_alpha(),
        stored_bits_per_pixel: decoder.original_color_type().bits_per_pixel(),
        frames,
        decoded_bytes: decoder.total_bytes(),
    })
}

/// Whether a multi-frame format holds more than one frame; any error reads as a single frame
/// (the decoder proper reports real problems).
fn count_frames(path: &Path, format: Option<ImageFormat>) -> Frames {
    let Some(format) = format else {
        return Frames::Single;
    };
    let several = |n: usize| if n > 1 { Frames::Several(Some(n)) } else { Frames::Single };
    let open = || File::open(path).ok().map(BufReader::new);
    let guarded = |f: &dyn Fn() -> Option<Frames>| catch_unwind(AssertUnwindSafe(f)).ok().flatten();
    let found = match format {
        ImageFormat::Tiff => guarded(&|| {
            let mut decoder = tiff::decoder::Decoder::new(open()?).ok()?;
            let mut pages = 1;
            // A cap guards against files whose page chain loops.
            while decoder.more_images() && pages < 100_000 {
                decoder.next_image().ok()?;
                pages += 1;
            }
            Some(several(pages))
        }),
        ImageFormat::Gif => guarded(&|| {
            use image::AnimationDecoder;
            let decoder = image::codecs::gif::GifDecoder::new(open()?).ok()?;
            let n = decoder.into_frames().take(2).filter(|f| f.is_ok()).count();
            Some(if n > 1 { Frames::Several(None) } else { Frames::Single })
        }),
        ImageFormat::Png => guarded(&|| {
            let apng = image::codecs::png::PngDecoder::new(open()?).ok()?.is_apng().ok()?;
            Some(if apng { Frames::Several(None) } else { Frames::Single })
        }),
        ImageFormat::WebP => guarded(&|| {
            let animated = image::codecs::webp::WebPDecoder::new(open()?).ok()?.has_animation();
            Some(if animated { Frames::Several(None) } else { Frames::Single })
        }),
        _ => None,
    };
    found.unwrap_or(Frames::Single)
}

/// Decodes into samples of the decoder's type and binarizes them. 8-bit gray is binarized in
/// place (1 byte per pixel in all).
fn decode_binary(decoder: Decoder, pixels: usize, binarize: Binarize) -> std::result::Result<Vec<u8>, String> {
    let decoder = match decoder {
        Decoder::Image(d) => d,
        Decoder::GrayFloat(page) => {
            let samples = page.read()?;
            if samples.iter().any(|s| s.is_nan()) {
                return Err(NAN_SAMPLES.into());
            }
            return Ok(binarize_float(&samples, 1, 1, binarize));
        }
    };
    let color = decoder.color_type();
    let channels = usize::from(color.channel_count());
    let color_channels = if color.has_color() { 3 } else { 1 };
    let decode_err = |e: image::ImageError| e.to_string();
    Ok(match color {
        ColorType::L8 => {
            let mut samples = vec![0u8; pixels];
            decoder.read_image_boxed(&mut samples).map_err(decode_err)?;
            let t = binarize.threshold;
            for p in samples.iter_mut() {
                let fg = match t {
                    Some(t) => f64::from(*p) > t,
                    None => *p != 0,
                };
                *p = u8::from(fg != binarize.invert);
            }
            samples
        }
        ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8 => {
            let mut samples = vec![0u8; pixels * channels];
            decoder.read_image_boxed(&mut samples).map_err(decode_err)?;
            binarize_integer(&samples, channels, color_channels, binarize)
        }
        ColorType::L16 | ColorType::La16 | ColorType::Rgb16 | ColorType::Rgba16 => {
            let mut samples = vec![0u16; pixels * channels];
            decoder.read_image_boxed(bytemuck::cast_slice_mut(&mut samples)).map_err(decode_err)?;
            binarize_integer(&samples, channels, color_channels, binarize)
        }
        ColorType::Rgb32F | ColorType::Rgba32F => {
            let mut samples = vec![0f32; pixels * channels];
            decoder.read_image_boxed(bytemuck::cast_slice_mut(&mut samples)).map_err(decode_err)?;
            if samples.iter().any(|s| s.is_nan()) {
                return Err(NAN_SAMPLES.into());
            }
            binarize_float(&samples, channels, 3, binarize)
        }
        other => return Err(format!("unsupported sample layout {other:?}")),
    })
}

fn binarize_integer<T: Copy + Into<u64>>(
    samples: &[T],
    channels: usize,
    color_channels: usize,
    binarize: Binarize,
) -> Vec<u8> {
    samples
        .chunks_exact(channels)
        .map(|px| {
            let fg = match binarize.threshold {
                None => px[..color_channels].iter().any(|&s| s.into() != 0),
                Some(t) => {
                    let gray = if color_channels == 1 {
                        px[0].into()
                    } else {
                        (2126 * px[0].into() + 7152 * px[1].into() + 722 * px[2].into()) / 10000
                    };
                    gray as f64 > t
                }
            };
            u8::from(fg != binarize.invert)
        })
        .collect()
}

/// Why float samples with NaN are refused.
const NAN_SAMPLES: &str = "it holds NaN samples, which are neither foreground nor background";

fn binarize_float(samples: &[f32], channels: usize, color_channels: usize, binarize: Binarize) -> Vec<u8> {
    samples
        .chunks_exact(channels)
        .map(|px| {
            let fg = match binarize.threshold {
                None => px[..color_channels].iter().any(|&s| s != 0.0),
                Some(t) if color_channels == 1 => f64::from(px[0]) > t,
                Some(t) => 0.2126 * f64::from(px[0]) + 0.7152 * f64::from(px[1]) + 0.0722 * f64::from(px[2]) > t,
            };
            u8::from(fg != binarize.invert)
        })
        .collect()
}

/// Reads an image as an 8-bit gray page for binarization, refusing it before decoding when it
/// has more than `max_pixels` pixels. Gray images keep their samples (16-bit and float ones are
/// brought to 0-255 as the `image` crate converts them: 16-bit by v / 257 rounded, float by
/// 255 v clamped); color becomes gray as OpenCV's `cvtColor(RGB2GRAY)` computes it
/// ([`crate::binarize::gray_from_rgb`], BT.601), after the same conversion of each channel to 8
/// bits. Alpha is ignored. Multi-frame files: the first frame.
///
/// A `.npy` holds the page as an array of uint8 or uint16 (16-bit samples brought to 8 bits as
/// above), of shape (H, W) for gray, or (H, W, 3) or (H, W, 4) for RGB and RGBA (the layout of
/// NumPy images from OpenCV after `cvtColor(BGR2RGB)`, PIL and scikit-image), in C or Fortran
/// order.
pub fn read_gray(path: &Path, max_pixels: u64) -> Result<(crate::binarize::GrayImage, SourceInfo)> {
    if super::npy::is_npy(path) {
        return read_gray_npy(path, max_pixels);
    }
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let (decoder, source) = open_limited(path, max_pixels, |_| Ok(()))?;
    let decoder = match decoder {
        Decoder::Image(d) => d,
        Decoder::GrayFloat(page) => {
            let (w, h) = (source.width as usize, source.height as usize);
            let samples = catch_unwind(AssertUnwindSafe(|| page.read()))
                .map_err(|_| err("the decoder failed on malformed data".into()))?
                .map_err(err)?;
            let pixels = samples.into_iter().map(float_to_u8).collect();
            let page = crate::binarize::GrayImage::image(w, h, pixels).map_err(|e| err(e.to_string()))?;
            return Ok((page, source));
        }
    };
    let color = decoder.color_type().has_color();
    let decoded = catch_unwind(AssertUnwindSafe(|| image::DynamicImage::from_decoder(decoder)))
        .map_err(|_| err("the decoder failed on malformed data".into()))?
        .map_err(|e| err(e.to_string()))?;
    let (w, h) = (decoded.width() as usize, decoded.height() as usize);
    let pixels = if color {
        decoded.to_rgb8().pixels().map(|p| crate::binarize::gray_from_rgb(p[0], p[1], p[2])).collect()
    } else {
        decoded.to_luma8().into_raw()
    };
    let page = crate::binarize::GrayImage::image(w, h, pixels).map_err(|e| err(e.to_string()))?;
    Ok((page, source))
}

/// A float sample as 8 bits, as the `image` crate converts it: 255 v, rounded, v clamped to
/// 0-1 (NaN as 1).
fn float_to_u8(v: f32) -> u8 {
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let clamped = if !(v < 1.0) { 1.0 } else { v.max(0.0) };
    (clamped * 255.0).round() as u8
}

/// [`read_gray`] of a `.npy`: its header is checked (type, shape, order, size) before its
/// samples are read.
fn read_gray_npy(path: &Path, max_pixels: u64) -> Result<(crate::binarize::GrayImage, SourceInfo)> {
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let file =
        File::open(path).map_err(|e| Error::FileRead { path: path.display().to_string(), reason: e.to_string() })?;
    let npy = npyz::NpyFile::new(BufReader::new(file)).map_err(|e| err(format!("not a .npy file: {e}")))?;
    let descr = npy.dtype().descr();
    let samples = match descr.trim_matches('\'') {
        "|u1" | "<u1" | ">u1" => SampleType::U8,
        "<u2" | ">u2" => SampleType::U16,
        other => return Err(err(format!("samples of type {other}; a page is uint8 or uint16"))),
    };
    let fortran = npy.order() == npyz::Order::Fortran;
    let (height, width, channels) = match *npy.shape() {
        [height, width] => (height, width, 1),
        [height, width, channels @ (1 | 3 | 4)] => (height, width, channels),
        ref other => {
            return Err(err(format!(
                "shape {other:?}; a page is (H, W) for gray, or (H, W, 3) or (H, W, 4) for RGB and RGBA"
            )))
        }
    };
    let bytes_per_sample = if samples == SampleType::U8 { 1 } else { 2 };
    let source = SourceInfo {
        format: "NPY".into(),
        width,
        height,
        samples,
        color_channels: if channels >= 3 { 3 } else { 1 },
        alpha: channels == 4,
        stored_bits_per_pixel: 0,
        frames: Frames::Single,
        decoded_bytes: width.saturating_mul(height).saturating_mul(channels * bytes_per_sample),
    };
    if width == 0 || height == 0 {
        return Err(err(format!("an empty page (shape {})", numpy_shape(npy.shape()))));
    }
    check_pixels(path, (width, height), source.decoded_bytes, max_pixels)?;
    let shape = npy.shape().to_vec();
    let short = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => err(format!("the file ends before the samples of its shape {shape:?}")),
        _ => err(e.to_string()),
    };
    // 16-bit samples to 8 bits as the image crate converts them: v / 257, rounded.
    let values: Vec<u8> = match samples {
        SampleType::U16 => {
            npy.into_vec::<u16>().map_err(short)?.into_iter().map(|v| ((u32::from(v) + 128) / 257) as u8).collect()
        }
        _ => npy.into_vec::<u8>().map_err(short)?,
    };
    let (w, h, c) = (width as usize, height as usize, channels as usize);
    if values.len() != w * h * c {
        return Err(err(format!("the file holds {} samples; its shape has {}", values.len(), w * h * c)));
    }
    let values = if fortran { fortran_to_c_order(&values, &shape) } else { values };
    let pixels = if c >= 3 {
        values.chunks_exact(c).map(|p| crate::binarize::gray_from_rgb(p[0], p[1], p[2])).collect()
    } else {
        values
    };
    let page = crate::binarize::GrayImage::image(w, h, pixels).map_err(|e| err(e.to_string()))?;
    Ok((page, source))
}
