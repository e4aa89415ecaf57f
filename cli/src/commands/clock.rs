//! Wall-clock laps of a command, which `--verbose` prints: where the time of an image, a
//! volume, a `--binarize` page or a folder went.

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
