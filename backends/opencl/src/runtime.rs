//! [`Runtime`]: one OpenCL device and a command queue of its own, implementing
//! [`ccl_backend::Gpu`].

use std::ptr;
use std::sync::{Arc, Mutex};

use ccl_backend::{
    Arg, Buffer, CacheKey, Define, DefineValue, Dialect, Error, Gpu, HostBuffer, Kernel, KernelCache, KernelLimits,
    LaunchRange, Limits, Mark, Program, Result, FLUSH_DENORMALS, REGISTER_BUDGET,
};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_event, cl_int, cl_mem, cl_ulong, CL_BLOCKING};

use crate::discovery::{describe, takes_nv_options, DeviceDesc};
use crate::pool::{BufferPool, KeptBudget, PooledBuffer};
use crate::ptxas::Ptxas;
use crate::staging::{self, MappedHost, Regions, Staging, Target};
use crate::{call_error, driver_lock};

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
    /// Why ptxas's assembly last failed (that program kept the driver's build).
    ptxas_fallback: Mutex<Option<String>>,
    desc: DeviceDesc,
    name: String,
    device: Device,
    context: Context,
    limits: Limits,
    /// The cache key's parts that name this device, its platform and driver.
    device_key: CacheKey,
    /// Buffers are zeroed by writing zeros rather than by a fill (Oclgrind, see `zero`).
    zero_by_writing: bool,
    /// What the pools of this device's queues keep between them: at most a quarter of its
    /// memory.
    kept_budget: Arc<KeptBudget>,
    /// The live buffers `alloc_host` handed out: copies from or into them are not staged.
    host_regions: Arc<Regions>,
}

/// One OpenCL device (its context) and an in-order profiling command queue of this handle's own.
///
/// [`Gpu::new_queue`] makes another handle on the same context with its own queue: buffers and
/// programs are shared, commands and timing events are not, so handles used from different
/// threads never see each other's commands.
pub struct Runtime {
    shared: Arc<Shared>,
    queue: CommandQueue,
    /// What timing needs of the kernels and fills enqueued since [`Gpu::reset_marks`].
    timeline: Mutex<Timeline>,
    /// Where compiled programs are kept (handles made by [`Gpu::new_queue`] share it).
    cache: KernelCache,
    /// Buffers released by this handle's owners, for its next allocations (not shared).
    pool: Arc<BufferPool>,
    /// Whether large copies from or into pageable memory are staged (see `src/staging.rs`).
    stage: bool,
    /// This handle's staging buffers, made at its first staged copy.
    staging: Mutex<Option<Staging>>,
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
        let limits = device_limits(&dev);
        let nv_options = takes_nv_options(&dev);
        // Programs assembled by ptxas are other binaries than the driver's: their own entries.
        let assembler = desc.ptxas.map_or("the driver", |p| p.version());
        let device_key = device_key(pl, &dev).part("assembler", assembler);
        // POCL 5.0 corrupts the reference counts of its cache of loaded kernel binaries when
        // commands of several queues run at once (an assertion in pocl_release_dlhandle_cache,
        // seen on 88 concurrent test threads); its kernels run one at a time instead.
        let serial = desc.platform_name.contains("Portable Computing Language");
        let zero_by_writing = desc.platform_name.contains("Oclgrind");
        let memory = dev.global_mem_size().unwrap_or(0);
        let kept_budget = KeptBudget::new(usize::try_from(memory / 4).unwrap_or(usize::MAX));
        let shared = Arc::new(Shared {
            serial,
            nv_options,
            ptxas_fallback: Mutex::default(),
            desc,
            name,
            device: dev,
            context,
            limits,
            device_key,
            zero_by_writing,
            kept_budget,
            host_regions: Arc::default(),
        });
        // Not on Oclgrind, which takes a buffer as written only after one write of its whole
        // range (see `zero`), and where a simulated device gains nothing from it.
        let stage = staging::enabled_by_env() && !zero_by_writing;
        Self::with_queue(shared, KernelCache::from_env(), stage)
    }

    /// The `clBuildProgram` options of `defines` on this device ([`build_options`]), with how its
    /// kernels make their atomic loads and stores ([`crate::Atomics::options`]).
    fn build_options(&self, defines: &[Define]) -> String {
        format!("{} {}", build_options(defines, self.shared.nv_options), self.shared.desc.atomics.options())
    }

    /// This runtime, keeping compiled programs in `cache` instead of the one
    /// [`KernelCache::from_env`] chose (queues made from it afterwards use it too).
    pub fn with_cache(mut self, cache: KernelCache) -> Self {
        self.cache = cache;
        self
    }

    /// This runtime, building its programs with `atomics` instead of what its device offers
    /// best ([`crate::Atomics::of`]; for tests, which compile every model on every device). Only
    /// before queues are made from it: [`Error::Unsupported`] afterwards.
    pub fn with_atomics(mut self, atomics: crate::Atomics) -> Result<Self> {
        let name = self.shared.name.clone();
        let shared = Arc::get_mut(&mut self.shared)
            .ok_or_else(|| Error::Unsupported { device: name, what: "changing atomics once queues exist".into() })?;
        shared.desc.atomics = atomics;
        Ok(self)
    }

    /// The ptxas that assembles this device's programs (NVIDIA OpenCL where a CUDA toolkit is
    /// installed; see [`crate::ptxas`]), if any.
    pub fn ptxas(&self) -> Option<&Ptxas> {
        self.shared.desc.ptxas
    }

    /// Why ptxas's assembly last failed on this device (any of its queues: ptxas or the driver
    /// refused), if it ever did: that program kept the driver's build, which gives the same
    /// results, on NVIDIA OpenCL more slowly.
    pub fn ptxas_fallback(&self) -> Option<String> {
        self.shared.ptxas_fallback.lock().unwrap_or_else(|p| p.into_inner()).clone()
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

    /// This runtime (and the queues made from it afterwards), staging large copies from and into
    /// pageable memory or not (see `src/staging.rs`), whatever `CCL_OPENCL_STAGING` says.
    pub fn with_staging(mut self, stage: bool) -> Self {
        self.stage = stage;
        self
    }

    /// How many copies this handle staged (see `src/staging.rs`).
    pub fn staged_copies(&self) -> u64 {
        self.staging.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, Staging::copies)
    }

    /// Whether a copy of `len` bytes from or into `host` goes through the staging buffers: one
    /// of at least `min` bytes, with staging on, of memory that `alloc_host` did not hand out.
    fn stages(&self, host: *const u8, len: usize, min: usize) -> bool {
        self.stage && len >= min && !self.shared.host_regions.contains(host)
    }

    /// Runs `copy` with this handle's staging buffers, making them at its first use.
    fn with_staging_buffers(&self, copy: impl FnOnce(&mut Staging) -> Result<()>) -> Result<()> {
        let mut staging = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if staging.is_none() {
            *staging = Some(Staging::new(&self.shared.context, &self.shared.name)?);
        }
        copy(staging.as_mut().expect("made above"))
    }

    fn with_queue(shared: Arc<Shared>, cache: KernelCache, stage: bool) -> Result<Self> {
        #[allow(deprecated)]
        // clCreateCommandQueue: the OpenCL 1.2 entry point, also on 2.0+ drivers
        let queue = CommandQueue::create_default(&shared.context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| call_error(&shared.name, "clCreateCommandQueue", e))?;
        // Kept buffers hold device memory: the device's queues keep at most a quarter of it.
        let pool = BufferPool::new(shared.kept_budget.clone());
        Ok(Self {
            shared,
            queue,
            timeline: Mutex::new(Timeline::default()),
            cache,
            pool,
            stage,
            staging: Mutex::new(None),
        })
    }

    /// The device this runtime drives.
    pub fn desc(&self) -> &DeviceDesc {
        &self.shared.desc
    }

    fn err(&self, call: &'static str) -> impl FnOnce(opencl3::error_codes::ClError) -> Error + '_ {
        move |e| call_error(&self.shared.name, call, e)
    }

    fn timeline(&self) -> std::sync::MutexGuard<'_, Timeline> {
        self.timeline.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Enqueues a command through `enqueue`, which passes its argument as the command's event
    /// pointer, with an event when `timed` (returned), else without one.
    fn enqueue(
        &self,
        call: &'static str,
        timed: bool,
        enqueue: impl FnOnce(*mut cl_event) -> Option<cl_int>,
    ) -> Result<Option<Event>> {
        let mut event: cl_event = ptr::null_mut();
        let status = enqueue(if timed { &mut event } else { ptr::null_mut() })
            .unwrap_or(opencl3::error_codes::CL_INVALID_OPERATION);
        if status != opencl3::error_codes::CL_SUCCESS {
            return Err(self.err(call)(opencl3::error_codes::ClError(status)));
        }
        Ok(timed.then(|| Event::new(event)))
    }

    /// Ends the timed commands with a marker when the last of them has no event (see
    /// [`Timeline`]): before a mark, and before a blocking copy, so that the span ends where the
    /// commands do rather than after the copy and the host's return from it.
    fn seal(&self, timeline: &mut Timeline) -> Result<()> {
        if timeline.needs_marker() {
            // SAFETY: a marker without a wait list: it completes when every earlier command has.
            let marker = unsafe { self.queue.enqueue_marker_with_wait_list(&[]) }
                .map_err(self.err("clEnqueueMarkerWithWaitList"))?;
            timeline.push(Some(marker));
        }
        Ok(())
    }

    /// Enqueues a timed command (see [`Timeline`]): with an event where timing needs one.
    fn enqueue_timed(&self, call: &'static str, enqueue: impl FnOnce(*mut cl_event) -> Option<cl_int>) -> Result<()> {
        let mut timeline = self.timeline();
        let timed = timeline.needs_event();
        let event = self.enqueue(call, timed, enqueue)?;
        timeline.push(event);
        Ok(())
    }
}

/// The OpenCL entry points (the library opencl3 loaded), or the error of loading it.
fn library() -> Result<&'static cl3::OpenClRuntime> {
    cl3::load_library()
        .as_ref()
        .map_err(|e| Error::Unavailable { backend: "opencl", reason: format!("the OpenCL library: {e}") })
}

/// What timing needs of a queue's kernels and fills: the first command after each mark gets an
/// event (its start begins the span), and the span's end is the end of the last command before
/// the next mark, whose event is a marker that [`Gpu::mark`] (or a blocking copy before it)
/// enqueues when that command has none. Other commands are enqueued without an event: NVIDIA's
/// OpenCL takes about 9 us of host time more per command to make one on a profiling queue
/// (H100, driver 580: 14 against 5.5 us a kernel), which left the device idle between kernels
/// shorter than that.
struct Timeline<E = Event> {
    /// The events, in queue order; a mark is an index into it.
    events: Vec<E>,
    /// `events.len()` at the latest mark.
    marked: usize,
    /// A command without an event was enqueued after the last event.
    untimed_tail: bool,
}

impl<E> Default for Timeline<E> {
    fn default() -> Self {
        Self { events: Vec::new(), marked: 0, untimed_tail: false }
    }
}

impl<E> Timeline<E> {
    /// Whether the next command needs an event: the first since the latest mark.
    fn needs_event(&self) -> bool {
        self.events.len() == self.marked
    }

    /// Records a command, with its event or without one.
    fn push(&mut self, event: Option<E>) {
        match event {
            Some(event) => {
                self.events.push(event);
                self.untimed_tail = false;
            }
            None => self.untimed_tail = true,
        }
    }

    /// Whether a mark now needs a marker first: the last command has no event.
    fn needs_marker(&self) -> bool {
        self.untimed_tail
    }

    /// Marks the current point (after the marker [`Timeline::needs_marker`] asked for).
    fn mark(&mut self) -> usize {
        self.marked = self.events.len();
        self.marked
    }

    /// The events of the first and the last command between two marks, if any.
    fn span(&self, from: usize, to: usize) -> Option<(&E, &E)> {
        (from < to && to <= self.events.len()).then(|| (&self.events[from], &self.events[to - 1]))
    }
}

/// What `dev` allows (OpenCL ranges are bounded by size_t only: no folding is ever needed). A
/// query the driver refuses takes the conformant minimum of a full-profile device.
fn device_limits(dev: &Device) -> Limits {
    let max_group_size = dev.max_work_group_size().unwrap_or(1).max(1);
    let sizes = dev.max_work_item_sizes().unwrap_or_default();
    let max_group_sizes = std::array::from_fn(|d| sizes.get(d).copied().unwrap_or(1).max(1));
    // CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE is OpenCL 3.0; before, 1 (no preference).
    let group_multiple = dev.preferred_work_group_size_multiple().unwrap_or(1).max(1);
    Limits {
        max_group_size,
        max_group_sizes,
        compute_units: dev.max_compute_units().map_or(1, |n| n.max(1) as usize),
        local_memory: dev.local_mem_size().map_or(32 * 1024, |b| usize::try_from(b).unwrap_or(usize::MAX)),
        max_allocation: dev.max_mem_alloc_size().unwrap_or(128 << 20),
        group_multiple,
        ..Limits::UNBOUNDED
    }
}

/// The `clBuildProgram` options of `defines`: `-D NAME=VALUE` each, `-cl-denorms-are-zero` where
/// [`FLUSH_DENORMALS`] is set, and with NVIDIA's compiler options (`nv_options`) the register
/// cap a [`REGISTER_BUDGET`] define asks for.
fn build_options(defines: &[Define], nv_options: bool) -> String {
    let mut options: Vec<String> = defines.iter().map(|d| d.option(Dialect::OpenCl)).collect();
    let flush = defines.iter().find(|d| d.name == FLUSH_DENORMALS).is_some_and(|d| d.value != DefineValue::Int(0));
    if flush {
        options.push("-cl-denorms-are-zero".into());
    }
    if let (true, Some(registers)) = (nv_options, register_budget(defines)) {
        options.push(format!("-cl-nv-maxrregcount={registers}"));
    }
    options.join(" ")
}

/// The registers per work-item that `defines` cap a program at ([`REGISTER_BUDGET`]), if any.
fn register_budget(defines: &[Define]) -> Option<i64> {
    match defines.iter().find(|d| d.name == REGISTER_BUDGET)?.value {
        DefineValue::Int(n) => Some(n),
        _ => None,
    }
}

/// Builds: from source, from a cached binary, and the binary of a built program. Callers hold
/// the driver lock (except [`Runtime::assembled_program`], which takes it itself).
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
        self.try_program_from_binary(binary, options).ok()
    }

    /// [`Self::program_from_binary`], saying why the driver refused the binary.
    fn try_program_from_binary(&self, binary: &[u8], options: &str) -> std::result::Result<ClProgram, String> {
        let device = self.shared.device.id();
        // SAFETY: the device belongs to the context (the context was made from it).
        let mut program = unsafe { ClProgram::create_from_binary(&self.shared.context, &[device], &[binary]) }
            .map_err(|e| format!("clCreateProgramWithBinary: {e}"))?;
        if let Err(e) = program.build(&[device], options) {
            return Err(format!("clBuildProgram: {e}: {}", program.get_build_log(device).unwrap_or_default().trim()));
        }
        Ok(program)
    }

    /// The program built from the CUBIN this device's ptxas makes of `ptx` (a program's PTX built
    /// with `defines` and `options`; their register budget caps ptxas too), with that CUBIN, or
    /// why ptxas or the driver refused; `None` where there is no ptxas. ptxas runs outside the
    /// driver lock, so other threads' builds and launches go on meanwhile.
    fn assembled_program(
        &self,
        ptx: Option<&[u8]>,
        defines: &[Define],
        options: &str,
    ) -> Option<std::result::Result<(ClProgram, Vec<u8>), String>> {
        let ptxas = self.shared.desc.ptxas?;
        let build = || {
            let cubin = ptxas.assemble(ptx.ok_or("the driver returned no PTX")?, register_budget(defines))?;
            let _serialised = driver_lock();
            let program = self
                .try_program_from_binary(&cubin, options)
                .map_err(|why| format!("the driver refused ptxas's CUBIN: {why}"))?;
            Ok((program, cubin))
        };
        Some(build())
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
        Ok(Box::new(Self::with_queue(self.shared.clone(), self.cache.clone(), self.stage)?))
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
                let (program, binary) = {
                    let _serialised = driver_lock();
                    let program = self.program_from_source(source, &options)?;
                    let binary = if wants_binary || self.ptxas().is_some() { self.binary_of(&program) } else { None };
                    (SerialProgram(Some(program)), binary)
                };
                match self.assembled_program(binary.as_deref(), defines, &options) {
                    Some(Ok((assembled, cubin))) => {
                        return Ok((SerialProgram(Some(assembled)), wants_binary.then_some(cubin)))
                    }
                    Some(Err(why)) => *self.shared.ptxas_fallback.lock().unwrap_or_else(|p| p.into_inner()) = Some(why),
                    None => {}
                }
                Ok((program, binary.filter(|_| wants_binary)))
            },
        )
    }

    fn build_note(&self) -> Option<String> {
        self.ptxas_fallback().map(|why| {
            format!(
                "{}: ptxas could not assemble a program, so the driver did: the results are the same, but the \
                 driver's assembly ran the fast Nick kernel 8-12 % slower on an H100 ({why})",
                self.name()
            )
        })
    }

    fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let program = program.native::<SerialProgram>(self.name())?.get();
        let _serialised = driver_lock();
        let kernel = ClKernel::create(program, name).map_err(self.err("clCreateKernel"))?;
        let id = self.shared.device.id();
        // CL_KERNEL_WORK_GROUP_SIZE: what the compiled kernel allows (its registers may cap it
        // below the device's maximum); CL_KERNEL_LOCAL_MEM_SIZE: its own local arrays.
        let limits = KernelLimits {
            max_group_size: kernel.get_work_group_size(id).map_err(self.err("clGetKernelWorkGroupInfo"))?.max(1),
            local_memory: usize::try_from(kernel.get_local_mem_size(id).unwrap_or(0)).unwrap_or(usize::MAX),
        };
        Ok(Kernel::new(SerialKernel { inner: Some(kernel), launched: false }, name).with_limits(limits))
    }

    /// A buffer of this queue's pool (see [`crate::pool`]): one the queue's owners released, of
    /// the same size, or a new one (after releasing the kept ones if the driver refuses it).
    fn alloc(&self, bytes: usize) -> Result<Buffer> {
        self.shared.limits.check_allocation(&self.shared.name, bytes)?;
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
        let host = MappedHost::new(&self.shared.context, &self.shared.name, bytes)?;
        let ptr = host.ptr();
        // Copies from or into it go to the driver directly, never staged.
        let owner = self.shared.host_regions.register(host, bytes);
        // SAFETY: the mapped region holds `bytes` bytes (aligned as the driver maps: at least
        // 8) and stays valid until the owner unmaps it.
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes, owner) })
    }

    /// Large copies from pageable memory go through this handle's staging buffers
    /// (`src/staging.rs`); others are one blocking write. Returns when the copy is done.
    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        assert!(data.len() <= buffer.len(), "write of {} bytes into a {}-byte buffer", data.len(), buffer.len());
        if data.is_empty() {
            return Ok(());
        }
        let (library, mem) = (library()?, buffer.native_mut::<PooledBuffer>(&self.shared.name)?.buffer_mut().get());
        self.seal(&mut self.timeline())?;
        if self.stages(data.as_ptr(), data.len(), staging::MIN_STAGED_WRITE) {
            let target = Target { library, queue: self.queue.get(), mem, device: &self.shared.name };
            return self.with_staging_buffers(|staging| staging.write(&target, data));
        }
        // The raw entry point (cl3 declares it safe): a blocking write of `data.len()` bytes,
        // within the buffer (checked above), without an event (a blocking copy needs none, and
        // making one costs host time, see Timeline).
        self.enqueue("clEnqueueWriteBuffer", false, |event| {
            library.clEnqueueWriteBuffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                0,
                data.len(),
                data.as_ptr().cast(),
                0,
                ptr::null(),
                event,
            )
        })?;
        Ok(())
    }

    /// Large copies into pageable memory go through this handle's staging buffers
    /// (`src/staging.rs`); others are one blocking read. Returns when `out` is complete.
    fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()> {
        assert!(out.len() <= buffer.len(), "read of {} bytes from a {}-byte buffer", out.len(), buffer.len());
        if out.is_empty() {
            return Ok(());
        }
        let (library, mem) = (library()?, buffer.native::<PooledBuffer>(&self.shared.name)?.buffer().get());
        self.seal(&mut self.timeline())?;
        if self.stages(out.as_ptr(), out.len(), staging::MIN_STAGED_READ) {
            let target = Target { library, queue: self.queue.get(), mem, device: &self.shared.name };
            return self.with_staging_buffers(|staging| staging.read(&target, out));
        }
        // The raw entry point: a blocking read of `out.len()` bytes, within the buffer (checked
        // above), without an event, as writes.
        self.enqueue("clEnqueueReadBuffer", false, |event| {
            library.clEnqueueReadBuffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                0,
                out.len(),
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                event,
            )
        })?;
        Ok(())
    }

    /// Large reads go through this handle's staging buffers chunk by chunk, the device reading
    /// one while `sink` has the other; smaller ones (and all with staging off) are read whole
    /// first.
    fn read_pieces(&self, buffer: &Buffer, len: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        assert!(len <= buffer.len(), "read of {len} bytes from a {}-byte buffer", buffer.len());
        if !self.stage || len < staging::MIN_STAGED_READ {
            return ccl_backend::read_whole_in_pieces(self, buffer, len, sink);
        }
        let (library, mem) = (library()?, buffer.native::<PooledBuffer>(&self.shared.name)?.buffer().get());
        self.seal(&mut self.timeline())?;
        let target = Target { library, queue: self.queue.get(), mem, device: &self.shared.name };
        self.with_staging_buffers(|staging| staging.read_with(&target, len, sink))
    }

    fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        if self.shared.zero_by_writing {
            // Oclgrind's uninitialized-memory check takes only a fill's first pattern (or one
            // write of the whole range) as written: there, zeros are written from the host.
            let zeros = vec![0u8; buffer.len().max(1)];
            return self.write(buffer, &zeros);
        }
        let len = buffer.len().max(1);
        let (library, mem) = (library()?, buffer.native_mut::<PooledBuffer>(&self.shared.name)?.buffer_mut().get());
        let zero = 0u8;
        // The raw entry point: the fill covers exactly the buffer, with the one-byte pattern
        // `zero`, which outlives the call (the driver copies a pattern when it enqueues).
        self.enqueue_timed("clEnqueueFillBuffer", |event| {
            library.clEnqueueFillBuffer(
                self.queue.get(),
                mem,
                (&raw const zero).cast(),
                1,
                0,
                len,
                0,
                ptr::null(),
                event,
            )
        })
    }

    /// A kernel's first launch runs under the driver lock and is waited for (see
    /// [`SerialKernel`]); later ones are queued freely.
    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        let device = self.shared.name.as_str();
        kernel.check_group(device, range.local, &self.shared.limits)?;
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
        let (library, handle, queue) = (library()?, k.get(), self.queue.get());
        let mut timeline = self.timeline();
        // The first launch is waited for: it needs an event whatever the timeline says.
        let timed = first || timeline.needs_event();
        // The raw entry point: all arguments were set above; the sizes point to three values
        // each, of which the driver reads `work_dim`.
        let event = self.enqueue("clEnqueueNDRangeKernel", timed, |event| {
            library.clEnqueueNDRangeKernel(
                queue,
                handle,
                work_dim,
                ptr::null(),
                range.global.as_ptr(),
                range.local.as_ptr(),
                0,
                ptr::null(),
                event,
            )
        })?;
        if first {
            event.as_ref().expect("timed").wait().map_err(self.err("clWaitForEvents"))?;
            serial.launched = true;
        }
        timeline.push(event);
        Ok(())
    }

    /// Ends the span of the commands before it with a marker when the last of them has no
    /// event (see [`Timeline`]).
    fn mark(&self) -> Result<Mark> {
        let mut timeline = self.timeline();
        self.seal(&mut timeline)?;
        Ok(Mark::new(timeline.mark()))
    }

    /// From the first command's start to the last command's end between the marks (a marker's,
    /// see [`Timeline`]); 0 when no command was enqueued between them.
    fn elapsed_ms(&self, from: &Mark, to: &Mark) -> Result<f64> {
        let (from, to) = (*from.native::<usize>(self.name())?, *to.native::<usize>(self.name())?);
        let timeline = self.timeline();
        let Some((first, last)) = timeline.span(from, to) else {
            return Ok(0.0);
        };
        last.wait().map_err(self.err("clWaitForEvents"))?;
        let start = first.profiling_command_start().map_err(self.err("clGetEventProfilingInfo"))?;
        let end = last.profiling_command_end().map_err(self.err("clGetEventProfilingInfo"))?;
        Ok(end.saturating_sub(start) as f64 * 1e-6)
    }

    fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(self.err("clFinish"))
    }

    fn reset_marks(&self) {
        *self.timeline() = Timeline::default();
    }
}

#[cfg(test)]
mod tests {
    use super::{build_options, Timeline};
    use ccl_backend::{Define, FLUSH_DENORMALS, REGISTER_BUDGET};

    #[test]
    fn build_options_follow_the_defines_and_the_compiler() {
        let defines = [Define::int("N", 3), Define::flag(FLUSH_DENORMALS, true), Define::int(REGISTER_BUDGET, 32)];
        let nvidia = build_options(&defines, true);
        assert!(nvidia.contains("-cl-denorms-are-zero") && nvidia.contains("-cl-nv-maxrregcount=32"), "{nvidia}");
        let other = build_options(&defines, false);
        assert!(other.contains("-cl-denorms-are-zero") && !other.contains("maxrregcount"), "{other}");
        let plain = build_options(&[Define::int("N", 3), Define::flag(FLUSH_DENORMALS, false)], true);
        assert!(!plain.contains("denorms") && plain.contains("N=3"), "{plain}");
    }

    #[test]
    fn a_span_starts_at_its_first_command_and_ends_at_its_last() {
        let mut t = Timeline::<u32>::default();
        // Three commands: only the first takes an event; the mark then asks for a marker.
        assert!(t.needs_event());
        t.push(Some(1));
        for _ in 0..2 {
            assert!(!t.needs_event());
            t.push(None);
        }
        assert!(t.needs_marker());
        t.push(Some(2)); // the marker
        let first = t.mark();
        assert_eq!(t.span(0, first), Some((&1, &2)));
        // One command alone: its event is the span's start and end, no marker.
        assert!(t.needs_event());
        t.push(Some(3));
        assert!(!t.needs_marker());
        let second = t.mark();
        assert_eq!(t.span(first, second), Some((&3, &3)));
        // No command between two marks: no span.
        let third = t.mark();
        assert_eq!(t.span(second, third), None);
        assert!(t.needs_event());
    }
}
