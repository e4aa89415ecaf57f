//! Wall-clock laps of a command, which `--verbose` prints: where the time of an image, a
//! volume, a `--binarize` page or a folder went.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::console::say;

/// Wall-clock laps of the command, for `--verbose`.
pub struct Clock {
    on: bool,
    last: std::time::Instant,
    laps: Vec<(&'static str, f64)>,
}

impl Clock {
    /// A clock that keeps laps only when `on` (`--verbose`).
    pub fn new(on: bool) -> Self {
        Self { on, last: std::time::Instant::now(), laps: Vec::new() }
    }

    /// Ends a lap named `name`, from the last one (or the clock's start).
    pub fn lap(&mut self, name: &'static str) {
        if self.on {
            let now = std::time::Instant::now();
            self.laps.push((name, (now - self.last).as_secs_f64() * 1e3));
            self.last = now;
        }
    }

    /// With `--verbose`: how the kernels were obtained (`builds`, none on the CPU) and the laps.
    pub fn report(&self, builds: Option<ccl::BuildReport>) {
        if !self.on {
            return;
        }
        if let Some(b) = builds {
            say!(
                "kernels: {} programs, {} from the cache (CCL_CACHE_DIR, CCL_CACHE=off), built in {:.1} ms, warm-up {:.1} ms",
                b.programs,
                b.from_cache,
                b.build_ms,
                b.warm_up_ms
            );
        }
        let total: f64 = self.laps.iter().map(|l| l.1).sum();
        let parts: Vec<String> = self.laps.iter().map(|(n, ms)| format!("{n} {ms:.1}")).collect();
        say!("wall time ms: {} (total {total:.1})", parts.join(", "));
    }
}

/// Where a folder pipeline's time went, for `--verbose`: each stage's busy time summed over its
/// threads, how many images were decoded by the time the labelers were ready (the devices open
/// while the first images decode), and when the last image was decoded and written.
pub struct StageClock {
    start: std::time::Instant,
    /// Busy nanoseconds of decoding, labeling and writing.
    busy: [AtomicU64; 3],
    decoded: AtomicUsize,
    /// Images decoded when the labelers were ready, and when that was (ns from the start).
    ready: [AtomicU64; 2],
    /// When the last image was decoded, and when the last was written (ns from the start).
    last: [AtomicU64; 2],
}

/// The stages of [`StageClock`].
#[derive(Clone, Copy)]
pub enum Stage {
    Decode = 0,
    Label = 1,
    Write = 2,
}

impl StageClock {
    /// A clock whose times count from now.
    pub fn new() -> Self {
        Self {
            start: std::time::Instant::now(),
            busy: Default::default(),
            decoded: AtomicUsize::new(0),
            ready: Default::default(),
            last: Default::default(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Runs `f` as work of `stage`.
    pub fn time<R>(&self, stage: Stage, f: impl FnOnce() -> R) -> R {
        let begin = std::time::Instant::now();
        let result = f();
        self.busy[stage as usize].fetch_add(begin.elapsed().as_nanos() as u64, Ordering::Relaxed);
        match stage {
            Stage::Decode => {
                self.decoded.fetch_add(1, Ordering::Relaxed);
                self.last[0].fetch_max(self.now_ns(), Ordering::Relaxed);
            }
            Stage::Write => {
                self.last[1].fetch_max(self.now_ns(), Ordering::Relaxed);
            }
            Stage::Label => {}
        }
        result
    }

    /// The labelers are ready.
    pub fn labelers_ready(&self) {
        self.ready[0].store(self.decoded.load(Ordering::Relaxed) as u64, Ordering::Relaxed);
        self.ready[1].store(self.now_ns(), Ordering::Relaxed);
    }

    /// The stages' line of `--verbose`.
    pub fn report(&self, threads: usize, labelers: usize) {
        let ms = |ns: &AtomicU64| ns.load(Ordering::Relaxed) as f64 / 1e6;
        say!(
            "pipeline ms: labelers ready at {:.1} with {} of {} images decoded; last decoded at {:.1}, last written at {:.1}; busy: decoding {:.1} ({threads} threads), labeling {:.1} ({labelers} labelers), writing {:.1} ({threads} threads)",
            ms(&self.ready[1]),
            self.ready[0].load(Ordering::Relaxed),
            self.decoded.load(Ordering::Relaxed),
            ms(&self.last[0]),
            ms(&self.last[1]),
            ms(&self.busy[0]),
            ms(&self.busy[1]),
            ms(&self.busy[2]),
        );
    }
}
