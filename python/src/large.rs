//! Arrays larger than a device or than 32-bit labels (`ccl::slabs`): labeling a host array in
//! slabs under a device memory cap into 32- or 64-bit labels, and the union-find that joins the
//! labels of chunks labeled apart (`ccl.dask`).

use std::str::FromStr;

use ccl::slabs::{self, LabelMerger, LabelWord, SlabPlan};
use ccl::DeviceId;
use numpy::{
    IntoPyArray, PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn, PyReadwriteArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// 32- or 64-bit labels, as Python asks for them.
fn label_bits(bits: u32) -> PyResult<()> {
    match bits {
        32 | 64 => Ok(()),
        _ => Err(PyValueError::new_err(format!("labels of {bits} bits: 32 or 64"))),
    }
}

/// Labels `image` (C-contiguous uint8, (H, W) or (D, H, W)) in slabs along its first axis, each
/// within `max_device_bytes` of device memory (`None`: `CCL_MAX_DEVICE_BYTES`, else only 32-bit
/// labels per slab bound them), into consecutive `bits`-bit labels from `base` + 1, the same as
/// labeling it whole, filtered by `min_size` and `keep_largest` as `_label` filters, into
/// `output` when given (a C-contiguous, writeable NumPy array of `bits`-bit unsigned integers and
/// the image's shape: no second array of that size). Returns the labels, N (after the filters)
/// and the number of slabs.
#[pyfunction]
#[pyo3(signature = (image, connectivity, algorithm, device, max_device_bytes, bits, base=0, min_size=None, keep_largest=None, output=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _label_slabs<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    connectivity: u8,
    algorithm: Option<&str>,
    device: Option<&str>,
    max_device_bytes: Option<u64>,
    bits: u32,
    base: u64,
    min_size: Option<u64>,
    keep_largest: Option<usize>,
    output: Option<Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, u64, usize)> {
    label_bits(bits)?;
    let shape = crate::shape_of(image.shape()).map_err(crate::to_py)?;
    let elements = image.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let id = device.map(DeviceId::from_str).transpose().map_err(crate::to_py)?;
    let (connectivity, algorithm) = crate::labeling(py, connectivity, algorithm, id)?;
    let cap = match max_device_bytes {
        Some(bytes) => Some(bytes),
        None => slabs::max_device_bytes_from_env().map_err(crate::to_py)?,
    };
    let plan = SlabPlan::new(shape, cap).map_err(crate::to_py)?.with_label_base(base);
    let dims = image.shape().to_vec();
    let options = crate::with_filters(ccl::Options::new(connectivity).consecutive(), min_size, keep_largest);
    let (array, run) = match (bits, output) {
        (32, None) => labeled::<u32>(py, &dims, |out| label_into(id, algorithm, &options, &plan, elements, out))?,
        (_, None) => labeled::<u64>(py, &dims, |out| label_into(id, algorithm, &options, &plan, elements, out))?,
        (32, Some(output)) => {
            written::<u32>(py, output, &dims, |out| label_into(id, algorithm, &options, &plan, elements, out))?
        }
        (_, Some(output)) => {
            written::<u64>(py, output, &dims, |out| label_into(id, algorithm, &options, &plan, elements, out))?
        }
    };
    Ok((array, run.count, run.slabs))
}

/// `output` (a C-contiguous, writeable NumPy array of `W` and shape `dims`) written by `label`
/// (the GIL released), and returned with the run.
fn written<'py, W: LabelWord + numpy::Element>(
    py: Python<'py>,
    output: Bound<'py, PyAny>,
    dims: &[usize],
    label: impl FnOnce(&mut [W]) -> ccl::Result<slabs::SlabRun> + Send,
) -> PyResult<(Bound<'py, PyAny>, slabs::SlabRun)> {
    let mut array = output.extract::<PyReadwriteArrayDyn<'py, W>>()?;
    if array.shape() != dims {
        return Err(PyValueError::new_err(format!(
            "output of shape {:?} for an array of shape {dims:?}",
            array.shape()
        )));
    }
    let out = array.as_slice_mut().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let run = py.detach(|| label(out)).map_err(crate::to_py)?;
    drop(array);
    Ok((output, run))
}

/// [`slabs::label_slabs_with`] `options` (consecutive labels, filters) with the process's
/// labeler of (`id`, `algorithm`, the options' connectivity), `elements` and `out` dense arrays
/// of the plan's shape.
fn label_into<W: LabelWord>(
    id: Option<DeviceId>,
    algorithm: ccl::Algorithm,
    options: &ccl::Options,
    plan: &SlabPlan,
    elements: &[u8],
    out: &mut [W],
) -> ccl::Result<slabs::SlabRun> {
    let shape = plan.shape();
    crate::with_labeler(id, algorithm, options.connectivity, false, |labeler, _| {
        let (source, mut sink) = (slabs::Dense::new(elements, shape), slabs::DenseLabels::new(out, shape));
        slabs::label_slabs_with(std::slice::from_mut(labeler), plan, options, &source, &mut sink)
    })
}

/// New labels of shape `dims` that `label` writes (the GIL released), as a NumPy array.
fn labeled<'py, W: LabelWord + numpy::Element>(
    py: Python<'py>,
    dims: &[usize],
    label: impl FnOnce(&mut [W]) -> ccl::Result<slabs::SlabRun> + Send,
) -> PyResult<(Bound<'py, PyAny>, slabs::SlabRun)> {
    let mut run = None;
    let array = filled(py, dims, |out| label(out).map(|r| run = Some(r)))?;
    Ok((array, run.expect("set by a labeling that succeeded")))
}

/// A new array of shape `dims` that `fill` writes (the GIL released).
fn filled<'py, W: LabelWord + numpy::Element>(
    py: Python<'py>,
    dims: &[usize],
    fill: impl FnOnce(&mut [W]) -> ccl::Result<()> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let out = py
        .detach(|| {
            let mut out = vec![W::default(); dims.iter().product()];
            fill(&mut out).map(|()| out)
        })
        .map_err(crate::to_py)?;
    Ok(out.into_pyarray(py).reshape(dims.to_vec())?.into_any())
}

/// Joins labels `base`+1..=`base`+`labels` that touch, pair by pair (`a[i]` with `b[i]`; 0 is
/// background), and returns the map from every label `base`+k to its set's number (at index k;
/// index 0 maps background to 0), the sets numbered `base`+1.. in increasing order of their
/// smallest label, with their count.
#[pyfunction]
#[pyo3(signature = (labels, a, b, base=0))]
pub(crate) fn _merge_labels<'py>(
    py: Python<'py>,
    labels: u64,
    a: PyReadonlyArray1<'py, u64>,
    b: PyReadonlyArray1<'py, u64>,
    base: u64,
) -> PyResult<(Bound<'py, PyArrayDyn<u64>>, u64)> {
    let (a, b) = (a.as_slice()?, b.as_slice()?);
    let (map, sets) = py
        .detach(|| -> ccl::Result<(Vec<u64>, u64)> {
            let mut merger = LabelMerger::<u64>::with_base(base);
            merger.add_labels(labels)?;
            merger.union_pairs(a, b)?;
            let (map, sets) = merger.into_consecutive();
            Ok((map.into_table(), sets))
        })
        .map_err(crate::to_py)?;
    Ok((map.into_pyarray(py).reshape(vec![labels as usize + 1])?, sets))
}

/// A chunk's local labels 1..n renumbered through `table` (`ccl.dask`'s merged table, whose
/// entry `start` + l is local label l's number; background stays 0), as new `bits`-bit labels
/// of the same shape, on every core with the GIL released. A label past the table, or a number
/// past `bits`, is an error.
#[pyfunction]
pub(crate) fn _relabel_chunk<'py>(
    py: Python<'py>,
    labels: PyReadonlyArrayDyn<'py, u32>,
    table: PyReadonlyArray1<'py, u64>,
    start: u64,
    bits: u32,
) -> PyResult<Bound<'py, PyAny>> {
    label_bits(bits)?;
    let dims = labels.shape().to_vec();
    let local = labels.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let table = table.as_slice()?;
    let table = usize::try_from(start).ok().and_then(|s| table.get(s..)).unwrap_or(&[]);
    match bits {
        32 => filled::<u32>(py, &dims, |out| renumber(local, table, out)),
        _ => filled::<u64>(py, &dims, |out| renumber(local, table, out)),
    }
}

/// `out[i]` = `table[local[i]]` (0 for background), in parallel.
fn renumber<W: LabelWord>(local: &[u32], table: &[u64], out: &mut [W]) -> ccl::Result<()> {
    use rayon::prelude::*;
    let bad = out
        .par_chunks_mut(1 << 16)
        .zip(local.par_chunks(1 << 16))
        .map(|(out, local)| {
            let mut bad = None;
            for (o, &l) in out.iter_mut().zip(local) {
                *o = match (l, table.get(l as usize)) {
                    (0, _) => W::default(),
                    (_, Some(&n)) if n <= W::MAX => W::from_u64(n),
                    _ => {
                        bad = Some(l);
                        W::default()
                    }
                };
            }
            bad
        })
        .reduce(|| None, Option::or);
    match bad {
        None => Ok(()),
        Some(l) => Err(ccl::Error::InconsistentLabels {
            what: format!("chunk label {l} has no number of {} bits in the merged table of {}", W::BITS, table.len()),
        }),
    }
}

/// Two arrays of labels, the pairs (`first[i]`, `second[i]`).
type LabelPairs<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>);

/// Two touching boundaries of `ccl.dask` chunks or slabs, and the steps their contacts may take.
type Boundary<'py> = (PyReadonlyArrayDyn<'py, u32>, PyReadonlyArrayDyn<'py, u32>, u32);

/// For each boundary `(a, b, budget)` between two chunks of `ccl.dask` (or two slabs), the
/// pairs (label of `a`, label of `b`) that touch across it: `a` and `b` are the touching
/// elements of each (a face plane, an edge line or a corner element, of the same shape), element
/// `p` of `a` touching element `p + o` of `b` for every offset `o` of -1, 0 or 1 per axis with
/// at most `budget` nonzero steps (the connectivity's steps less the axes the boundary crosses).
/// Background (0) pairs are left out, and so are repeats of the pair just found (the union-find
/// takes any others). All boundaries in one call, in parallel with the GIL released once: a
/// call per boundary from many threads made each wait for the GIL again.
#[pyfunction]
pub(crate) fn _boundary_pairs<'py>(py: Python<'py>, boundaries: Vec<Boundary<'py>>) -> PyResult<Vec<LabelPairs<'py>>> {
    use rayon::prelude::*;
    let mut shaped = Vec::with_capacity(boundaries.len());
    for (a, b, budget) in &boundaries {
        if a.shape() != b.shape() || a.ndim() > 2 {
            return Err(PyValueError::new_err(format!(
                "boundaries of shapes {:?} and {:?}: the same shape of at most two axes",
                a.shape(),
                b.shape()
            )));
        }
        let (height, width) = match *a.shape() {
            [] => (1, 1),
            [w] => (1, w),
            [h, w] => (h, w),
            _ => unreachable!("checked above"),
        };
        let plane = BoundaryPlane { a: a.as_slice()?, b: b.as_slice()?, height, width };
        shaped.push((plane, *budget));
    }
    let found: Vec<_> = py.detach(|| shaped.par_iter().map(|(plane, budget)| plane.pairs(*budget)).collect());
    Ok(found.into_iter().map(|(first, second)| (first.into_pyarray(py), second.into_pyarray(py))).collect())
}

/// The touching elements of two chunks across one boundary, row-major `height` x `width` (a
/// line is one row, a corner one element: the steps off it then find no rows or columns).
struct BoundaryPlane<'a> {
    a: &'a [u32],
    b: &'a [u32],
    height: usize,
    width: usize,
}

impl BoundaryPlane<'_> {
    /// The pairs of [`_boundary_pairs`] for contacts of at most `budget` nonzero steps.
    fn pairs(&self, budget: u32) -> (Vec<u64>, Vec<u64>) {
        let (a, b, width) = (self.a, self.b, self.width);
        let (mut first, mut second) = (Vec::new(), Vec::new());
        for dy in -1isize..=1 {
            for dx in -1isize..=1 {
                if u32::from(dy != 0) + u32::from(dx != 0) > budget {
                    continue;
                }
                let mut last = (0, 0);
                let ys = (-dy).max(0) as usize..self.height.saturating_sub(dy.max(0) as usize);
                // Row y of `a` from column x0 meets row y + dy of `b` from column x0 + dx.
                let x0 = (-dx).max(0) as usize;
                let len = width.saturating_sub(dx.unsigned_abs());
                if len == 0 || ys.is_empty() {
                    continue; // (no elements, or a step off a line's one row or a corner's one column)
                }
                // Without a branch on the data (a random mask would mispredict it): every pair is
                // written at `found`, which moves on only for a new one.
                let (mut row_first, mut row_second) = (vec![0u64; len], vec![0u64; len]);
                for y in ys {
                    let row_a = &a[y * width + x0..][..len];
                    let row_b = &b[(y as isize + dy) as usize * width + (x0 as isize + dx) as usize..][..len];
                    let mut found = 0;
                    for (&la, &lb) in row_a.iter().zip(row_b) {
                        row_first[found] = u64::from(la);
                        row_second[found] = u64::from(lb);
                        let new = (la != 0) & (lb != 0) & ((la != last.0) | (lb != last.1));
                        found += usize::from(new);
                        last = if new { (la, lb) } else { last };
                    }
                    first.extend_from_slice(&row_first[..found]);
                    second.extend_from_slice(&row_second[..found]);
                }
            }
        }
        (first, second)
    }
}
