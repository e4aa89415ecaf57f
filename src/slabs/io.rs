//! Where a labeling in slabs reads its elements ([`ElementSource`]) and keeps its labels
//! ([`LabelSink`]): dense arrays in memory here ([`Dense`], [`DenseLabels`]); files read and
//! written a slab at a time elsewhere (`crate::io`'s zarr arrays), so that neither needs to fit
//! in memory. Planes are a [`super::SlabPlan`]'s: rows of an image, slices of a volume.

use std::borrow::Cow;
use std::ops::Range;

use rayon::prelude::*;

use super::{planes_of, LabelMap, LabelWord};
use crate::{Result, Shape};

/// The elements of an array, a slab of planes at a time, read from any thread (the labelers'
/// threads read the next slabs while the labels of the last ones are kept).
pub trait ElementSource: Sync {
    /// The elements of `planes` in row-major order, one byte each, nonzero is foreground.
    fn elements(&self, planes: Range<usize>) -> Result<Cow<'_, [u8]>>;
}

impl<T: ElementSource + ?Sized> ElementSource for &T {
    fn elements(&self, planes: Range<usize>) -> Result<Cow<'_, [u8]>> {
        (**self).elements(planes)
    }
}

/// Where the labels of an array go, a slab of planes at a time.
pub trait LabelSink<W: LabelWord> {
    /// Where the labels of `planes` are to be written (then [`LabelSink::commit`]ted).
    fn labels_mut(&mut self, planes: Range<usize>) -> Result<&mut [W]>;
    /// Keeps the labels of `planes` written into the last [`LabelSink::labels_mut`].
    fn commit(&mut self, planes: Range<usize>) -> Result<()>;
    /// Replaces every label kept by its number in `map`.
    fn renumber(&mut self, map: &LabelMap<W>) -> Result<()>;
}

/// Elements a plane of an array of `shape` holds.
fn plane_len(shape: Shape) -> usize {
    let ((width, height), _) = planes_of(shape);
    width * height
}

/// A dense row-major array in memory (a decoded image, a mapped `.npy`).
pub struct Dense<'a> {
    elements: &'a [u8],
    plane: usize,
}

impl<'a> Dense<'a> {
    /// The `elements` of an array of `shape`.
    pub fn new(elements: &'a [u8], shape: Shape) -> Self {
        Self { elements, plane: plane_len(shape) }
    }
}

impl ElementSource for Dense<'_> {
    fn elements(&self, planes: Range<usize>) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(&self.elements[planes.start * self.plane..planes.end * self.plane]))
    }
}

/// Dense row-major labels in memory (a new array, a mapped `.npy` output).
pub struct DenseLabels<'a, W> {
    out: &'a mut [W],
    plane: usize,
}

impl<'a, W> DenseLabels<'a, W> {
    /// The labels `out` of an array of `shape`.
    pub fn new(out: &'a mut [W], shape: Shape) -> Self {
        Self { out, plane: plane_len(shape) }
    }
}

impl<W: LabelWord> LabelSink<W> for DenseLabels<'_, W> {
    fn labels_mut(&mut self, planes: Range<usize>) -> Result<&mut [W]> {
        Ok(&mut self.out[planes.start * self.plane..planes.end * self.plane])
    }

    fn commit(&mut self, _: Range<usize>) -> Result<()> {
        Ok(())
    }

    fn renumber(&mut self, map: &LabelMap<W>) -> Result<()> {
        self.out.par_iter_mut().for_each(|label| *label = map.get(*label));
        Ok(())
    }
}
