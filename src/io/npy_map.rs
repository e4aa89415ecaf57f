//! `.npy` arrays of any size, for labeling in slabs ([`crate::slabs`]): an input whose binary
//! elements are read in place from a memory map where the file holds one byte per element in C
//! order ([`NpyArray`]), and a label output written in place through a memory map of its
//! temporary file ([`NpyLabels`]), so that neither needs host memory of its own size and neither
//! is bound by 32-bit element counts.

use std::io::{BufReader, Read, Seek};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use memmap2::{Mmap, MmapMut};
use npyz::WriterBuilder;

use super::npy::{fortran_to_c_order, numpy_shape};
use super::npy_input::Element;
use crate::{Error, Result, Shape};

/// Where an [`NpyArray`]'s binary elements lie.
enum Elements {
    /// In the file's memory map, from this byte on.
    Mapped { map: Mmap, offset: usize },
    /// In host memory, converted from wider elements (or from Fortran order).
    Owned(Vec<u8>),
}

/// A binary array from a `.npy` of shape (H, W) or (D, H, W) (nonzero is foreground, as
/// [`super::read_binary_npy`] reads it), of any number of elements.
pub struct NpyArray {
    shape: Shape,
    elements: Elements,
}

impl NpyArray {
    /// Opens `path`: a file of one-byte elements (bool, uint8, int8) in C order is mapped, read
    /// in place as the labeling needs it; any other element type [`super::read_binary_npy`]
    /// takes, or Fortran order, is converted into host memory (one byte an element). More than
    /// `max_elements` elements, another shape or element type, or a file shorter than its
    /// header says are errors naming the file.
    pub fn open(path: &Path, max_elements: Option<u64>) -> Result<Self> {
        let (header, mut reader) = Header::read(path, max_elements)?;
        header.check_length(path, &reader)?;
        let Header { element, dims, fortran, offset, shape } = header;
        if element.size() == 1 && !fortran {
            return Self::mapped(path, reader.get_ref(), shape, offset);
        }
        let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
        let count = shape.len() as u64;
        let mut values = Vec::new();
        values.try_reserve_exact(shape.len()).map_err(|_| Error::InsufficientMemory {
            what: format!("converting {} to one byte an element", path.display()),
            needed_bytes: count,
            available_bytes: super::available_memory().unwrap_or(0),
        })?;
        let mut chunk = vec![0u8; element.size() << 20];
        let mut left = shape.len() * element.size();
        while left > 0 {
            let take = left.min(chunk.len());
            reader.read_exact(&mut chunk[..take]).map_err(|e| fail(e.to_string()))?;
            element.foreground_into(&chunk[..take], &mut values);
            left -= take;
        }
        if fortran {
            values = fortran_to_c_order(&values, &dims);
        }
        Ok(Self { shape, elements: Elements::Owned(values) })
    }

    /// [`NpyArray::open`] of an image (shape (H, W)) of one-byte elements in C order, mapped;
    /// `None` for any other `.npy` (a volume, wider elements, Fortran order), for which
    /// [`super::read_binary_npy`] is the reader. The errors of [`NpyArray::open`], and the
    /// refusal of an image the host's memory cannot label ([`Error::InsufficientMemory`]), as
    /// [`super::read_binary_npy`] refuses it.
    pub fn map_image(path: &Path, max_elements: Option<u64>) -> Result<Option<Self>> {
        let (header, reader) = Header::read(path, max_elements)?;
        if header.element.size() != 1 || header.fortran || header.dims.len() != 2 {
            return Ok(None);
        }
        let (width, height) = (header.shape.width as u64, header.shape.height as u64);
        super::input::check_pixels(path, (width, height), header.value_bytes(), max_elements.unwrap_or(u64::MAX))?;
        header.check_length(path, &reader)?;
        Self::mapped(path, reader.get_ref(), header.shape, header.offset).map(Some)
    }

    /// The array of `shape` at byte `offset` of `file`, mapped.
    fn mapped(path: &Path, file: &std::fs::File, shape: Shape, offset: u64) -> Result<Self> {
        // SAFETY: the map is read only; a file changed by another process while it is
        // labeled gives wrong labels, not undefined behaviour of safe code reading bytes.
        let map = unsafe { Mmap::map(file) }.map_err(|e| Error::FileRead {
            path: path.display().to_string(),
            reason: format!("cannot map the file: {e}"),
        })?;
        Ok(Self { shape, elements: Elements::Mapped { map, offset: offset as usize } })
    }

    /// Its shape (depth 1 for an image).
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Whether the elements are read in place from the file's memory map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.elements, Elements::Mapped { .. })
    }

    /// The elements in C order, one byte each, nonzero is foreground.
    pub fn elements(&self) -> &[u8] {
        match &self.elements {
            Elements::Mapped { map, offset } => &map[*offset..*offset + self.shape.len()],
            Elements::Owned(values) => values,
        }
    }
}

/// What a `.npy` header says, checked against the file's length and an element limit.
struct Header {
    element: Element,
    dims: Vec<u64>,
    fortran: bool,
    /// Where the values begin.
    offset: u64,
    shape: Shape,
}

impl Header {
    /// Reads `path`'s header: the reader then stands at the first value. Another shape or
    /// element type than a mask's, more than `max_elements` elements or fewer bytes of values
    /// than the shape needs are errors naming the file.
    fn read(path: &Path, max_elements: Option<u64>) -> Result<(Self, BufReader<std::fs::File>)> {
        let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
        let (element, dims, fortran, mut reader) = super::npy_input::read_mask_header(path, 1 << 22)?;
        let offset = reader.stream_position().map_err(|e| fail(e.to_string()))?;
        let shape = shape_of(&dims).ok_or_else(|| {
            let shape = numpy_shape(&dims);
            fail(match dims.len() {
                2 | 3 if dims.contains(&0) => {
                    format!("the array is empty (shape {shape}); an image or volume needs at least one element")
                }
                2 | 3 => format!("shape {shape}: more elements than this machine addresses"),
                _ => format!("shape {shape}; an image has two axes (H, W), a volume three (D, H, W)"),
            })
        })?;
        let count = shape.len() as u64;
        if let Some(limit) = max_elements.filter(|&limit| count > limit) {
            let memory_bytes = count.saturating_mul(element.size() as u64);
            let (path, width, height) = (path.display().to_string(), shape.width as u64, shape.height as u64);
            return Err(if dims.len() == 3 {
                Error::VolumeTooLarge { path, width, height, depth: shape.depth as u64, limit, memory_bytes }
            } else {
                Error::ImageTooLarge { path, width, height, limit, memory_bytes }
            });
        }
        Ok((Self { element, dims, fortran, offset, shape }, reader))
    }

    /// The bytes of values the shape needs.
    fn value_bytes(&self) -> u64 {
        (self.shape.len() as u64).saturating_mul(self.element.size() as u64)
    }

    /// Refuses a file `reader` reads that holds fewer bytes of values than the shape needs.
    fn check_length(&self, path: &Path, reader: &BufReader<std::fs::File>) -> Result<()> {
        let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
        let stored = reader.get_ref().metadata().map_err(|e| fail(e.to_string()))?.len().saturating_sub(self.offset);
        let (bytes, dims) = (self.value_bytes(), &self.dims);
        if stored < bytes {
            return Err(fail(format!("the file holds {stored} bytes of values; its shape {dims:?} needs {bytes}")));
        }
        Ok(())
    }
}

/// The shape of a `.npy` of these dimensions, if an image (H, W) or a volume (D, H, W) with
/// no empty axis.
fn shape_of(dims: &[u64]) -> Option<Shape> {
    let side = |n: u64| usize::try_from(n).ok().filter(|&n| n > 0);
    let shape = match *dims {
        [height, width] => Shape::image(side(width)?, side(height)?),
        [depth, height, width] => Shape { width: side(width)?, height: side(height)?, depth: side(depth)? },
        _ => return None,
    };
    shape.width.checked_mul(shape.height)?.checked_mul(shape.depth)?;
    Some(shape)
}

/// A label type a `.npy` output holds.
pub trait NpyLabel: bytemuck::Pod {
    /// Its `.npy` type string in this machine's byte order.
    const DESCR: &'static str;
}

impl NpyLabel for u32 {
    const DESCR: &'static str = if cfg!(target_endian = "little") { "<u4" } else { ">u4" };
}

impl NpyLabel for u64 {
    const DESCR: &'static str = if cfg!(target_endian = "little") { "<u8" } else { ">u8" };
}

/// A `.npy` of labels written in place: made as a temporary file beside the target (as
/// [`super::write_atomically`] makes them), its values mapped into memory for the labeling to
/// write, then synced and renamed over the target by [`NpyLabels::finish`]; dropped unfinished,
/// the temporary file is removed and the target left as it was.
pub struct NpyLabels<T: NpyLabel> {
    temp: super::temp::Temp,
    map: MmapMut,
    offset: usize,
    len: usize,
    target: PathBuf,
    label: PhantomData<T>,
}

impl<T: NpyLabel> NpyLabels<T> {
    /// Makes the output `path` for labels of `shape` (a .npy of shape (H, W) for depth 1, else
    /// (D, H, W)), all zero until written. A pipe cannot be written in place: an
    /// [`Error::FileWrite`], as any failure to make or map the file.
    pub fn create(path: &Path, shape: Shape) -> Result<Self> {
        let fail = |reason: String| Error::FileWrite { path: path.display().to_string(), reason };
        if super::targets::is_pipe(path) {
            return Err(fail("a pipe; labels written in place need a file".into()));
        }
        let dims: Vec<u64> = if shape.depth == 1 {
            vec![shape.height as u64, shape.width as u64]
        } else {
            vec![shape.depth as u64, shape.height as u64, shape.width as u64]
        };
        let mut temp =
            super::temp::Temp::new(path, super::targets::parent_dir(path)).map_err(|e| fail(e.to_string()))?;
        let file = temp.as_file_mut();
        let dtype = npyz::DType::Plain(T::DESCR.parse().expect("a valid type string"));
        npyz::WriteOptions::new_header_only()
            .dtype(dtype)
            .shape(&dims)
            .writer(&mut *file)
            .write_header_only()
            .map_err(|e| fail(e.to_string()))?;
        let offset = file.stream_position().map_err(|e| fail(e.to_string()))? as usize;
        if !offset.is_multiple_of(std::mem::align_of::<T>()) {
            return Err(fail(format!("the .npy header ends at byte {offset}, not aligned for the labels")));
        }
        let len = shape.len();
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| fail("too many labels".into()))?;
        file.set_len((offset + bytes) as u64).map_err(|e| fail(e.to_string()))?;
        // SAFETY: the temporary file is this process's own (made, listed and locked by it); no
        // other mapping or handle writes it while the map lives.
        let map = unsafe { MmapMut::map_mut(&*file) }.map_err(|e| fail(format!("cannot map the file: {e}")))?;
        Ok(Self { temp, map, offset, len, target: path.to_path_buf(), label: PhantomData })
    }

    /// The labels, row-major, to be written.
    pub fn labels_mut(&mut self) -> &mut [T] {
        let bytes = &mut self.map[self.offset..self.offset + self.len * std::mem::size_of::<T>()];
        bytemuck::cast_slice_mut(bytes)
    }

    /// Writes the labels out (synced unless [`super::set_synced_writes`] turned that off) and
    /// renames the file over the target.
    pub fn finish(mut self) -> Result<()> {
        let fail = |reason: String| Error::FileWrite { path: self.target.display().to_string(), reason };
        if super::synced_writes() {
            self.map.flush().map_err(|e| fail(e.to_string()))?;
            self.temp.as_file_mut().sync_all().map_err(|e| fail(e.to_string()))?;
        }
        drop(self.map);
        self.temp.persist(&self.target).map_err(|e| fail(e.to_string()))
    }
}
