//! Arrays resident on a device (or in host memory, for the CPU reference): binary images in,
//! labels out, each with its shape, element type and the device that owns it.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::gpu::Buffer;
use crate::shape::{Element, ElementType};
use crate::{ImageKind, RawLabels, Shape};

/// How the labels of a label array are numbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// An algorithm's raw labels, in its convention.
    Raw(RawLabels),
    /// Consecutive 1..N in raster order of first appearance, with N.
    Consecutive(u32),
}

/// Where the elements of a device array live.
pub(crate) enum Storage<T> {
    /// In host memory (the CPU backend).
    Host(Vec<T>),
    /// In a device buffer of a GPU backend.
    Device(Buffer),
}

/// A unique number for each opened device, so arrays are never handed to another device.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda")), allow(dead_code))]
pub(crate) fn next_owner_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// An image, volume or label array resident on a device (or in host memory for the CPU
/// backend), dense in row-major order. `Send + Sync`: any labeler of its device may use it.
pub struct DeviceArray<T: Element> {
    shape: Shape,
    owner: u64,
    pub(crate) storage: Storage<T>,
    pub(crate) numbering: Option<Numbering>,
    /// What an image's elements are (labels: [`ImageKind::Binary`], unused).
    kind: ImageKind,
    _element: PhantomData<T>,
}

/// An image uploaded to a device: label it many times, with any labeler of that device. A binary
/// mask of one byte an element, or the values of a multi-label image ([`DeviceArray::kind`]),
/// held as their bytes.
pub type DeviceImage = DeviceArray<u8>;
/// Labels left on a device by [`crate::Labeler::run`]; read them with
/// [`crate::Labeler::download`].
pub type DeviceLabels = DeviceArray<u32>;

impl DeviceArray<u32> {
    /// Declares labels numbered 1..=`count` with background 0 (labels computed elsewhere, or
    /// written into borrowed memory), so that the stages on consecutive labels take them as they
    /// are: labels above `count` are then ignored by every stage, and a label of no pixels is a
    /// component without pixels (an empty statistics entry; no region properties row).
    pub fn assume_consecutive(&mut self, count: u32) {
        self.numbering = Some(Numbering::Consecutive(count));
    }
}

impl<T: Element> DeviceArray<T> {
    pub(crate) fn new(shape: Shape, owner: u64, storage: Storage<T>) -> Self {
        Self { shape, owner, storage, numbering: None, kind: ImageKind::Binary, _element: PhantomData }
    }

    /// The same array, its elements of `kind` (an image's bytes holding multi-label values).
    pub(crate) fn with_kind(mut self, kind: ImageKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same elements read as `U`s (bytes uploaded for an array of another element type):
    /// the element counts must agree ([`Shape::len`] of `U`s).
    pub(crate) fn retype<U: Element>(self) -> DeviceArray<U> {
        let storage = match self.storage {
            Storage::Host(values) => Storage::Host(bytemuck::pod_collect_to_vec(&values)),
            Storage::Device(buffer) => Storage::Device(buffer),
        };
        DeviceArray::new(self.shape, self.owner, storage)
    }

    pub(crate) fn labels(shape: Shape, owner: u64, storage: Storage<T>, numbering: Numbering) -> Self {
        Self { shape, owner, storage, numbering: Some(numbering), kind: ImageKind::Binary, _element: PhantomData }
    }

    /// For label arrays, how they are numbered (raw, or consecutive with the count).
    pub fn numbering(&self) -> Option<Numbering> {
        self.numbering
    }

    /// The extent in elements.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.shape.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.shape.height
    }

    /// The type of each element (of an image's bytes: see [`DeviceArray::kind`]).
    pub fn element_type(&self) -> ElementType {
        T::TYPE
    }

    /// What an image's elements are: a binary mask, or the values of a multi-label image.
    pub fn kind(&self) -> ImageKind {
        self.kind
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        match self.kind {
            ImageKind::Binary => self.shape.len() * T::TYPE.size(),
            ImageKind::MultiLabel { bytes, .. } => self.shape.len() * usize::from(bytes),
        }
    }

    /// The id of the device that owns it.
    pub(crate) fn owner(&self) -> u64 {
        self.owner
    }
}
