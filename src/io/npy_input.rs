//! `.npy` arrays in: binary images of shape (H, W) and volumes of shape (D, H, W), C or Fortran
//! order, of bool, integer or float elements (nonzero is foreground), refused from the header
//! when too large.

use std::io::Read;
use std::path::Path;

use super::npy::{fortran_to_c_order, numpy_shape};
use super::ReadOptions;
use crate::{BinaryImage, Error, Result};

/// A threshold or `invert` for a `.npy`, which is binary already: an [`Error::InvalidParameter`].
pub(super) fn refuse_binarize(options: &ReadOptions) -> Result<()> {
    let binarize = options.binarize;
    if binarize == super::Binarize::default() {
        return Ok(());
    }
    Err(Error::InvalidParameter {
        name: if binarize.invert { "invert" } else { "threshold" }.into(),
        reason: "applies to image files; a .npy is read as binary (nonzero is foreground)".into(),
    })
}

/// The shape of the array a `.npy` holds, from its header alone (a folder job tells images
/// from volumes so). A file that is no `.npy` is an [`Error::FileRead`].
pub fn npy_shape(path: &Path) -> Result<Vec<u64>> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let npy = npyz::NpyFile::new(std::io::BufReader::new(file)).map_err(|e| fail(format!("not a .npy file: {e}")))?;
    Ok(npy.shape().to_vec())
}

/// [`super::read_image`] of a `.npy` of shape (H, W) ([`read_binary_npy`]: nonzero is
/// foreground); a volume is an [`Error::FileRead`], and so is a threshold or `invert`.
pub(super) fn read_npy_image(path: &Path, options: &ReadOptions) -> Result<super::DecodedImage> {
    refuse_binarize(options)?;
    let image = match read_binary_npy(path, options.max_pixels)? {
        BinaryArray::Image(image) => image,
        BinaryArray::Volume(volume) => {
            return Err(Error::FileRead {
                path: path.display().to_string(),
                reason: format!(
                    "a volume of shape ({}, {}, {}), where an image (H, W) is read",
                    volume.depth(),
                    volume.height(),
                    volume.width()
                ),
            })
        }
    };
    let (width, height) = (image.width() as u64, image.height() as u64);
    let source = super::SourceInfo {
        format: "NPY".into(),
        width,
        height,
        samples: super::SampleType::U8,
        color_channels: 1,
        alpha: false,
        stored_bits_per_pixel: 8,
        frames: super::Frames::Single,
        decoded_bytes: width * height,
    };
    Ok(super::DecodedImage { image, source })
}

/// A binary array read from a `.npy`: an image or a volume, as its number of axes says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinaryArray {
    /// Shape (H, W).
    Image(BinaryImage),
    /// Shape (D, H, W).
    Volume(BinaryImage),
}

impl BinaryArray {
    /// The array, image or volume (a volume of depth 1 has the shape of an image).
    pub fn array(&self) -> &BinaryImage {
        match self {
            Self::Image(array) | Self::Volume(array) => array,
        }
    }
}

/// Reads a binary volume from a `.npy` of shape (D, H, W), C or Fortran order, of an element type
/// that [`read_binary_npy`] takes: nonzero is foreground. Any other shape or element type is an
/// [`Error::FileRead`] saying which; a volume of more than `max_voxels` voxels is refused from the
/// file's header ([`Error::VolumeTooLarge`]).
pub fn read_volume_npy(path: &Path, max_voxels: u64) -> Result<BinaryImage> {
    match read_binary_npy(path, max_voxels)? {
        BinaryArray::Volume(volume) => Ok(volume),
        BinaryArray::Image(image) => Err(Error::FileRead {
            path: path.display().to_string(),
            reason: format!("shape ({}, {}); a volume has three axes (D, H, W)", image.height(), image.width()),
        }),
    }
}

/// Reads a binary image (shape (H, W)) or volume (shape (D, H, W)) from a `.npy` in C or
/// Fortran order (as `np.load` reads both) of bool, any integer type (signed or not, 1 to 8
/// bytes, either byte order: a mask or a label image) or float (4 or 8 bytes): nonzero is foreground, as `scipy.ndimage.label` takes it (a
/// float NaN is nonzero, -0.0 is zero). An image of more than `max_pixels` pixels, or a volume of
/// more voxels, is refused from the file's header, before its samples are read
/// ([`Error::ImageTooLarge`], [`Error::VolumeTooLarge`]). An empty array, or any other shape
/// or element type, is an [`Error::FileRead`] naming the file and saying which.
pub fn read_binary_npy(path: &Path, max_pixels: u64) -> Result<BinaryArray> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let (element, shape, fortran, mut reader) = read_mask_header(path, 8 << 10)?;
    let [width, height, depth] = checked_extent(path, &shape, element.size() as u64, max_pixels)?;
    let volume = shape.len() == 3;
    let n = (depth as u128 * height as u128 * width as u128).min(usize::MAX as u128) as usize;
    let mut data = Vec::with_capacity(n.saturating_mul(element.size()));
    reader.read_to_end(&mut data).map_err(|e| fail(e.to_string()))?;
    let size = element.size();
    let held = data.len() / size;
    if held != n || data.len() % size != 0 {
        return Err(fail(format!("the file holds {held} values; its shape {shape:?} has {n}")));
    }
    let mut voxels = element.foreground(data);
    if fortran {
        voxels = fortran_to_c_order(&voxels, &shape);
    }
    let (width, height) = (width as usize, height as usize);
    if volume {
        Ok(BinaryArray::Volume(BinaryImage::volume(width, height, depth as usize, voxels)?))
    } else {
        Ok(BinaryArray::Image(BinaryImage::image(width, height, voxels)?))
    }
}

/// The width, height and depth of a `.npy` image (H, W) or volume (D, H, W) of `shape` at
/// `path`, of `element_bytes` bytes an element, checked: another number of axes or an empty array
/// is an [`Error::FileRead`], more elements than `max_elements` (or than memory holds) is refused
/// as [`super::input::check_pixels`] and `check_voxels` refuse it, from the header alone.
fn checked_extent(path: &Path, shape: &[u64], element_bytes: u64, max_elements: u64) -> Result<[u64; 3]> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let (depth, height, width) = match shape[..] {
        [height, width] => (1, height, width),
        [depth, height, width] => (depth, height, width),
        ref other => {
            return Err(fail(format!("shape {other:?}; an image has two axes (H, W), a volume three (D, H, W)")))
        }
    };
    let volume = shape.len() == 3;
    if width == 0 || height == 0 || depth == 0 {
        let what = if volume { "a volume needs at least one voxel" } else { "an image needs at least one pixel" };
        return Err(fail(format!("the array is empty (shape {}); {what}", numpy_shape(shape))));
    }
    let bytes = width.saturating_mul(height).saturating_mul(depth).saturating_mul(element_bytes);
    if volume {
        super::input::check_voxels(path, (width, height, depth), bytes, max_elements)?;
    } else {
        super::input::check_pixels(path, (width, height), bytes, max_elements)?;
    }
    Ok([width, height, depth])
}

/// Opens the `.npy` at `path` (buffered by `buffer` bytes) and reads its header: the element
/// type of a mask, the shape, whether in Fortran order, and the reader standing at the first
/// element. A file that is no `.npy`, or of another element type, is an [`Error::FileRead`].
pub(super) fn read_mask_header(
    path: &Path,
    buffer: usize,
) -> Result<(Element, Vec<u64>, bool, std::io::BufReader<std::fs::File>)> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut reader = std::io::BufReader::with_capacity(buffer, file);
    let npy = npyz::NpyFile::new(&mut reader).map_err(|e| fail(format!("not a .npy file: {e}")))?;
    let dtype = npy.dtype().descr();
    let element = Element::of(dtype.trim_matches('\''))
        .ok_or_else(|| fail(format!("elements of type {dtype}; a mask is bool, an integer type or float32/float64")))?;
    let (shape, fortran) = (npy.shape().to_vec(), npy.order() == npyz::Order::Fortran);
    Ok((element, shape, fortran, reader))
}

/// The element type of a binary `.npy`, as its `descr` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Element {
    /// bool or an integer of `size` bytes (zero in every byte order alike).
    Integer { size: usize },
    /// float32 (`size` 4) or float64 (8), little-endian or not.
    Float { size: usize, little: bool },
}

impl Element {
    /// The element type `descr` (e.g. `|b1`, `<u2`, `>i8`, `<f4`) names, if a mask may have it.
    pub(super) fn of(descr: &str) -> Option<Self> {
        let mut chars = descr.chars();
        let order = chars.next()?;
        let kind = chars.next()?;
        let size: usize = chars.as_str().parse().ok()?;
        let little = match order {
            '<' | '|' | '=' => cfg!(target_endian = "little") || order == '<',
            '>' => false,
            _ => return None,
        };
        match (kind, size) {
            ('b', 1) | ('u' | 'i', 1 | 2 | 4 | 8) => Some(Element::Integer { size }),
            ('f', 4 | 8) => Some(Element::Float { size, little }),
            _ => None,
        }
    }

    pub(super) fn size(self) -> usize {
        match self {
            Element::Integer { size } | Element::Float { size, .. } => size,
        }
    }

    /// Appends each element of `data` (whole elements) to `out` as 1 (nonzero) or 0.
    pub(super) fn foreground_into(self, data: &[u8], out: &mut Vec<u8>) {
        match self {
            Element::Integer { size: 1 } => out.extend_from_slice(data),
            Element::Integer { size } => {
                out.extend(data.chunks_exact(size).map(|e| u8::from(e.iter().any(|&b| b != 0))))
            }
            Element::Float { size, little } => {
                out.extend(data.chunks_exact(size).map(|e| u8::from(float(e, size, little) != 0.0)))
            }
        }
    }

    /// Each element of `data` as 1 (nonzero) or 0; one-byte elements are kept as they are, in
    /// `data` itself: no copy (a 32768^2 uint8 `.npy`, 1 GiB in the page cache, read in 1.40-1.52 s
    /// with one, 0.56-0.69 s without, on the H200 machine).
    fn foreground(self, data: Vec<u8>) -> Vec<u8> {
        match self {
            Element::Integer { size: 1 } => data,
            Element::Integer { size } => data.chunks_exact(size).map(|e| u8::from(e.iter().any(|&b| b != 0))).collect(),
            Element::Float { size, little } => {
                data.chunks_exact(size).map(|e| u8::from(float(e, size, little) != 0.0)).collect()
            }
        }
    }
}

/// The float of `size` bytes (4 or 8) in `bytes`, little-endian or not, as an f64.
fn float(bytes: &[u8], size: usize, little: bool) -> f64 {
    match (size, little) {
        (4, true) => f64::from(f32::from_le_bytes(bytes.try_into().expect("4 bytes"))),
        (4, false) => f64::from(f32::from_be_bytes(bytes.try_into().expect("4 bytes"))),
        (_, true) => f64::from_le_bytes(bytes.try_into().expect("8 bytes")),
        (_, false) => f64::from_be_bytes(bytes.try_into().expect("8 bytes")),
    }
}

/// The values of a multi-label `.npy` ([`read_values_npy`]): integers (or bool) in C order and
/// the machine's byte order, `width` bytes each.
#[derive(Clone, Debug)]
pub struct NpyValues {
    /// The array's extent: (H, W) is an image, (D, H, W) a volume.
    pub shape: crate::Shape,
    /// Whether the array is a volume (three axes; a volume of one slice too).
    pub volume: bool,
    /// Bytes per value: 1, 2, 4 or 8.
    pub width: u8,
    /// Whether the values are signed integers (background values are read so).
    pub signed: bool,
    /// The values' bytes.
    pub bytes: Vec<u8>,
}

impl NpyValues {
    /// The multi-label kind of these values with `background` (a value of their type, else an
    /// [`Error::InvalidParameter`] naming the range).
    pub fn kind(&self, background: i128) -> Result<crate::ImageKind> {
        let bits = 8 * u32::from(self.width);
        let (min, max) =
            if self.signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
        if !(min..=max).contains(&background) {
            let kind = if self.signed { "int" } else { "uint" };
            return Err(Error::InvalidParameter {
                name: "background".into(),
                reason: format!("{background} is not a value of {kind}{bits} labels ({min}..{max})"),
            });
        }
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        Ok(crate::ImageKind::MultiLabel { bytes: self.width, background: (background as u64) & mask })
    }
}

impl NpyValues {
    /// The binary image (or volume) whose foreground is every value but `background` (a value of
    /// their type, else an [`Error::InvalidParameter`]).
    pub fn foreground(&self, background: i128) -> Result<BinaryImage> {
        let kind = self.kind(background)?;
        let (values, background) = crate::multilabel::values_of(kind, &self.bytes);
        BinaryImage::foreground_of(self.shape, &values, background)
    }
}

/// Reads a `.npy` of integer (or bool) values, shape (H, W) or (D, H, W), as a multi-label image
/// ([`crate::multilabel`]): the values in C order and this machine's byte order. More elements
/// than `max_elements` are refused from the header ([`Error::ImageTooLarge`],
/// [`Error::VolumeTooLarge`]); float values, other shapes and empty arrays are an
/// [`Error::FileRead`] naming the file.
pub fn read_values_npy(path: &Path, max_elements: u64) -> Result<NpyValues> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut reader = std::io::BufReader::with_capacity(8 << 10, file);
    let npy = npyz::NpyFile::new(&mut reader).map_err(|e| fail(format!("not a .npy file: {e}")))?;
    let descr = npy.dtype().descr();
    let descr = descr.trim_matches('\'');
    let (order, kind, width) = {
        let mut chars = descr.chars();
        let order = chars.next().unwrap_or('?');
        let kind = chars.next().unwrap_or('?');
        (order, kind, chars.as_str().parse::<u8>().unwrap_or(0))
    };
    if !matches!((kind, width), ('b', 1) | ('u' | 'i', 1 | 2 | 4 | 8)) {
        return Err(fail(format!(
            "values of type {descr}; a multi-label image holds integers (classes, labels) or bool"
        )));
    }
    let big_endian = order == '>' || (order == '=' && cfg!(target_endian = "big"));
    let (shape, fortran) = (npy.shape().to_vec(), npy.order() == npyz::Order::Fortran);
    let [width_px, height, depth] = checked_extent(path, &shape, u64::from(width), max_elements)?;
    let volume = shape.len() == 3;
    let bytes_needed = width_px.saturating_mul(height).saturating_mul(depth).saturating_mul(u64::from(width));
    let mut bytes = Vec::with_capacity(bytes_needed as usize);
    reader.read_to_end(&mut bytes).map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 != bytes_needed {
        return Err(fail(format!(
            "the file holds {} bytes of values; its shape {shape:?} needs {bytes_needed}",
            bytes.len()
        )));
    }
    let size = usize::from(width);
    if big_endian != cfg!(target_endian = "big") && size > 1 {
        bytes.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
    if fortran {
        bytes = match size {
            1 => fortran_to_c_order(&bytes, &shape),
            2 => fortran_bytes::<u16>(&bytes, &shape),
            4 => fortran_bytes::<u32>(&bytes, &shape),
            _ => fortran_bytes::<u64>(&bytes, &shape),
        };
    }
    let shape = crate::Shape { width: width_px as usize, height: height as usize, depth: depth as usize };
    Ok(NpyValues { shape, volume, width, signed: kind == 'i', bytes })
}

/// The bytes of values of type `T` in Fortran order of `shape`, in C order (copied through `T`s:
/// the bytes need no alignment).
fn fortran_bytes<T: bytemuck::Pod>(bytes: &[u8], shape: &[u64]) -> Vec<u8> {
    let values: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
    bytemuck::pod_collect_to_vec(&fortran_to_c_order(&values, shape))
}
