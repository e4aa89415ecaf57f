//! The CUDA backend of `ccl`: device discovery, NVRTC compilation, and [`Runtime`], which
//! implements the device abstraction [`ccl_backend::Gpu`] (compile, allocate, copy, launch, time)
//! on one CUDA device. It knows nothing about labeling.
//!
//! Built over `cudarc` with dynamic loading, so binaries start on machines without a CUDA driver.
//! `cudarc` panics when `libcuda` or `libnvrtc` is missing; every entry point here checks for the
//! libraries first and returns [`ccl_backend::Error::Unavailable`] instead.

use std::ffi::{c_char, CStr, CString};
mod staging;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ccl_backend::{
    Arg, Buffer, CacheKey, Define, Dialect, Error, Gpu, HostBuffer, Kernel, KernelCache, KernelLimits, LaunchRange,
    Limits, Mark, Program, Result,
};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::result::NvrtcError;
use cudarc::nvrtc::sys::{nvrtcProgram, nvrtcResult};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

fn driver_error<'a>(device: &'a str, call: &'static str) -> impl FnOnce(DriverError) -> Error + 'a {
    move |e| Error::Call { device: device.to_string(), message: format!("CUDA driver call {call} failed: {e}") }
}

fn unavailable(reason: String) -> Error {
    Error::Unavailable { backend: "cuda", reason }
}

/// Checks that the CUDA driver library (`libcuda`) can be loaded.
pub fn driver_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no CUDA call is made.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(unavailable(load_problem("cuda", "the CUDA driver library (libcuda.so.1)")))
    }
}

/// Checks that the NVRTC library (`libnvrtc`) can be loaded.
pub fn nvrtc_present() -> Result<()> {
    // SAFETY: only tries to dlopen the library; no NVRTC call is made.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(unavailable(load_problem("nvrtc", "the NVRTC library (libnvrtc.so.13)")))
    }
}

/// Why no file of the names cudarc tries for `lib` could be loaded: none exists on the library
/// path, or one exists but is broken (the loader's message, e.g. "invalid ELF header").
fn load_problem(lib: &str, what: &str) -> String {
    match ccl_backend::broken_library(&cudarc::get_lib_name_candidates(lib)) {
        Some((candidate, text)) => format!("{what} was found as {candidate} but could not be loaded: {text}"),
        None => format!("{what} is not installed or not on the library path (LD_LIBRARY_PATH)"),
    }
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
    use cudarc::driver::result;
    driver_present()?;
    result::init().map_err(driver_error("CUDA", "cuInit"))?;
    let n = result::device::get_count().map_err(|e| match e.0 {
        cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => unavailable("no CUDA device".into()),
        _ => driver_error("CUDA", "cuDeviceGetCount")(e),
    })?;
    (0..n).map(describe).collect()
}

/// A device's description, read without creating a context (contexts cost ~0.1 s each).
fn describe(ordinal: i32) -> Result<DeviceDesc> {
    use cudarc::driver::result::device;
    use cudarc::driver::sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    let err = driver_error("CUDA", "cuDeviceGet");
    let dev = device::get(ordinal).map_err(err)?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    let attribute = |a| unsafe { device::get_attribute(dev, a) }.map_err(driver_error("CUDA", "cuDeviceGetAttribute"));
    let mut version = 0;
    // SAFETY: writes one int; the driver is initialised.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    Ok(DeviceDesc {
        ordinal: ordinal as usize,
        name: device::get_name(dev).map_err(driver_error("CUDA", "cuDeviceGetName"))?,
        compute_capability: (attribute(MAJOR)?, attribute(MINOR)?),
        driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
    })
}

/// Compiles `source` to PTX with NVRTC with `defines`; `arch` is a virtual architecture such as
/// `compute_90`, or NVRTC's default. Needs no GPU.
pub fn compile_ptx(source: &str, defines: &[Define], arch: Option<&'static str>) -> Result<String> {
    nvrtc_present()?;
    let options = defines.iter().map(|d| d.option(Dialect::Cuda)).collect();
    let opts = CompileOptions { options, arch, ..Default::default() };
    let build_error = |log: String| Error::Build { device: "NVRTC".into(), log };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, nvrtc, .. }) => {
            let log = log.to_string_lossy().into_owned();
            Err(build_error(if log.trim().is_empty() { format!("{nvrtc:?}") } else { log }))
        }
        Err(e) => Err(build_error(format!("{e:?}"))),
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

/// The NVRTC real architecture (`sm_XY`, for a CUBIN) matching a compute capability, for the
/// capabilities [`arch_for`] knows.
fn sm_arch_for(cc: (i32, i32)) -> Option<String> {
    arch_for(cc).map(|arch| arch.replace("compute_", "sm_"))
}

/// Compiles `source` to a CUBIN (an ELF image of machine code) for real architecture `sm_arch`,
/// e.g. `sm_90`, with NVRTC and `defines`. Needs no GPU.
pub fn compile_cubin(source: &str, defines: &[Define], sm_arch: &str) -> Result<Vec<u8>> {
    nvrtc_present()?;
    nvrtc_cubin(source, &cubin_options(defines, sm_arch)).map_err(|failure| failure.into_error())
}

/// NVRTC options for a CUBIN of real architecture `sm_arch` with `defines`.
fn cubin_options(defines: &[Define], sm_arch: &str) -> Vec<String> {
    let mut options: Vec<String> = defines.iter().map(|d| d.option(Dialect::Cuda)).collect();
    options.push(format!("--gpu-architecture={sm_arch}"));
    options
}

/// Why NVRTC produced no CUBIN: its result code and log.
struct NvrtcFailure {
    code: nvrtcResult,
    log: String,
}

impl NvrtcFailure {
    fn into_error(self) -> Error {
        let log = if self.log.trim().is_empty() { format!("{:?}", self.code) } else { self.log };
        Error::Build { device: "NVRTC".into(), log }
    }
}

/// An NVRTC program, destroyed when dropped.
struct NvrtcProgram(nvrtcProgram);

impl Drop for NvrtcProgram {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once, here.
        let _ = unsafe { cudarc::nvrtc::result::destroy_program(self.0) };
    }
}

/// Compiles `source` with NVRTC `options` (which name a real architecture) and returns the
/// CUBIN. The caller has checked that NVRTC is present.
fn nvrtc_cubin(source: &str, options: &[String]) -> std::result::Result<Vec<u8>, NvrtcFailure> {
    use cudarc::nvrtc::{result, sys};
    let invalid = |what: &str| NvrtcFailure { code: nvrtcResult::NVRTC_ERROR_INVALID_INPUT, log: what.to_string() };
    let src = CString::new(source).map_err(|_| invalid("the kernel source contains a NUL byte"))?;
    if options.iter().any(|o| o.contains('\0')) {
        return Err(invalid("a compile option contains a NUL byte"));
    }
    let fail = |NvrtcError(code)| NvrtcFailure { code, log: String::new() };
    let program = NvrtcProgram(result::create_program(&src, Some(c"ccl.cu")).map_err(fail)?);
    // SAFETY: the program is live until `program` drops, and `src` outlives it.
    if let Err(NvrtcError(code)) = unsafe { result::compile_program(program.0, options) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(program.0) }.map(|log| c_text(&log)).unwrap_or_default();
        return Err(NvrtcFailure { code, log });
    }
    let mut size = 0usize;
    // SAFETY: as above; NVRTC writes the CUBIN's size, then that many bytes into `cubin`.
    unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) }.result().map_err(fail)?;
    if size == 0 {
        return Err(NvrtcFailure {
            code: nvrtcResult::NVRTC_ERROR_INVALID_OPTION,
            log: "NVRTC produced no CUBIN (the architecture is not a real one)".into(),
        });
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds `size` bytes, the size NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) }.result().map_err(fail)?;
    Ok(cubin)
}

/// Text of a NUL-terminated C buffer (all of it when there is no NUL).
fn c_text(bytes: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u8>(), bytes.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// NVRTC's version, e.g. "13.0" (empty when it cannot say).
fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; callers have checked that NVRTC is present.
    match unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }.result() {
        Ok(()) => format!("{major}.{minor}"),
        Err(_) => String::new(),
    }
}

/// The first bytes of an ELF file, as a CUBIN is.
const ELF_MAGIC: &[u8] = b"\x7fELF";

/// A compiled kernel image: a CUBIN (ELF) or PTX text, as stored in the kernel cache.
fn image_to_module_source(image: Vec<u8>) -> Option<Ptx> {
    if image.starts_with(ELF_MAGIC) {
        Some(Ptx::from_binary(image))
    } else {
        // PTX: text without NUL bytes (the driver reads it as a C string).
        String::from_utf8(image).ok().filter(|ptx| !ptx.contains('\0')).map(Ptx::from_src)
    }
}

/// Timing events a handle keeps for its next marks ([`Runtime`]'s `mark`), instead of creating
/// (and destroying) one per mark: a labeling takes 5-10 marks. H100, `ccl bench average` on 20
/// DIBCO pages, A/B on one machine, three rounds: TUF 0.0227-0.0252 -> 0.0222-0.0224 ms,
/// BKE_IC 0.032-0.036 -> 0.031, TUF + statistics 0.055-0.063 -> 0.053-0.054 (and steadier
/// from run to run); 2048^2 unchanged.
#[derive(Default)]
struct EventPool {
    events: Mutex<Vec<CudaEvent>>,
}

/// A recorded timing event, given back to its handle's pool when its mark drops (its
/// elapsed times, the only use of a mark, are read before that).
struct PooledEvent {
    event: Option<CudaEvent>,
    pool: Arc<EventPool>,
}

impl PooledEvent {
    fn event(&self) -> &CudaEvent {
        self.event.as_ref().expect("held until the mark drops")
    }
}

/// The last mark of a handle, and whether a command went onto its stream since: a mark with no
/// command since the last one reuses that one's event instead of recording another. Each event
/// recorded between commands adds about 1.3 us to the stream's span on an H100 (an empty phase
/// between two marks measured 1.28-1.31 us, queued timing), time that a phase with no device
/// work (allocation from the handle's free list, deallocation into it) only added. A/B on one
/// H100, two rounds, medians of 20 queued runs, CUDA: the fast Nick kernel on the 10 Mpx page
/// 44.6-44.7 / 49.7-49.9 / 55.6-55.7 -> 42.0-42.1 / 47.4-47.6 / 52.7-52.9 us at W = 9 / 45 / 201
/// (two empty phases), TUF at 2048^2 34.7-34.8 / 60.9-61.1 / 49.4-49.6 -> 33.4-33.5 / 59.5 /
/// 48.1 us at 10 / 50 / 90 % (one).
struct LastMark {
    commands_since: AtomicBool,
    event: Mutex<Option<Arc<PooledEvent>>>,
}

impl Default for LastMark {
    fn default() -> Self {
        Self { commands_since: AtomicBool::new(true), event: Mutex::new(None) }
    }
}

impl LastMark {
    /// A command went onto the stream.
    fn command(&self) {
        self.commands_since.store(true, Ordering::Relaxed);
    }
}

impl Drop for PooledEvent {
    fn drop(&mut self) {
        if let Some(event) = self.event.take() {
            self.pool.events.lock().unwrap_or_else(|e| e.into_inner()).push(event);
        }
    }
}

/// One CUDA device (its primary context) and a stream of this handle's own.
///
/// [`Gpu::new_queue`] makes another handle on the same context with its own stream: buffers and
/// modules are shared, commands and timing events are not. Every copy waits for its stream, so
/// a buffer written through one handle may be used through another.
pub struct Runtime {
    desc: DeviceDesc,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Timing events of this handle's marks, kept for the next marks.
    events: Arc<EventPool>,
    /// The last mark, reused by a mark with no command since.
    last_mark: LastMark,
    /// Memory of dropped buffers, kept for the next allocations of about their size.
    free: Arc<FreeList>,
    limits: Limits,
    pool: Option<Arc<Pool>>,
    /// Page-locked buffers for large copies with pageable memory, made at the first one.
    staging: Mutex<Option<staging::Staging>>,
    /// The page-locked buffer of short reads, made at the first one.
    bounce: Mutex<Option<staging::Bounce>>,
    /// Where compiled modules are kept.
    cache: KernelCache,
}

impl Runtime {
    /// Opens the device with CUDA ordinal `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self> {
        let mut all = devices()?;
        nvrtc_present()?;
        let n = all.len();
        if ordinal >= n {
            let there = match n {
                1 => "is 1 CUDA device (cuda:0)".to_string(),
                n => format!("are {n} CUDA devices (cuda:0 to cuda:{})", n - 1),
            };
            return Err(Error::UnknownDevice {
                id: format!("cuda:{ordinal}"),
                reason: format!("there {there} (see `ccl devices`)"),
            });
        }
        let desc = all.swap_remove(ordinal);
        let ctx = CudaContext::new(ordinal).map_err(driver_error("CUDA", "cuCtxCreate"))?;
        // Streams are synchronised at every copy and labeling boundary by the callers, so
        // cudarc's per-buffer event tracking is not needed.
        // SAFETY: every buffer is complete on its stream before another stream uses it.
        unsafe { ctx.disable_event_tracking() };
        let attribute =
            |a| ctx.attribute(a).map(|v| v.max(1) as u64).map_err(driver_error(&desc.name, "cuDeviceGetAttribute"));
        let limits = Limits {
            max_group_size: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as usize,
            max_groups: [
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            compute_units: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize,
            max_group_sizes: [
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)? as usize,
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)? as usize,
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)? as usize,
            ],
            // Static shared memory (the kernels' arrays are fixed at compile time): 48 KiB.
            local_memory: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as usize,
            max_allocation: ctx.total_mem().map_or(u64::MAX, |m| m as u64),
            group_multiple: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as usize,
        };
        let pool = Pool::new(&ctx).map_err(driver_error(&desc.name, "cuMemPoolCreate"))?.map(Arc::new);
        let stream = ctx.new_stream().map_err(driver_error(&desc.name, "cuStreamCreate"))?;
        let free = Arc::new(FreeList::for_device(ctx.total_mem().unwrap_or(0)));
        let events = Arc::default();
        Ok(Self {
            desc,
            ctx,
            stream,
            events,
            last_mark: LastMark::default(),
            free,
            limits,
            pool,
            staging: Mutex::new(None),
            bounce: Mutex::new(None),
            cache: KernelCache::from_env(),
        })
    }

    /// This runtime, keeping compiled modules in `cache` instead of the one
    /// [`KernelCache::from_env`] chose (queues made from it afterwards use it too).
    pub fn with_cache(mut self, cache: KernelCache) -> Self {
        self.cache = cache;
        self
    }

    /// The kernel cache this runtime's builds use.
    pub fn cache(&self) -> &KernelCache {
        &self.cache
    }

    /// The kernel cache key of building `source` with `defines` on this device: the source, the
    /// defines, the architecture compiled for, the device (name, compute capability), the
    /// driver, NVRTC and this crate's version ([`Gpu::build`] looks it up).
    pub fn cache_key(&self, source: &str, defines: &[Define]) -> CacheKey {
        let (major, minor) = self.desc.compute_capability;
        let options: Vec<String> = defines.iter().map(|d| d.option(Dialect::Cuda)).collect();
        let target = sm_arch_for(self.desc.compute_capability).unwrap_or_else(|| "ptx".into());
        CacheKey::new("cuda")
            .part("ccl-cuda", env!("CARGO_PKG_VERSION"))
            .part("device name", &self.desc.name)
            .part("compute capability", format!("{major}.{minor}"))
            .part("driver version", &self.desc.driver_version)
            .part("nvrtc version", nvrtc_version())
            .part("target", target)
            .part("options", options.join("\n"))
            .part("source", source)
    }

    /// Compiles `source` for this device: a CUBIN for its real architecture when NVRTC knows
    /// it, else PTX (for the virtual architecture, or NVRTC's default) that the driver compiles
    /// when loading. Returns the image as the cache stores it.
    fn compile_image(&self, source: &str, defines: &[Define], sm_arch: Option<&str>) -> Result<Vec<u8>> {
        let rename = |e| match e {
            Error::Build { log, .. } => Error::Build { device: self.desc.name.clone(), log },
            e => e,
        };
        if let Some(sm) = sm_arch {
            match nvrtc_cubin(source, &cubin_options(defines, sm)) {
                Ok(cubin) => return Ok(cubin),
                // An architecture this NVRTC does not know: PTX below.
                Err(f) if f.code == nvrtcResult::NVRTC_ERROR_INVALID_OPTION => {}
                Err(f) => return Err(rename(f.into_error())),
            }
        }
        compile_ptx(source, defines, arch_for(self.desc.compute_capability)).map(String::into_bytes).map_err(rename)
    }

    /// Compiles and loads `source`; a CUBIN the driver refuses (a driver older than NVRTC) is
    /// replaced by PTX, which the driver compiles itself. Returns the image that loaded.
    fn compile_and_load(
        &self,
        source: &str,
        defines: &[Define],
        sm_arch: Option<&str>,
    ) -> Result<(Vec<u8>, Arc<CudaModule>)> {
        let image = self.compile_image(source, defines, sm_arch)?;
        match self.load_image(image.clone()) {
            Ok(module) => Ok((image, module)),
            Err(_) if image.starts_with(ELF_MAGIC) => {
                let ptx = self.compile_image(source, defines, None)?;
                let module = self.load_image(ptx.clone())?;
                Ok((ptx, module))
            }
            Err(e) => Err(e),
        }
    }

    /// Loads a CUBIN or PTX image as a module.
    fn load_image(&self, image: Vec<u8>) -> Result<Arc<CudaModule>> {
        let ptx = image_to_module_source(image).ok_or_else(|| Error::Build {
            device: self.desc.name.clone(),
            log: "the kernel image is neither a CUBIN nor PTX text".into(),
        })?;
        self.ctx.load_module(ptx).map_err(self.err("cuModuleLoadData"))
    }

    /// The device this runtime drives.
    pub fn desc(&self) -> &DeviceDesc {
        &self.desc
    }

    /// Runs `copy` with this handle's staging buffers, making them at the first use.
    fn with_staging(
        &self,
        copy: impl FnOnce(&mut staging::Staging) -> std::result::Result<(), DriverError>,
    ) -> Result<()> {
        let mut guard = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(staging::Staging::new(&self.ctx).map_err(self.err("cuMemHostAlloc"))?);
        }
        copy(guard.as_mut().expect("made above")).map_err(self.err("cuMemcpyAsync (staged)"))
    }

    /// A stream-ordered allocation of `bytes` bytes, from ccl's pool where the device has
    /// memory pools.
    fn alloc_new(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.last_mark.command(); // a stream-ordered allocation
        match &self.pool {
            Some(pool) => pool.alloc(&self.ctx, &self.stream, bytes).map_err(self.err("cuMemAllocFromPoolAsync")),
            // SAFETY: the contents are uninitialised; every kernel writes before it reads.
            None => unsafe { self.stream.alloc::<u8>(bytes) }.map_err(self.err("cuMemAllocAsync")),
        }
    }

    fn err(&self, call: &'static str) -> impl FnOnce(DriverError) -> Error + '_ {
        driver_error(&self.desc.name, call)
    }

    /// The groups of `range` along x, y, z, folded into the device's grid limits
    /// ([`LaunchRange::fold`]), or an error naming `kernel`.
    fn grid(&self, kernel: &Kernel, range: &LaunchRange) -> Result<[u64; 3]> {
        kernel.check_group(&self.desc.name, range.local, &self.limits)?;
        range.fold(&self.limits).map_err(|reason| Error::InvalidLaunch {
            device: self.desc.name.clone(),
            kernel: kernel.name().to_string(),
            reason,
        })
    }

    /// The device memory of a buffer: allocated here, or borrowed ([`Gpu::borrow`]).
    fn slice<'b>(&self, buffer: &'b Buffer) -> Result<&'b CudaSlice<u8>> {
        match buffer.native::<Recycled>(&self.desc.name) {
            Ok(recycled) => Ok(recycled.slice()),
            Err(_) => Ok(buffer.native::<Borrowed>(&self.desc.name)?.slice()),
        }
    }

    /// The device memory of a buffer, mutably: allocated here, or borrowed.
    fn slice_mut<'b>(&self, buffer: &'b mut Buffer) -> Result<&'b mut CudaSlice<u8>> {
        if buffer.native::<Recycled>(&self.desc.name).is_ok() {
            Ok(buffer.native_mut::<Recycled>(&self.desc.name)?.slice_mut())
        } else {
            Ok(buffer.native_mut::<Borrowed>(&self.desc.name)?.slice_mut())
        }
    }

    /// The CUDA device address of a buffer of this device (allocated or borrowed), for other
    /// CUDA code in the process (the device's primary context) or [`Gpu::borrow`].
    pub fn device_address(&self, buffer: &Buffer) -> Result<u64> {
        use cudarc::driver::DevicePtr;
        let (address, _sync) = self.slice(buffer)?.device_ptr(&self.stream);
        Ok(address)
    }

    /// `cuda:N`, as device identifiers name this device.
    fn id(&self) -> String {
        format!("cuda:{}", self.desc.ordinal)
    }
}

/// Memory of dropped buffers that a handle keeps for its next allocations ([`Runtime`]'s
/// `alloc`), at most [`FreeList::KEPT`] of them and an eighth of the device's memory: a
/// labeling that allocates its labels and input anew each call then takes them from here
/// rather than from the driver's pool, which on an H100 took 0.2-0.5 ms for the 268 MB labels of an 8192x8192 image in most calls of
/// `ccl bench end-to-end` (an unlimited release threshold and the pool's reuse flags did not
/// change that). A/B on one H100, two rounds: that allocation phase 0.27-0.37 -> 0.004-0.009 ms
/// (median), the host-to-host call 8.09-8.20 -> 7.90-8.08 ms for TUF, 12.28-12.49 ->
/// 11.96-12.11 for UF; 2048^2 and the pages within noise. Reuse happens on the handle's own
/// stream, after every command queued before the drop, as the pool's stream-ordered reuse
/// does.
struct FreeList {
    slices: Mutex<Vec<CudaSlice<u8>>>,
    /// Bytes kept at most (an eighth of the device's memory; 0: none).
    max_bytes: usize,
}

impl FreeList {
    /// Slices kept at most (the oldest is freed first).
    const KEPT: usize = 4;

    /// A list for a device of `total` bytes.
    fn for_device(total: usize) -> Self {
        Self::keeping(total / 8)
    }

    /// A list that keeps at most `max_bytes`.
    fn keeping(max_bytes: usize) -> Self {
        Self { slices: Mutex::default(), max_bytes }
    }

    /// The smallest kept slice of at least `bytes` bytes and at most twice as many.
    fn take(&self, bytes: usize) -> Option<CudaSlice<u8>> {
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let fits = |s: &CudaSlice<u8>| s.len() >= bytes && s.len() <= 2 * bytes;
        let best = slices.iter().enumerate().filter(|(_, s)| fits(s)).min_by_key(|(_, s)| s.len()).map(|(i, _)| i)?;
        Some(slices.swap_remove(best))
    }

    /// Keeps `slice`, freeing the oldest kept ones while there are [`FreeList::KEPT`] or more
    /// than `max_bytes` with it (a slice larger than that is freed at once).
    fn put(&self, slice: CudaSlice<u8>) {
        if slice.len() > self.max_bytes {
            return;
        }
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept: usize = slices.iter().map(|s| s.len()).sum();
        while !slices.is_empty() && (slices.len() >= Self::KEPT || kept + slice.len() > self.max_bytes) {
            kept -= slices.remove(0).len();
        }
        slices.push(slice);
    }

    /// Frees every kept slice; whether there were any.
    fn clear(&self) -> bool {
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        let any = !slices.is_empty();
        slices.clear();
        any
    }
}

/// Memory allocated by a handle: given back to its [`FreeList`] when the buffer drops.
struct Recycled {
    slice: Option<CudaSlice<u8>>,
    free: Arc<FreeList>,
}

impl Recycled {
    fn slice(&self) -> &CudaSlice<u8> {
        self.slice.as_ref().expect("present until dropped")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slice.as_mut().expect("present until dropped")
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            self.free.put(slice);
        }
    }
}

/// Device memory a caller owns, wrapped as a slice of this backend by [`Gpu::borrow`]. Dropping
/// it waits for the commands of the stream it was borrowed on (they may still use the memory),
/// then forgets the memory without freeing it.
struct Borrowed(Option<CudaSlice<u8>>);

impl Borrowed {
    fn slice(&self) -> &CudaSlice<u8> {
        self.0.as_ref().expect("a borrowed slice is present until dropped")
    }

    fn slice_mut(&mut self) -> &mut CudaSlice<u8> {
        self.0.as_mut().expect("a borrowed slice is present until dropped")
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        if let Some(slice) = self.0.take() {
            // An error here is the context's own (recorded by cudarc, reported by later calls).
            let _ = slice.stream().synchronize();
            // Releases the slice's stream without freeing the memory.
            let _ = slice.leak();
        }
    }
}

/// What the driver says about the memory at a device address.
struct Memory {
    /// Device or managed memory (not host memory mapped for the device).
    on_device: bool,
    /// The CUDA ordinal of the device it was allocated on.
    ordinal: i32,
    /// The allocation that holds the address (start, size in bytes), when the driver says.
    range: Option<(u64, u64)>,
}

/// One pointer attribute of `address`, of type `T` (the type the attribute is documented with).
///
/// # Safety
/// `T` must be the attribute's type (`unsigned int`, `int`, `CUdeviceptr` or `size_t`).
unsafe fn pointer_attribute<T: Copy>(
    address: u64,
    attribute: cudarc::driver::sys::CUpointer_attribute,
    zero: T,
) -> std::result::Result<T, DriverError> {
    let mut value = zero;
    // SAFETY: the driver writes one value of the attribute's type, which `T` is.
    unsafe { cudarc::driver::sys::cuPointerGetAttribute((&mut value as *mut T).cast(), attribute, address) }
        .result()?;
    Ok(value)
}

/// Asks the driver about the memory at `address`; an error when it does not know the address
/// (memory CUDA did not allocate or register). The driver must be initialised.
fn query_memory(address: u64) -> std::result::Result<Memory, DriverError> {
    use cudarc::driver::sys::{CUmemorytype, CUpointer_attribute as A};
    // SAFETY: each attribute is read with its documented type: the memory type and the managed
    // flag as unsigned int, the ordinal as int, the range start as CUdeviceptr, its size size_t.
    unsafe {
        let kind = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0u32)?;
        let managed = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_IS_MANAGED, 0u32)? != 0;
        let ordinal = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, -1i32)?;
        let start = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 0u64);
        let size = pointer_attribute(address, A::CU_POINTER_ATTRIBUTE_RANGE_SIZE, 0usize);
        let on_device = managed
            || kind == CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
            || kind == CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32;
        let range = match (start, size) {
            (Ok(start), Ok(size)) if size > 0 => Some((start, size as u64)),
            _ => None,
        };
        Ok(Memory { on_device, ordinal, range })
    }
}

/// The CUDA ordinal of the device whose memory `address` is (device or managed memory, e.g. a
/// CuPy array's or a PyTorch tensor's data pointer). An address the driver does not know, or
/// host memory, is an [`Error::InvalidMemory`].
pub fn pointer_device(address: u64) -> Result<usize> {
    driver_present()?;
    cudarc::driver::result::init().map_err(driver_error("CUDA", "cuInit"))?;
    let invalid = |reason| Error::InvalidMemory { device: "CUDA".into(), reason };
    match query_memory(address) {
        Ok(memory) if memory.on_device && memory.ordinal >= 0 => Ok(memory.ordinal as usize),
        Ok(_) => Err(invalid(format!("0x{address:x} is host memory, not the memory of a CUDA device"))),
        Err(e) => Err(invalid(format!("0x{address:x} is not CUDA device memory (cuPointerGetAttribute: {e})"))),
    }
}

/// A memory pool of ccl's own on one device, for the stream-ordered allocations of labelings
/// (output and scratch buffers, made and freed by every labeling). Freed memory is kept, up to
/// a quarter of the device's memory (the release threshold: the driver gives back what is kept
/// beyond it at the next synchronisation), and reused only by the stream that freed it, so a
/// labeler's next allocation on its own stream is immediate instead of searching blocks freed
/// on other streams; when the device runs out, the kept memory is released and the allocation
/// retried. The bound leaves the rest to other users of the device, which cannot ask ccl to
/// trim: with it unlimited, one process that labeled 1024^3 volumes with seven CUDA labelers
/// (a stream each) kept so much that NVIDIA's OpenCL on the same GPU then failed to allocate
/// (`ccl bench size --dims 3`, H100). The device's default pool, which other libraries in the
/// process may use, is left alone.
struct Pool(cudarc::driver::sys::CUmemoryPool);

// SAFETY: a CUmemoryPool handle may be used from any thread.
unsafe impl Send for Pool {}
// SAFETY: as above; the driver synchronises pool operations.
unsafe impl Sync for Pool {}

impl Pool {
    /// A pool on `ctx`'s device, or `None` when the device has no memory pools.
    fn new(ctx: &CudaContext) -> std::result::Result<Option<Self>, DriverError> {
        use cudarc::driver::sys::*;
        if ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? == 0 {
            return Ok(None);
        }
        // SAFETY: zero is a valid value of every field of the properties struct (no handle
        // types, no limit, reserved bytes zero).
        let mut props: CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ctx.ordinal() as i32;
        let mut pool = std::ptr::null_mut();
        // SAFETY: `props` describes this device; the driver writes the new pool's handle.
        unsafe { cuMemPoolCreate(&mut pool, &props).result()? };
        let pool = Pool(pool);
        let mut threshold = ctx.total_mem().map_or(u64::MAX, |bytes| bytes as u64 / 4);
        // SAFETY: each attribute takes a pointer to a value of the documented type (u64 for the
        // release threshold, int for the reuse flags).
        unsafe {
            let attr = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
            cuMemPoolSetAttribute(pool.0, attr, (&mut threshold as *mut u64).cast()).result()?;
            for attr in [
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            ] {
                let mut off: i32 = 0;
                cuMemPoolSetAttribute(pool.0, attr, (&mut off as *mut i32).cast()).result()?;
            }
        }
        Ok(Some(pool))
    }

    /// `bytes` bytes on `stream`; on a full device, releases the kept memory (after every
    /// stream of the context is done with it) and tries once more.
    fn alloc(
        &self,
        ctx: &CudaContext,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> std::result::Result<CudaSlice<u8>, DriverError> {
        use cudarc::driver::sys::{cuMemAllocFromPoolAsync, cuMemPoolTrimTo, CUresult};
        ctx.bind_to_thread()?;
        let mut ptr = 0;
        // SAFETY: the pool belongs to this context's device and the stream to this context.
        let mut result = unsafe { cuMemAllocFromPoolAsync(&mut ptr, bytes, self.0, stream.cu_stream()) };
        if result == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            ctx.synchronize()?;
            // SAFETY: as above; trimming only releases memory no allocation holds.
            unsafe { cuMemPoolTrimTo(self.0, 0).result()? };
            result = unsafe { cuMemAllocFromPoolAsync(&mut ptr, bytes, self.0, stream.cu_stream()) };
        }
        result.result()?;
        // SAFETY: `ptr` is a fresh allocation of `bytes` bytes on `stream`; the slice frees it
        // there (cuMemFreeAsync) when dropped, and every kernel writes before it reads.
        Ok(unsafe { stream.upgrade_device_ptr::<u8>(ptr, bytes) })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: the handle is ours; with allocations outstanding the driver defers the
        // release until they are freed.
        unsafe { cudarc::driver::sys::cuMemPoolDestroy(self.0) };
    }
}

impl Gpu for Runtime {
    fn name(&self) -> &str {
        &self.desc.name
    }

    fn dialect(&self) -> Dialect {
        Dialect::Cuda
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn stream_ordered_alloc(&self) -> bool {
        true
    }

    fn new_queue(&self) -> Result<Box<dyn Gpu>> {
        let stream = self.ctx.new_stream().map_err(self.err("cuStreamCreate"))?;
        Ok(Box::new(Self {
            desc: self.desc.clone(),
            ctx: self.ctx.clone(),
            stream,
            events: Arc::default(),
            last_mark: LastMark::default(),
            free: Arc::new(FreeList::keeping(self.free.max_bytes)),
            limits: self.limits,
            pool: self.pool.clone(),
            staging: Mutex::new(None),
            bounce: Mutex::new(None),
            cache: self.cache.clone(),
        }))
    }

    /// Loads the module from the kernel cache when an intact entry for this source, these
    /// defines, this device, driver and NVRTC is there and the driver loads it; otherwise
    /// compiles (a CUBIN, or PTX where NVRTC lacks the device's architecture), loads, and
    /// stores the image (a store that fails is ignored).
    fn build(&self, source: &str, defines: &[Define]) -> Result<Program> {
        // How the kernels read what other threads write (kernels-cu/prelude.cuh): weak loads
        // unless CCL_ATOMIC_LOADS=strict.
        let mut with_loads = defines.to_vec();
        if ccl_backend::strict_loads() {
            with_loads.push(Define::flag("STRICT_LOADS", true));
        }
        let defines = with_loads.as_slice();
        self.cache.build(
            || self.cache_key(source, defines),
            // An image the driver refuses (another driver, a bad entry) is compiled again.
            |image| self.load_image(image).ok(),
            // Stored only once the driver has loaded it.
            |_| {
                let sm_arch = sm_arch_for(self.desc.compute_capability);
                let (image, module) = self.compile_and_load(source, defines, sm_arch.as_deref())?;
                Ok((module, Some(image)))
            },
        )
    }

    fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let module = program.native::<Arc<CudaModule>>(&self.desc.name)?;
        let function: CudaFunction = module.load_function(name).map_err(self.err("cuModuleGetFunction"))?;
        let attribute = |value: std::result::Result<i32, _>| value.map_err(self.err("cuFuncGetAttribute"));
        let limits = KernelLimits {
            max_group_size: attribute(function.max_threads_per_block())?.max(1) as usize,
            local_memory: attribute(function.shared_size_bytes())?.max(0) as usize,
        };
        Ok(Kernel::new(function, name).with_limits(limits))
    }

    /// Memory a dropped buffer of this handle left (of at least `bytes` bytes and at most twice
    /// as many), else a stream-ordered allocation (at least one byte) from ccl's pool where the
    /// device has memory pools; on a full device the kept memory is freed first.
    fn alloc(&self, bytes: usize) -> Result<Buffer> {
        let bytes_asked = bytes.max(1);
        let slice = match self.free.take(bytes_asked) {
            Some(slice) => slice,
            None => self.alloc_new(bytes_asked).or_else(|e| {
                if self.free.clear() {
                    self.alloc_new(bytes_asked)
                } else {
                    Err(e)
                }
            })?,
        };
        Ok(Buffer::new(Recycled { slice: Some(slice), free: self.free.clone() }, bytes))
    }

    /// Checks with the driver that `address` is device (or managed) memory of this device and
    /// that the allocation holding it has `bytes` bytes from there (or, for memory mapped in
    /// pieces, that the last byte is memory of this device too), waits for `ready_on` on the
    /// host (`cuStreamSynchronize`; 0 and 1 are the legacy default stream, 2 the per-thread
    /// one), and wraps the memory as a slice on this handle's stream that is never freed.
    unsafe fn borrow(&self, address: u64, bytes: usize, ready_on: Option<u64>) -> Result<Buffer> {
        // Raw driver calls below: this context (the device's primary one, as CuPy's and
        // PyTorch's) must be current.
        self.ctx.bind_to_thread().map_err(self.err("cuCtxSetCurrent"))?;
        let this = self.id();
        let invalid = |reason| Error::InvalidMemory { device: format!("{} ({this})", self.desc.name), reason };
        let memory = query_memory(address).map_err(|e| {
            invalid(format!("0x{address:x} is not memory of {this}: the driver does not know it ({e})"))
        })?;
        if !memory.on_device {
            return Err(invalid(format!("0x{address:x} is not memory of {this}: it is host memory")));
        }
        if memory.ordinal != self.desc.ordinal as i32 {
            return Err(invalid(format!("0x{address:x} is not memory of {this}: it is on cuda:{}", memory.ordinal)));
        }
        if let Some((start, size)) = memory.range {
            let end = address.checked_add(bytes as u64);
            if end.is_none_or(|end| end > start.saturating_add(size)) {
                // Memory mapped in pieces (cuMemMap, as PyTorch's expandable segments) spans
                // several allocations: then the last byte must be memory of this device too.
                let last = end.filter(|_| bytes > 0).and_then(|end| query_memory(end - 1).ok());
                if !last.is_some_and(|m| m.on_device && m.ordinal == memory.ordinal) {
                    return Err(invalid(format!(
                        "{bytes} bytes at 0x{address:x} run past the end of their allocation ({size} bytes at \
                         0x{start:x})"
                    )));
                }
            }
        }
        if let Some(stream) = ready_on {
            let stream = stream as usize as cudarc::driver::sys::CUstream;
            // SAFETY: the caller names a stream of this device's context (or a special handle:
            // 0 or 1 the legacy default stream, 2 the per-thread one); synchronising only waits.
            unsafe { cudarc::driver::sys::cuStreamSynchronize(stream) }
                .result()
                .map_err(self.err("cuStreamSynchronize (the caller's stream)"))?;
        }
        // SAFETY: the memory is device memory of this context, `bytes` long (checked above as
        // far as the driver says, and by the caller's contract); `Borrowed` never frees it.
        let slice = unsafe { self.stream.upgrade_device_ptr::<u8>(address, bytes) };
        Ok(Buffer::new(Borrowed(Some(slice)), bytes))
    }

    /// Page-locked host memory (`cuMemHostAlloc`, cached, not write-combined, so the host reads
    /// it fast too): copies to and from it are direct DMA.
    fn alloc_host(&self, bytes: usize) -> Result<HostBuffer> {
        // SAFETY: the memory is uninitialised; HostBuffer's users write before they read.
        let mut pinned =
            unsafe { self.ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), 0) }.map_err(self.err("cuMemHostAlloc"))?;
        let ptr = pinned.as_mut_ptr().map_err(self.err("cuEventSynchronize"))?;
        // SAFETY: page-aligned, `bytes` long, owned by `pinned` (which frees it when dropped).
        Ok(unsafe { HostBuffer::from_raw(ptr, bytes, pinned) })
    }

    /// Large copies from pageable memory go through this handle's staging buffers
    /// ([`staging`]); others straight through the driver. Waits for the copy.
    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        self.last_mark.command();
        assert!(data.len() <= buffer.len(), "write of {} bytes into a {}-byte buffer", data.len(), buffer.len());
        if data.is_empty() {
            return Ok(());
        }
        // The pointer query and the staged path are raw driver calls: this context must be current.
        self.ctx.bind_to_thread().map_err(self.err("cuCtxSetCurrent"))?;
        let slice = self.slice_mut(buffer)?;
        if data.len() >= staging::MIN_STAGED && !staging::is_pinned(data.as_ptr()) {
            use cudarc::driver::DevicePtrMut;
            let (dst, _sync) = slice.device_ptr_mut(&self.stream);
            self.with_staging(|s| s.write(&self.stream, dst, data))?;
        } else {
            let mut view = slice.slice_mut(0..data.len());
            self.stream.memcpy_htod(data, &mut view).map_err(self.err("cuMemcpyHtoDAsync"))?;
        }
        self.finish()
    }

    /// Large copies into pageable memory go through this handle's staging buffers
    /// ([`staging`]); others straight through the driver. Waits for the copy.
    fn read(&self, buffer: &Buffer, out: &mut [u8]) -> Result<()> {
        self.last_mark.command();
        assert!(out.len() <= buffer.len(), "read of {} bytes from a {}-byte buffer", out.len(), buffer.len());
        if out.is_empty() {
            return Ok(());
        }
        // The pointer query and the staged path are raw driver calls: this context must be current.
        self.ctx.bind_to_thread().map_err(self.err("cuCtxSetCurrent"))?;
        let slice = self.slice(buffer)?;
        if out.len() <= staging::BOUNCE {
            use cudarc::driver::DevicePtr;
            let (src, _sync) = slice.device_ptr(&self.stream);
            let mut guard = self.bounce.lock().unwrap_or_else(|p| p.into_inner());
            if guard.is_none() {
                *guard = Some(staging::Bounce::new(&self.ctx).map_err(self.err("cuMemHostAlloc"))?);
            }
            let bounce = guard.as_mut().expect("made above");
            return bounce.read(&self.stream, src, out).map_err(self.err("cuMemcpyDtoHAsync (bounce)"));
        }
        if out.len() >= staging::MIN_STAGED && !staging::is_pinned(out.as_ptr()) {
            use cudarc::driver::DevicePtr;
            let (src, _sync) = slice.device_ptr(&self.stream);
            self.with_staging(|s| s.read(&self.stream, src, out))?;
        } else {
            let view = slice.slice(0..out.len());
            self.stream.memcpy_dtoh(&view, out).map_err(self.err("cuMemcpyDtoHAsync"))?;
        }
        self.finish()
    }

    fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        self.last_mark.command();
        let slice = self.slice_mut(buffer)?;
        self.stream.memset_zeros(slice).map_err(self.err("cuMemsetD8Async"))
    }

    /// A 2D range with more groups along y than the device allows is folded into y and z
    /// ([`LaunchRange::fold`]); the CUDA prelude's `GROUP_ID_Y` unfolds it.
    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        self.last_mark.command();
        let grid = self.grid(kernel, range)?;
        let cfg = LaunchConfig {
            grid_dim: (grid[0] as u32, grid[1] as u32, grid[2] as u32),
            block_dim: (range.local[0] as u32, range.local[1] as u32, range.local[2] as u32),
            shared_mem_bytes: 0,
        };
        let function = kernel.native_mut::<CudaFunction>(&self.desc.name)?;
        let mut builder = self.stream.launch_builder(function);
        for arg in args {
            match arg {
                Arg::Buffer(b) => builder.arg(self.slice(b)?),
                Arg::U32(v) => builder.arg(v),
                Arg::U64(v) => builder.arg(v),
                Arg::I32(v) => builder.arg(v),
                Arg::F32(v) => builder.arg(v),
                Arg::F64(v) => builder.arg(v),
            };
        }
        // SAFETY: the arguments match the kernels' pointer and scalar parameters, and every
        // kernel checks its indices against the sizes it receives.
        unsafe { builder.launch(cfg) }.map_err(self.err("cuLaunchKernel"))?;
        Ok(())
    }

    fn overlaps_launches(&self) -> bool {
        self.desc.compute_capability.0 >= 9
    }

    /// On compute capability 9.0 and later, `cuLaunchKernelEx` with programmatic stream
    /// serialization allowed: the kernel may start once every group of the previous kernel has
    /// started (or run `LET_NEXT_KERNEL_START()`), and its `WAIT_FOR_PREVIOUS_KERNEL()`
    /// (`griddepcontrol.wait`) waits for that kernel to finish and its writes to be visible.
    fn launch_overlapping(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        use cudarc::driver::sys;
        if self.desc.compute_capability.0 < 9 {
            return self.launch(kernel, range, args);
        }
        self.last_mark.command();
        let grid = self.grid(kernel, range)?;
        // Each argument in a slot of its own, its value at the slot's start (little-endian).
        let mut slots = Vec::with_capacity(args.len());
        for arg in args {
            slots.push(match arg {
                Arg::Buffer(b) => {
                    use cudarc::driver::DevicePtr;
                    self.slice(b)?.device_ptr(&self.stream).0
                }
                Arg::U32(v) => u64::from(*v),
                Arg::U64(v) => *v,
                Arg::I32(v) => u64::from(*v as u32),
                Arg::F32(v) => u64::from(v.to_bits()),
                Arg::F64(v) => v.to_bits(),
            });
        }
        let mut params: Vec<*mut std::ffi::c_void> = slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
        // SAFETY: an all-zero launch attribute is valid; the one field set is the value's.
        let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attribute.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: grid[0] as u32,
            gridDimY: grid[1] as u32,
            gridDimZ: grid[2] as u32,
            blockDimX: range.local[0] as u32,
            blockDimY: range.local[1] as u32,
            blockDimZ: range.local[2] as u32,
            sharedMemBytes: 0,
            hStream: self.stream.cu_stream(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        let function = kernel.native_mut::<CudaFunction>(&self.desc.name)?.cu_function();
        self.ctx.bind_to_thread().map_err(self.err("cuCtxSetCurrent"))?;
        // SAFETY: `params` points at one slot per kernel parameter, each holding the value of
        // the argument (device pointers, 32- or 64-bit scalars at the slot's start), alive until
        // the call returns (the driver copies them); the kernels check their indices against the
        // sizes they receive.
        unsafe { sys::cuLaunchKernelEx(&config, function, params.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
            .map_err(self.err("cuLaunchKernelEx"))
    }

    /// Records an event of this handle's pool (a new one only when every pooled event is held by
    /// a mark): creating an event at every mark costs host time that small arrays feel.
    fn mark(&self) -> Result<Mark> {
        let mut last = self.last_mark.event.lock().unwrap_or_else(|e| e.into_inner());
        let commands = self.last_mark.commands_since.load(Ordering::Relaxed);
        if let (false, Some(event)) = (commands, last.as_ref()) {
            return Ok(Mark::new(event.clone()));
        }
        let pooled = self.events.events.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let event = match pooled {
            Some(event) => event,
            None => self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(self.err("cuEventCreate"))?,
        };
        let pooled = Arc::new(PooledEvent { event: Some(event), pool: self.events.clone() });
        pooled.event().record(&self.stream).map_err(self.err("cuEventRecord"))?;
        // Only a recorded event stands for later marks (a failed record leaves the flag set).
        self.last_mark.commands_since.store(false, Ordering::Relaxed);
        *last = Some(pooled.clone());
        Ok(Mark::new(pooled))
    }

    fn elapsed_ms(&self, from: &Mark, to: &Mark) -> Result<f64> {
        let name = &self.desc.name;
        let (from, to) = (from.native::<Arc<PooledEvent>>(name)?, to.native::<Arc<PooledEvent>>(name)?);
        if Arc::ptr_eq(from, to) {
            return Ok(0.0);
        }
        from.event().elapsed_ms(to.event()).map(f64::from).map_err(self.err("cuEventElapsedTime"))
    }

    /// The next mark records an event of its own (a labeling's first mark never stands for an
    /// earlier one).
    fn reset_marks(&self) {
        self.last_mark.command();
    }

    fn finish(&self) -> Result<()> {
        self.stream.synchronize().map_err(self.err("cuStreamSynchronize"))
    }
}
