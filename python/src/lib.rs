//! The native part of the `ccl` Python package: labeling and component statistics of a
//! C-contiguous uint8 array (the Python layer, `ccl/__init__.py`, turns any array into one), on
//! any device `ccl` knows, with the GIL released while the device works; and of arrays in CUDA
//! memory (CuPy, PyTorch), labeled where they lie on `cuda:N` without a copy through the host.
//! Also binarization of gray pages (Nick, Sauvola, Niblack, Wolf, Otsu) on any device. Devices
//! are opened once per id; labelers, kept per (device, algorithm, connectivity), and binarizers,
//! kept per device, are lent to one call at a time and kept for the next, so kernels are built
//! once per process and thread, and calls from several threads run at once.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard, OnceLock};

use ccl::binarize::{Binarizer, KernelKind, Method, NickFormula, Params};
use ccl::{
    Algorithm, AnyLabeler, BackendError, BackendKind, Connectivity, Device, DeviceId, DeviceLabels, Error, Labeler,
    OpenCvStats, PinnedBuffer, Shape,
};
use numpy::ndarray::ArrayView1;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray2, PyReadonlyArrayDyn,
    PyReadwriteArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyRuntimeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;

mod large;
mod pool;
mod regions;

/// A library error as the Python exception users expect: bad arguments and inputs are
/// `ValueError`, device and driver failures `RuntimeError`; the message is the library's.
fn to_py(e: Error) -> PyErr {
    match e {
        Error::InvalidParameter { .. }
        | Error::UnsupportedConnectivity { .. }
        | Error::UnsupportedMultiLabel { .. }
        | Error::ConnectivityDimensions { .. }
        | Error::EmptyImage { .. }
        | Error::EmptyVolume { .. }
        | Error::TooManyPixels { .. }
        | Error::TooManyVoxels { .. }
        | Error::SizeMismatch { .. }
        | Error::VolumeSizeMismatch { .. }
        | Error::ShapeMismatch { .. }
        | Error::Backend(
            BackendError::Unsupported { .. } | BackendError::InvalidMemory { .. } | BackendError::UnknownDevice { .. },
        ) => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

type Key = (String, Algorithm, Connectivity);

/// Opened devices by id, idle labelers by (device id, algorithm, connectivity) and idle
/// binarizers by device id, made at first use. A call takes what it needs out of the cache and
/// puts it back when done, so the lock is held only to lend: calls from several threads each
/// run on a labeler of their own (its own queue or stream), at once.
#[derive(Default)]
struct Cache {
    devices: HashMap<String, Device>,
    labelers: HashMap<Key, Vec<AnyLabeler>>,
    binarizers: HashMap<String, Vec<Binarizer>>,
}

/// Labelers that label a batch at once, each on its own queue or stream, so that one's copies
/// overlap another's kernels.
const BATCH_WORKERS: usize = ccl::batch::WORKERS_PER_DEVICE;

fn cache() -> MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

impl Cache {
    /// Device `id`, opened at its first use.
    fn device(&mut self, id: DeviceId) -> ccl::Result<&Device> {
        match self.devices.entry(id.to_string()) {
            Entry::Occupied(open) => Ok(open.into_mut()),
            Entry::Vacant(slot) => Ok(slot.insert(Device::open(id)?)),
        }
    }

    /// Takes `count` idle labelers of `key` (device id, algorithm, connectivity) out of the
    /// cache, making those missing (while other calls have them); [`Cache::give_back`] returns
    /// them.
    fn lend_labelers(&mut self, id: DeviceId, key: &Key, count: usize) -> ccl::Result<Vec<AnyLabeler>> {
        let idle = self.labelers.entry(key.clone()).or_default();
        let mut lent = idle.split_off(idle.len().saturating_sub(count));
        while lent.len() < count {
            lent.push(self.device(id)?.labeler_for(key.1, key.2)?);
        }
        Ok(lent)
    }

    /// Takes an idle binarizer of device `id` out of the cache, made when there is none.
    fn lend_binarizer(&mut self, id: DeviceId) -> ccl::Result<Binarizer> {
        match self.binarizers.get_mut(&id.to_string()).and_then(Vec::pop) {
            Some(binarizer) => Ok(binarizer),
            None => self.device(id)?.binarizer(),
        }
    }

    /// Keeps lent labelers and a binarizer for the next calls.
    fn give_back(&mut self, key: Key, labelers: Vec<AnyLabeler>, binarizer: Option<Binarizer>) {
        if let Some(binarizer) = binarizer {
            self.binarizers.entry(key.0.clone()).or_default().push(binarizer);
        }
        self.labelers.entry(key).or_default().extend(labelers);
    }
}

/// Runs `work` with device `id` (the one `ccl` picks when `None`), opened at its first use.
fn with_device<T>(id: Option<DeviceId>, work: impl FnOnce(&Device) -> ccl::Result<T>) -> ccl::Result<T> {
    let id = id.unwrap_or_else(|| ccl::auto_device().id);
    let device = cache().device(id)?.clone();
    work(&device)
}

/// Runs `work` with a labeler of `algorithm` at `connectivity` on device `id` (the one `ccl`
/// picks when `None`) and, when `binarizing`, a binarizer of that device, lent by the cache
/// (opening the device and making them at their first use) and given back after, so that calls
/// from several threads run at once.
fn with_labeler<T>(
    id: Option<DeviceId>,
    algorithm: Algorithm,
    connectivity: Connectivity,
    binarizing: bool,
    work: impl FnOnce(&mut AnyLabeler, Option<&mut Binarizer>) -> ccl::Result<T>,
) -> ccl::Result<T> {
    let id = id.unwrap_or_else(|| ccl::auto_device().id);
    let key = (id.to_string(), algorithm, connectivity);
    let (mut labelers, mut binarizer) = {
        let mut cache = cache();
        let labelers = cache.lend_labelers(id, &key, 1)?;
        (labelers, if binarizing { Some(cache.lend_binarizer(id)?) } else { None })
    };
    let result = work(&mut labelers[0], binarizer.as_mut());
    cache().give_back(key, labelers, binarizer);
    result
}

/// A labeling call's connectivity and algorithm ([`resolve_algorithm`]) on device `id`.
fn labeling(
    py: Python<'_>,
    connectivity: u8,
    algorithm: Option<&str>,
    id: Option<DeviceId>,
) -> PyResult<(Connectivity, Algorithm)> {
    let connectivity = parse_connectivity(connectivity)?;
    let algorithm = parse_algorithm(algorithm)?;
    Ok((connectivity, resolve_algorithm(py, id, algorithm, connectivity)?))
}

/// [`labeling`] of an image of `kind`: a multi-label image without a named algorithm takes
/// [`Algorithm::default_multilabel_for`].
fn labeling_kind(
    py: Python<'_>,
    connectivity: u8,
    algorithm: Option<&str>,
    id: Option<DeviceId>,
    kind: ccl::ImageKind,
) -> PyResult<(Connectivity, Algorithm)> {
    if kind == ccl::ImageKind::Binary || algorithm.is_some() {
        return labeling(py, connectivity, algorithm, id);
    }
    let connectivity = parse_connectivity(connectivity)?;
    Ok((connectivity, Algorithm::default_multilabel_for(connectivity)))
}

/// The algorithm a call labels with: the one it names, or the fastest that device `id` runs at
/// `connectivity` ([`ccl::Device::default_algorithm`], as `ccl label` chooses). A fallback from
/// the first of the ranking (a device with little local memory or small work-groups) is told
/// as a `UserWarning` carrying the library's one-line note, as `ccl label` prints it.
fn resolve_algorithm(
    py: Python<'_>,
    id: Option<DeviceId>,
    algorithm: Option<Algorithm>,
    connectivity: Connectivity,
) -> PyResult<Algorithm> {
    if let Some(algorithm) = algorithm {
        return Ok(algorithm);
    }
    let (chosen, note) = py.detach(|| with_device(id, |d| d.default_algorithm(connectivity))).map_err(to_py)?;
    if let Some(note) = note {
        let message = std::ffi::CString::new(note).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, caller_stack_level(py)?)?;
    }
    Ok(chosen)
}

/// The `stacklevel` of a warning that points at the user's code: one past the frames of the
/// `ccl` package that lead to this call, whichever public function it came through.
fn caller_stack_level(py: Python<'_>) -> PyResult<i32> {
    let package = py.import("ccl")?.getattr("__file__")?.extract::<String>()?;
    let package = std::path::Path::new(&package).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let mut frame = py.import("sys")?.call_method1("_getframe", (0,))?;
    let mut level = 1;
    while !frame.is_none() {
        let file = frame.getattr("f_code")?.getattr("co_filename")?.extract::<String>()?;
        if package.is_empty() || !file.starts_with(&package) {
            break;
        }
        level += 1;
        frame = frame.getattr("f_back")?;
    }
    Ok(level)
}

/// Runs `work` with a binarizer of device `id` (the one `ccl` picks when `None`), lent by the
/// cache (opening the device and making it at its first use) and given back after.
fn with_binarizer<T>(id: Option<DeviceId>, work: impl FnOnce(&mut Binarizer) -> ccl::Result<T>) -> ccl::Result<T> {
    let id = id.unwrap_or_else(|| ccl::auto_device().id);
    let mut binarizer = cache().lend_binarizer(id)?;
    let result = work(&mut binarizer);
    let mut cache = cache();
    cache.binarizers.entry(id.to_string()).or_default().push(binarizer);
    result
}

/// OpenCV's `stats` ((N + 1) x (2 ndim + 1) int64) and `centroids` ((N + 1) x ndim float64) as
/// NumPy arrays.
type PyTable<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<f64>>);

/// `_binarize`'s parameters as `_label` takes them: method, window, k, r, formula, kernel.
type BinarizeArgs = (String, Option<i64>, Option<f64>, Option<f64>, Option<String>, Option<String>);

/// What `_label` returns: labels, their count, and OpenCV's statistics tables when asked.
type Labeled<'py> = (Bound<'py, PyArrayDyn<u32>>, u32, Option<PyTable<'py>>);

fn to_numpy(py: Python<'_>, table: Option<OpenCvStats>) -> PyResult<Option<PyTable<'_>>> {
    table
        .map(|t| {
            let columns = 2 * t.dims + 1;
            Ok((
                t.stats.into_pyarray(py).reshape([t.rows, columns])?,
                t.centroids.into_pyarray(py).reshape([t.rows, t.dims])?,
            ))
        })
        .transpose()
}

fn parse_connectivity(connectivity: u8) -> PyResult<Connectivity> {
    Connectivity::from_neighbours(u32::from(connectivity)).ok_or_else(|| {
        PyValueError::new_err(format!("connectivity {connectivity}: 4 or 8 for images, 6, 18 or 26 for volumes"))
    })
}

/// The named algorithm; without a name, `None`: the device's default for the connectivity
/// ([`resolve_algorithm`]).
fn parse_algorithm(algorithm: Option<&str>) -> PyResult<Option<Algorithm>> {
    algorithm.map(|name| Algorithm::from_str(name).map_err(|e| PyValueError::new_err(e.to_string()))).transpose()
}

/// `options` with Python's filters: components of fewer than `min_size` elements dropped, then
/// all but the `keep_largest` largest (the order of `ccl label --min-size --keep-largest`).
fn with_filters(mut options: ccl::Options, min_size: Option<u64>, keep_largest: Option<usize>) -> ccl::Options {
    if let Some(n) = min_size {
        options = options.filter(ccl::Filter::MinSize(n));
    }
    if let Some(k) = keep_largest {
        options = options.filter(ccl::Filter::Largest(k));
    }
    options
}

/// The extent of an array of NumPy shape (H, W) or (D, H, W).
fn shape_of(shape: &[usize]) -> ccl::Result<Shape> {
    match *shape {
        [height, width] => Ok(Shape::image(width, height)),
        [depth, height, width] => Ok(Shape { width, height, depth }),
        _ => Err(Error::InvalidParameter {
            name: "image".into(),
            reason: format!("has {} dimensions; an image has 2, a volume 3", shape.len()),
        }),
    }
}

/// Labels `image` (C-contiguous uint8, shape (H, W) or (D, H, W), nonzero is foreground)
/// consecutively 1..N in raster order of first appearance; with `stats`, also OpenCV's `stats`
/// and `centroids` (row 0 the background), built on the device (the CPU reference's on the
/// host). The pixels are copied to the device straight from the
/// array, and the labels straight into `output` (a C-contiguous uint32 array of the same shape)
/// when given, which is then what is returned; page-locked arrays from `_pinned` go by DMA.
/// With `binarize` (`_binarize`'s method, window, k, r, formula and kernel), `image` is a gray
/// page (shape (H, W)), binarized on the device and its ink labeled there: the page goes up
/// once and only the labels come back. `min_size` and `keep_largest` filter the components on
/// the device ([`with_filters`]); N and the tables are then those of the kept ones. With
/// `values` (bytes per value, the background's bits), `image` is a multi-label image as its
/// bytes, a last axis of that many per value ([`ccl::ImageKind::MultiLabel`]).
#[pyfunction]
#[pyo3(signature = (image, connectivity, algorithm, device, stats, output=None, binarize=None, min_size=None, keep_largest=None, values=None))]
#[allow(clippy::too_many_arguments)]
fn _label<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    connectivity: u8,
    algorithm: Option<&str>,
    device: Option<&str>,
    stats: bool,
    mut output: Option<PyReadwriteArrayDyn<'py, u32>>,
    binarize: Option<BinarizeArgs>,
    min_size: Option<u64>,
    keep_largest: Option<usize>,
    values: Option<(u8, u64)>,
) -> PyResult<Labeled<'py>> {
    let not_contiguous = |e: numpy::AsSliceError| PyValueError::new_err(e.to_string());
    // A multi-label image comes as its bytes, a last axis of `bytes` per value.
    let (dims, kind) = match values {
        None => (image.shape(), ccl::ImageKind::Binary),
        Some((bytes, background)) => match image.shape().split_last() {
            Some((&last, dims)) if last == usize::from(bytes) => {
                (dims, ccl::ImageKind::MultiLabel { bytes, background })
            }
            _ => return Err(PyValueError::new_err(format!("values of {bytes} bytes as a last axis of that many"))),
        },
    };
    let shape = shape_of(dims).map_err(to_py)?;
    let pixels = image.as_slice().map_err(not_contiguous)?;
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    let (connectivity, algorithm) = labeling_kind(py, connectivity, algorithm, id, kind)?;
    let returned = output.as_ref().map(|o| (***o).clone());
    let mut target = match output.as_mut() {
        Some(o) if o.shape() != dims => {
            return Err(PyValueError::new_err(format!(
                "output of shape {:?} for an image of shape {dims:?}",
                o.shape()
            )))
        }
        Some(o) => Some(o.as_slice_mut().map_err(not_contiguous)?),
        None => None,
    };
    let ndim = dims.len();
    let params = binarize.map(parse_binarize_args).transpose()?;
    if params.is_some() {
        page_shape(dims)?;
    }
    // Without an output, the labels of a GPU go into page-locked memory from the pool.
    let mut pooled = match target {
        Some(_) => None,
        None => take_pooled(py, id, shape.len())?,
    };
    if let Some(buffer) = pooled.as_mut() {
        target = Some(buffer.as_mut_slice());
    }
    let (labels, n, table) = py
        .detach(move || -> ccl::Result<(Option<Vec<u32>>, u32, Option<OpenCvStats>)> {
            with_labeler(id, algorithm, connectivity, params.is_some(), |labeler, binarizer| {
                let upload = |l: &mut AnyLabeler| match (binarizer, &params) {
                    (Some(binarizer), Some(params)) => {
                        let gray = binarizer.upload_pixels(shape.width, shape.height, pixels)?;
                        binarizer.binarize_on_device(&gray, params).map(|(ink, _)| ink)
                    }
                    _ => l.upload_bytes(shape, pixels, kind),
                };
                // Consecutive labels 1..N; with `stats`, OpenCV's tables for an array of `ndim`
                // dimensions, built there.
                let mut options = with_filters(ccl::Options::new(connectivity).consecutive(), min_size, keep_largest);
                if stats {
                    options = options.stats(ccl::Stats::OpenCv { dims: ndim as u8 });
                }
                let download = |l: &mut AnyLabeler, labels: &DeviceLabels| match target.as_deref_mut() {
                    Some(out) => l.download_into(labels, out).map(|()| None),
                    None => {
                        let mut out = vec![0u32; labels.shape().len()];
                        l.download_into(labels, &mut out).map(|()| Some(out))
                    }
                };
                let run = ccl::run_host(labeler, &options, upload, download)?;
                Ok((run.labels, run.count.expect("consecutive labels are counted"), run.opencv))
            })
        })
        .map_err(to_py)?;
    let array = match (labels, returned, pooled) {
        (Some(labels), _, _) => labels.into_pyarray(py).reshape(dims)?,
        (None, Some(output), _) => output,
        (None, None, Some(buffer)) => buffer.into_array(py)?.reshape(dims)?,
        (None, None, None) => unreachable!("labels are downloaded into a new vector without an output"),
    };
    Ok((array, n, to_numpy(py, table)?))
}

/// Page-locked bytes of the pool of returned label arrays: `(lent, kept)` and the limit (tests
/// and tuning).
#[pyfunction]
fn _pool_usage() -> (usize, usize, usize) {
    let (lent, kept) = pool::usage();
    (lent, kept, pool::limit())
}

/// A new 1-D uint32 array of `count` labels in page-locked memory of `device` (the one `ccl`
/// picks when `None`) from the pool, or `None` where the pool does not serve (the CPU
/// reference, a small array, the pool full): what `ccl.label_batch` labels a NumPy batch into.
#[pyfunction]
#[pyo3(signature = (count, device=None))]
fn _pooled_labels<'py>(
    py: Python<'py>,
    count: usize,
    device: Option<&str>,
) -> PyResult<Option<Bound<'py, PyArray1<u32>>>> {
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    take_pooled(py, id, count)?.map(|b| b.into_array(py)).transpose()
}

/// A page-locked buffer of `count` labels of device `id` (the one `ccl` picks when `None`) from
/// the pool, without the GIL; `None` where the pool does not serve ([`pool::take`]).
fn take_pooled(py: Python<'_>, id: Option<DeviceId>, count: usize) -> PyResult<Option<pool::PooledBuffer>> {
    let device = py.detach(|| with_device(id, |d| Ok(d.clone()))).map_err(to_py)?;
    Ok(py.detach(|| pool::take(&device, count)))
}

/// Labels a batch: `images`, a list of C-contiguous uint8 arrays of one shape ((H, W) or
/// (D, H, W), nonzero is foreground; the items of a batch array, or a chunk of a stream), each
/// into its part of `output` (C-contiguous uint32 of shape (N, ...) of the items), consecutively
/// 1..N_i as `_label` labels it; returns the N_i. [`BATCH_WORKERS`] labelers of the device take
/// the next item as soon as they are free (copies of one overlap the others' kernels), without
/// the GIL; every item's pixels go up straight from its array and its labels come back straight
/// into its part of `output`; with `stats`, each item's OpenCV tables too, built on the device.
/// The first failure stops the batch and is raised.
#[pyfunction]
#[pyo3(signature = (images, connectivity, algorithm, device, output, stats=false))]
fn _label_batch<'py>(
    py: Python<'py>,
    images: Vec<PyReadonlyArrayDyn<'py, u8>>,
    connectivity: u8,
    algorithm: Option<&str>,
    device: Option<&str>,
    mut output: PyReadwriteArrayDyn<'py, u32>,
    stats: bool,
) -> PyResult<(Vec<u32>, Vec<PyTable<'py>>)> {
    let not_contiguous = |e: numpy::AsSliceError| PyValueError::new_err(e.to_string());
    let Some(first) = images.first() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let item_shape = first.shape().to_vec();
    if !matches!(item_shape.len(), 2 | 3) {
        return Err(PyValueError::new_err(format!(
            "the items of a batch have shape (H, W) or (D, H, W), not {item_shape:?}"
        )));
    }
    if let Some(other) = images.iter().find(|i| i.shape() != item_shape.as_slice()) {
        return Err(PyValueError::new_err(format!(
            "the items of a batch have one shape: {item_shape:?} and {:?}",
            other.shape()
        )));
    }
    let batch_shape: Vec<usize> = std::iter::once(images.len()).chain(item_shape.iter().copied()).collect();
    if output.shape() != batch_shape.as_slice() {
        return Err(PyValueError::new_err(format!(
            "output of shape {:?} for a batch of shape {batch_shape:?}",
            output.shape()
        )));
    }
    let shape = shape_of(&item_shape).map_err(to_py)?;
    let inputs = images.iter().map(|i| i.as_slice()).collect::<Result<Vec<_>, _>>().map_err(not_contiguous)?;
    let out = output.as_slice_mut().map_err(not_contiguous)?;
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    let (connectivity, algorithm) = labeling(py, connectivity, algorithm, id)?;
    let mut options = ccl::Options::new(connectivity).consecutive();
    if stats {
        options = options.stats(ccl::Stats::OpenCv { dims: item_shape.len() as u8 });
    }
    let results = py
        .detach(move || -> ccl::Result<Vec<(u32, Option<OpenCvStats>)>> {
            let id = id.unwrap_or_else(|| ccl::auto_device().id);
            let key = (id.to_string(), algorithm, connectivity);
            let mut labelers = cache().lend_labelers(id, &key, BATCH_WORKERS)?;
            let result = label_items(&mut labelers, shape, &options, &inputs, out);
            cache().give_back(key, labelers, None);
            result
        })
        .map_err(to_py)?;
    let mut counts = Vec::with_capacity(results.len());
    let mut tables = Vec::new();
    for (count, table) in results {
        counts.push(count);
        tables.extend(to_numpy(py, table)?);
    }
    Ok((counts, tables))
}

/// The items of a batch (`inputs`, each of `shape`, and `out`, which holds their labels one
/// after the other) labeled by `labelers` in parallel threads, each taking the next item when
/// free; the counts in item order, or the first failure (after which no item is started).
fn label_items(
    labelers: &mut [AnyLabeler],
    shape: Shape,
    options: &ccl::Options,
    inputs: &[&[u8]],
    out: &mut [u32],
) -> ccl::Result<Vec<(u32, Option<OpenCvStats>)>> {
    let items = Mutex::new(inputs.iter().copied().zip(out.chunks_mut(shape.len())).enumerate());
    let failed = std::sync::atomic::AtomicBool::new(false);
    let mut results: Vec<(u32, Option<OpenCvStats>)> = (0..inputs.len()).map(|_| (0, None)).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = labelers
            .iter_mut()
            .map(|labeler| {
                let (items, failed) = (&items, &failed);
                scope.spawn(move || -> ccl::Result<Vec<(usize, u32, Option<OpenCvStats>)>> {
                    let mut done = Vec::new();
                    while !failed.load(std::sync::atomic::Ordering::Relaxed) {
                        let next = items.lock().unwrap_or_else(|p| p.into_inner()).next();
                        let Some((index, (input, output))) = next else { break };
                        let upload = |l: &mut AnyLabeler| l.upload_array(shape, input);
                        match ccl::run_host(labeler, options, upload, |l, d| l.download_into(d, output)) {
                            Ok(run) => {
                                done.push((index, run.count.expect("consecutive labels are counted"), run.opencv))
                            }
                            Err(e) => {
                                failed.store(true, std::sync::atomic::Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                    Ok(done)
                })
            })
            .collect();
        for worker in workers {
            let done = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            for (index, count, table) in done {
                results[index] = (count, table);
            }
        }
        Ok(results)
    })
}

/// `binarize` (method, window, k, r, formula, kernel: a name of [`Method`], then `None` for the
/// method's usual value) as checked parameters, so that a bad one is a `ValueError` naming it.
fn parse_binarize_args((method, window, k, r, formula, kernel): BinarizeArgs) -> PyResult<Params> {
    let parse = || -> ccl::Result<Params> {
        let mut params = Method::from_str(&method)?.defaults();
        if let Some(window) = window {
            params.window = u32::try_from(window).map_err(|_| Error::InvalidParameter {
                name: "window".into(),
                reason: format!("{window} is outside 1..={}", ccl::binarize::MAX_WINDOW),
            })?;
        }
        params.k = k.unwrap_or(params.k);
        params.r = r.unwrap_or(params.r);
        if let Some(formula) = &formula {
            params.formula = NickFormula::from_str(formula)?;
        }
        if let Some(kernel) = &kernel {
            params.kernel = KernelKind::from_str(kernel)?;
        }
        params.validate()?;
        Ok(params)
    };
    parse().map_err(to_py)
}

/// Binarizes `image` (a C-contiguous uint8 gray page, shape (H, W)) as `binarize` says (see
/// `parse_binarize_args`) on `device` (the one `ccl` picks when None): 1 where the pixel is ink
/// (p <= T), 0 elsewhere, as a uint8 array (the Python layer views it as bool). The page is
/// copied to the device straight from the array, thresholded there and the result downloaded,
/// with the GIL released meanwhile.
#[pyfunction]
fn _binarize<'py>(
    py: Python<'py>,
    image: PyReadonlyArray2<'py, u8>,
    binarize: BinarizeArgs,
    device: Option<&str>,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let params = parse_binarize_args(binarize)?;
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    let [height, width] = [image.shape()[0], image.shape()[1]];
    let pixels = image.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let ink = py
        .detach(move || {
            with_binarizer(id, |binarizer| {
                let gray = binarizer.upload_pixels(width, height, pixels)?;
                let (ink, _) = binarizer.binarize_on_device(&gray, &params)?;
                binarizer.download(&ink)
            })
        })
        .map_err(to_py)?;
    ink.into_values().into_pyarray(py).reshape([height, width])
}

/// Binarizes a gray page in CUDA memory where it lies, on `device` (`cuda:N`, the device that
/// holds both arrays): `image_ptr` is the device address of a C-contiguous uint8 array of
/// `shape` (H, W), `ink_ptr` that of a C-contiguous array of 1-byte elements of the same shape
/// (bool), which receives 1 where the pixel is ink and 0 elsewhere. `stream` as for
/// `_label_cuda`: its work so far is waited for before either array is used. When it returns,
/// the ink is written and ccl no longer uses either array. Nothing goes through the host.
#[pyfunction]
fn _binarize_cuda(
    py: Python<'_>,
    image_ptr: u64,
    ink_ptr: u64,
    shape: Vec<usize>,
    stream: Option<u64>,
    binarize: BinarizeArgs,
    device: &str,
) -> PyResult<()> {
    let params = parse_binarize_args(binarize)?;
    let id = cuda_device_id(device)?;
    let shape = page_shape(&shape)?;
    py.detach(|| {
        with_binarizer(Some(id), |binarizer| {
            // SAFETY: the Python layer passes the data pointers of two C-contiguous arrays of
            // one byte per pixel of `shape` on this device (the binarizer checks the latter with
            // the driver), which it keeps alive and leaves alone until this call returns; both
            // borrowed arrays are dropped before it returns, and the binarization has finished
            // by then (its timings are read).
            let gray = unsafe { binarizer.borrow(shape, image_ptr, stream)? };
            // SAFETY: as above; nothing else reads the ink array meanwhile.
            let mut ink = unsafe { binarizer.borrow(shape, ink_ptr, None)? };
            binarizer.binarize_on_device_into(&gray, &params, &mut ink).map(|_| ())
        })
    })
    .map_err(to_py)
}

/// `device` as a CUDA device id, else a `ValueError`: arrays in CUDA memory are worked on where
/// they lie, on `cuda:N` only.
fn cuda_device_id(device: &str) -> PyResult<DeviceId> {
    let id = DeviceId::from_str(device).map_err(to_py)?;
    if id.backend() != BackendKind::Cuda {
        return Err(PyValueError::new_err(format!(
            "device '{device}' is not a CUDA device: arrays in CUDA memory are labeled in place on cuda:N only"
        )));
    }
    Ok(id)
}

/// The extent of a gray page of NumPy shape (H, W).
fn page_shape(shape: &[usize]) -> PyResult<Shape> {
    match *shape {
        [height, width] => Ok(Shape::image(width, height)),
        _ => Err(PyValueError::new_err(format!("a page to binarize of shape {shape:?}; expected (H, W)"))),
    }
}

/// Page-locked host memory of a device, owned by the NumPy arrays made on it.
#[pyclass(frozen)]
struct PinnedMemory {
    _memory: PinnedBuffer<u8>,
}

/// `nbytes` zeroed bytes of host memory that `device` (the one `ccl` picks when None) copies
/// to and from at bus speed: page-locked on CUDA, ordinary memory elsewhere. A uint8 array of
/// that length, which owns the memory.
#[pyfunction]
#[pyo3(signature = (nbytes, device=None))]
fn _pinned<'py>(py: Python<'py>, nbytes: usize, device: Option<&str>) -> PyResult<Bound<'py, PyArray1<u8>>> {
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    let memory = py.detach(|| with_device(id, |d| d.pinned_buffer::<u8>(nbytes.max(1)))).map_err(to_py)?;
    let ptr = memory.as_ptr();
    let owner = Bound::new(py, PinnedMemory { _memory: memory })?;
    // SAFETY: `ptr` points to at least `nbytes` initialised bytes owned by `owner`, which moves
    // the PinnedBuffer without moving its memory, never reallocates it, and becomes the array's
    // base object, so it lives as long as the array (and any view of it).
    let view = unsafe { ArrayView1::from_shape_ptr(nbytes, ptr) };
    let array = unsafe { PyArray1::borrow_from_array(&view, owner.into_any()) };
    Ok(array)
}

/// Labels an array in CUDA memory where it lies, on `device` (`cuda:N`, the device that holds
/// both arrays): `image_ptr` is the device address of a C-contiguous uint8 array of `shape`
/// ((H, W) or (D, H, W), nonzero is foreground), `labels_ptr` that of a C-contiguous array of
/// 4-byte elements of the same shape, which receives the labels 1..N in raster order of first
/// appearance. `stream` is the caller's stream (a `CUstream` value; 1 the legacy default
/// stream, 2 the per-thread one), whose work so far is waited for before either array is used.
/// With `stats_alloc`, a callable that takes N and returns the device addresses of two C-contiguous
/// arrays it made, OpenCV's `stats` ((N + 1) x (2 ndim + 1) int64) and `centroids` ((N + 1) x
/// ndim float64), those tables are built there, on the device (row 0 the background). Returns N; when it returns, everything is written and ccl no
/// longer uses any of the arrays. Nothing is copied through the host and nothing freed.
/// With `binarize` (`_binarize`'s method, window, k, r, formula and kernel), `image_ptr` is a
/// gray page (shape (H, W)), binarized on the device first, its ink then labeled.
/// `min_size` and `keep_largest` filter the components there ([`with_filters`]). With `values`
/// (bytes per value, the background's bits), `image_ptr` holds a multi-label image of that many
/// bytes an element ([`ccl::ImageKind::MultiLabel`]).
#[pyfunction]
#[pyo3(signature = (image_ptr, labels_ptr, shape, stream, connectivity, algorithm, device, stats_alloc=None, binarize=None, min_size=None, keep_largest=None, values=None))]
#[allow(clippy::too_many_arguments)]
fn _label_cuda(
    py: Python<'_>,
    image_ptr: u64,
    labels_ptr: u64,
    shape: Vec<usize>,
    stream: Option<u64>,
    connectivity: u8,
    algorithm: Option<&str>,
    device: &str,
    stats_alloc: Option<Py<PyAny>>,
    binarize: Option<BinarizeArgs>,
    min_size: Option<u64>,
    keep_largest: Option<usize>,
    values: Option<(u8, u64)>,
) -> PyResult<u32> {
    let kind =
        values.map_or(ccl::ImageKind::Binary, |(bytes, background)| ccl::ImageKind::MultiLabel { bytes, background });
    let id = cuda_device_id(device)?;
    let (connectivity, algorithm) = labeling_kind(py, connectivity, algorithm, Some(id), kind)?;
    let params = binarize.map(parse_binarize_args).transpose()?;
    if params.is_some() {
        page_shape(&shape)?;
    }
    let ndim = shape.len() as u8;
    let shape = shape_of(&shape).map_err(to_py)?;
    // A failure of the callable (a Python exception) is kept apart from the library's errors.
    let mut alloc_error: Option<PyErr> = None;
    let result = py.detach(|| {
        with_labeler(Some(id), algorithm, connectivity, params.is_some(), |labeler, binarizer| {
            // SAFETY: the Python layer passes the data pointers of a C-contiguous uint8 array
            // (of `kind.bytes()`-byte values for a multi-label image) and of a C-contiguous
            // array of 4-byte elements, both of `shape` and on this
            // device (the labeler checks the latter with the driver), fresh or its caller's,
            // which it keeps alive and leaves alone until this call returns; both borrowed
            // arrays are dropped before it returns (dropping waits for the labeler's stream).
            // A page is borrowed by the binarizer (whose queue waits for `stream`), and its
            // ink, made and finished before the labeling starts, labeled instead.
            let image = match (binarizer, &params) {
                (Some(binarizer), Some(params)) => {
                    let gray = unsafe { binarizer.borrow(shape, image_ptr, stream)? };
                    binarizer.binarize_on_device(&gray, params)?.0
                }
                _ => unsafe { labeler.borrow_values(shape, image_ptr, stream, kind)? },
            };
            // SAFETY: as above.
            let mut labels = unsafe { labeler.borrow_labels(shape, labels_ptr)? };
            let options = with_filters(ccl::Options::new(connectivity).consecutive(), min_size, keep_largest);
            let run = labeler.run_into(&image, &mut labels, &options)?;
            let n = run.count.expect("consecutive labels are counted");
            drop(image);
            if let Some(alloc) = &stats_alloc {
                let tables = Python::attach(|py| alloc.call1(py, (n,))?.extract::<(u64, u64)>(py));
                match tables {
                    // SAFETY: the callable returns the addresses of two arrays it made on this
                    // device, OpenCV's stats ((N + 1) x (2 ndim + 1) int64) and centroids
                    // ((N + 1) x ndim float64), which the Python layer keeps alive and leaves
                    // alone until this call returns.
                    Ok((stats, centroids)) => unsafe {
                        labeler.opencv_stats_borrowed(&labels, ndim, stats, centroids)?;
                    },
                    Err(e) => alloc_error = Some(e),
                }
            }
            Ok(n)
        })
    });
    if let Some(e) = alloc_error {
        return Err(e);
    }
    result.map_err(to_py)
}

/// Labels a batch of images in CUDA memory as one, where the algorithm can: `shape` (N, H, W),
/// the items C-contiguous uint8 one after the other at `image_ptr` (nonzero is foreground), their
/// labels into the uint32 (or int32) array of that shape at `labels_ptr`, each item's 1..N_k as
/// `_label_cuda` numbers them. Returns the items' counts, or `None` where the batch cannot run as
/// one ([`AnyLabeler::label_stacked_into`]: another algorithm than TUF, a height not a multiple
/// of 32; or 2^32 pixels or more in all): the caller labels the items one by one; nothing was
/// written.
#[pyfunction]
#[pyo3(signature = (image_ptr, labels_ptr, shape, stream, connectivity, algorithm, device))]
#[allow(clippy::too_many_arguments)]
fn _label_cuda_stacked(
    py: Python<'_>,
    image_ptr: u64,
    labels_ptr: u64,
    shape: Vec<usize>,
    stream: Option<u64>,
    connectivity: u8,
    algorithm: Option<&str>,
    device: &str,
) -> PyResult<Option<Vec<u32>>> {
    let id = cuda_device_id(device)?;
    let (connectivity, algorithm) = labeling(py, connectivity, algorithm, Some(id))?;
    let [items, height, width] = shape[..] else {
        return Err(to_py(Error::InvalidParameter {
            name: "images".into(),
            reason: format!("a batch of images has 3 dimensions (N, H, W), not {}", shape.len()),
        }));
    };
    let stacked = Shape::image(width, items * height);
    if connectivity.dims() != 2 || u32::try_from(stacked.len()).is_err() {
        return Ok(None);
    }
    py.detach(|| {
        with_labeler(Some(id), algorithm, connectivity, false, |labeler, _| {
            // SAFETY: as `_label_cuda`'s: the Python layer passes the data pointers of a
            // C-contiguous uint8 batch and of a C-contiguous batch of 4-byte labels, both of
            // `shape` and on this device, which it keeps alive and leaves alone until this call
            // returns; both borrowed arrays are dropped before it returns.
            let image = unsafe { labeler.borrow_image(stacked, image_ptr, stream)? };
            // SAFETY: as above.
            let mut labels = unsafe { labeler.borrow_labels(stacked, labels_ptr)? };
            labeler.label_stacked_into(&image, items, connectivity, &mut labels)
        })
    })
    .map_err(to_py)
}

/// The CUDA ordinal of the device that holds the device memory at `address`.
#[pyfunction]
fn _cuda_device_of(address: u64) -> PyResult<usize> {
    ccl::cuda_pointer_device(address).map_err(to_py)
}

/// The devices `ccl` can use: (id, name, kind, backend) tuples, e.g. ("cuda:0", "NVIDIA H100",
/// "GPU", "cuda"); the CPU reference ("cpu") is always there.
#[pyfunction]
fn devices() -> Vec<(String, String, String, String)> {
    ccl::discover()
        .devices
        .iter()
        .map(|d| {
            (
                d.id.to_string(),
                d.name.clone(),
                format!("{:?}", d.device_type).to_uppercase(),
                format!("{:?}", d.id.backend()).to_lowercase(),
            )
        })
        .collect()
}

/// The algorithm names `ccl` knows, in registry order.
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    Algorithm::ALL.iter().map(|a| a.name()).collect()
}

#[pymodule]
fn _ccl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MAX_32BIT_ELEMENTS", ccl::MAX_PIXELS)?;
    m.add("DEVICE_BYTES_PER_ELEMENT", ccl::slabs::DEVICE_BYTES_PER_ELEMENT)?;
    m.add_function(wrap_pyfunction!(_label, m)?)?;
    m.add_function(wrap_pyfunction!(_label_batch, m)?)?;
    m.add_function(wrap_pyfunction!(_label_cuda_stacked, m)?)?;
    m.add_function(wrap_pyfunction!(_binarize, m)?)?;
    m.add_function(wrap_pyfunction!(_label_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(_binarize_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_device_of, m)?)?;
    m.add_function(wrap_pyfunction!(_pinned, m)?)?;
    m.add_function(wrap_pyfunction!(_pool_usage, m)?)?;
    m.add_function(wrap_pyfunction!(_pooled_labels, m)?)?;
    m.add_function(wrap_pyfunction!(large::_label_slabs, m)?)?;
    m.add_function(wrap_pyfunction!(large::_merge_labels, m)?)?;
    m.add_function(wrap_pyfunction!(large::_relabel_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(large::_boundary_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(regions::_regionprops, m)?)?;
    m.add_function(wrap_pyfunction!(regions::_regionprops_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    Ok(())
}
