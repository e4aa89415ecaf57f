//! Thin CUDA runtime for `ccl`: discover devices, compile kernels with NVRTC, allocate and copy
//! buffers, launch kernels and time them with CUDA events. It knows nothing about labeling.
//!
//! Built over `cudarc` with dynamic loading, so binaries start on machines without a CUDA driver.
//! `cudarc` panics when `libcuda` or `libnvrtc` is missing; every entry point here checks for the
//! libraries first and returns [`Error::Unavailable`] instead.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

/// Errors of the CUDA runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// CUDA cannot be used here: driver or NVRTC library missing, or no device.
    #[error("CUDA unavailable: {0}")]
    Unavailable(String),
    /// No device has this ordinal.
    #[error("no CUDA device {ordinal}: there {}", count_phrase(*.count))]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many CUDA devices there are.
        count: usize,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver call {call} failed: {source}")]
    Driver {
        /// What was being done.
        call: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// NVRTC did not compile a kernel source; `log` is the compiler's log.
    #[error("NVRTC compilation failed:\n{log}")]
    Build {
        /// The compiler log (or the NVRTC error when no log was produced).
        log: String,
    },
}

fn count_phrase(count: usize) -> String {
    match count {
        0 => "are no CUDA devices".into(),
        1 => "is 1 CUDA device (cuda:0)".into(),
        n => format!("are {n} CUDA devices (cuda:0 to cuda:{})", n.saturating_sub(1)),
    }
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;

fn driver(call: &'static str) -> impl FnOnce(DriverError) -> Error {
    move |source| Error::Driver { call, source }
}

/// Checks that the CUDA driver library (`libcuda`) can be loaded.
pub fn driver_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no CUDA call is made.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::Unavailable(load_problem("cuda", "the CUDA driver library (libcuda.so.1)")))
    }
}

/// Checks that the NVRTC library (`libnvrtc`) can be loaded.
pub fn nvrtc_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no NVRTC call is made.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::Unavailable(load_problem("nvrtc", "the NVRTC library (libnvrtc.so.13)")))
    }
}

/// Why no file of the names cudarc tries for `lib` could be loaded: none exists on the library
/// path, or one exists but is broken (the loader's message, e.g. "invalid ELF header").
fn load_problem(lib: &str, what: &str) -> String {
    for candidate in cudarc::get_lib_name_candidates(lib) {
        // SAFETY: the same load cudarc performs; it runs only the library's constructors.
        if let Err(e) = unsafe { libloading::Library::new(&candidate) } {
            // libloading keeps the dynamic linker's message in the error's source.
            use std::error::Error as _;
            let text = e.source().map_or_else(|| e.to_string(), |s| s.to_string());
            if !(text.contains("No such file") || text.contains("not found") || text.contains("cannot find")) {
                return format!("{what} was found as {candidate} but could not be loaded: {text}");
            }
        }
    }
    format!("{what} is not installed or not on the library path (LD_LIBRARY_PATH)")
}

/// Description of one CUDA device.
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// CUDA device ordinal.
    pub ordinal: usize,
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Driver version, e.g. "13.0".
    pub driver_version: String,
}

/// Lists every CUDA device.
pub fn devices() -> Result<Vec<DeviceDesc>> {
    driver_present()?;
    let n = CudaContext::device_count().map_err(|e| match e.0 {
        cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => Error::Unavailable("no CUDA device".into()),
        _ => Error::Driver { call: "cuDeviceGetCount", source: e },
    })?;
    (0..n as usize).map(|i| CudaContext::new(i).map_err(driver("cuCtxCreate")).map(|ctx| describe(&ctx))).collect()
}

fn describe(ctx: &Arc<CudaContext>) -> DeviceDesc {
    let mut version = 0;
    // SAFETY: writes one int; the driver library is loaded (a context exists).
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    DeviceDesc {
        ordinal: ctx.ordinal(),
        name: ctx.name().unwrap_or_default(),
        compute_capability: ctx.compute_capability().unwrap_or((0, 0)),
        driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
    }
}

/// Compiles `source` to PTX with NVRTC, passing `options` (e.g. `-DNAME=VALUE`); `arch` is a
/// virtual architecture such as `compute_90`, or NVRTC's default. Needs no GPU.
pub fn compile_ptx(source: &str, options: &[String], arch: Option<&'static str>) -> Result<String> {
    nvrtc_present()?;
    let opts = CompileOptions { options: options.to_vec(), arch, ..Default::default() };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, nvrtc, .. }) => {
            let log = log.to_string_lossy().into_owned();
            Err(Error::Build { log: if log.trim().is_empty() { format!("{nvrtc:?}") } else { log } })
        }
        Err(e) => Err(Error::Build { log: format!("{e:?}") }),
    }
}

/// The NVRTC virtual architecture matching a compute capability, when NVRTC 13 knows it.
fn arch_for(cc: (i32, i32)) -> Option<&'static str> {
    Some(match cc {
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 7) => "compute_87",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (12, 0) => "compute_120",
        _ => return None,
    })
}

/// A device buffer of raw bytes.
pub struct Buffer {
    inner: CudaSlice<u8>,
    len: usize,
}

impl Buffer {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cuda::Buffer({} bytes)", self.len)
    }
}

/// A loaded module (compiled program).
pub struct Program(Arc<CudaModule>);

/// One kernel of a loaded module.
pub struct Kernel {
    inner: CudaFunction,
    name: String,
}

impl Kernel {
    /// The kernel's function name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A kernel argument.
pub enum Arg<'a> {
    /// A device buffer, passed as a pointer.
    Buffer(&'a Buffer),
    /// A 32-bit unsigned scalar.
    U32(u32),
}

/// A CUDA event recorded on the runtime's stream.
pub struct Mark(CudaEvent);

/// One CUDA device (its primary context) and a stream of this handle's own.
///
/// [`Runtime::new_stream`] makes another handle on the same context with its own stream:
/// buffers and modules are shared, commands and timing events are not. Every copy waits for
/// its stream, so a buffer written through one handle may be used through another.
pub struct Runtime {
    desc: DeviceDesc,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Runtime {
    /// Opens the device with CUDA ordinal `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self> {
        driver_present()?;
        nvrtc_present()?;
        let n = devices()?.len();
        if ordinal >= n {
            return Err(Error::NoSuchDevice { ordinal, count: n });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("cuCtxCreate"))?;
        // One stream, in order: cudarc's per-buffer event tracking is not needed.
        // SAFETY: every buffer of this runtime is used on its single stream only.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
        Ok(Self { desc: describe(&ctx), ctx, stream })
    }

    /// Another handle on the same device and context with a stream of its own.
    pub fn new_stream(&self) -> Result<Self> {
        let stream = self.ctx.new_stream().map_err(driver("cuStreamCreate"))?;
        Ok(Self { desc: self.desc.clone(), ctx: self.ctx.clone(), stream })
    }

    /// The device this runtime drives.
    pub fn desc(&self) -> &DeviceDesc {
        &self.desc
    }

    /// Compiles `source` with NVRTC for this device and loads it.
    pub fn build(&self, source: &str, options: &[String]) -> Result<Program> {
        let ptx = compile_ptx(source, options, arch_for(self.desc.compute_capability))?;
        let module = self.ctx.load_module(Ptx::from_src(ptx)).map_err(driver("cuModuleLoadData"))?;
        Ok(Program(module))
    }

    /// Looks up kernel `name` in a loaded module.
    pub fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let inner = program.0.load_function(name).map_err(driver("cuModuleGetFunction"))?;
        Ok(Kernel { inner, name: name.to_string() })
    }

    /// Allocates `len` bytes of device memory, stream-ordered (at least one byte).
    pub fn alloc(&self, len: usize) -> Result<Buffer> {
        // SAFETY: the contents are uninitialised; every kernel writes before it reads.
        let inner = unsafe { self.stream.alloc::<u8>(len.max(1)) }.map_err(driver("cuMemAllocAsync"))?;
        Ok(Buffer { inner, len })
    }

    /// Copies `data` into the start of `buffer` and waits for the copy, so that any stream may
    /// use the buffer afterwards.
    pub fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        assert!(data.len() <= buffer.len, "write of {} bytes into a {}-byte buffer", data.len(), buffer.len);
        if data.is_empty() {
            return Ok(());
        }
        let mut view = buffer.inner.slice_mut(0..data.len());
        self.stream.memcpy_htod(data, &mut view).map_err(driver("cuMemcpyHtoDAsync"))?;
        self.finish()
    }

    /// Copies the start of `buffer` into `out` and waits for the copy.
    pub fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()> {
        assert!(out.len() <= buffer.len, "read of {} bytes from a {}-byte buffer", out.len(), buffer.len);
        if out.is_empty() {
            return Ok(());
        }
        let view = buffer.inner.slice(0..out.len());
        self.stream.memcpy_dtoh(&view, out).map_err(driver("cuMemcpyDtoHAsync"))?;
        self.finish()
    }

    /// Sets every byte of `buffer` to zero (stream-ordered).
    pub fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        self.stream.memset_zeros(&mut buffer.inner).map_err(driver("cuMemsetD8Async"))
    }

    /// Launches `kernel` over a 2D range of `global` threads in blocks of `local` threads.
    /// `global` must be a multiple of `local` in each dimension.
    pub fn launch(&self, kernel: &mut Kernel, global: [usize; 2], local: [usize; 2], args: &[Arg]) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: ((global[0] / local[0]) as u32, (global[1] / local[1]) as u32, 1),
            block_dim: (local[0] as u32, local[1] as u32, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = self.stream.launch_builder(&kernel.inner);
        for arg in args {
            match arg {
                Arg::Buffer(b) => builder.arg(&b.inner),
                Arg::U32(v) => builder.arg(v),
            };
        }
        // SAFETY: the arguments match the kernels' pointer and `unsigned int` parameters, and
        // every kernel checks its indices against the image size it receives.
        unsafe { builder.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }

    /// Records a timing event at the current point of the stream.
    pub fn mark(&self) -> Result<Mark> {
        let ev = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver("cuEventCreate"))?;
        ev.record(&self.stream).map_err(driver("cuEventRecord"))?;
        Ok(Mark(ev))
    }

    /// Milliseconds between two marks (waits for the later one).
    pub fn elapsed_ms(&self, from: &Mark, to: &Mark) -> Result<f64> {
        from.0.elapsed_ms(&to.0).map(f64::from).map_err(driver("cuEventElapsedTime"))
    }

    /// Waits for every command on the stream.
    pub fn finish(&self) -> Result<()> {
        self.stream.synchronize().map_err(driver("cuStreamSynchronize"))
    }
}
