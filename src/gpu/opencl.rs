//! [`Gpu`] over the OpenCL runtime crate.

use ccl_opencl as cl;

use super::{Arg, Gpu, Storage};
use crate::kernels::{Dialect, KernelFile};
use crate::{BackendKind, Error, Result};

/// An opened OpenCL device.
pub(crate) struct OpenCl {
    pub(crate) rt: cl::Runtime,
    pub(crate) name: String,
}

impl OpenCl {
    pub(crate) fn open(platform: usize, device: usize) -> Result<Self> {
        let rt = cl::Runtime::new(platform, device).map_err(|e| unavailable_or(e, "OpenCL device"))?;
        let name = format!("{} ({})", rt.desc().name, rt.desc().platform_name);
        Ok(Self { rt, name })
    }

    fn err(&self, e: cl::Error) -> Error {
        unavailable_or(e, &self.name)
    }
}

/// Maps a runtime error to the crate's error type.
pub(crate) fn unavailable_or(e: cl::Error, device: &str) -> Error {
    match e {
        cl::Error::Unavailable(reason) => Error::BackendUnavailable { backend: BackendKind::OpenCl, reason },
        e => Error::Device { device: device.to_string(), message: e.to_string() },
    }
}

impl Gpu for OpenCl {
    type Buffer = cl::Buffer;
    type Program = cl::Program;
    type Kernel = cl::Kernel;
    type Mark = cl::Mark;
    const STREAM_ORDERED_ALLOC: bool = false;

    fn new_queue(&self) -> Result<Self> {
        Ok(Self { rt: self.rt.new_queue().map_err(|e| self.err(e))?, name: self.name.clone() })
    }

    fn build(&self, file: &KernelFile, defines: &[(&str, u32)]) -> Result<Self::Program> {
        let options: String = defines.iter().map(|(k, v)| format!("-D {k}={v} ")).collect();
        self.rt.build(file.source(Dialect::OpenCl), options.trim_end()).map_err(|e| match e {
            cl::Error::Build { log } => {
                Error::KernelBuild { kernel: file.path(Dialect::OpenCl), device: self.name.clone(), log }
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
        let args: Vec<cl::Arg> = args
            .iter()
            .map(|a| match a {
                Arg::Buf(b) => cl::Arg::Buffer(b),
                Arg::U32(v) => cl::Arg::U32(*v),
            })
            .collect();
        self.rt.launch(kernel, global, local, &args).map_err(|e| self.err(e))
    }

    fn mark(&self) -> Result<Self::Mark> {
        Ok(self.rt.mark())
    }

    fn elapsed_ms(&self, from: &Self::Mark, to: &Self::Mark) -> Result<f64> {
        self.rt.elapsed_ms(*from, *to).map_err(|e| self.err(e))
    }

    fn finish(&self) -> Result<()> {
        self.rt.finish().map_err(|e| self.err(e))
    }

    fn reset_marks(&self) {
        self.rt.clear_marks();
    }

    fn into_storage<T>(buffer: Self::Buffer) -> Storage<T> {
        Storage::OpenCl(buffer)
    }

    fn from_storage<T>(storage: &Storage<T>) -> Option<&Self::Buffer> {
        match storage {
            Storage::OpenCl(b) => Some(b),
            _ => None,
        }
    }
}
