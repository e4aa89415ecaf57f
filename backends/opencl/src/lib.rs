//! Thin OpenCL runtime for `ccl`: discover devices, compile programs, allocate and copy buffers,
//! launch kernels and time them with profiling events. It knows nothing about labeling.
//!
//! Built over `opencl3` with its `dynamic` feature, so binaries start on machines without an
//! OpenCL ICD loader: every call then returns [`Error::Unavailable`] instead of failing to link.

use std::ptr;
use std::sync::Mutex;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::CL_DEVICE_NOT_FOUND;
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_int, cl_mem, CL_BLOCKING};

/// Errors of the OpenCL runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// OpenCL cannot be used here: no ICD loader library, no platform, or no such device.
    #[error("OpenCL unavailable: {0}")]
    Unavailable(String),
    /// An OpenCL call failed with an error code.
    #[error("OpenCL call {call} failed: {code} ({name})")]
    Call {
        /// The API call that failed.
        call: &'static str,
        /// The OpenCL error code.
        code: i32,
        /// The symbolic name of the code.
        name: String,
    },
    /// A program did not compile; `log` is the compiler's build log.
    #[error("OpenCL program build failed:\n{log}")]
    Build {
        /// The device compiler's build log.
        log: String,
    },
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// OpenCL error code when the ICD loader library could not be loaded (`opencl3` dynamic feature).
const LIBRARY_MISSING: cl_int = -2000;
/// `CL_PLATFORM_NOT_FOUND_KHR`: the loader found no platform.
const PLATFORM_NOT_FOUND: cl_int = -1001;

fn call_error(call: &'static str, e: opencl3::error_codes::ClError) -> Error {
    let code: cl_int = e.0;
    match code {
        LIBRARY_MISSING => Error::Unavailable(loader_problem()),
        PLATFORM_NOT_FOUND => Error::Unavailable(no_platform_reason()),
        code => Error::Call { call, code, name: opencl3::error_codes::error_text(code).to_string() },
    }
}

/// The ICD loader library `opencl3` opens (it also tries the `;`-separated paths of
/// `OPENCL_DYLIB_PATH` first).
const LOADER: &str = if cfg!(target_os = "windows") {
    "OpenCL.dll"
} else if cfg!(target_os = "macos") {
    "/System/Library/Frameworks/OpenCL.framework/OpenCL"
} else {
    "libOpenCL.so.1"
};

/// Why the ICD loader could not be loaded: absent, or present but broken (the loader's own
/// message, e.g. "invalid ELF header" or "file too short").
fn loader_problem() -> String {
    let mut candidates: Vec<String> = std::env::var("OPENCL_DYLIB_PATH")
        .map(|v| v.split(';').filter(|p| !p.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    candidates.push(LOADER.to_string());
    for candidate in &candidates {
        // SAFETY: loading the ICD loader runs no initialisation code beyond its constructors,
        // which opencl3 runs anyway when it loads the same library.
        if let Err(e) = unsafe { libloading::Library::new(candidate) } {
            let text = load_error_text(&e);
            if !is_not_found(&text) {
                return format!("the OpenCL ICD loader {candidate} could not be loaded: {text}");
            }
        }
    }
    format!("the OpenCL ICD loader ({LOADER}) is not installed or not on the library path")
}

/// The loader's message: libloading keeps the dynamic linker's text in the error's source.
fn load_error_text(e: &libloading::Error) -> String {
    use std::error::Error as _;
    e.source().map_or_else(|| e.to_string(), |s| s.to_string())
}

/// Whether a library load failed only because no file was found.
fn is_not_found(text: &str) -> bool {
    text.contains("No such file") || text.contains("not found") || text.contains("cannot find")
}

/// Why the loader found no platform, naming where it looked: `OCL_ICD_VENDORS` (a folder or
/// one `.icd` file) and `OCL_ICD_FILENAMES` when set, else `/etc/OpenCL/vendors`.
fn no_platform_reason() -> String {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut places = Vec::new();
    if let Some(files) = var("OCL_ICD_FILENAMES") {
        places.push(format!("the drivers in OCL_ICD_FILENAMES={files}"));
    }
    match var("OCL_ICD_VENDORS") {
        Some(dir) => places.push(format!("the .icd files in OCL_ICD_VENDORS={dir}")),
        None => places.push("the .icd files in /etc/OpenCL/vendors".to_string()),
    }
    format!("no OpenCL platform: the ICD loader found no usable driver in {}", places.join(" or "))
}

/// Serialises platform discovery, context creation and program builds: concurrent first calls
/// into the ICD loader and POCL from several threads crash (seen with ocl-icd 2.3 and POCL 3.1).
static DRIVER_LOCK: Mutex<()> = Mutex::new(());

fn driver_lock() -> std::sync::MutexGuard<'static, ()> {
    DRIVER_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether a device is a GPU, a CPU or something else (accelerator, custom).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// `CL_DEVICE_TYPE_GPU`.
    Gpu,
    /// `CL_DEVICE_TYPE_CPU`.
    Cpu,
    /// Any other device type.
    Other,
}

/// Description of one OpenCL device, addressed by platform and device index.
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// Index of the platform in `clGetPlatformIDs` order.
    pub platform: usize,
    /// Index of the device within its platform.
    pub device: usize,
    /// Platform name, e.g. "Portable Computing Language".
    pub platform_name: String,
    /// Device name.
    pub name: String,
    /// Device vendor.
    pub vendor: String,
    /// Driver version string.
    pub driver_version: String,
    /// GPU, CPU or other.
    pub kind: DeviceKind,
}

/// Lists every device of every OpenCL platform.
///
/// Returns [`Error::Unavailable`] when the loader or any platform is missing.
pub fn devices() -> Result<Vec<DeviceDesc>> {
    let _serialised = driver_lock();
    let platforms = opencl3::platform::get_platforms().map_err(|e| call_error("clGetPlatformIDs", e))?;
    let mut out = Vec::new();
    for (p, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_default();
        // A platform with no device answers CL_DEVICE_NOT_FOUND: that is not an error here.
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) if e.0 == CL_DEVICE_NOT_FOUND => Vec::new(),
            Err(e) => return Err(call_error("clGetDeviceIDs", e)),
        };
        for (d, id) in ids.into_iter().enumerate() {
            out.push(describe(p, d, &platform_name, Device::new(id)));
        }
    }
    Ok(out)
}

fn describe(platform: usize, device: usize, platform_name: &str, dev: Device) -> DeviceDesc {
    let ty = dev.dev_type().unwrap_or(0);
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    DeviceDesc {
        platform,
        device,
        platform_name: platform_name.trim().to_string(),
        name: dev.name().unwrap_or_default().trim().to_string(),
        vendor: dev.vendor().unwrap_or_default().trim().to_string(),
        driver_version: dev.driver_version().unwrap_or_default().trim().to_string(),
        kind,
    }
}

/// A device buffer of raw bytes.
pub struct Buffer {
    inner: ClBuffer<u8>,
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
        write!(f, "opencl::Buffer({} bytes)", self.len)
    }
}

/// A compiled program.
pub struct Program(ClProgram);

/// One kernel of a compiled program.
pub struct Kernel {
    inner: ClKernel,
    name: String,
}

/// A kernel argument.
pub enum Arg<'a> {
    /// A device buffer, passed as a `__global` pointer.
    Buffer(&'a Buffer),
    /// A 32-bit unsigned scalar.
    U32(u32),
}

/// A point in the command stream; the time between two marks is measured from the profiling
/// events of the commands enqueued between them.
#[derive(Clone, Copy, Debug)]
pub struct Mark(usize);

/// The parts of an opened device that every queue shares: buffers and programs belong to the
/// context, so any queue of it may use them.
struct Shared {
    desc: DeviceDesc,
    device: Device,
    context: Context,
}

/// One OpenCL device (its context) and an in-order profiling command queue of this handle's own.
///
/// [`Runtime::new_queue`] makes another handle on the same context with its own queue: buffers
/// and programs are shared, while commands and timing events are not, so handles used from
/// different threads never see each other's commands. `Runtime` is `Send + Sync`; one handle's
/// marks are only meaningful to the thread that enqueues on it.
pub struct Runtime {
    shared: std::sync::Arc<Shared>,
    queue: CommandQueue,
    /// Events of the kernels and fills enqueued since [`Runtime::clear_marks`], for timing.
    /// Copies record none, so uploads and downloads outside a timed labeling retain nothing.
    events: Mutex<Vec<Event>>,
}

impl Runtime {
    /// Opens device `device` of platform `platform` (indices as listed by [`devices`]).
    pub fn new(platform: usize, device: usize) -> Result<Self> {
        let _serialised = driver_lock();
        let platforms = opencl3::platform::get_platforms().map_err(|e| call_error("clGetPlatformIDs", e))?;
        let pl = platforms.get(platform).ok_or_else(|| {
            Error::Unavailable(format!("no OpenCL platform {platform} ({} present)", platforms.len()))
        })?;
        let ids = pl.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        let id = *ids.get(device).ok_or_else(|| {
            Error::Unavailable(format!("OpenCL platform {platform} has no device {device} ({} present)", ids.len()))
        })?;
        let dev = Device::new(id);
        let desc = describe(platform, device, &pl.name().unwrap_or_default(), dev);
        let context = Context::from_device(&dev).map_err(|e| call_error("clCreateContext", e))?;
        let shared = std::sync::Arc::new(Shared { desc, device: dev, context });
        Self::with_queue(shared)
    }

    /// Another handle on the same device and context with a command queue of its own.
    pub fn new_queue(&self) -> Result<Self> {
        let _serialised = driver_lock();
        Self::with_queue(self.shared.clone())
    }

    fn with_queue(shared: std::sync::Arc<Shared>) -> Result<Self> {
        #[allow(deprecated)]
        // clCreateCommandQueue: the OpenCL 1.2 entry point, also on 2.0+ drivers
        let queue = CommandQueue::create_default(&shared.context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| call_error("clCreateCommandQueue", e))?;
        Ok(Self { shared, queue, events: Mutex::new(Vec::new()) })
    }

    /// The device this runtime drives.
    pub fn desc(&self) -> &DeviceDesc {
        &self.shared.desc
    }

    /// Maximum work-group size of the device.
    pub fn max_work_group_size(&self) -> usize {
        self.shared.device.max_work_group_size().unwrap_or(256)
    }

    /// Compiles `source` with build `options` (e.g. `-D NAME=VALUE`).
    pub fn build(&self, source: &str, options: &str) -> Result<Program> {
        let _serialised = driver_lock();
        let device = self.shared.device.id();
        let mut program = ClProgram::create_from_source(&self.shared.context, source)
            .map_err(|e| call_error("clCreateProgramWithSource", e))?;
        if let Err(e) = program.build(&[device], options) {
            let log = program.get_build_log(device).unwrap_or_default();
            return Err(if log.trim().is_empty() { call_error("clBuildProgram", e) } else { Error::Build { log } });
        }
        Ok(Program(program))
    }

    /// Looks up kernel `name` in a compiled program.
    pub fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let inner = ClKernel::create(&program.0, name).map_err(|e| call_error("clCreateKernel", e))?;
        Ok(Kernel { inner, name: name.to_string() })
    }

    /// Allocates `len` bytes of device memory (at least one byte is allocated).
    pub fn alloc(&self, len: usize) -> Result<Buffer> {
        // SAFETY: no host pointer is passed, so OpenCL owns the storage.
        let inner =
            unsafe { ClBuffer::<u8>::create(&self.shared.context, CL_MEM_READ_WRITE, len.max(1), ptr::null_mut()) }
                .map_err(|e| call_error("clCreateBuffer", e))?;
        Ok(Buffer { inner, len })
    }

    /// Copies `data` into the start of `buffer` and waits for the copy (untimed: it keeps no
    /// event).
    pub fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        assert!(data.len() <= buffer.len, "write of {} bytes into a {}-byte buffer", data.len(), buffer.len);
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of `data.len()` bytes, within the buffer (checked above).
        unsafe { self.queue.enqueue_write_buffer(&mut buffer.inner, CL_BLOCKING, 0, data, &[]) }
            .map_err(|e| call_error("clEnqueueWriteBuffer", e))?;
        Ok(())
    }

    /// Copies the start of `buffer` into `out` and waits for the copy (untimed: it keeps no
    /// event).
    pub fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()> {
        assert!(out.len() <= buffer.len, "read of {} bytes from a {}-byte buffer", out.len(), buffer.len);
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking read of `out.len()` bytes, within the buffer (checked above).
        unsafe { self.queue.enqueue_read_buffer(&buffer.inner, CL_BLOCKING, 0, out, &[]) }
            .map_err(|e| call_error("clEnqueueReadBuffer", e))?;
        Ok(())
    }

    /// Sets every byte of `buffer` to zero (asynchronous).
    pub fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        let len = buffer.len;
        // SAFETY: the fill covers exactly the buffer.
        let ev = unsafe { self.queue.enqueue_fill_buffer(&mut buffer.inner, &[0u8], 0, len.max(1), &[]) }
            .map_err(|e| call_error("clEnqueueFillBuffer", e))?;
        self.record(ev);
        Ok(())
    }

    /// Enqueues `kernel` over a 2D range of `global` work-items in work-groups of `local`.
    /// `global` must be a multiple of `local` in each dimension.
    pub fn launch(&self, kernel: &mut Kernel, global: [usize; 2], local: [usize; 2], args: &[Arg]) -> Result<()> {
        for (i, arg) in args.iter().enumerate() {
            // SAFETY: each argument is a cl_mem handle or a 32-bit scalar, matching the kernels'
            // `__global` pointer and `uint` parameters; a mismatch is reported by the driver.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) => {
                        let mem: cl_mem = b.inner.get();
                        kernel.inner.set_arg(i as u32, &mem)
                    }
                    Arg::U32(v) => kernel.inner.set_arg(i as u32, v),
                }
            };
            r.map_err(|e| call_error("clSetKernelArg", e))?;
        }
        // SAFETY: all arguments were set above; the sizes are valid pointers to two values.
        let ev = unsafe {
            self.queue.enqueue_nd_range_kernel(kernel.inner.get(), 2, ptr::null(), global.as_ptr(), local.as_ptr(), &[])
        }
        .map_err(|e| call_error("clEnqueueNDRangeKernel", e))?;
        self.record(ev);
        Ok(())
    }

    /// Marks the current point of the command stream.
    pub fn mark(&self) -> Mark {
        Mark(self.events.lock().expect("event list poisoned").len())
    }

    /// Device time in milliseconds between two marks, from the first command's start to the last
    /// command's end; 0 when no command was enqueued between them. Waits for those commands.
    pub fn elapsed_ms(&self, from: Mark, to: Mark) -> Result<f64> {
        let events = self.events.lock().expect("event list poisoned");
        if to.0 <= from.0 || to.0 > events.len() {
            return Ok(0.0);
        }
        let first = &events[from.0];
        let last = &events[to.0 - 1];
        last.wait().map_err(|e| call_error("clWaitForEvents", e))?;
        let start = first.profiling_command_start().map_err(|e| call_error("clGetEventProfilingInfo", e))?;
        let end = last.profiling_command_end().map_err(|e| call_error("clGetEventProfilingInfo", e))?;
        Ok(end.saturating_sub(start) as f64 * 1e-6)
    }

    /// Forgets the events recorded so far on this handle's queue (its marks taken before are
    /// invalid afterwards); other handles are not affected.
    pub fn clear_marks(&self) {
        self.events.lock().expect("event list poisoned").clear();
    }

    /// Waits for every enqueued command.
    pub fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(|e| call_error("clFinish", e))
    }

    fn record(&self, ev: Event) {
        self.events.lock().expect("event list poisoned").push(ev);
    }
}

impl Kernel {
    /// The kernel's function name.
    pub fn name(&self) -> &str {
        &self.name
    }
}
