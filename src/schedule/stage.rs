//! What a stage's schedule tells the registry (`crate::registry`): its entry ([`StageInfo`]),
//! with the kernel file it runs. Apart from [`super::entry`] (an algorithm's entry, which names
//! its schedule builder) so that the stages' schedules, which the algorithms' use, do not depend
//! on it.

use crate::kernels::KernelFile;

/// What the crate knows about one stage, a kernel file run around or instead of a labeling
/// (relabeling, statistics, binarization, the benchmarks' queue hold): its registry entry,
/// declared as a constant by the module that schedules it (its `STAGE`). Each stage's schedule
/// has its own interface (what it takes and returns differs), so its callers build it from the
/// kernel file named here.
pub struct StageInfo {
    /// Its name, that of its kernel file (e.g. `relabel`).
    pub name: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    pub(crate) kernel: KernelFile,
}

impl StageInfo {
    /// A stage's entry: `kernel` is its kernel file, named as the stage.
    pub(crate) const fn new(summary: &'static str, kernel: KernelFile) -> Self {
        StageInfo { name: kernel.name, summary, kernel }
    }

    /// The kernel file it is built from.
    pub fn kernel(&self) -> &KernelFile {
        &self.kernel
    }
}
