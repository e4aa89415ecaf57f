//! [`Runtime`]: one CUDA device (its primary context) and a stream of its own; its
//! [`ccl_backend::Gpu`] implementation is in the child module `gpu`.

mod gpu;

use std::sync::{Arc, Mutex};

use ccl_backend::{Buffer, CacheKey, Define, Dialect, Error, Kernel, KernelCache, LaunchRange, Limits, Result};
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, DriverError};
use cudarc::nvrtc::sys::nvrtcResult;

use crate::discovery::{devices, nvrtc_present, DeviceDesc};
use crate::events::{EventPool, LastMark};
use crate::memory::{Borrowed, FreeList, Pool, Recycled};
use crate::nvrtc::{
    arch_for, compile_ptx, cubin_options, image_to_module_source, nvrtc_cubin, nvrtc_version, sm_arch_for, ELF_MAGIC,
};
use crate::{driver_error, staging};

/// One CUDA device (its primary context) and a stream of this handle's own.
///
/// [`Gpu::new_queue`] makes another handle on the same context with its own stream: buffers and
/// modules are shared, commands and timing events are not. Every copy waits for its stream, so
/// a buffer written through one handle may be used through another.
///
/// [`Gpu::new_queue`]: ccl_backend::Gpu::new_queue
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
    ///
    /// [`Gpu::build`]: ccl_backend::Gpu::build
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
        copy: impl FnOnce(&mut staging::Staging) -> std::result::Result<(), staging::CopyFailure>,
    ) -> Result<()> {
        let mut guard = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(staging::Staging::new(&self.ctx).map_err(self.err("cuMemHostAlloc"))?);
        }
        match copy(guard.as_mut().expect("made above")) {
            Ok(()) => Ok(()),
            Err(staging::CopyFailure::Driver(e)) => Err(self.err("cuMemcpyAsync (staged)")(e)),
            Err(staging::CopyFailure::Sink(e)) => Err(e),
        }
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
    ///
    /// [`Gpu::borrow`]: ccl_backend::Gpu::borrow
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
    ///
    /// [`Gpu::borrow`]: ccl_backend::Gpu::borrow
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
