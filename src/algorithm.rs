//! What to compute: the labeling algorithms of the papers, and pixel connectivity.

use std::fmt;
use std::str::FromStr;

use crate::registry::AlgorithmInfo;

/// Pixel (or voxel) connectivity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Connectivity {
    /// 2D, edge neighbours (W, N, E, S).
    Four,
    /// 3D, face neighbours.
    Six,
    /// 2D, edge and corner neighbours.
    Eight,
    /// 3D, face and edge neighbours.
    Eighteen,
    /// 3D, face, edge and corner neighbours.
    TwentySix,
}

impl Connectivity {
    /// Every connectivity, in increasing order of neighbours.
    pub const ALL: [Connectivity; 5] =
        [Connectivity::Four, Connectivity::Six, Connectivity::Eight, Connectivity::Eighteen, Connectivity::TwentySix];
    /// The connectivities of images.
    pub const PLANAR: [Connectivity; 2] = [Connectivity::Four, Connectivity::Eight];
    /// The connectivities of volumes.
    pub const VOLUMETRIC: [Connectivity; 3] = [Connectivity::Six, Connectivity::Eighteen, Connectivity::TwentySix];

    /// The number of neighbours: 4, 6, 8, 18 or 26.
    pub fn neighbours(self) -> u32 {
        match self {
            Connectivity::Four => 4,
            Connectivity::Six => 6,
            Connectivity::Eight => 8,
            Connectivity::Eighteen => 18,
            Connectivity::TwentySix => 26,
        }
    }

    /// 2 for the connectivities of images, 3 for those of volumes.
    pub fn dims(self) -> u8 {
        match self {
            Connectivity::Four | Connectivity::Eight => 2,
            Connectivity::Six | Connectivity::Eighteen | Connectivity::TwentySix => 3,
        }
    }

    /// Parses the neighbour count (4, 6, 8, 18 or 26).
    pub fn from_neighbours(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.neighbours() == n)
    }
}

impl fmt::Display for Connectivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-connectivity", self.neighbours())
    }
}

/// A labeling algorithm: a handle on its entry in the registry (`crate::registry`), which holds
/// its name, connectivities, raw-label convention, kernels and schedule. The constants
/// (`Algorithm::UF`, `Algorithm::BKE_IC`, ...) and [`Algorithm::ALL`] come from the registry;
/// an `_IC` variant replaces the Compression step with inline compression (TPDS 2020 Sec. 2.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Algorithm(pub(crate) u8);

impl Algorithm {
    /// The registry entry.
    pub fn info(self) -> &'static AlgorithmInfo {
        &crate::registry::ENTRIES[self.0 as usize]
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
                algorithm: self,
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

/// The raw label convention of an algorithm: every component is labeled from its smallest
/// pixel or 2x2-block index, plus one; background is 0. Deterministic, not consecutive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawLabels {
    /// Pixel algorithms (LE, OLE, UF, KE, TUF): raster index of the component's first pixel, + 1.
    FirstPixel,
    /// Block algorithms (BE, BUF, BKE): raster index of the top-left pixel of the component's
    /// first 2x2 block (blocks in raster order), + 1. The first block may hold a pixel that comes
    /// after the component's first pixel, e.g. a component starting at (2, 0) that also holds
    /// (1, 1) is labeled 1.
    FirstBlock,
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
