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

/// `--devices`: the devices a folder is spread over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum DeviceList {
    /// `all`: every accelerator that opens ([`open_devices_announced`]).
    All,
    /// A comma-separated list of identifiers, as `--device` takes them, each once.
    Ids(Vec<DeviceId>),
}

/// Parses `--devices`: `all`, or identifiers separated by commas (`cuda:0,cuda:1`).
pub(super) fn device_list(s: &str) -> std::result::Result<DeviceList, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(DeviceList::All);
    }
    let mut ids = Vec::new();
    for part in s.split(',') {
        let id: DeviceId = part.parse().map_err(|e: ccl::Error| e.to_string())?;
        if ids.contains(&id) {
            return Err(format!("{id} is listed twice"));
        }
        ids.push(id);
    }
    Ok(DeviceList::Ids(ids))
}

/// [`open_devices`], then says which devices they are and how they were chosen, one line each.
pub(super) fn open_devices_announced(
    list: Option<&DeviceList>,
    device: Option<DeviceId>,
    backend: BackendChoice,
) -> Result<Vec<Device>> {
    open_devices(list, device, backend).map(announce_devices)
}

/// Says which devices `opened` are and how they were chosen ("device: ID NAME (HOW)").
pub(super) fn announce_devices(opened: Vec<(Device, &'static str)>) -> Vec<Device> {
    opened
        .into_iter()
        .map(|(device, how)| {
            say!("device: {} {} ({how})", device.info().id, device.info().name);
            device
        })
        .collect()
}

/// Opens the devices of a folder job, each with how it was chosen: those of `--devices` when
/// given, else the one of `--device` / `--backend` ([`open_device`]). With `--devices all`,
/// every device discovery lists that is no CPU and opens (an OpenCL device of the name of a
/// CUDA device listed too, the same GPU seen twice, is left out), or, without one, every device
/// that opens. A listed device that does not open fails the job.
pub(super) fn open_devices(
    list: Option<&DeviceList>,
    device: Option<DeviceId>,
    backend: BackendChoice,
) -> Result<Vec<(Device, &'static str)>> {
    let opened = match list {
        None => return open_device(device, backend).map(|d| vec![d]),
        Some(DeviceList::Ids(ids)) => {
            let open = |id: DeviceId| {
                Device::open(id).map(|d| (d, "given with --devices")).map_err(|e| {
                    match e.to_string().contains(&id.to_string()) {
                        true => e,
                        false => BackendError::UnknownDevice { id: id.to_string(), reason: e.to_string() }.into(),
                    }
                })
            };
            ids.iter().map(|&id| open(id)).collect::<Result<Vec<_>>>()?
        }
        Some(DeviceList::All) => {
            let found = ccl::discover();
            let cuda_names: Vec<&str> =
                found.devices.iter().filter(|d| d.id.backend() == BackendKind::Cuda).map(|d| d.name.as_str()).collect();
            let accelerators: Vec<_> = found
                .devices
                .iter()
                .filter(|d| d.device_type != ccl::DeviceType::Cpu)
                .filter(|d| d.id.backend() != BackendKind::OpenCl || !cuda_names.contains(&d.name.as_str()))
                .collect();
            let candidates = if accelerators.is_empty() { found.devices.iter().collect() } else { accelerators };
            let mut devices = Vec::new();
            for info in candidates {
                match Device::open(info.id) {
                    Ok(d) => devices.push((d, "--devices all")),
                    Err(e) => note!("note: {} did not open, so it takes no part: {e}", info.id),
                }
            }
            devices
        }
    };
    if opened.is_empty() {
        return Err(BackendError::UnknownDevice { id: "all".into(), reason: "no device opened".into() }.into());
    }
    Ok(opened)
}
