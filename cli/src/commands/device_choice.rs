//! Choosing and opening the device of a command (`--device`, `--backend`), shared by `ccl
//! label`, `ccl binarize`, their folder modes and `ccl eval`.

use ccl::{BackendError, BackendKind, Device, DeviceId, Result};
use clap::ValueEnum;

use super::console::{note, say};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum BackendChoice {
    Auto,
    Cpu,
    Opencl,
    Cuda,
}

impl BackendChoice {
    fn kind(self) -> Option<BackendKind> {
        match self {
            BackendChoice::Auto => None,
            BackendChoice::Cpu => Some(BackendKind::Cpu),
            BackendChoice::Opencl => Some(BackendKind::OpenCl),
            BackendChoice::Cuda => Some(BackendKind::Cuda),
        }
    }
}

/// Tells the user when a kernel build of `device` took a slower route (the results are the same),
/// and when compiled kernels could not be kept in the kernel cache.
pub(super) fn note_slow_builds(device: &Device) {
    if let Some(why) = device.build_note() {
        note!("note: {why}");
    }
    if let Some(why) = ccl::kernel_cache_note() {
        note!("note: {why}");
    }
}

/// [`open_device`], then says which device it is and how it was chosen ("device: ID NAME (HOW)").
pub(super) fn open_device_announced(device: Option<DeviceId>, backend: BackendChoice) -> Result<Device> {
    let (device, how) = open_device(device, backend)?;
    say!("device: {} {} ({how})", device.info().id, device.info().name);
    Ok(device)
}

/// Opens the device to use, and says how it was chosen.
pub(super) fn open_device(device: Option<DeviceId>, backend: BackendChoice) -> Result<(Device, &'static str)> {
    if let Some(id) = device {
        if backend.kind().is_some_and(|b| b != id.backend()) {
            return Err(BackendError::UnknownDevice {
                id: id.to_string(),
                reason: "it does not belong to the backend given with --backend".into(),
            }
            .into());
        }
        return Ok((Device::open(id)?, "given with --device"));
    }
    let first_of = |backend: BackendKind| -> Result<Device> {
        let found = ccl::discover();
        match found.devices.iter().find(|d| d.id.backend() == backend) {
            Some(d) => Device::open(d.id),
            None => {
                let reason = found.unavailable.iter().find(|(b, _)| *b == backend).map(|(_, r)| r.clone());
                Err(BackendError::Unavailable {
                    backend: backend.name(),
                    reason: reason.unwrap_or_else(|| "no device".into()),
                }
                .into())
            }
        }
    };
    Ok(match backend {
        BackendChoice::Auto => {
            let device = Device::auto()?;
            if device.info().id == DeviceId::Cpu {
                let why: Vec<String> = ccl::discover().unavailable.iter().map(|(b, r)| format!("{b}: {r}")).collect();
                note!("note: no CUDA or OpenCL device, so the CPU reference labels ({})", why.join("; "));
            }
            (device, "chosen by --backend auto")
        }
        BackendChoice::Cpu => (Device::open(DeviceId::Cpu)?, "--backend cpu"),
        BackendChoice::Opencl => (first_of(BackendKind::OpenCl)?, "first OpenCL device"),
        BackendChoice::Cuda => (first_of(BackendKind::Cuda)?, "first CUDA device"),
    })
}
