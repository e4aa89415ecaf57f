//! The algorithm registry: one entry per algorithm holding everything the rest of the crate
//! reads about it — name, connectivities, raw-label convention, timing phases, kernel file and
//! defines, and the schedule that runs it. `Algorithm`'s constants and [`Algorithm::ALL`], name
//! parsing, the CLI help, the kernel build list and the generated conformance tests
//! ([`for_each_algorithm!`](crate::for_each_algorithm)) all come from here.
//!
//! The stages (relabeling, statistics, binarization, queue hold) have entries too
//! ([`STAGES`]), so that the kernel files to build and check ([`kernel_files`]) are the
//! algorithms' and the stages', never a hand-kept list.
//!
//! Each schedule file declares its own entries: its kernel file (`KERNEL`, with
//! `crate::kernels`' `kernel_file!`) and its algorithms' [`AlgorithmInfo`] constants, or its
//! stage's [`StageInfo`] (`STAGE`); the lists below only name them. So adding an algorithm
//! takes its kernel file `kernels/NAME.kernel` (and the generated `kernels-cl/NAME.cl` and
//! `kernels-cu/NAME.cu`: `CCL_BLESS=1 cargo test --test kernel_sources`), its schedule file
//! `src/schedule/NAME.rs`, its `mod` line in `src/schedule/mod.rs`, and one line in the
//! `registry!` list below (its place in [`Algorithm::ranking`] once measured). A stage: the
//! same, with one line in [`STAGES`] instead, and its call where the pipeline runs it.

use std::fmt;
use std::str::FromStr;

use crate::algorithm::{Connectivity, RawLabels};
use crate::gpu::{Define, Limits};
use crate::kernels::KernelFile;
use crate::schedule;
pub use crate::schedule::{AlgorithmInfo, StageInfo};

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

    /// The connectivities at which it labels multi-label images ([`crate::multilabel`]): every
    /// one of the pixel algorithms (LE, OLE, UF, KE and their _IC variants), all three of TUF, none
    /// of the block algorithms.
    pub fn multilabel_connectivities(self) -> &'static [Connectivity] {
        self.info().multilabel
    }

    /// Whether it labels multi-label images at `connectivity`
    /// ([`Algorithm::multilabel_connectivities`]).
    pub fn supports_multilabel(self, connectivity: Connectivity) -> bool {
        self.multilabel_connectivities().contains(&connectivity)
    }

    /// Checks that it labels images of `kind` at `connectivity`
    /// ([`Algorithm::supports_multilabel`]), else an [`crate::Error::UnsupportedMultiLabel`]
    /// naming those that do.
    pub fn check_kind(self, kind: crate::ImageKind, connectivity: Connectivity) -> crate::Result<()> {
        if kind == crate::ImageKind::Binary || self.supports_multilabel(connectivity) {
            return Ok(());
        }
        Err(crate::Error::UnsupportedMultiLabel {
            algorithm: self.name(),
            connectivity,
            supported: Self::ALL.iter().filter(|a| a.supports_multilabel(connectivity)).map(|a| a.name()).collect(),
        })
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

    /// The default for multi-label images at `connectivity`: the first of
    /// [`Algorithm::ranking`] that labels them ([`Algorithm::supports_multilabel`]; TUF for
    /// images and 6-connected volumes, KE for 18 and 26), ranked by its binary labeling
    /// times.
    pub fn default_multilabel_for(connectivity: Connectivity) -> Algorithm {
        let ranking = Algorithm::ranking(connectivity);
        ranking
            .iter()
            .copied()
            .find(|a| a.supports_multilabel(connectivity))
            .expect("the pixel algorithms label multi-label images")
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

/// One compilation of a kernel file: an algorithm's defines for one connectivity.
#[derive(Clone, Debug)]
pub struct KernelBuild {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The connectivity.
    pub connectivity: Connectivity,
    /// The images it labels.
    pub kind: crate::ImageKind,
    /// The kernel file.
    pub file: KernelFile,
    /// Compile-time defines.
    pub defines: Vec<Define>,
}

/// Every compilation the GPU labelers perform on a device of work-groups of up to 256 work-items
/// (the shapes every schedule prefers): each algorithm x supported connectivity, for binary
/// images and, where it labels them, for multi-label images ([`MULTILABEL_BUILD_KIND`]).
pub fn kernel_builds() -> Vec<KernelBuild> {
    Algorithm::ALL
        .iter()
        .flat_map(|&algorithm| {
            algorithm.connectivities().iter().flat_map(move |&connectivity| {
                let kinds = [crate::ImageKind::Binary, MULTILABEL_BUILD_KIND];
                kinds.into_iter().filter(move |&kind| algorithm.check_kind(kind, connectivity).is_ok()).map(
                    move |kind| {
                        let mut defines = algorithm.info().defines(connectivity, &Limits::UNBOUNDED);
                        defines.extend(kind.defines());
                        KernelBuild { algorithm, connectivity, kind, file: *algorithm.info().kernel(), defines }
                    },
                )
            })
        })
        .collect()
}

/// The multi-label images [`kernel_builds`] compiles for: 64-bit values whose background has
/// bits in both halves (the widest pixel type, and both background words).
pub const MULTILABEL_BUILD_KIND: crate::ImageKind =
    crate::ImageKind::MultiLabel { bytes: 8, background: 0x1_0000_0002 };

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

registry! { $
    /// Label Equivalence, Hawick, Leist, Playne 2010 (iterative, reference array).
    LE (le) = schedule::le::LE;
    /// Optimized Label Equivalence, Kalentev et al. 2011 (iterative).
    OLE (ole) = schedule::ole::OLE;
    /// Block Equivalence, Zavalishin et al. 2016 (2x2 blocks, iterative, 8-connectivity; 26 in volumes).
    BE (be) = schedule::be::BE;
    /// Union Find, Oliveira & Lotufo 2010 (tiles in local memory, border merge, compression).
    UF (uf) = schedule::uf::UF;
    /// UF with inline compression.
    UF_IC (uf_ic) = schedule::uf::UF_IC;
    /// Komura Equivalence, Komura 2015; 8-connectivity as IPAS 2018 Alg. 4.
    KE (ke) = schedule::ke::KE;
    /// KE with inline compression.
    KE_IC (ke_ic) = schedule::ke::KE_IC;
    /// Block-based Union Find, TPDS 2020 Alg. 2 (8-connectivity; 26 in volumes).
    BUF (buf) = schedule::buf::BUF;
    /// BUF with inline compression.
    BUF_IC (buf_ic) = schedule::buf::BUF_IC;
    /// Block-based Komura Equivalence, TPDS 2020 Sec. 5.2 (8-connectivity; 26 in volumes).
    BKE (bke) = schedule::bke::BKE;
    /// BKE with inline compression.
    BKE_IC (bke_ic) = schedule::bke::BKE_IC;
    /// Tiled run Union-Find (this project's; images, 4- and 8-connectivity; volumes, 6).
    TUF (tuf) = schedule::tuf::TUF;
}

/// Every stage: a kernel file run around or instead of a labeling, one line each (its
/// schedule's `STAGE`).
pub static STAGES: &[StageInfo] = &[
    schedule::relabel::STAGE,
    crate::binarize::STAGE,
    schedule::stats::STAGE,
    schedule::regionprops::STAGE,
    schedule::hold::STAGE,
];

/// The compile-time defines of every build of the region properties' stage: each moment order
/// (0..=[`crate::regions::MAX_ORDER`]) without an intensity image, with `f32` and with `f64` ones
/// (what `tests/kernel_sources.rs` compiles with every compiler).
pub fn regionprops_builds() -> Vec<Vec<Define>> {
    (0..=crate::regions::MAX_ORDER)
        .flat_map(|order| [None, Some(false), Some(true)].map(|intensity| (order, intensity)))
        .map(schedule::regionprops::defines)
        .collect()
}

/// The stage named `name` (e.g. `relabel`), if there is one.
pub fn stage(name: &str) -> Option<&'static StageInfo> {
    STAGES.iter().find(|stage| stage.name == name)
}

/// Every kernel file, once each: the algorithms' in registry order (an `_IC` variant shares
/// its plain one's), then the stages'. What the kernel cache builds from and
/// `tests/kernel_sources.rs` checks against [`crate::kernels::generate`].
pub fn kernel_files() -> Vec<&'static KernelFile> {
    let mut files: Vec<&'static KernelFile> = Vec::new();
    for file in ENTRIES.iter().map(AlgorithmInfo::kernel).chain(STAGES.iter().map(StageInfo::kernel)) {
        if !files.iter().any(|known| known.name == file.name) {
            files.push(file);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_files_are_the_algorithms_then_the_stages_once_each() {
        let names: Vec<_> = kernel_files().iter().map(|file| file.name).collect();
        assert_eq!(
            names,
            ["le", "ole", "be", "uf", "ke", "buf", "bke", "tuf", "relabel", "binarize", "stats", "regionprops", "hold"],
        );
        for stage in STAGES {
            assert_eq!(stage.kernel().name, stage.name);
            assert!(std::ptr::eq(super::stage(stage.name).unwrap(), stage), "{} named twice", stage.name);
        }
    }
}
