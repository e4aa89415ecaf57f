//! Zarr arrays on the filesystem (v2 and v3, through the `zarrs` crate) for labeling in slabs:
//! [`ZarrInput`] reads a mask a slab of planes at a time (any integer, bool or float type,
//! nonzero is foreground), [`ZarrLabels`] writes uint32 or uint64 labels a slab at a time into a
//! new zarr array (zstd-compressed chunks), made in a temporary folder beside the target and
//! renamed into place when complete. They are the [`ElementSource`] and the [`LabelSink`] of
//! [`crate::slabs::label_slabs_through`]: a volume larger than memory goes from zarr to zarr
//! holding a few slabs at a time.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use zarrs::array::codec::ZstdCodec;
use zarrs::array::{Array, ArrayBuilder, DataType, ElementOwned};
use zarrs::array_subset::ArraySubset;
use zarrs::filesystem::FilesystemStore;

use crate::slabs::{ElementSource, LabelMap, LabelSink, LabelWord};
use crate::{Error, Result, Shape};

/// Whether `path` names a zarr array (by its extension `.zarr`, in any case).
pub fn is_zarr(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zarr"))
}

/// The dimensions (slowest first) of an image (H, W) or volume (D, H, W) of `shape`.
fn dims_of(shape: Shape, volume: bool) -> Vec<u64> {
    if volume {
        vec![shape.depth as u64, shape.height as u64, shape.width as u64]
    } else {
        vec![shape.height as u64, shape.width as u64]
    }
}

/// The elements of `planes` of an array of dimensions `dims` (the slowest axis cut).
fn subset(dims: &[u64], planes: Range<usize>) -> ArraySubset {
    let first = planes.start as u64..planes.end as u64;
    let ranges: Vec<Range<u64>> = std::iter::once(first).chain(dims[1..].iter().map(|&n| 0..n)).collect();
    ArraySubset::new_with_ranges(&ranges)
}

/// A zarr array read as a mask: shape (H, W) or (D, H, W), nonzero is foreground.
pub struct ZarrInput {
    array: Array<FilesystemStore>,
    path: PathBuf,
    dims: Vec<u64>,
    shape: Shape,
}

impl ZarrInput {
    /// Opens the zarr array at `path` (the folder holding its `zarr.json` or `.zarray`). Another
    /// number of axes, an empty axis or a data type a mask cannot have is an [`Error::FileRead`].
    pub fn open(path: &Path) -> Result<Self> {
        let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
        let store = FilesystemStore::new(path).map_err(|e| fail(e.to_string()))?;
        let array = Array::open(Arc::new(store), "/").map_err(|e| fail(format!("not a zarr array: {e}")))?;
        let dims = array.shape().to_vec();
        let side = |n: u64| usize::try_from(n).ok().filter(|&n| n > 0);
        let shape = match dims[..] {
            [h, w] => side(w).zip(side(h)).map(|(w, h)| Shape::image(w, h)),
            [d, h, w] => {
                side(w).zip(side(h)).zip(side(d)).map(|((width, height), depth)| Shape { width, height, depth })
            }
            _ => None,
        };
        let shape = shape.ok_or_else(|| {
            fail(format!("shape {dims:?}; an image has two nonempty axes (H, W), a volume three (D, H, W)"))
        })?;
        let input = Self { array, path: path.to_path_buf(), dims, shape };
        input.read(0..0)?;
        Ok(input)
    }

    /// Its shape (depth 1 for an image).
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Whether it has three axes.
    pub fn is_volume(&self) -> bool {
        self.dims.len() == 3
    }

    /// The first chunk's shape, slowest axis first.
    pub fn chunk_shape(&self) -> Vec<u64> {
        let origin = vec![0; self.dims.len()];
        self.array
            .chunk_shape(&origin)
            .map(|c| c.iter().map(|n| n.get()).collect())
            .unwrap_or_else(|_| self.dims.clone())
    }

    /// The elements of `planes` (along the slowest axis), one byte each: 1 where nonzero.
    pub fn read(&self, planes: Range<usize>) -> Result<Vec<u8>> {
        let subset = subset(&self.dims, planes);
        let fail = |reason: String| Error::FileRead { path: self.path.display().to_string(), reason };
        fn nonzero<T: ElementOwned + Default + PartialEq + Send + Sync>(
            array: &Array<FilesystemStore>,
            subset: &ArraySubset,
        ) -> std::result::Result<Vec<u8>, String> {
            let values = array.retrieve_array_subset_elements::<T>(subset).map_err(|e| e.to_string())?;
            Ok(values.par_iter().map(|v| u8::from(*v != T::default())).collect())
        }
        let read = match self.array.data_type() {
            DataType::Bool => nonzero::<bool>(&self.array, &subset),
            DataType::UInt8 => {
                let values =
                    self.array.retrieve_array_subset_elements::<u8>(&subset).map_err(|e| fail(e.to_string()))?;
                return Ok(values);
            }
            DataType::Int8 => nonzero::<i8>(&self.array, &subset),
            DataType::UInt16 => nonzero::<u16>(&self.array, &subset),
            DataType::Int16 => nonzero::<i16>(&self.array, &subset),
            DataType::UInt32 => nonzero::<u32>(&self.array, &subset),
            DataType::Int32 => nonzero::<i32>(&self.array, &subset),
            DataType::UInt64 => nonzero::<u64>(&self.array, &subset),
            DataType::Int64 => nonzero::<i64>(&self.array, &subset),
            DataType::Float32 => nonzero::<f32>(&self.array, &subset),
            DataType::Float64 => nonzero::<f64>(&self.array, &subset),
            other => Err(format!("elements of type {other}; a mask is bool, an integer type or float32/float64")),
        };
        read.map_err(fail)
    }
}

/// A label type a zarr output holds.
pub trait ZarrLabel: LabelWord + zarrs::array::Element + ElementOwned {
    /// Its zarr data type.
    const DATA_TYPE: DataType;
}

impl ZarrLabel for u32 {
    const DATA_TYPE: DataType = DataType::UInt32;
}

impl ZarrLabel for u64 {
    const DATA_TYPE: DataType = DataType::UInt64;
}

/// A new zarr array of labels (zarr v3, zstd-compressed chunks), written a slab at a time into a
/// temporary folder beside the target and renamed over it by [`ZarrLabels::finish`]; dropped
/// unfinished, the temporary folder is removed and the target left as it was.
pub struct ZarrLabels<W: ZarrLabel> {
    array: Array<FilesystemStore>,
    temp: Option<super::temp::TempFolder>,
    target: PathBuf,
    dims: Vec<u64>,
    plane: usize,
    buffer: Vec<W>,
}

impl<W: ZarrLabel> ZarrLabels<W> {
    /// Makes the output `path` for labels of `shape` (dimensions (H, W), or (D, H, W) for a
    /// `volume`) in chunks of `chunks` (slowest axis first; clipped to the shape).
    pub fn create(path: &Path, shape: Shape, volume: bool, chunks: &[u64]) -> Result<Self> {
        let fail = |reason: String| Error::FileWrite { path: path.display().to_string(), reason };
        let dims = dims_of(shape, volume);
        let chunks: Vec<u64> =
            dims.iter().zip(chunks.iter().chain(std::iter::repeat(&u64::MAX))).map(|(&n, &c)| c.clamp(1, n)).collect();
        let temp =
            super::temp::TempFolder::new(path, super::targets::parent_dir(path)).map_err(|e| fail(e.to_string()))?;
        let store = FilesystemStore::new(temp.path()).map_err(|e| fail(e.to_string()))?;
        let array = ArrayBuilder::new(dims.clone(), chunks, W::DATA_TYPE, 0u64)
            .bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(1, false))])
            .build(Arc::new(store), "/")
            .map_err(|e| fail(e.to_string()))?;
        array.store_metadata().map_err(|e| fail(e.to_string()))?;
        let plane = dims[1..].iter().product::<u64>() as usize;
        Ok(Self { array, temp: Some(temp), target: path.to_path_buf(), dims, plane, buffer: Vec::new() })
    }

    /// Stores `labels` as `planes`.
    fn store(&self, planes: Range<usize>, labels: &[W]) -> Result<()> {
        self.array
            .store_array_subset_elements(&subset(&self.dims, planes), labels)
            .map_err(|e| Error::FileWrite { path: self.target.display().to_string(), reason: e.to_string() })
    }

    /// The labels stored as `planes`.
    fn load(&self, planes: Range<usize>) -> Result<Vec<W>> {
        self.array
            .retrieve_array_subset_elements::<W>(&subset(&self.dims, planes))
            .map_err(|e| Error::FileWrite { path: self.target.display().to_string(), reason: e.to_string() })
    }

    /// Renames the finished array over the target (an existing one is replaced whole).
    pub fn finish(mut self) -> Result<()> {
        let temp = self.temp.take().expect("a temporary folder until finished");
        temp.persist(&self.target)
            .map_err(|e| Error::FileWrite { path: self.target.display().to_string(), reason: e.to_string() })
    }
}

impl ElementSource for ZarrInput {
    fn elements(&self, planes: Range<usize>) -> Result<Cow<'_, [u8]>> {
        self.read(planes).map(Cow::Owned)
    }
}

impl<W: ZarrLabel> LabelSink<W> for ZarrLabels<W> {
    fn labels_mut(&mut self, planes: Range<usize>) -> Result<&mut [W]> {
        let len = planes.len() * self.plane;
        self.buffer.resize(len, W::default());
        Ok(&mut self.buffer[..len])
    }

    fn commit(&mut self, planes: Range<usize>) -> Result<()> {
        self.store(planes, &self.buffer)
    }

    fn renumber(&mut self, map: &LabelMap<W>) -> Result<()> {
        // A few chunks of planes at a time (about 64 MiB of labels): each chunk read and
        // written once.
        let planes = self.dims[0] as usize;
        let chunk = self.array.chunk_shape(&vec![0; self.dims.len()]).map_or(1, |c| c[0].get() as usize);
        let chunk_elements = (self.plane * chunk).max(1);
        let step = chunk * ((64 << 20) / chunk_elements).max(1);
        for first in (0..planes).step_by(step) {
            let range = first..(first + step).min(planes);
            let mut values = self.load(range.clone())?;
            values.par_iter_mut().for_each(|label| *label = map.get(*label));
            self.store(range, &values)?;
        }
        self.buffer = Vec::new();
        Ok(())
    }
}
