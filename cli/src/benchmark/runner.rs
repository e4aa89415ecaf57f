//! Runs the measurements: every device x input x algorithm, warm-up first, then `runs` timed
//! runs with the input already on the device (TPDS 2020 Sec. 6.2).

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::inputs::Input;
use super::record::{machine_description, Record, RecordWriter};
use super::report::Mode;
use super::Timing;
use ccl::{
    run_host, Algorithm, AnyLabeler, BackendKind, Connectivity, Device, DeviceId, DeviceImage, Error, Labeler, Options,
    Phase, Result, Stats, Timings,
};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The experiment (only names the records; the measurement is the same).
    pub mode: Mode,
    /// Algorithms to run on every GPU / OpenCL device.
    pub algorithms: Vec<Algorithm>,
    /// Devices; `cpu` runs the CPU reference once per input (as algorithm `reference`).
    pub devices: Vec<DeviceId>,
    /// Connectivity; algorithms that do not support it are skipped.
    pub connectivity: Connectivity,
    /// Timed runs per input (the minimum is reported).
    pub runs: u32,
    /// Untimed runs per input before the timed ones.
    pub warmup: u32,
    /// Show a progress bar on stderr (hidden when stderr is not a terminal).
    pub progress: bool,
    /// Also time each algorithm into consecutive labels ([`Labeler::run`] with consecutive labels,
    /// recorded as algorithm `NAME+consecutive`: the labels that statistics describe), and into
    /// consecutive labels followed by the component statistics on the device
    /// ([`Labeler::run`] with [`Stats::Components`], `NAME+stats`); device-resident modes only.
    pub stats: bool,
    /// How the device-resident modes time a run (end-to-end runs use the host clock).
    pub timing: Timing,
}

impl BenchOptions {
    /// The algorithms that run on GPU and OpenCL devices: those that support the connectivity.
    pub fn runnable_algorithms(&self) -> Vec<Algorithm> {
        self.algorithms.iter().copied().filter(|a| a.supports(self.connectivity)).collect()
    }

    /// Checks that the options describe a measurement: at least one device and run, and at
    /// least one algorithm for the connectivity when a GPU or OpenCL device is listed.
    pub fn validate(&self) -> Result<()> {
        let bad = |name: &str, reason: String| Err(Error::InvalidParameter { name: name.into(), reason });
        if self.devices.is_empty() {
            return bad("devices", "no device to run on".into());
        }
        if self.runs == 0 {
            return bad("runs", "at least one timed run is needed".into());
        }
        if self.stats && self.mode == Mode::EndToEnd {
            return bad("stats", "applies to the device-resident modes (end-to-end labels only)".into());
        }
        let needs_algorithms = self.devices.iter().any(|d| d.backend() != BackendKind::Cpu);
        if needs_algorithms && self.runnable_algorithms().is_empty() {
            let given: Vec<&str> = self.algorithms.iter().map(|a| a.name()).collect();
            return bad("algos", format!("none of [{}] supports {}", given.join(", "), self.connectivity));
        }
        Ok(())
    }

    /// Checks that there is an input and that the connectivity fits every one: 4 or 8 for
    /// images, 6, 18 or 26 for volumes ([`Error::ConnectivityDimensions`]).
    pub fn check_inputs(&self, inputs: &[Input]) -> Result<()> {
        if inputs.is_empty() {
            return Err(Error::InvalidParameter { name: "inputs".into(), reason: "there is no input".into() });
        }
        let connectivity = self.connectivity;
        for input in inputs {
            let (dims, what) = if input.is_volume() { (3, "a volume") } else { (2, "an image") };
            if connectivity.dims() != dims {
                return Err(Error::ConnectivityDimensions { connectivity, what });
            }
        }
        Ok(())
    }
}

fn phase_string(t: &Timings) -> String {
    let mut merged: Vec<(&str, f64)> = Vec::new();
    for p in &t.phases {
        match merged.iter_mut().find(|(n, _)| *n == p.phase.name()) {
            Some(entry) => entry.1 += p.ms,
            None => merged.push((p.phase.name(), p.ms)),
        }
    }
    merged.iter().map(|(n, ms)| format!("{n}={ms:.6}")).collect::<Vec<_>>().join(";")
}

/// One record of a run, its transfer times left at 0.
fn record(
    options: &BenchOptions,
    machine: &str,
    info: &ccl::DeviceInfo,
    algorithm: &str,
    input: &Input,
    run: usize,
    t: &Timings,
) -> Record {
    Record {
        mode: options.mode.name().into(),
        machine: machine.to_string(),
        device_id: info.id.to_string(),
        device: info.name.clone(),
        driver: info.driver.clone(),
        backend: info.id.backend().to_string(),
        algorithm: algorithm.to_string(),
        connectivity: options.connectivity.neighbours(),
        image: input.name.clone(),
        width: input.shape().width,
        height: input.shape().height,
        depth: input.shape().depth,
        density: input.density,
        granularity: input.granularity,
        run: run as u32,
        labeling_ms: t.labeling_ms(),
        upload_ms: 0.0,
        download_ms: 0.0,
        iterations: t.iterations.unwrap_or(0),
        phases: phase_string(t),
        // The CPU reference and end-to-end runs are timed by the host clock.
        timing: if options.mode == Mode::EndToEnd || info.id.backend() == BackendKind::Cpu {
            "host".into()
        } else {
            options.timing.name().into()
        },
    }
}

/// The end-to-end runs of one labeler on one input: host image in (ordinary memory), consecutive
/// labels out into a host array of the device (page-locked where it can be, reused across runs
/// as a caller labeling many images would), host clock around the whole call; returns
/// (total ms, the call's phases) per timed run.
fn end_to_end(
    device: &Device,
    labeler: &mut AnyLabeler,
    input: &Input,
    options: &BenchOptions,
) -> Result<Vec<(f64, Timings)>> {
    let consecutive = Options::new(options.connectivity).consecutive();
    let array = input.array.array();
    let mut out = device.pinned_buffer::<u32>(array.values().len())?;
    timed_runs(options, || {
        let upload = |l: &mut AnyLabeler| l.upload(array);
        let run = run_host(labeler, &consecutive, upload, |l, d| l.download_into(d, &mut out))?;
        Ok(run.timings)
    })
}

/// `options.warmup` untimed calls of `label`, then `options.runs` timed ones (host clock):
/// (ms, the call's timings) per timed run.
fn timed_runs(options: &BenchOptions, mut label: impl FnMut() -> Result<Timings>) -> Result<Vec<(f64, Timings)>> {
    for _ in 0..options.warmup {
        label()?;
    }
    let mut runs = Vec::with_capacity(options.runs as usize);
    for _ in 0..options.runs {
        let start = Instant::now();
        let timings = label()?;
        runs.push((start.elapsed().as_secs_f64() * 1e3, timings));
    }
    Ok(runs)
}

/// `options.warmup` untimed calls of `once`, then `options.runs` timed by the device: each
/// timed call's timings, and what the last one returned.
fn device_runs<T>(
    options: &BenchOptions,
    mut once: impl FnMut() -> Result<(T, Timings)>,
) -> Result<(Vec<Timings>, Option<T>)> {
    for _ in 0..options.warmup {
        once()?;
    }
    let mut timings = Vec::with_capacity(options.runs as usize);
    let mut last = None;
    for _ in 0..options.runs {
        let (value, t) = once()?;
        timings.push(t);
        last = Some(value);
    }
    Ok((timings, last))
}

/// One device-resident call that a `--stats` row times: its timings.
type DeviceCall = fn(&mut AnyLabeler, &DeviceImage, Connectivity) -> Result<Timings>;

/// The `--stats` rows: `NAME+consecutive`, labeling into consecutive labels on the device
/// ([`Labeler::run`] with consecutive labels), and `NAME+stats`, the same with the component
/// statistics ([`Labeler::run`] with [`Stats::Components`], as the command line does).
const STATS_ROWS: [(&str, DeviceCall); 2] = [
    ("consecutive", |labeler, input, c| Ok(labeler.run(input, &Options::new(c).consecutive())?.timings)),
    ("stats", |labeler, input, c| Ok(labeler.run(input, &Options::new(c).stats(Stats::Components))?.timings)),
];

/// The warm-up and timed runs of `call` on `input`: one entry per timed run.
fn timed_calls(
    labeler: &mut AnyLabeler,
    input: &DeviceImage,
    options: &BenchOptions,
    call: DeviceCall,
) -> Result<Vec<Timings>> {
    let once = || {
        hold(labeler, options)?;
        Ok(((), call(labeler, input, options.connectivity)?))
    };
    device_runs(options, once).map(|(timings, _)| timings)
}

/// With queued timing, holds `labeler`'s queue ([`Timing::Queued`]) before a run.
fn hold(labeler: &mut AnyLabeler, options: &BenchOptions) -> Result<()> {
    match options.timing {
        Timing::Queued => labeler.hold_queue(),
        Timing::Idle => Ok(()),
    }
}

/// Copies an input to the device of `labeler`.
fn upload(labeler: &mut AnyLabeler, input: &Input) -> Result<DeviceImage> {
    labeler.upload(input.array.array())
}

/// Measures and writes one CSV row per run to `writer` as it goes; returns every record.
/// Fails before measuring anything when the options are invalid ([`BenchOptions::validate`]),
/// or do not fit the inputs ([`BenchOptions::check_inputs`]).
pub fn run(options: &BenchOptions, inputs: &[Input], writer: &mut RecordWriter) -> Result<Vec<Record>> {
    options.validate()?;
    options.check_inputs(inputs)?;
    let machine = machine_description();
    let algorithms = options.runnable_algorithms();
    let per_algorithm = if options.stats { 1 + STATS_ROWS.len() } else { 1 };
    let per_device =
        |id: &DeviceId| if id.backend() == BackendKind::Cpu { 1 } else { per_algorithm * algorithms.len() };
    let total: usize = options.devices.iter().map(|d| per_device(d) * inputs.len()).sum();
    let bar = if options.progress { ProgressBar::new(total as u64) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut records = Vec::new();
    // Every device opens before anything is measured: an unknown one fails the run at once.
    let devices = options.devices.iter().map(|&id| Device::open(id)).collect::<Result<Vec<_>>>()?;
    for device in &devices {
        let id = device.info().id;
        let info = device.info().clone();
        let mut labelers: Vec<(String, AnyLabeler)> = if id.backend() == BackendKind::Cpu {
            vec![("reference".to_string(), device.labeler(Algorithm::UF)?)]
        } else {
            algorithms.iter().map(|&a| Ok((a.name().to_string(), device.labeler(a)?))).collect::<Result<_>>()?
        };
        // `steps` times each phase on its own; the other modes time labelings as users run them.
        for (_, labeler) in labelers.iter_mut() {
            labeler.mark_every_phase(options.mode == Mode::Steps);
        }
        for input in inputs {
            if options.mode == Mode::EndToEnd {
                for (name, labeler) in labelers.iter_mut() {
                    bar.set_message(format!("{id} {name} {}", input.name));
                    let timings = end_to_end(device, labeler, input, options)?;
                    for (run, (total_ms, t)) in timings.iter().enumerate() {
                        let record = Record {
                            labeling_ms: *total_ms,
                            upload_ms: t.phase_ms(Phase::Upload),
                            download_ms: t.phase_ms(Phase::Download),
                            ..record(options, &machine, &info, name, input, run, t)
                        };
                        writer.write(&record)?;
                        records.push(record);
                    }
                    bar.inc(1);
                }
                continue;
            }
            let start = Instant::now();
            let on_device = upload(&mut labelers[0].1, input)?;
            let upload_ms = start.elapsed().as_secs_f64() * 1e3;
            let mut download_ms = None;
            for (name, labeler) in labelers.iter_mut() {
                bar.set_message(format!("{id} {name} {}", input.name));
                let (timings, last) = device_runs(options, || {
                    hold(labeler, options)?;
                    let run = labeler.run(&on_device, &Options::new(options.connectivity))?;
                    Ok((run.labels, run.timings))
                })?;
                if download_ms.is_none() {
                    let labels = last.expect("at least one run");
                    let start = Instant::now();
                    labeler.download(&labels)?;
                    download_ms = Some(start.elapsed().as_secs_f64() * 1e3);
                }
                for (run, t) in timings.iter().enumerate() {
                    let record = Record {
                        upload_ms,
                        download_ms: download_ms.unwrap_or(0.0),
                        ..record(options, &machine, &info, name, input, run, t)
                    };
                    writer.write(&record)?;
                    records.push(record);
                }
                bar.inc(1);
                if options.stats && id.backend() != BackendKind::Cpu {
                    for (suffix, call) in STATS_ROWS {
                        let name = format!("{name}+{suffix}");
                        bar.set_message(format!("{id} {name} {}", input.name));
                        for (run, t) in timed_calls(labeler, &on_device, options, call)?.iter().enumerate() {
                            let record = Record { upload_ms, ..record(options, &machine, &info, &name, input, run, t) };
                            writer.write(&record)?;
                            records.push(record);
                        }
                        bar.inc(1);
                    }
                }
            }
        }
    }
    bar.finish_and_clear();
    Ok(records)
}
