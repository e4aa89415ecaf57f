//! `impl Gpu for Runtime`: compiling and loading kernels, allocating, borrowing and copying
//! memory, launching, and timing with marks on the handle's stream.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ccl_backend::{
    Arg, Buffer, Define, Dialect, Error, Gpu, HostBuffer, Kernel, KernelLimits, LaunchRange, Limits, Mark, Program,
    Result,
};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};

use super::Runtime;
use crate::events::{LastMark, PooledEvent};
use crate::memory::{query_memory, Borrowed, FreeList, Recycled};
use crate::nvrtc::sm_arch_for;
use crate::staging;

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
            self.with_staging(|s| Ok(s.write(&self.stream, dst, data)?))?;
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

    /// Large reads go through this handle's staging buffers chunk by chunk, the device filling
    /// one while `sink` has the other; smaller ones are read whole first.
    fn read_pieces(&self, buffer: &Buffer, len: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        assert!(len <= buffer.len(), "read of {len} bytes from a {}-byte buffer", buffer.len());
        if len < staging::MIN_STAGED {
            return ccl_backend::read_whole_in_pieces(self, buffer, len, sink);
        }
        self.last_mark.command();
        // The staged path is raw driver calls: this context must be current.
        self.ctx.bind_to_thread().map_err(self.err("cuCtxSetCurrent"))?;
        let slice = self.slice(buffer)?;
        use cudarc::driver::DevicePtr;
        let (src, _sync) = slice.device_ptr(&self.stream);
        self.with_staging(|s| s.read_with(&self.stream, src, len, sink))?;
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
