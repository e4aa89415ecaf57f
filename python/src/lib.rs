//! The native part of the `ccl` Python package: labeling and component statistics of a
//! C-contiguous uint8 array (the Python layer, `ccl/__init__.py`, turns any array into one), on
//! any device `ccl` knows, with the GIL released while the device works. Labelers are kept per
//! (device, algorithm, connectivity), so kernels are built once per process.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

use ccl::{Algorithm, AnyLabeler, BinaryImage, BinaryVolume, Connectivity, Device, DeviceId, Error, Labeler};
use numpy::{IntoPyArray, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// A library error as the Python exception users expect: bad arguments and inputs are
/// `ValueError`, device and driver failures `RuntimeError`; the message is the library's.
fn to_py(e: Error) -> PyErr {
    match e {
        Error::InvalidParameter { .. }
        | Error::UnsupportedConnectivity { .. }
        | Error::ConnectivityDimensions { .. }
        | Error::EmptyImage { .. }
        | Error::EmptyVolume { .. }
        | Error::TooManyPixels { .. }
        | Error::TooManyVoxels { .. }
        | Error::SizeMismatch { .. }
        | Error::VolumeSizeMismatch { .. }
        | Error::UnknownDevice { .. } => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

type Key = (String, Algorithm, Connectivity);

/// Labelers by (device id, algorithm, connectivity), built at first use.
fn labelers() -> &'static Mutex<HashMap<Key, AnyLabeler>> {
    static LABELERS: OnceLock<Mutex<HashMap<Key, AnyLabeler>>> = OnceLock::new();
    LABELERS.get_or_init(Default::default)
}

/// The device `device` names (`cpu`, `opencl:N`, `cuda:N`), or the one `ccl` picks.
fn open(device: Option<&str>) -> ccl::Result<Device> {
    match device {
        Some(id) => Device::open(DeviceId::from_str(id)?),
        None => Device::auto(),
    }
}

/// Per component, the integer statistics `left, top, front, width, height, depth, area` (7 per
/// row) and the coordinate sums `x, y, z` (3 per row).
type Table = (Vec<i64>, Vec<u64>);

/// What `_label` returns: labels, their count, and the statistics table when asked.
type Labeled<'py> = (Bound<'py, PyArrayDyn<u32>>, u32, Option<Table>);

/// Labels `image` (C-contiguous uint8, shape (H, W) or (D, H, W), nonzero is foreground)
/// consecutively 1..N in raster order of first appearance; with `stats`, also each component's
/// statistics, computed on the device.
#[pyfunction]
#[pyo3(signature = (image, connectivity, algorithm, device, stats))]
fn _label<'py>(
    py: Python<'py>,
    image: PyReadonlyArrayDyn<'py, u8>,
    connectivity: u8,
    algorithm: &str,
    device: Option<&str>,
    stats: bool,
) -> PyResult<Labeled<'py>> {
    let shape = image.shape().to_vec();
    let pixels = image.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?.to_vec();
    let connectivity = Connectivity::from_neighbours(u32::from(connectivity)).ok_or_else(|| {
        PyValueError::new_err(format!("connectivity {connectivity}: 4 or 8 for images, 6, 18 or 26 for volumes"))
    })?;
    let algorithm = Algorithm::from_str(algorithm).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let device = device.map(str::to_owned);
    let (labels, n, table) = py
        .detach(move || -> ccl::Result<(Vec<u32>, u32, Option<Table>)> {
            let device = open(device.as_deref())?;
            let key = (device.info().id.to_string(), algorithm, connectivity);
            let mut cache = labelers().lock().unwrap_or_else(|p| p.into_inner());
            if !cache.contains_key(&key) {
                let labeler = device.labeler_for(algorithm, connectivity)?;
                cache.insert(key.clone(), labeler);
            }
            let labeler = cache.get_mut(&key).expect("inserted above");
            let upload = |l: &mut AnyLabeler| match shape[..] {
                [h, w] => l.upload(&BinaryImage::new(w, h, pixels)?),
                [d, h, w] => l.upload_volume(&BinaryVolume::new(w, h, d, pixels)?),
                _ => Err(Error::InvalidParameter {
                    name: "image".into(),
                    reason: format!("has {} dimensions; an image has 2, a volume 3", shape.len()),
                }),
            };
            let finish = |l: &mut AnyLabeler, labels: &mut ccl::DeviceLabels| {
                if !stats {
                    return l.relabel(labels).map(|(n, t)| ((n, None), t));
                }
                let (stats, timings) = l.component_stats(labels)?;
                let mut ints = Vec::with_capacity(7 * stats.len());
                let mut sums = Vec::with_capacity(3 * stats.len());
                for c in &stats.components {
                    ints.extend_from_slice(&[c.left, c.top, c.front, c.width, c.height, c.depth].map(i64::from));
                    ints.push(c.area as i64);
                    sums.extend_from_slice(&c.sums);
                }
                Ok(((stats.len() as u32, Some((ints, sums))), timings))
            };
            let download = |l: &mut AnyLabeler, labels: &ccl::DeviceLabels| {
                let mut out = vec![0u32; labels.shape().len()];
                l.download_into(labels, &mut out).map(|()| out)
            };
            let (out, (n, table), _) = ccl::label_host(labeler, connectivity, upload, finish, download)?;
            Ok((out, n, table))
        })
        .map_err(to_py)?;
    let array = labels.into_pyarray(py).reshape(image.shape())?;
    Ok((array, n, table))
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
    m.add_function(wrap_pyfunction!(_label, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    Ok(())
}
