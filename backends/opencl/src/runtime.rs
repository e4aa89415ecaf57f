//! [`Runtime`]: one OpenCL device and a command queue of its own, implementing
//! [`ccl_backend::Gpu`].

use std::ptr;
use std::sync::{Arc, Mutex};

use ccl_backend::{Arg, Buffer, Define, Dialect, Error, Gpu, Kernel, LaunchRange, Limits, Mark, Program, Result};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_mem, cl_ulong, CL_BLOCKING};

use crate::discovery::{describe, DeviceDesc};
use crate::{call_error, driver_lock};

/// The parts of an opened device that every queue shares: buffers and programs belong to the
/// context, so any queue of it may use them.
struct Shared {
    desc: DeviceDesc,
    name: String,
    device: Device,
    context: Context,
    limits: Limits,
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
        let limits = Limits { max_group_size, ..Limits::UNBOUNDED };
        Self::with_queue(Arc::new(Shared { desc, name, device: dev, context, limits }))
    }

    fn with_queue(shared: Arc<Shared>) -> Result<Self> {
        #[allow(deprecated)]
        // clCreateCommandQueue: the OpenCL 1.2 entry point, also on 2.0+ drivers
        let queue = CommandQueue::create_default(&shared.context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| call_error(&shared.name, "clCreateCommandQueue", e))?;
        Ok(Self { shared, queue, events: Mutex::new(Vec::new()) })
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
        Ok(Box::new(Self::with_queue(self.shared.clone())?))
    }

    fn build(&self, source: &str, defines: &[Define]) -> Result<Program> {
        let _serialised = driver_lock();
        let options: Vec<String> = defines.iter().map(|d| d.option(Dialect::OpenCl)).collect();
        let device = self.shared.device.id();
        let mut program = ClProgram::create_from_source(&self.shared.context, source)
            .map_err(self.err("clCreateProgramWithSource"))?;
        if let Err(e) = program.build(&[device], &options.join(" ")) {
            let log = program.get_build_log(device).unwrap_or_default();
            return Err(if log.trim().is_empty() {
                call_error(&self.shared.name, "clBuildProgram", e)
            } else {
                Error::Build { device: self.shared.name.clone(), log }
            });
        }
        Ok(Program::new(program))
    }

    fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let program = program.native::<ClProgram>(self.name())?;
        let kernel = ClKernel::create(program, name).map_err(self.err("clCreateKernel"))?;
        Ok(Kernel::new(kernel, name))
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer> {
        // SAFETY: no host pointer is passed, so OpenCL owns the storage.
        let inner =
            unsafe { ClBuffer::<u8>::create(&self.shared.context, CL_MEM_READ_WRITE, bytes.max(1), ptr::null_mut()) }
                .map_err(self.err("clCreateBuffer"))?;
        Ok(Buffer::new(inner, bytes))
    }

    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> Result<()> {
        assert!(data.len() <= buffer.len(), "write of {} bytes into a {}-byte buffer", data.len(), buffer.len());
        if data.is_empty() {
            return Ok(());
        }
        let inner = buffer.native_mut::<ClBuffer<u8>>(&self.shared.name)?;
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
        let inner = buffer.native::<ClBuffer<u8>>(&self.shared.name)?;
        // SAFETY: blocking read of `out.len()` bytes, within the buffer (checked above).
        unsafe { self.queue.enqueue_read_buffer(inner, CL_BLOCKING, 0, out, &[]) }
            .map_err(self.err("clEnqueueReadBuffer"))?;
        Ok(())
    }

    fn zero(&self, buffer: &mut Buffer) -> Result<()> {
        let len = buffer.len().max(1);
        let inner = buffer.native_mut::<ClBuffer<u8>>(&self.shared.name)?;
        // SAFETY: the fill covers exactly the buffer.
        let ev = unsafe { self.queue.enqueue_fill_buffer(inner, &[0u8], 0, len, &[]) }
            .map_err(self.err("clEnqueueFillBuffer"))?;
        self.record(ev);
        Ok(())
    }

    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> Result<()> {
        let device = self.shared.name.as_str();
        let k = kernel.native_mut::<ClKernel>(device)?;
        for (i, arg) in args.iter().enumerate() {
            let index = i as u32;
            // SAFETY: each argument is a cl_mem handle or a scalar of the width the kernel
            // declares (uint, ulong, int, float); a mismatch is reported by the driver.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) => {
                        let mem: cl_mem = b.native::<ClBuffer<u8>>(device)?.get();
                        k.set_arg(index, &mem)
                    }
                    Arg::U32(v) => k.set_arg(index, v),
                    Arg::U64(v) => k.set_arg(index, &(*v as cl_ulong)),
                    Arg::I32(v) => k.set_arg(index, v),
                    Arg::F32(v) => k.set_arg(index, v),
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
