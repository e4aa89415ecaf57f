//! The algorithm registry: one entry per algorithm holding everything the rest of the crate
//! reads about it — name, connectivities, raw-label convention, timing phases, kernel file and
//! defines, and the schedule that runs it. `Algorithm`'s constants and [`Algorithm::ALL`], name
//! parsing, the CLI help, the kernel build list and the generated conformance tests
//! ([`for_each_algorithm!`](crate::for_each_algorithm)) all come from here.
//!
//! Adding an algorithm takes a schedule file in `src/schedule/`, a kernel file in `kernels/`
//! (listed in `crate::kernels`) and one entry below.

use std::fmt;
use std::str::FromStr;

use crate::algorithm::{Connectivity, RawLabels};
use crate::gpu::{Define, Limits};
use crate::kernels::{self, KernelFile};
use crate::schedule::{self, ScheduleBuilder};
use crate::Phase;

/// A labeling algorithm: a handle on its entry in the registry (this module), which holds
/// its name, connectivities, raw-label convention, kernels and schedule. The constants
/// (`Algorithm::UF`, `Algorithm::BKE_IC`, ...) and [`Algorithm::ALL`] come from the registry;
/// an `_IC` variant replaces the Compression step with inline compression (TPDS 2020 Sec. 2.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Algorithm(pub(crate) u8);

impl Algorithm {
    /// The registry entry.
    pub fn info(self) -> &'static AlgorithmInfo {
        &ENTRIES[self.0 as usize]
    }

    /// The paper's name, e.g. `BKE_IC`.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The connectivities the algorithm is defined for: block-based ones (BE, BUF, BKE) work
    /// on 2x2 blocks and so only with 8-connectivity.
    pub fn connectivities(self) -> &'static [Connectivity] {
        self.info().connectivities
    }

    /// Whether the algorithm is defined for `connectivity`.
    pub fn supports(self, connectivity: Connectivity) -> bool {
        self.connectivities().contains(&connectivity)
    }

    /// [`Error::UnsupportedConnectivity`](crate::Error::UnsupportedConnectivity) unless the
    /// algorithm is defined for `connectivity`.
    pub fn check(self, connectivity: Connectivity) -> crate::Result<()> {
        if self.supports(connectivity) {
            Ok(())
        } else {
            Err(crate::Error::UnsupportedConnectivity {
                algorithm: self.name(),
                connectivity,
                supported: self.connectivities().to_vec(),
            })
        }
    }

    /// How the algorithm numbers components in its raw output.
    pub fn raw_labels(self) -> RawLabels {
        self.info().raw_labels
    }

    /// Whether this is an inline-compression (`_IC`) variant.
    pub fn inline_compression(self) -> bool {
        self.info().inline_compression
    }

    /// The default for `connectivity`, what `ccl label` and the Python package use unless told:
    /// the fastest exact labeler measured, the first of [`Algorithm::ranking`]: TUF for images
    /// and 6-connected volumes, KE for 18-connected and BKE for 26-connected volumes (TUF has
    /// no 18/26 version yet). A device that cannot run it takes the next one
    /// ([`crate::Device::default_algorithm`]).
    pub fn default_for(connectivity: Connectivity) -> Algorithm {
        Algorithm::ranking(connectivity)[0]
    }

    /// Every algorithm that supports `connectivity`, fastest first: the order of the geometric
    /// mean of their labeling times in `bench-results/h200/ranking/cN/` (H200, CUDA, 2048^2
    /// images or 256^3 volumes at 10-90 % density; `bash scripts/bench-suite.sh OUT PAGES
    /// ranking`), which `tests/default_algorithm.rs` holds it to. A device that cannot run one
    /// falls back to the next.
    pub fn ranking(connectivity: Connectivity) -> &'static [Algorithm] {
        use Algorithm as A;
        match connectivity {
            Connectivity::Four => &[A::TUF, A::KE_IC, A::KE, A::UF, A::UF_IC, A::OLE, A::LE],
            Connectivity::Eight => {
                &[A::TUF, A::BKE_IC, A::BKE, A::BUF, A::BUF_IC, A::KE_IC, A::KE, A::UF, A::UF_IC, A::BE, A::OLE, A::LE]
            }
            Connectivity::Six => &[A::TUF, A::KE_IC, A::KE, A::UF, A::UF_IC, A::OLE, A::LE],
            Connectivity::Eighteen => &[A::KE, A::KE_IC, A::UF, A::UF_IC, A::OLE, A::LE],
            Connectivity::TwentySix => {
                &[A::BKE, A::BKE_IC, A::BUF, A::BUF_IC, A::KE, A::KE_IC, A::BE, A::UF, A::UF_IC, A::OLE, A::LE]
            }
        }
    }

    /// Every algorithm's name, comma-separated (for help texts and errors).
    pub fn names() -> String {
        Self::ALL.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error of parsing an algorithm name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm '{name}' (known: {known})", name = .0, known = Algorithm::names())]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// Case-insensitive; `-` and `_` are the same (`bke-ic` is `BKE_IC`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL.iter().copied().find(|a| a.name() == wanted).ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

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
