//! Region properties (`ccl::regions`) from Python: scikit-image's `regionprops_table` of a
//! label array in host memory (NumPy) or in CUDA memory (CuPy, PyTorch), computed on a device.
//! The Python layer (`ccl.regionprops_table`) checks and converts the inputs, maps the labels
//! to 1..N where they have gaps, and turns the columns into arrays of the caller's kind.

use std::str::FromStr;

use ccl::regions::Intensity;
use ccl::{Connectivity, DeviceId, DeviceLabels, Labeler, Property, RegionTable, Shape};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{cuda_device_id, resolve_algorithm, shape_of, to_py, with_labeler};

/// The columns of a table: (name, values, whether they are integers).
type Columns<'py> = Vec<(String, Bound<'py, PyArray1<f64>>, bool)>;

/// An intensity image from NumPy: float32 or float64 (the Python layer converts the others).
#[derive(FromPyObject)]
pub(crate) enum HostIntensity<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

/// The properties named, the shape of an array of `dims` and its axes (2 or 3).
fn parse(properties: &[String], dims: &[usize]) -> PyResult<(Vec<Property>, Shape, u8)> {
    let properties = properties.iter().map(|p| Property::parse(p)).collect::<ccl::Result<Vec<_>>>().map_err(to_py)?;
    if !(2..=3).contains(&dims.len()) {
        return Err(PyValueError::new_err(format!("labels of {} dimensions: 2 or 3", dims.len())));
    }
    Ok((properties, shape_of(dims).map_err(to_py)?, dims.len() as u8))
}

/// The labeler the properties are computed with: the default algorithm's at full connectivity
/// (the one `ccl.label` uses, so usually built already); its labeling kernels are not run.
fn labeling_for(py: Python<'_>, id: Option<DeviceId>, axes: u8) -> PyResult<(Connectivity, ccl::Algorithm)> {
    let connectivity = if axes == 3 { Connectivity::TwentySix } else { Connectivity::Eight };
    Ok((connectivity, resolve_algorithm(py, id, None, connectivity)?))
}

/// The table's columns as NumPy arrays.
fn to_columns(py: Python<'_>, table: RegionTable) -> Columns<'_> {
    table.columns.into_iter().map(|c| (c.name, c.values.into_pyarray(py), c.integer)).collect()
}

/// `regionprops_table` of `labels` (C-contiguous uint32, (H, W) or (D, H, W); background 0,
/// components 1..=`count`, gaps allowed: labels without pixels have no row) on `device`, with
/// `spacing` (one value per axis) and `intensity` (float32 or float64 of the labels' shape).
#[pyfunction]
#[pyo3(signature = (labels, count, properties, spacing=None, intensity=None, device=None))]
pub(crate) fn _regionprops<'py>(
    py: Python<'py>,
    labels: PyReadonlyArrayDyn<'py, u32>,
    count: u32,
    properties: Vec<String>,
    spacing: Option<Vec<f64>>,
    intensity: Option<HostIntensity<'py>>,
    device: Option<&str>,
) -> PyResult<Columns<'py>> {
    let not_contiguous = |e: numpy::AsSliceError| PyValueError::new_err(e.to_string());
    let (properties, shape, axes) = parse(&properties, labels.shape())?;
    let values = labels.as_slice().map_err(not_contiguous)?;
    let intensity = match &intensity {
        None => None,
        Some(HostIntensity::F32(a)) => Some(Err(a.as_slice().map_err(not_contiguous)?)),
        Some(HostIntensity::F64(a)) => Some(Ok(a.as_slice().map_err(not_contiguous)?)),
    };
    let id = device.map(DeviceId::from_str).transpose().map_err(to_py)?;
    let (connectivity, algorithm) = labeling_for(py, id, axes)?;
    let spacing = spacing.as_deref();
    let table = py
        .detach(|| {
            with_labeler(id, algorithm, connectivity, false, |labeler, _| {
                let mut labels = labeler.upload_labels(shape, values, count)?;
                let table = match intensity {
                    None => labeler.regionprops(&mut labels, axes, &properties, spacing, None)?,
                    Some(Err(narrow)) => {
                        let image = labeler.upload_intensity(shape, narrow)?;
                        labeler.regionprops(&mut labels, axes, &properties, spacing, Some(Intensity::F32(&image)))?
                    }
                    Some(Ok(wide)) => {
                        let image = labeler.upload_intensity(shape, wide)?;
                        labeler.regionprops(&mut labels, axes, &properties, spacing, Some(Intensity::F64(&image)))?
                    }
                };
                Ok(table.0)
            })
        })
        .map_err(to_py)?;
    Ok(to_columns(py, table))
}

/// [`_regionprops`] of labels in CUDA memory: `labels_ptr` a C-contiguous uint32 (or int32)
/// array of `shape` on `device` (`cuda:N`), `intensity` (its address, and whether it holds
/// float64 rather than float32) of the same shape there, both read after the work of the CUDA
/// stream `stream`.
#[pyfunction]
#[pyo3(signature = (labels_ptr, shape, count, properties, stream, device, spacing=None, intensity=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _regionprops_cuda<'py>(
    py: Python<'py>,
    labels_ptr: u64,
    shape: Vec<usize>,
    count: u32,
    properties: Vec<String>,
    stream: Option<u64>,
    device: &str,
    spacing: Option<Vec<f64>>,
    intensity: Option<(u64, bool)>,
) -> PyResult<Columns<'py>> {
    let (properties, shape, axes) = parse(&properties, &shape)?;
    let id = cuda_device_id(device)?;
    let (connectivity, algorithm) = labeling_for(py, Some(id), axes)?;
    let spacing = spacing.as_deref();
    let table = py
        .detach(|| {
            with_labeler(Some(id), algorithm, connectivity, false, |labeler, _| {
                // SAFETY: the Python layer passes the data pointers of C-contiguous arrays of
                // `shape` on this device (4-byte labels; 4- or 8-byte floats), which it keeps
                // alive and leaves alone until this call returns; the borrowed arrays are dropped
                // before it returns.
                let mut labels: DeviceLabels = unsafe { labeler.borrow_array(shape, labels_ptr, stream)? };
                labels.assume_consecutive(count);
                let table = match intensity {
                    None => labeler.regionprops(&mut labels, axes, &properties, spacing, None)?,
                    Some((address, false)) => {
                        // SAFETY: as above.
                        let image = unsafe { labeler.borrow_array::<f32>(shape, address, stream)? };
                        labeler.regionprops(&mut labels, axes, &properties, spacing, Some(Intensity::F32(&image)))?
                    }
                    Some((address, true)) => {
                        // SAFETY: as above.
                        let image = unsafe { labeler.borrow_array::<f64>(shape, address, stream)? };
                        labeler.regionprops(&mut labels, axes, &properties, spacing, Some(Intensity::F64(&image)))?
                    }
                };
                Ok(table.0)
            })
        })
        .map_err(to_py)?;
    Ok(to_columns(py, table))
}
