//! What an algorithm's schedule file tells the registry (`crate::registry`): its entries
//! ([`AlgorithmInfo`]), each with the kernel file it runs. The type lives here, below both the
//! registry and the schedule files, so that each schedule file declares its own entries and the
//! registry only names them (a stage's is [`super::StageInfo`]).

use super::ScheduleBuilder;
use crate::algorithm::{Connectivity, RawLabels};
use crate::gpu::{Define, Limits};
use crate::kernels::KernelFile;
use crate::Phase;

/// The pixel algorithms' connectivities: images with either, volumes with any of theirs.
pub(crate) const PIXEL_CONNECTIVITIES: &[Connectivity] =
    &[Connectivity::Four, Connectivity::Eight, Connectivity::Six, Connectivity::Eighteen, Connectivity::TwentySix];
/// The block algorithms' connectivities: 2x2 blocks are 8-connected by construction, 2x2x2
/// blocks 26-connected (TPDS 2020 Sec. 5.3).
pub(crate) const BLOCK_CONNECTIVITIES: &[Connectivity] = &[Connectivity::Eight, Connectivity::TwentySix];

/// The defines of a kernel build without inline compression.
const PLAIN: &[Define] = &[Define::flag("INLINE_COMPRESSION", false)];
/// The defines of an `_IC` variant's kernel build (TPDS 2020 Sec. 2.1).
const INLINE: &[Define] = &[Define::flag("INLINE_COMPRESSION", true)];

/// What the crate knows about one algorithm: its registry entry, declared as a constant by its
/// schedule file (`src/schedule/NAME.rs`).
pub struct AlgorithmInfo {
    /// The paper's name, e.g. `BKE_IC`.
    pub name: &'static str,
    /// One line: what it is and where it comes from.
    pub summary: &'static str,
    /// The connectivities it is defined for.
    pub connectivities: &'static [Connectivity],
    /// How it numbers components in its raw output.
    pub raw_labels: RawLabels,
    /// Whether it compresses inline (an `_IC` variant).
    pub inline_compression: bool,
    /// Whether it iterates until stable (and so reports an iteration count).
    pub iterative: bool,
    /// The kernel phases its timings report, in order of first appearance.
    pub phases: &'static [Phase],
    /// Whether its schedule writes consecutive labels in its own last pass (from the
    /// relabeling's rank tables) when asked for them, so that the relabeling's final pass
    /// (`relabel_final`) does not run: TUF's. False: the labeling, then the whole relabeling.
    pub ranks_in_last_pass: bool,
    /// Whether its volume kernels take 2D ranges, folded into the grid as a tall image's, so
    /// that a volume too long along y or z for a device's 3D grid still labels: TUF's. False:
    /// 3D ranges, and such a volume is refused with a device error naming the limit.
    pub flat_volume_ranges: bool,
    /// The connectivities at which its kernels label multi-label images
    /// ([`crate::ImageKind::MultiLabel`]; none: binary images only): built with `MULTILABEL=1`,
    /// they join equal neighbours only.
    pub multilabel: &'static [Connectivity],
    pub(crate) kernel: KernelFile,
    pub(crate) defines: fn(Connectivity, &Limits) -> Vec<Define>,
    pub(crate) variant: &'static [Define],
    pub(crate) schedule: ScheduleBuilder,
}

impl AlgorithmInfo {
    /// The kernel file it is built from.
    pub fn kernel(&self) -> &KernelFile {
        &self.kernel
    }

    /// The compile-time defines of its kernel file for `connectivity` on a device with `limits`
    /// (tile shapes fit its work-groups): the schedule's, then the variant's (e.g.
    /// `INLINE_COMPRESSION=1`).
    pub fn defines(&self, connectivity: Connectivity, limits: &Limits) -> Vec<Define> {
        let mut defines = (self.defines)(connectivity, limits);
        defines.extend_from_slice(self.variant);
        defines
    }

    /// An iterative algorithm's entry (LE, OLE, BE): it reports an iteration count, and its
    /// kernels take no `INLINE_COMPRESSION` define.
    #[allow(clippy::too_many_arguments)] // one entry's fields, named at the call
    pub(crate) const fn iterative(
        name: &'static str,
        summary: &'static str,
        connectivities: &'static [Connectivity],
        raw_labels: RawLabels,
        phases: &'static [Phase],
        kernel: KernelFile,
        defines: fn(Connectivity, &Limits) -> Vec<Define>,
        schedule: ScheduleBuilder,
    ) -> Self {
        AlgorithmInfo {
            name,
            summary,
            connectivities,
            raw_labels,
            inline_compression: false,
            iterative: true,
            phases,
            ranks_in_last_pass: false,
            flat_volume_ranges: false,
            multilabel: &[],
            kernel,
            defines,
            variant: &[],
            schedule,
        }
    }

    /// A direct (non-iterative) algorithm's entry of the union-find family (UF, KE, BUF, BKE,
    /// TUF), built with `INLINE_COMPRESSION=0` ([`Self::inline`] gives its `_IC` variant).
    #[allow(clippy::too_many_arguments)] // one entry's fields, named at the call
    pub(crate) const fn direct(
        name: &'static str,
        summary: &'static str,
        connectivities: &'static [Connectivity],
        raw_labels: RawLabels,
        phases: &'static [Phase],
        kernel: KernelFile,
        defines: fn(Connectivity, &Limits) -> Vec<Define>,
        schedule: ScheduleBuilder,
    ) -> Self {
        AlgorithmInfo {
            iterative: false,
            variant: PLAIN,
            ..Self::iterative(name, summary, connectivities, raw_labels, phases, kernel, defines, schedule)
        }
    }

    /// This entry with multi-label images at each of its connectivities
    /// ([`AlgorithmInfo::multilabel`]).
    pub(crate) const fn with_multilabel(self) -> Self {
        AlgorithmInfo { multilabel: self.connectivities, ..self }
    }

    /// This entry with multi-label images at `connectivities` only.
    pub(crate) const fn with_multilabel_at(self, connectivities: &'static [Connectivity]) -> Self {
        AlgorithmInfo { multilabel: connectivities, ..self }
    }

    /// The `_IC` variant of this entry: the same schedule and kernels with
    /// `INLINE_COMPRESSION=1` (TPDS 2020 Sec. 2.1).
    pub(crate) const fn inline(self, name: &'static str, summary: &'static str) -> Self {
        AlgorithmInfo { name, summary, inline_compression: true, variant: INLINE, ..self }
    }
}
