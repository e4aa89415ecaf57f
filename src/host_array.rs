//! The one host array: a [`Shape`] and its elements in row-major order (x fastest, then y, then
//! z: a NumPy array of shape (D, H, W) or (H, W) in C order), the host side of
//! [`crate::DeviceArray`]. Binary inputs, gray pages and labels are the same type with another
//! element type; an image is an array of depth 1.

use crate::error::{Error, Result};
use crate::shape::{Element, Shape, MAX_PIXELS};

/// A binary image or volume on the host: any nonzero element is foreground.
pub type BinaryImage = HostArray<u8>;

/// Labels on the host: 0 is background, each component one value.
pub type LabelImage = HostArray<u32>;

/// A page of gray levels on the host (0 black, 255 white), the input of binarization.
pub type GrayImage = HostArray<u8>;

/// A dense array of `T` with its shape, on the host. The constructors check that the shape is
/// neither empty nor past [`MAX_PIXELS`] and that there is one value per element, so every
/// `HostArray` can be uploaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostArray<T: Element> {
    shape: Shape,
    values: Vec<T>,
}

impl<T: Element> HostArray<T> {
    /// An array of `shape` holding `values` in row-major order.
    pub fn new(shape: Shape, values: Vec<T>) -> Result<Self> {
        check_len(shape, values.len())?;
        Ok(Self { shape, values })
    }

    /// A `width` x `height` image.
    pub fn image(width: usize, height: usize, values: Vec<T>) -> Result<Self> {
        Self::new(Shape::image(width, height), values)
    }

    /// A `width` x `height` x `depth` volume.
    pub fn volume(width: usize, height: usize, depth: usize, values: Vec<T>) -> Result<Self> {
        Self::new(Shape { width, height, depth }, values)
    }

    /// An image whose element at (x, y) is `f(x, y)` (a `bool` makes 0 or 1).
    pub fn image_from_fn<V: Into<T>>(
        width: usize,
        height: usize,
        mut f: impl FnMut(usize, usize) -> V,
    ) -> Result<Self> {
        Self::volume_from_fn(width, height, 1, |x, y, _| f(x, y))
    }

    /// A volume whose element at (x, y, z) is `f(x, y, z)` (a `bool` makes 0 or 1).
    pub fn volume_from_fn<V: Into<T>>(
        width: usize,
        height: usize,
        depth: usize,
        mut f: impl FnMut(usize, usize, usize) -> V,
    ) -> Result<Self> {
        let shape = Shape { width, height, depth };
        check_shape(shape)?;
        let mut values = Vec::with_capacity(shape.len());
        for z in 0..depth {
            for y in 0..height {
                values.extend((0..width).map(|x| f(x, y, z).into()));
            }
        }
        Ok(Self { shape, values })
    }

    /// The extent.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Elements along x.
    pub fn width(&self) -> usize {
        self.shape.width
    }

    /// Elements along y.
    pub fn height(&self) -> usize {
        self.shape.height
    }

    /// Elements along z (1 for an image).
    pub fn depth(&self) -> usize {
        self.shape.depth
    }

    /// The elements, row-major.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The elements, row-major, to change in place (the shape stays).
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// The elements, giving up the shape.
    pub fn into_values(self) -> Vec<T> {
        self.values
    }

    /// The element at (x, y) of an image (of the first plane of a volume).
    pub fn get(&self, x: usize, y: usize) -> T {
        self.at(x, y, 0)
    }

    /// The element at (x, y, z).
    pub fn at(&self, x: usize, y: usize, z: usize) -> T {
        self.values[(z * self.shape.height + y) * self.shape.width + x]
    }
}

impl HostArray<u8> {
    /// Whether the element at (x, y) of a binary image is foreground (nonzero).
    pub fn is_foreground(&self, x: usize, y: usize) -> bool {
        self.get(x, y) != 0
    }

    /// The binary image (or volume) of `shape` whose foreground is every element of `values`
    /// other than `background` (scikit-image's `background`): one class, as nonzero is for
    /// [`BinaryImage`]s. For components of equal values only, see [`crate::multilabel`].
    /// Errors as [`HostArray::new`].
    pub fn foreground_of<V: PartialEq + Copy + Sync>(shape: Shape, values: &[V], background: V) -> Result<Self> {
        use rayon::prelude::*;
        check_len(shape, values.len())?;
        let mask = values.par_iter().with_min_len(1 << 16).map(|&v| u8::from(v != background)).collect();
        Self::new(shape, mask)
    }
}

impl HostArray<u32> {
    /// The same partition numbered 1..N in raster order of first appearance, and N.
    pub fn to_consecutive(&self) -> (LabelImage, u32) {
        self.clone().into_consecutive()
    }

    /// [`HostArray::to_consecutive`] in place.
    pub fn into_consecutive(mut self) -> (LabelImage, u32) {
        let n = renumber(&mut self.values);
        (self, n)
    }

    /// The number of distinct nonzero labels.
    pub fn component_count(&self) -> u32 {
        let distinct: std::collections::HashSet<u32> = self.values.iter().copied().filter(|&l| l != 0).collect();
        distinct.len() as u32
    }
}

/// Renumbers nonzero labels 1..N in order of first appearance; returns N.
pub(crate) fn renumber(labels: &mut [u32]) -> u32 {
    let mut map = std::collections::HashMap::new();
    let mut next = 0u32;
    for l in labels.iter_mut().filter(|l| **l != 0) {
        *l = *map.entry(*l).or_insert_with(|| {
            next += 1;
            next
        });
    }
    next
}

/// [`Error::EmptyImage`] / [`Error::EmptyVolume`] for an empty shape, [`Error::TooManyPixels`] /
/// [`Error::TooManyVoxels`] past [`MAX_PIXELS`].
pub(crate) fn check_shape(shape: Shape) -> Result<()> {
    let Shape { width, height, depth } = shape;
    let elements = width as u128 * height as u128 * depth as u128;
    match (depth, elements) {
        (1, 0) => Err(Error::EmptyImage { width, height }),
        (_, 0) => Err(Error::EmptyVolume { shape }),
        (1, n) if n > MAX_PIXELS as u128 => Err(Error::TooManyPixels { width, height }),
        (_, n) if n > MAX_PIXELS as u128 => Err(Error::TooManyVoxels { shape }),
        _ => Ok(()),
    }
}

/// [`check_shape`], then [`Error::SizeMismatch`] / [`Error::VolumeSizeMismatch`] unless `len` is
/// the shape's element count.
pub(crate) fn check_len(shape: Shape, len: usize) -> Result<()> {
    check_shape(shape)?;
    match (shape.depth, len == shape.len()) {
        (_, true) => Ok(()),
        (1, false) => Err(Error::SizeMismatch { width: shape.width, height: shape.height, len }),
        (_, false) => Err(Error::VolumeSizeMismatch { shape, len }),
    }
}
