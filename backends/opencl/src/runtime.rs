//! [`Runtime`]: one OpenCL device and a command queue of its own, implementing
//! [`ccl_backend::Gpu`].

use std::ptr;
use std::sync::{Arc, Mutex};

use ccl_backend::{
    Arg, Buffer, CacheKey, Define, DefineValue, Dialect, Error, Gpu, HostBuffer, Kernel, KernelCache, LaunchRange,
    Limits, Mark, Program, Result, REGISTER_BUDGET,
};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_mem, cl_ulong, CL_BLOCKING};

use crate::discovery::{describe, DeviceDesc};
use crate::pool::{BufferPool, KeptBudget, PooledBuffer};
use crate::{call_error, driver_lock};

/// A host-mapped buffer (see `alloc_host`), unmapped and released when dropped.
struct MappedHost {
    buffer: ClBuffer<u8>,
    queue: CommandQueue,
    ptr: *mut std::ffi::c_void,
}

// SAFETY: the mapping is owned exclusively; the OpenCL objects are thread-safe.
unsafe impl Send for MappedHost {}
// SAFETY: never read through the owner.
unsafe impl Sync for MappedHost {}

impl Drop for MappedHost {
    fn drop(&mut self) {
        // SAFETY: the pointer is the buffer's live mapping, unmapped once.
        let _ = unsafe { self.queue.enqueue_unmap_mem_object(self.buffer.get(), self.ptr, &[]) };
        let _ = self.queue.finish();
    }
}

/// A program whose release takes the driver lock (see [`SerialKernel`]).
struct SerialProgram(Option<ClProgram>);

impl SerialProgram {
    fn get(&self) -> &ClProgram {
        self.0.as_ref().expect("a program until dropped")
    }
}

impl Drop for SerialProgram {
    fn drop(&mut self) {
        let _serialised = driver_lock();
        self.0.take();
    }
}

/// A kernel whose creation, first launch and release take the driver lock. POCL compiles a
/// kernel's work-group function at its first launch into a reference-counted cache of loaded
/// binaries, and concurrent first launches and releases from several threads break its count
/// (an assertion in `pocl_release_dlhandle_cache`, seen with POCL 5.0 and eight threads).
/// Later launches are not serialised, except on POCL, where every launch runs alone under the
/// lock and is waited for.
struct SerialKernel {
    inner: Option<ClKernel>,
    launched: bool,
}

impl Drop for SerialKernel {
    fn drop(&mut self) {
        let _serialised = driver_lock();
        self.inner.take();
    }
}

/// The parts of an opened device that every queue shares: buffers and programs belong to the
/// context, so any queue of it may use them.
struct Shared {
    /// POCL: every kernel runs alone (see [`SerialKernel`]).
    serial: bool,
    /// The device takes NVIDIA's compiler options (`cl_nv_compiler_options`): a program's
    /// [`REGISTER_BUDGET`] define becomes `-cl-nv-maxrregcount`.
    nv_options: bool,
    desc: DeviceDesc,
    name: String,
    device: Device,
    context: Context,
    limits: Limits,
    /// The cache key's parts that name this device, its platform and driver.
    device_key: CacheKey,
    /// What the pools of this device's queues keep between them: at most a quarter of its
    /// memory.
    kept_budget: Arc<KeptBudget>,
}

/// One OpenCL device (its context) and an in-order profiling command queue of this handle's own.
///
/// [`Gpu::new_queue`] makes another handle on the same context with its own queue: buffers and
/// programs are shared, commands and timing events are not, so handles used from different
/// threads never see each other's commands.
pub struct Runtime {
    shared: Arc<Shared>,
    queue: CommandQueue,
    /// Events of the kernels and fills enqueued since [`Gpu::reset_marks`], for timing. Copies
    /// record none, so uploads and downloads outside a timed labeling retain nothing.
    events: Mutex<Vec<Event>>,
    /// Where compiled programs are kept (handles made by [`Gpu::new_queue`] share it).
    cache: KernelCache,
    /// Buffers released by this handle's owners, for its next allocations (not shared).
    pool: Arc<BufferPool>,
}

impl Runtime {
    /// Opens device `device` of platform `platform` (indices as listed by [`crate::devices`]).
    pub fn new(platform: usize, device: usize) -> Result<Self> {
        let _serialised = driver_lock();
        let platforms = opencl3::platform::get_platforms().map_err(|e| call_error("OpenCL", "clGetPlatformIDs", e))?;
        let unavailable = |reason: String| Error::Unavailable { backend: "opencl", reason };
        let pl = platforms
            .get(platform)
            .ok_or_else(|| unavailable(format!("no OpenCL platform {platform} ({} present)", platforms.len())))?;
        let ids = pl.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        let id = *ids.get(device).ok_or_else(|| {
            unavailable(format!("OpenCL platform {platform} has no device {device} ({} present)", ids.len()))
        })?;
        let dev = Device::new(id);
        let desc = describe(platform, device, &pl.name().unwrap_or_default(), dev);
        let name = format!("{} ({})", desc.name, desc.platform_name);
        let context = Context::from_device(&dev).map_err(|e| call_error(&name, "clCreateContext", e))?;
        let max_group_size = dev.max_work_group_size().unwrap_or(256);
        // OpenCL ranges are bounded by size_t only: no folding is ever needed.
        let compute_units = dev.max_compute_units().map_or(1, |n| n.max(1) as usize);
        let limits = Limits { max_group_size, compute_units, ..Limits::UNBOUNDED };
        let device_key = device_key(pl, &dev);
        // POCL 5.0 corrupts the reference counts of its cache of loaded kernel binaries when
        // commands of several queues run at once (an assertion in pocl_release_dlhandle_cache,
        // seen on 88 concurrent test threads); its kernels run one at a time instead.
        let serial = desc.platform_name.contains("Portable Computing Language");
        let nv_options = dev.extensions().is_ok_and(|e| e.split_whitespace().any(|x| x == "cl_nv_compiler_options"));
        let memory = dev.global_mem_size().unwrap_or(0);
        let kept_budget = KeptBudget::new(usize::try_from(memory / 4).unwrap_or(usize::MAX));
        let shared =
            Arc::new(Shared { serial, nv_options, desc, name, device: dev, context, limits, device_key, kept_budget });
        Self::with_queue(shared, KernelCache::from_env())
    }

    /// The `clBuildProgram` options of `defines`: `-D NAME=VALUE` each, and on devices with
    /// NVIDIA's compiler options the register cap a [`REGISTER_BUDGET`] define asks for.
    fn build_options(&self, defines: &[Define]) -> String {
        let mut options: Vec<String> = defines.iter().map(|d| d.option(Dialect::OpenCl)).collect();
        let budget = defines.iter().find(|d| d.name == REGISTER_BUDGET).map(|d| d.value);
        if let (true, Some(DefineValue::Int(registers))) = (self.shared.nv_options, budget) {
            options.push(format!("-cl-nv-maxrregcount={registers}"));
        }
        options.join(" ")
    }

    /// This runtime, keeping compiled programs in `cache` instead of the one
    /// [`KernelCache::from_env`] chose (queues made from it afterwards use it too).
    pub fn with_cache(mut self, cache: KernelCache) -> Self {
        self.cache = cache;
        self
    }

    /// The kernel cache this runtime's builds use.
    pub fn cache(&self) -> &KernelCache {
        &self.cache
    }

    /// The kernel cache key of building `source` with `defines` on this device: the source,
    /// the build options, and the device, platform and driver ([`Gpu::build`] looks it up).
    pub fn cache_key(&self, source: &str, defines: &[Define]) -> CacheKey {
        self.shared.device_key.clone().part("options", self.build_options(defines)).part("source", source)
    }

    fn with_queue(shared: Arc<Shared>, cache: KernelCache) -> Result<Self> {
        #[allow(deprecated)]
        // clCreateCommandQueue: the OpenCL 1.2 entry point, also on 2.0+ drivers
        let queue = CommandQueue::create_default(&shared.context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| call_error(&shared.name, "clCreateCommandQueue", e))?;
        // Kept buffers hold device memory: the device's queues keep at most a quarter of it.
        let pool = BufferPool::new(shared.kept_budget.clone());
        Ok(Self { shared, queue, events: Mutex::new(Vec::new()), cache, pool })
    }

    /// The device this runtime drives.
    pub fn desc(&self) -> &DeviceDesc {
        &self.shared.desc
    }

    fn err(&self, call: &'static str) -> impl FnOnce(opencl3::error_codes::ClError) -> Error + '_ {
        move |e| call_error(&self.shared.name, call, e)
    }

    fn record(&self, ev: Event) {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(ev);
    }
}

/// Builds: from source, from a cached binary, and the binary of a built program. Callers hold
/// the driver lock.
impl Runtime {
    fn program_from_source(&self, source: &str, options: &str) -> Result<ClProgram> {
        let device = self.shared.device.id();
        let mut program = ClProgram::create_from_source(&self.shared.context, source)
            .map_err(self.err("clCreateProgramWithSource"))?;
        if let Err(e) = program.build(&[device], options) {
            let log = program.get_build_log(device).unwrap_or_default();
            return Err(if log.trim().is_empty() {
                call_error(&self.shared.name, "clBuildProgram", e)
            } else {
                Error::Build { device: self.shared.name.clone(), log }
            });
        }
        Ok(program)
    }

    /// A program made from a cached binary, or `None` when the driver refuses the binary or
    /// fails to build it (the caller then compiles the source).
    fn program_from_binary(&self, binary: &[u8], options: &str) -> Option<ClProgram> {
        let device = self.shared.device.id();
        // SAFETY: the device belongs to the context (the context was made from it).
        let mut program = unsafe { ClProgram::create_from_binary(&self.shared.context, &[device], &[binary]) }.ok()?;
        program.build(&[device], options).ok()?;
        Some(program)
    }

    /// The device binary of a built program, when the driver offers one.
    fn binary_of(&self, program: &ClProgram) -> Option<Vec<u8>> {
        let mut binaries = program.get_binaries().ok()?;
        // The program was built for this one device.
        (binaries.len() == 1).then(|| binaries.remove(0)).filter(|b| !b.is_empty())
    }
}

/// The cache key parts that identify the device and everything below the source that changes
/// its binaries: device name, vendor and versions, driver version, platform, and this crate's
/// version (which fixes the opencl3 in use).
fn device_key(platform: &opencl3::platform::Platform, device: &Device) -> CacheKey {
    let text = |r: opencl3::Result<String>| r.unwrap_or_default().trim().to_string();
    CacheKey::new("opencl")
        .part("ccl-opencl", env!("CARGO_PKG_VERSION"))
        .part("platform name", text(platform.name()))
        .part("platform vendor", text(platform.vendor()))
        .part("platform version", text(platform.version()))
        .part("device name", text(device.name()))
        .part("device vendor", text(device.vendor()))
        .part("device version", text(device.version()))
        .part("OpenCL C version", text(device.opencl_c_version()))
        .part("driver version", text(device.driver_version()))
}

impl Gpu for Runtime {
    fn name(&self) -> &str {
        &self.shared.name
    }

    fn dialect(&self) -> Dialect {
        Dialect::OpenCl
    }

    fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    fn stream_ordered_alloc(&self) -> bool {
        // clCreateBuffer is not a queued command.
        false
    }

    fn new_queue(&self) -> Result<Box<dyn Gpu>> {
        let _serialised = driver_lock();
        Ok(Box::new(Self::with_queue(self.shared.clone(), self.cache.clone())?))
    }

    /// Takes the program's binary from the kernel cache when an intact entry for this source,
    /// these options and this device, platform and driver is there and the driver builds it;
    /// otherwise compiles the source and stores the binary the driver returns (a store that
    /// fails is ignored). Disk I/O happens outside the driver lock.
    fn build(&self, source: &str, defines: &[Define]) -> Result<Program> {
        let options = self.build_options(defines);
        self.cache.build(
            || self.cache_key(source, defines),
            |binary| {
                let _serialised = driver_lock();
                self.program_from_binary(&binary, &options).map(|p| SerialProgram(Some(p)))
            },
            |wants_binary| {
                let _serialised = driver_lock();
                let program = self.program_from_source(source, &options)?;
                let binary = if wants_binary { self.binary_of(&program) } else { None };
                Ok((SerialProgram(Some(program)), binary))
            },
        )
    }

    fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let program = program.native::<SerialProgram>(self.name())?.get();
        let _serialised = driver_lock();
        let kernel = ClKernel::create(program, name).map_err(self.err("clCreateKernel"))?;
        Ok(Kernel::new(SerialKernel { inner: Some(kernel), launched: false }, name))
    }

    /// A buffer of this queue's pool (see [`crate::pool`]): one the queue's owners released, of
    /// the same size, or a new one (after releasing the kept ones if the driver refuses it).
    fn alloc(&self, bytes: usize) -> Result<Buffer> {
        let size = bytes.max(1);
        let create = || {
            // SAFETY: no host pointer is passed, so OpenCL owns the storage.
            unsafe { ClBuffer::<u8>::create(&self.shared.context, CL_MEM_READ_WRITE, size, ptr::null_mut()) }
        };
        let inner = match self.pool.take(size) {
            Some(kept) => kept,
            None => create()
                .or_else(|_| {
                    self.pool.release_all();
                    create()
                })
                .map_err(self.err("clCreateBuffer"))?,
        };
        Ok(Buffer::new(PooledBuffer::new(inner, size, self.pool.clone()), bytes))
    }

    /// A buffer the driver allocates in host memory it can copy from directly (page-locked on
    /// NVIDIA's OpenCL; `CL_MEM_ALLOC_HOST_PTR`), mapped once for the host for as long as it
    /// lives: reads and writes of device buffers from or into it skip the driver's staging.
    fn alloc_host(&self, bytes: usize) -> Result<HostBuffer> {
        use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR};
        let _serialised = driver_lock();
        let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
        // SAFETY: no host pointer is passed; the driver allocates the memory.
        let buffer = unsafe { ClBuffer::<u8>::create(&self.shared.context, flags, bytes.max(1), ptr::null_mut()) }
            .map_err(self.err("clCreateBuffer"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&self.shared.context, 0).map_err(self.err("clCreateCommandQueue"))?;
        let mut mapped: opencl3::types::cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; the pointer stays valid until unmapped.
        unsafe {
            queue.enqueue_map_buffer(
                &buffer,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes.max(1),
                &mut mapped,
                &[],
            )
        }
        .map_err(self.err("clEnqueueMapBuffer"))?;
        let ptr = mapped.cast::<u8>();
        // SAFETY: the mapped region holds `bytes` bytes (aligned as the driver maps: at least
        // 8) and stays valid until the owner unmaps it.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes, MappedHost { buffer, queue, ptr: ptr.cast() }) })
    }

    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        assert!(data.len() <= buffer.len(), "write of {} bytes into a {}-byte buffer", data.len(), buffer.len());
        if data.is_empty() {
            return Ok(());
        }
        let inner = buffer.native_mut::<PooledBuffer>(&self.shared.name)?.buffer_mut();
        // SAFETY: blocking write of `data.len()` bytes, within the buffer (checked above).
        unsafe { self.queue.enqueue_write_buffer(inner, CL_BLOCKING, 0, data, &[]) }
            .map_err(self.err("clEnqueueWriteBuffer"))?;
        Ok(())
    }

    fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()> {
        assert!(out.len() <= buffer.len(), "read of {} bytes from a {}-byte buffer", out.len(), buffer.len());
        if out.is_empty() {
            return Ok(());
        }
        let inner = buffer.native::<PooledBuffer>(&self.shared.name)?.buffer();
        // SAFETY: blocking read of `out.len()` bytes, within the buffer (checked above).
        unsafe { self.queue.enqueue_read_buffer(inner, CL_BLOCKING, 0, out, &[]) }
            .map_err(self.err("clEnqueueReadBuffer"))?;
        Ok(())
    }

    fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        let len = buffer.len().max(1);
        let inner = buffer.native_mut::<PooledBuffer>(&self.shared.name)?.buffer_mut();
        // SAFETY: the fill covers exactly the buffer.
        let ev = unsafe { self.queue.enqueue_fill_buffer(inner, &[0u8], 0, len, &[]) }
            .map_err(self.err("clEnqueueFillBuffer"))?;
        self.record(ev);
        Ok(())
    }

    /// A kernel's first launch runs under the driver lock and is waited for (see
    /// [`SerialKernel`]); later ones are queued freely.
    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        let device = self.shared.name.as_str();
        let serial = kernel.native_mut::<SerialKernel>(device)?;
        let first = !serial.launched || self.shared.serial;
        let _serialised = first.then(driver_lock);
        let k = serial.inner.as_mut().expect("a kernel until dropped");
        for (i, arg) in args.iter().enumerate() {
            let index = i as u32;
            // SAFETY: each argument is a cl_mem handle or a scalar of the width the kernel
            // declares (uint, ulong, int, float); a mismatch is reported by the driver.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) => {
                        let mem: cl_mem = b.native::<PooledBuffer>(device)?.buffer().get();
                        k.set_arg(index, &mem)
                    }
                    Arg::U32(v) => k.set_arg(index, v),
                    Arg::U64(v) => k.set_arg(index, &(*v as cl_ulong)),
                    Arg::I32(v) => k.set_arg(index, v),
                    Arg::F32(v) => k.set_arg(index, v),
                    Arg::F64(v) => k.set_arg(index, v),
                }
            };
            r.map_err(self.err("clSetKernelArg"))?;
        }
        let work_dim = if range.is_2d() { 2 } else { 3 };
        let handle = k.get();
        // SAFETY: all arguments were set above; the sizes point to three values each, of which
        // the driver reads `work_dim`.
        let ev = unsafe {
            self.queue.enqueue_nd_range_kernel(
                handle,
                work_dim,
                ptr::null(),
                range.global.as_ptr(),
                range.local.as_ptr(),
                &[],
            )
        }
        .map_err(self.err("clEnqueueNDRangeKernel"))?;
        if first {
            ev.wait().map_err(self.err("clWaitForEvents"))?;
            serial.launched = true;
        }
        self.record(ev);
        Ok(())
    }

    fn mark(&self) -> Result<Mark> {
        Ok(Mark::new(self.events.lock().unwrap_or_else(|p| p.into_inner()).len()))
    }

    /// From the first command's start to the last command's end between the marks; 0 when no
    /// command was enqueued between them.
    fn elapsed_ms(&self, from: &Mark, to: &Mark) -> Result<f64> {
        let (from, to) = (*from.native::<usize>(self.name())?, *to.native::<usize>(self.name())?);
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        if to <= from || to > events.len() {
            return Ok(0.0);
        }
        let (first, last) = (&events[from], &events[to - 1]);
        last.wait().map_err(self.err("clWaitForEvents"))?;
        let start = first.profiling_command_start().map_err(self.err("clGetEventProfilingInfo"))?;
        let end = last.profiling_command_end().map_err(self.err("clGetEventProfilingInfo"))?;
        Ok(end.saturating_sub(start) as f64 * 1e-6)
    }

    fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(self.err("clFinish"))
    }

    fn reset_marks(&self) {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
