//! A recording device: it implements the device abstraction without any GPU, checks every call
//! against the kernel sources (kernel names, parameter lists, launch ranges within the device's
//! limits) and records it. Schedules run on it unchanged, so their launches, grids and
//! arguments can be tested anywhere, and [`record`] shows what an algorithm launches.
//!
//! Reads return zeros (so iterative algorithms stop after one iteration) and labels are not
//! computed: this checks the host side only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ccl_backend::{Arg, Buffer, Define, DefineValue, Dialect, Error, Gpu, Kernel, LaunchRange, Limits, Mark, Program};

use crate::{Algorithm, Connectivity, Result, Shape, Timings};

/// The kind of a kernel parameter or argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A global pointer.
    Buffer,
    /// 32-bit unsigned (`uint`, and `label_t`, `index_t` in a 32-bit build).
    U32,
    /// 64-bit unsigned (`ulong`, and `label_t`, `index_t` with `LABEL_BITS=64`).
    U64,
    /// `int`.
    I32,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

/// An argument as recorded: a buffer by its number and size, or a scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecordedArg {
    /// Buffer number `id` (in allocation order) of `bytes` bytes.
    Buffer {
        /// Allocation number.
        id: usize,
        /// Size in bytes.
        bytes: usize,
    },
    /// `uint`.
    U32(u32),
    /// `ulong`.
    U64(u64),
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
}

/// One recorded device call.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// A program was compiled with these defines.
    Build(Vec<String>),
    /// Buffer `id` of `bytes` bytes was allocated.
    Alloc {
        /// Allocation number.
        id: usize,
        /// Size in bytes.
        bytes: usize,
    },
    /// Host bytes were written to buffer `id`.
    Write {
        /// The buffer.
        id: usize,
    },
    /// Buffer `id` was read back.
    Read {
        /// The buffer.
        id: usize,
    },
    /// Buffer `id` was zeroed.
    Zero {
        /// The buffer.
        id: usize,
    },
    /// A kernel launch.
    Launch {
        /// The kernel.
        kernel: String,
        /// Its range.
        range: LaunchRange,
        /// The grid of work-groups the device runs (after folding).
        grid: [u64; 3],
        /// Its arguments.
        args: Vec<RecordedArg>,
    },
}

struct RecordingBuffer {
    id: usize,
}

struct RecordingProgram {
    kernels: HashMap<String, Vec<ParamKind>>,
}

struct RecordingKernel {
    params: Vec<ParamKind>,
}

/// A device that records and checks calls instead of running them.
pub struct RecordingGpu {
    name: String,
    limits: Limits,
    calls: Arc<Mutex<Vec<Call>>>,
    next_buffer: Arc<Mutex<usize>>,
}

impl RecordingGpu {
    /// A recording device with `limits` (e.g. CUDA's grid limits, to check folding).
    pub fn new(limits: Limits) -> Self {
        Self {
            name: "recording device".into(),
            limits,
            calls: Arc::new(Mutex::new(Vec::new())),
            next_buffer: Arc::new(Mutex::new(0)),
        }
    }

    /// The calls recorded so far (by this handle and those from [`Gpu::new_queue`]).
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn push(&self, call: Call) {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).push(call);
    }

    fn id(&self, buffer: &Buffer) -> ccl_backend::Result<usize> {
        Ok(buffer.native::<RecordingBuffer>(&self.name)?.id)
    }

    fn invalid(&self, kernel: &str, reason: String) -> Error {
        Error::InvalidLaunch { device: self.name.clone(), kernel: kernel.to_string(), reason }
    }
}

/// The kernels declared in a source (`KERNEL [REQUIRED_GROUP_SIZE(...)] void NAME(PARAMS)`), as
/// (NAME, PARAMS) pairs, PARAMS the text between the parentheses.
pub fn kernel_declarations(source: &str) -> impl Iterator<Item = (&str, &str)> + '_ {
    source.match_indices("KERNEL ").filter_map(|(start, _)| {
        let mut rest = &source[start + "KERNEL ".len()..];
        if let Some(attribute) = rest.strip_prefix("REQUIRED_GROUP_SIZE(") {
            rest = attribute[attribute.find(')')? + 1..].trim_start();
        }
        let rest = rest.strip_prefix("void ")?;
        let (open, close) = (rest.find('(')?, rest.find(')')?);
        Some((rest[..open].trim(), &rest[open + 1..close]))
    })
}

/// The kernels of an OpenCL-dialect source and their parameter kinds (`label_t` and `index_t`
/// are 64-bit when the defines say `LABEL_BITS=64`).
fn kernel_signatures(source: &str, defines: &[Define]) -> HashMap<String, Vec<ParamKind>> {
    let wide = defines.iter().any(|d| d.name == "LABEL_BITS" && d.value == DefineValue::Int(64));
    let mut out = HashMap::new();
    for (name, params) in kernel_declarations(source) {
        let params = params
            .split(',')
            .map(|p| {
                let p = p.trim();
                if p.contains('*') {
                    return ParamKind::Buffer;
                }
                let tokens: Vec<&str> = p.split_whitespace().filter(|t| *t != "const").collect();
                match tokens.first().copied().unwrap_or("") {
                    "ulong" => ParamKind::U64,
                    "label_t" | "index_t" if wide => ParamKind::U64,
                    "int" => ParamKind::I32,
                    "float" => ParamKind::F32,
                    "double" => ParamKind::F64,
                    _ => ParamKind::U32,
                }
            })
            .collect();
        out.insert(name.to_string(), params);
    }
    out
}

impl Gpu for RecordingGpu {
    fn name(&self) -> &str {
        &self.name
    }

    fn dialect(&self) -> Dialect {
        Dialect::OpenCl
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn stream_ordered_alloc(&self) -> bool {
        true
    }

    fn new_queue(&self) -> ccl_backend::Result<Box<dyn Gpu>> {
        Ok(Box::new(Self {
            name: self.name.clone(),
            limits: self.limits,
            calls: self.calls.clone(),
            next_buffer: self.next_buffer.clone(),
        }))
    }

    fn build(&self, source: &str, defines: &[Define]) -> ccl_backend::Result<Program> {
        self.push(Call::Build(defines.iter().map(|d| d.option(Dialect::OpenCl)).collect()));
        Ok(Program::new(RecordingProgram { kernels: kernel_signatures(source, defines) }))
    }

    fn kernel(&self, program: &Program, name: &str) -> ccl_backend::Result<Kernel> {
        let program = program.native::<RecordingProgram>(&self.name)?;
        let params = program.kernels.get(name).cloned().ok_or_else(|| Error::Call {
            device: self.name.clone(),
            message: format!("no kernel '{name}' in the program"),
        })?;
        Ok(Kernel::new(RecordingKernel { params }, name))
    }

    fn alloc(&self, bytes: usize) -> ccl_backend::Result<Buffer> {
        let mut next = self.next_buffer.lock().unwrap_or_else(|p| p.into_inner());
        let id = *next;
        *next += 1;
        self.push(Call::Alloc { id, bytes });
        Ok(Buffer::new(RecordingBuffer { id }, bytes))
    }

    fn write(&self, buffer: &mut Buffer, data: &[u8]) -> ccl_backend::Result<()> {
        assert!(data.len() <= buffer.len(), "write past the end of a buffer");
        self.push(Call::Write { id: self.id(buffer)? });
        Ok(())
    }

    fn read(&self, buffer: &Buffer, out: &mut [u8]) -> ccl_backend::Result<()> {
        assert!(out.len() <= buffer.len(), "read past the end of a buffer");
        out.fill(0);
        self.push(Call::Read { id: self.id(buffer)? });
        Ok(())
    }

    fn zero(&self, buffer: &mut Buffer) -> ccl_backend::Result<()> {
        self.push(Call::Zero { id: self.id(buffer)? });
        Ok(())
    }

    /// Checks the range (whole groups, a group size the device takes, a grid within its limits
    /// once folded) and the arguments against the kernel's parameter list.
    fn launch(&self, kernel: &mut Kernel, range: &LaunchRange, args: &[Arg]) -> ccl_backend::Result<()> {
        let name = kernel.name().to_string();
        let params = kernel.native_mut::<RecordingKernel>(&self.name)?.params.clone();
        if (0..3).any(|d| range.local[d] == 0 || !range.global[d].is_multiple_of(range.local[d])) {
            return Err(
                self.invalid(&name, format!("global {:?} is not whole groups of {:?}", range.global, range.local))
            );
        }
        kernel.check_group(&self.name, range.local, &self.limits)?;
        let group: usize = range.local.iter().product();
        if group > self.limits.max_group_size {
            return Err(
                self.invalid(&name, format!("{group} work-items per group, more than {}", self.limits.max_group_size))
            );
        }
        let grid = range.fold(&self.limits).map_err(|reason| self.invalid(&name, reason))?;
        if args.len() != params.len() {
            return Err(self.invalid(&name, format!("{} arguments for {} parameters", args.len(), params.len())));
        }
        let mut recorded = Vec::with_capacity(args.len());
        for (i, (arg, param)) in args.iter().zip(&params).enumerate() {
            let (kind, value) = match arg {
                Arg::Buffer(b) => (ParamKind::Buffer, RecordedArg::Buffer { id: self.id(b)?, bytes: b.len() }),
                Arg::U32(v) => (ParamKind::U32, RecordedArg::U32(*v)),
                Arg::U64(v) => (ParamKind::U64, RecordedArg::U64(*v)),
                Arg::I32(v) => (ParamKind::I32, RecordedArg::I32(*v)),
                Arg::F32(v) => (ParamKind::F32, RecordedArg::F32(*v)),
                Arg::F64(v) => (ParamKind::F64, RecordedArg::F64(*v)),
            };
            if kind != *param {
                return Err(self.invalid(&name, format!("argument {i} is {kind:?}, the parameter is {param:?}")));
            }
            recorded.push(value);
        }
        self.push(Call::Launch { kernel: name, range: *range, grid, args: recorded });
        Ok(())
    }

    fn mark(&self) -> ccl_backend::Result<Mark> {
        Ok(Mark::new(()))
    }

    fn elapsed_ms(&self, _: &Mark, _: &Mark) -> ccl_backend::Result<f64> {
        Ok(0.0)
    }

    fn finish(&self) -> ccl_backend::Result<()> {
        Ok(())
    }
}

/// What one labeling launched on a recording device.
#[derive(Clone, Debug)]
pub struct Recording {
    /// Every call after the kernels were built, in order: the allocation of input and labels,
    /// the upload, then the schedule's calls.
    pub calls: Vec<Call>,
    /// The phases the schedule ended (all of 0 ms) and its iteration count.
    pub timings: Timings,
}

impl Recording {
    /// The launches, in order.
    pub fn launches(&self) -> impl Iterator<Item = (&str, &LaunchRange, &[RecordedArg])> {
        self.calls.iter().filter_map(|c| match c {
            Call::Launch { kernel, range, args, .. } => Some((kernel.as_str(), range, args.as_slice())),
            _ => None,
        })
    }
}

/// Builds `algorithm`'s kernels for `connectivity` on a recording device with `limits` and
/// runs its schedule once over an image of `shape`, checking every call.
pub fn record(algorithm: Algorithm, connectivity: Connectivity, shape: Shape, limits: Limits) -> Result<Recording> {
    record_kind(algorithm, connectivity, shape, crate::ImageKind::Binary, limits)
}

/// [`record`] of an image of `kind` (a multi-label one: the kernels' `MULTILABEL` build; an
/// algorithm that does not label it refuses, as the labelers do).
pub fn record_kind(
    algorithm: Algorithm,
    connectivity: Connectivity,
    shape: Shape,
    kind: crate::ImageKind,
    limits: Limits,
) -> Result<Recording> {
    algorithm.check(connectivity)?;
    algorithm.check_kind(kind, connectivity)?;
    let gpu = RecordingGpu::new(limits);
    let info = algorithm.info();
    let mut defines = info.defines(connectivity, gpu.limits());
    defines.extend(kind.defines());
    let program = gpu.build(info.kernel().source(Dialect::OpenCl), &defines)?;
    let mut schedule = (info.schedule)(&gpu, &program, connectivity, kind)?;
    let first = gpu.calls().len();
    let mut input = gpu.alloc(shape.len() * kind.bytes())?;
    gpu.write(&mut input, &[])?;
    let (_, timings) = crate::schedule::label(&gpu, schedule.as_mut(), &input, shape, true)?;
    Ok(Recording { calls: gpu.calls().split_off(first), timings })
}

/// [`record`] of a labeling straight into consecutive labels
/// ([`crate::Labeler::run`] with consecutive numbering: the schedule's own renumbering where it has
/// one, else its labeling and the relabeling stage).
pub fn record_consecutive(
    algorithm: Algorithm,
    connectivity: Connectivity,
    shape: Shape,
    limits: Limits,
) -> Result<Recording> {
    Ok(record_ranked(algorithm, connectivity, shape, None, limits)?.expect("a labeling of one image"))
}

/// [`record`] of a batch of `items` images stacked along the rows of `shape` labeled as one
/// ([`crate::GpuLabeler::label_stacked_into`]); `None` where the schedule labels no such batch.
pub fn record_stacked(
    algorithm: Algorithm,
    connectivity: Connectivity,
    shape: Shape,
    items: usize,
    limits: Limits,
) -> Result<Option<Recording>> {
    record_ranked(algorithm, connectivity, shape, Some(items), limits)
}

/// [`record_consecutive`], or with `items` [`record_stacked`].
fn record_ranked(
    algorithm: Algorithm,
    connectivity: Connectivity,
    shape: Shape,
    items: Option<usize>,
    limits: Limits,
) -> Result<Option<Recording>> {
    algorithm.check(connectivity)?;
    let gpu = RecordingGpu::new(limits);
    let info = algorithm.info();
    let program = gpu.build(info.kernel().source(Dialect::OpenCl), &info.defines(connectivity, gpu.limits()))?;
    let mut schedule = (info.schedule)(&gpu, &program, connectivity, crate::ImageKind::Binary)?;
    let relabel_program = gpu.build(
        crate::schedule::relabel::KERNEL.source(Dialect::OpenCl),
        &crate::schedule::relabel::defines(gpu.limits()),
    )?;
    let mut relabel = crate::schedule::relabel::Relabel::build(&gpu, &relabel_program)?;
    let first = gpu.calls().len();
    let mut input = gpu.alloc(shape.len())?;
    gpu.write(&mut input, &[])?;
    let labels = gpu.alloc(shape.len() * crate::schedule::LABEL_BYTES)?;
    let mut recorder = crate::gpu::PhaseRecorder::start(&gpu)?;
    let job = crate::schedule::Job { input: &input, labels: &labels, shape };
    let convention = algorithm.raw_labels();
    let iterations = match items {
        None => schedule.run_consecutive(&gpu, &job, &mut relabel, convention, &mut recorder)?.0,
        Some(items) => {
            if schedule.run_items_ranked(&gpu, &job, items, &mut relabel, convention, &mut recorder)?.is_none() {
                return Ok(None);
            }
            None
        }
    };
    let timings = Timings { phases: recorder.finish()?, iterations };
    Ok(Some(Recording { calls: gpu.calls().split_off(first), timings }))
}
