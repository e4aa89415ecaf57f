//! [`Gpu`] over the CUDA runtime crate.

use ccl_cuda as cu;

use super::{Arg, Gpu, Storage};
use crate::kernels::{Dialect, KernelFile};
use crate::{BackendKind, Error, Result};

/// An opened CUDA device.
pub(crate) struct Cuda {
    pub(crate) rt: cu::Runtime,
    pub(crate) name: String,
}

impl Cuda {
    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let rt = cu::Runtime::new(ordinal).map_err(|e| unavailable_or(e, "CUDA device"))?;
        let name = rt.desc().name.clone();
        Ok(Self { rt, name })
    }

    fn err(&self, e: cu::Error) -> Error {
        unavailable_or(e, &self.name)
    }
}

/// Maps a runtime error to the crate's error type.
pub(crate) fn unavailable_or(e: cu::Error, device: &str) -> Error {
    match e {
        cu::Error::Unavailable(reason) => Error::BackendUnavailable { backend: BackendKind::Cuda, reason },
        cu::Error::NoSuchDevice { ordinal, .. } => {
            let reason = e.to_string();
            let reason = reason.split_once(": ").map_or(reason.clone(), |(_, r)| r.to_string());
            Error::UnknownDevice { id: format!("cuda:{ordinal}"), reason: format!("{reason} (see `ccl devices`)") }
        }
        e => Error::Device { device: device.to_string(), message: e.to_string() },
    }
}

impl Gpu for Cuda {
    type Buffer = cu::Buffer;
    type Program = cu::Program;
    type Kernel = cu::Kernel;
    type Mark = cu::Mark;
    const STREAM_ORDERED_ALLOC: bool = true;

    fn new_queue(&self) -> Result<Self> {
        Ok(Self { rt: self.rt.new_stream().map_err(|e| self.err(e))?, name: self.name.clone() })
    }

    fn build(&self, file: &KernelFile, defines: &[(&str, u32)]) -> Result<Self::Program> {
        let options: Vec<String> = defines.iter().map(|(k, v)| format!("-D{k}={v}")).collect();
        self.rt.build(file.source(Dialect::Cuda), &options).map_err(|e| match e {
            cu::Error::Build { log } => {
                Error::KernelBuild { kernel: file.path(Dialect::Cuda), device: self.name.clone(), log }
            }
            e => self.err(e),
        })
    }

    fn kernel(&self, program: &Self::Program, name: &str) -> Result<Self::Kernel> {
        self.rt.kernel(program, name).map_err(|e| self.err(e))
    }

    fn alloc(&self, bytes: usize) -> Result<Self::Buffer> {
        self.rt.alloc(bytes).map_err(|e| self.err(e))
    }

    fn write(&self, buffer: &mut Self::Buffer, data: &[u8]) -> Result<()> {
        self.rt.write(buffer, data).map_err(|e| self.err(e))
    }

    fn read(&self, buffer: &Self::Buffer, out: &mut [u8]) -> Result<()> {
        self.rt.read(buffer, out).map_err(|e| self.err(e))
    }

    fn zero(&self, buffer: &mut Self::Buffer) -> Result<()> {
        self.rt.zero(buffer).map_err(|e| self.err(e))
    }

    fn launch(
        &self,
        kernel: &mut Self::Kernel,
        global: [usize; 2],
        local: [usize; 2],
        args: &[Arg<Self::Buffer>],
    ) -> Result<()> {
        let args: Vec<cu::Arg> = args
            .iter()
            .map(|a| match a {
                Arg::Buf(b) => cu::Arg::Buffer(b),
                Arg::U32(v) => cu::Arg::U32(*v),
            })
            .collect();
        self.rt.launch(kernel, global, local, &args).map_err(|e| self.err(e))
    }

    fn mark(&self) -> Result<Self::Mark> {
        self.rt.mark().map_err(|e| self.err(e))
    }

    fn elapsed_ms(&self, from: &Self::Mark, to: &Self::Mark) -> Result<f64> {
        self.rt.elapsed_ms(from, to).map_err(|e| self.err(e))
    }

    fn finish(&self) -> Result<()> {
        self.rt.finish().map_err(|e| self.err(e))
    }

    fn into_storage<T>(buffer: Self::Buffer) -> Storage<T> {
        Storage::Cuda(buffer)
    }

    fn from_storage<T>(storage: &Storage<T>) -> Option<&Self::Buffer> {
        match storage {
            Storage::Cuda(b) => Some(b),
            _ => None,
        }
    }
}
