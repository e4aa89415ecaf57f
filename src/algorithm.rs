//! What to compute: the labeling algorithms of the papers, and pixel connectivity.

use std::fmt;
use std::str::FromStr;

/// Pixel (or voxel) connectivity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Connectivity {
    /// 2D, edge neighbours (W, N, E, S).
    Four,
    /// 2D, edge and corner neighbours.
    Eight,
}

impl Connectivity {
    /// Every connectivity, in increasing order.
    pub const ALL: [Connectivity; 2] = [Connectivity::Four, Connectivity::Eight];

    /// The number of neighbours: 4 or 8.
    pub fn neighbours(self) -> u32 {
        match self {
            Connectivity::Four => 4,
            Connectivity::Eight => 8,
        }
    }

    /// Parses the neighbour count (4 or 8).
    pub fn from_neighbours(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.neighbours() == n)
    }
}

impl fmt::Display for Connectivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-connectivity", self.neighbours())
    }
}

/// The GPU labeling algorithms of IPAS 2018 and TPDS 2020.
///
/// `_IC` variants replace the Compression step with inline compression (TPDS 2020 Sec. 2.1).
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// Label Equivalence, Hawick, Leist, Playne 2010 (iterative).
    LE,
    /// Optimized Label Equivalence, Kalentev et al. 2011 (iterative).
    OLE,
    /// Block Equivalence, Zavalishin et al. 2016 (2x2 blocks, iterative, 8-connectivity).
    BE,
    /// Union Find, Oliveira & Lotufo 2010 (tiles in local memory, border merge, compression).
    UF,
    /// UF with inline compression.
    UF_IC,
    /// Komura Equivalence, Komura 2015; 8-connectivity as IPAS 2018 Alg. 4.
    KE,
    /// KE with inline compression.
    KE_IC,
    /// Block-based Union Find, TPDS 2020 Alg. 2 (8-connectivity).
    BUF,
    /// BUF with inline compression.
    BUF_IC,
    /// Block-based Komura Equivalence, TPDS 2020 Sec. 5.2 (8-connectivity).
    BKE,
    /// BKE with inline compression.
    BKE_IC,
}

impl Algorithm {
    /// Every algorithm.
    pub const ALL: [Algorithm; 11] = [
        Algorithm::LE,
        Algorithm::OLE,
        Algorithm::BE,
        Algorithm::UF,
        Algorithm::UF_IC,
        Algorithm::KE,
        Algorithm::KE_IC,
        Algorithm::BUF,
        Algorithm::BUF_IC,
        Algorithm::BKE,
        Algorithm::BKE_IC,
    ];

    /// The paper's name, e.g. `BKE_IC`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::LE => "LE",
            Algorithm::OLE => "OLE",
            Algorithm::BE => "BE",
            Algorithm::UF => "UF",
            Algorithm::UF_IC => "UF_IC",
            Algorithm::KE => "KE",
            Algorithm::KE_IC => "KE_IC",
            Algorithm::BUF => "BUF",
            Algorithm::BUF_IC => "BUF_IC",
            Algorithm::BKE => "BKE",
            Algorithm::BKE_IC => "BKE_IC",
        }
    }

    /// The connectivities the algorithm is defined for: block-based ones (BE, BUF, BKE) work
    /// on 2x2 blocks and so only with 8-connectivity.
    pub fn connectivities(self) -> &'static [Connectivity] {
        match self {
            Algorithm::BE | Algorithm::BUF | Algorithm::BUF_IC | Algorithm::BKE | Algorithm::BKE_IC => {
                &[Connectivity::Eight]
            }
            _ => &Connectivity::ALL,
        }
    }

    /// Whether the algorithm is defined for `connectivity`.
    pub fn supports(self, connectivity: Connectivity) -> bool {
        self.connectivities().contains(&connectivity)
    }

    /// How the algorithm numbers components in its raw output.
    pub fn raw_labels(self) -> RawLabels {
        match self {
            Algorithm::BE | Algorithm::BUF | Algorithm::BUF_IC | Algorithm::BKE | Algorithm::BKE_IC => {
                RawLabels::FirstBlock
            }
            _ => RawLabels::FirstPixel,
        }
    }

    /// Whether this is an inline-compression (`_IC`) variant.
    pub fn inline_compression(self) -> bool {
        matches!(self, Algorithm::UF_IC | Algorithm::KE_IC | Algorithm::BUF_IC | Algorithm::BKE_IC)
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
    /// Pixel algorithms (LE, OLE, UF, KE): raster index of the component's first pixel, + 1.
    FirstPixel,
    /// Block algorithms (BE, BUF, BKE): raster index of the top-left pixel of the component's
    /// first 2x2 block (blocks in raster order), + 1. The first block may hold a pixel that comes
    /// after the component's first pixel, e.g. a component starting at (2, 0) that also holds
    /// (1, 1) is labeled 1.
    FirstBlock,
}

/// Error of parsing an algorithm name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm '{0}' (known: LE, OLE, BE, UF, UF_IC, KE, KE_IC, BUF, BUF_IC, BKE, BKE_IC)")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// Case-insensitive; `-` and `_` are the same (`bke-ic` is `BKE_IC`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL.into_iter().find(|a| a.name() == wanted).ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}
