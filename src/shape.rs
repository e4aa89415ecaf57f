//! Extents and element types of host and device arrays.

use std::fmt;

/// Most pixels an image (or voxels a volume) may have: labels are 32-bit and 0 is background, so
/// every pixel index plus one must fit in a `u32`.
pub const MAX_PIXELS: u64 = u32::MAX as u64;

/// The extent of an image (depth 1) or a volume, in elements; arrays are stored densely in
/// row-major (x fastest, then y, then z) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Elements along x.
    pub width: usize,
    /// Elements along y.
    pub height: usize,
    /// Elements along z (1 for an image).
    pub depth: usize,
}

impl Shape {
    /// A 2D image's shape.
    pub const fn image(width: usize, height: usize) -> Self {
        Self { width, height, depth: 1 }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.width * self.height * self.depth
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// 2 for an image, 3 for a volume.
    pub fn dims(&self) -> u8 {
        if self.depth == 1 {
            2
        } else {
            3
        }
    }

    /// Distance in elements between neighbours along x, y and z.
    pub fn strides(&self) -> [usize; 3] {
        [1, self.width, self.width * self.height]
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.depth == 1 {
            write!(f, "{}x{}", self.width, self.height)
        } else {
            write!(f, "{}x{}x{}", self.width, self.height, self.depth)
        }
    }
}

/// The element type of an array, as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// 8-bit unsigned (`uchar`): binary pixels.
    U8,
    /// 16-bit unsigned (`ushort`).
    U16,
    /// 32-bit unsigned (`uint`): labels today.
    U32,
    /// 64-bit unsigned (`ulong`): labels of images past 4 Gpx.
    U64,
    /// 32-bit float.
    F32,
    /// 64-bit float: intensity images.
    F64,
}

impl ElementType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementType::U8 => 1,
            ElementType::U16 => 2,
            ElementType::U32 | ElementType::F32 => 4,
            ElementType::U64 | ElementType::F64 => 8,
        }
    }
}

/// A Rust type stored in host and device arrays.
pub trait Element: bytemuck::Pod + Send + Sync + 'static {
    /// Its element type.
    const TYPE: ElementType;
}

impl Element for u8 {
    const TYPE: ElementType = ElementType::U8;
}
impl Element for u16 {
    const TYPE: ElementType = ElementType::U16;
}
impl Element for u32 {
    const TYPE: ElementType = ElementType::U32;
}
impl Element for u64 {
    const TYPE: ElementType = ElementType::U64;
}
impl Element for f32 {
    const TYPE: ElementType = ElementType::F32;
}
impl Element for f64 {
    const TYPE: ElementType = ElementType::F64;
}

/// Host memory of `T`s that a device copies to and from at bus speed (page-locked, from
/// [`crate::Device::pinned_buffer`]); derefs to `[T]`. Pass it to
/// [`crate::Labeler::download_into`] (or as [`crate::run_host`]'s download) to skip the
/// driver's staging copy.
pub struct PinnedBuffer<T: Element> {
    buffer: ccl_backend::HostBuffer,
    len: usize,
    _element: std::marker::PhantomData<T>,
}

impl<T: Element> PinnedBuffer<T> {
    pub(crate) fn new(mut buffer: ccl_backend::HostBuffer, len: usize) -> Self {
        buffer.as_mut_slice().fill(0);
        Self { buffer, len, _element: std::marker::PhantomData }
    }
}

impl<T: Element> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        bytemuck::cast_slice(&self.buffer.as_slice()[..self.len * std::mem::size_of::<T>()])
    }
}

impl<T: Element> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        let bytes = self.len * std::mem::size_of::<T>();
        bytemuck::cast_slice_mut(&mut self.buffer.as_mut_slice()[..bytes])
    }
}
