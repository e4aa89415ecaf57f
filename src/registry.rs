//! The algorithm registry: one entry per algorithm holding everything the rest of the crate
//! reads about it — name, connectivities, raw-label convention, timing phases, kernel file and
//! defines, and the schedule that runs it. `Algorithm`'s constants and [`Algorithm::ALL`], name
//! parsing, the CLI help, the kernel build list and the generated conformance tests
//! ([`for_each_algorithm!`](crate::for_each_algorithm)) all come from here.
//!
//! Adding an algorithm takes a schedule file in `src/schedule/`, a kernel file in `kernels/`
//! (listed in `crate::kernels`) and one entry below.

use crate::gpu::{Define, Limits};
use crate::kernels::{self, KernelFile};
use crate::schedule::{self, ScheduleBuilder};
use crate::{Algorithm, Connectivity, Phase, RawLabels};

/// What the crate knows about one algorithm.
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
    kernel: KernelFile,
    defines: fn(Connectivity, &Limits) -> Vec<Define>,
    variant: &'static [Define],
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
}

/// One compilation of a kernel file: an algorithm's defines for one connectivity.
#[derive(Clone, Debug)]
pub struct KernelBuild {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The connectivity.
    pub connectivity: Connectivity,
    /// The kernel file.
    pub file: KernelFile,
    /// Compile-time defines.
    pub defines: Vec<Define>,
}

/// Every compilation the GPU labelers perform on a device of work-groups of up to 256 work-items
/// (the shapes every schedule prefers): each algorithm x supported connectivity.
pub fn kernel_builds() -> Vec<KernelBuild> {
    Algorithm::ALL
        .iter()
        .flat_map(|&algorithm| {
            algorithm.connectivities().iter().map(move |&connectivity| KernelBuild {
                algorithm,
                connectivity,
                file: *algorithm.info().kernel(),
                defines: algorithm.info().defines(connectivity, &Limits::UNBOUNDED),
            })
        })
        .collect()
}

/// Declares the registry: `Algorithm`'s constants, `Algorithm::ALL`, the entries, and the
/// `for_each_algorithm!` macro. `$d` is a literal `$`, so the generated macro can have
/// arguments of its own.
macro_rules! registry {
    ($d:tt $( $(#[$doc:meta])* $konst:ident ($lower:ident) = $entry:expr; )*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Index {
            $($konst),*
        }

        impl Algorithm {
            $( $(#[$doc])* pub const $konst: Algorithm = Algorithm(Index::$konst as u8); )*

            /// Every algorithm, in registry order.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$konst),*];
        }

        pub(crate) static ENTRIES: &[AlgorithmInfo] = &[$($entry),*];

        /// Calls `callback!` with every algorithm of the registry as `(CONSTANT, lower_name)`
        /// pairs, e.g. to generate one test per algorithm:
        /// `ccl::for_each_algorithm!(my_tests)` expands to `my_tests! { (LE, le) (OLE, ole) ... }`.
        #[macro_export]
        macro_rules! for_each_algorithm {
            ($d callback:ident) => {
                $d callback! { $( ($konst, $lower) )* }
            };
        }
    };
}

/// The pixel algorithms: images with either connectivity, volumes with any of theirs.
const ANY: &[Connectivity] =
    &[Connectivity::Four, Connectivity::Eight, Connectivity::Six, Connectivity::Eighteen, Connectivity::TwentySix];
/// TUF's: both image connectivities and 6 in volumes.
const TUF_CONNECTIVITIES: &[Connectivity] = &[Connectivity::Four, Connectivity::Eight, Connectivity::Six];
/// 2x2 blocks are 8-connected by construction, 2x2x2 blocks 26-connected (TPDS 2020 Sec. 5.3).
const BLOCKS: &[Connectivity] = &[Connectivity::Eight, Connectivity::TwentySix];
const PLAIN: &[Define] = &[Define::flag("INLINE_COMPRESSION", false)];
const INLINE: &[Define] = &[Define::flag("INLINE_COMPRESSION", true)];
const EQUIVALENCE_PHASES: &[Phase] = &[Phase::Initialization, Phase::Merge];
const UF_PHASES: &[Phase] = &[Phase::LocalMerge, Phase::BorderMerge, Phase::Compression];
const KE_PHASES: &[Phase] = &[Phase::Initialization, Phase::Compression, Phase::Reduction];
const BUF_PHASES: &[Phase] = &[Phase::Initialization, Phase::Merge, Phase::Compression, Phase::FinalLabeling];
const BKE_PHASES: &[Phase] = &[Phase::Initialization, Phase::Compression, Phase::Reduction, Phase::FinalLabeling];

/// A direct (non-iterative) algorithm of the union-find family: UF, KE, BUF, BKE.
#[allow(clippy::too_many_arguments)] // one entry's fields, named at the call
const fn direct(
    name: &'static str,
    summary: &'static str,
    connectivities: &'static [Connectivity],
    raw_labels: RawLabels,
    phases: &'static [Phase],
    kernel: KernelFile,
    defines: fn(Connectivity, &Limits) -> Vec<Define>,
    schedule: ScheduleBuilder,
) -> AlgorithmInfo {
    AlgorithmInfo {
        name,
        summary,
        connectivities,
        raw_labels,
        inline_compression: false,
        iterative: false,
        phases,
        kernel,
        defines,
        variant: PLAIN,
        schedule,
    }
}

impl AlgorithmInfo {
    /// The `_IC` variant of this entry: the same schedule and kernels with
    /// `INLINE_COMPRESSION=1` (TPDS 2020 Sec. 2.1).
    const fn inline(self, name: &'static str, summary: &'static str) -> Self {
        AlgorithmInfo { name, summary, inline_compression: true, variant: INLINE, ..self }
    }
}

const UF: AlgorithmInfo = direct(
    "UF",
    "Union Find, Oliveira & Lotufo 2010; IPAS 2018 (tiles in local memory); volumes as TPDS 2020 Sec. 5.3",
    ANY,
    RawLabels::FirstPixel,
    UF_PHASES,
    kernels::UF,
    schedule::uf::defines,
    schedule::uf::build,
);
const KE: AlgorithmInfo = direct(
    "KE",
    "Komura Equivalence, Komura 2015; IPAS 2018 Alg. 4; volumes beyond the papers",
    ANY,
    RawLabels::FirstPixel,
    KE_PHASES,
    kernels::KE,
    schedule::ke::defines,
    schedule::ke::build,
);
const BUF: AlgorithmInfo = direct(
    "BUF",
    "Block-based Union Find, TPDS 2020 Alg. 2 (2x2 blocks; 2x2x2 in volumes, Sec. 5.3)",
    BLOCKS,
    RawLabels::FirstBlock,
    BUF_PHASES,
    kernels::BUF,
    schedule::buf::defines,
    schedule::buf::build,
);
const TUF: AlgorithmInfo = direct(
    "TUF",
    "Tiled run Union-Find, this project's: 32x32 tiles labeled in local memory over runs, 8 side by side joined there, unions across their borders only (fewer where redundant), compression; 6-connected volumes in 32x16x16 regions",
    TUF_CONNECTIVITIES,
    RawLabels::FirstPixel,
    UF_PHASES,
    kernels::TUF,
    schedule::tuf::defines,
    schedule::tuf::build,
);
const BKE: AlgorithmInfo = direct(
    "BKE",
    "Block-based Komura Equivalence, TPDS 2020 Sec. 5.2 (2x2 blocks; 2x2x2 in volumes, Sec. 5.3)",
    BLOCKS,
    RawLabels::FirstBlock,
    BKE_PHASES,
    kernels::BKE,
    schedule::bke::defines,
    schedule::bke::build,
);

registry! { $
    /// Label Equivalence, Hawick, Leist, Playne 2010 (iterative, reference array).
    LE (le) = AlgorithmInfo {
        name: "LE",
        summary: "Label Equivalence, Hawick, Leist, Playne 2010 (iterative, reference array); volumes too",
        connectivities: ANY,
        raw_labels: RawLabels::FirstPixel,
        inline_compression: false,
        iterative: true,
        phases: EQUIVALENCE_PHASES,
        kernel: kernels::LE,
        defines: schedule::le::defines,
        variant: &[],
        schedule: schedule::le::build,
    };
    /// Optimized Label Equivalence, Kalentev et al. 2011 (iterative).
    OLE (ole) = AlgorithmInfo {
        name: "OLE",
        summary: "Optimized Label Equivalence, Kalentev et al. 2011 (iterative); volumes too",
        connectivities: ANY,
        raw_labels: RawLabels::FirstPixel,
        inline_compression: false,
        iterative: true,
        phases: EQUIVALENCE_PHASES,
        kernel: kernels::OLE,
        defines: schedule::ole::defines,
        variant: &[],
        schedule: schedule::ole::build,
    };
    /// Block Equivalence, Zavalishin et al. 2016 (2x2 blocks, iterative, 8-connectivity; 26 in volumes).
    BE (be) = AlgorithmInfo {
        name: "BE",
        summary: "Block Equivalence, Zavalishin et al. 2016 (iterative, 2x2 blocks; 2x2x2 in volumes)",
        connectivities: BLOCKS,
        raw_labels: RawLabels::FirstBlock,
        inline_compression: false,
        iterative: true,
        phases: &[Phase::Initialization, Phase::Merge, Phase::FinalLabeling],
        kernel: kernels::BE,
        defines: schedule::be::defines,
        variant: &[],
        schedule: schedule::be::build,
    };
    /// Union Find, Oliveira & Lotufo 2010 (tiles in local memory, border merge, compression).
    UF (uf) = UF;
    /// UF with inline compression.
    UF_IC (uf_ic) = UF.inline("UF_IC", "UF with inline compression (TPDS 2020 Sec. 2.1)");
    /// Komura Equivalence, Komura 2015; 8-connectivity as IPAS 2018 Alg. 4.
    KE (ke) = KE;
    /// KE with inline compression.
    KE_IC (ke_ic) = KE.inline("KE_IC", "KE with inline compression (TPDS 2020 Sec. 2.1)");
    /// Block-based Union Find, TPDS 2020 Alg. 2 (8-connectivity; 26 in volumes).
    BUF (buf) = BUF;
    /// BUF with inline compression.
    BUF_IC (buf_ic) = BUF.inline("BUF_IC", "BUF with inline compression (TPDS 2020 Sec. 2.1)");
    /// Block-based Komura Equivalence, TPDS 2020 Sec. 5.2 (8-connectivity; 26 in volumes).
    BKE (bke) = BKE;
    /// BKE with inline compression.
    BKE_IC (bke_ic) = BKE.inline("BKE_IC", "BKE with inline compression (TPDS 2020 Sec. 2.1)");
    /// Tiled run Union-Find (this project's; images, 4- and 8-connectivity; volumes, 6).
    TUF (tuf) = TUF;
}
