//! Pixel connectivity and the raw-label conventions of the algorithms (the algorithms themselves
//! are the registry's: [`crate::registry`]).

use std::fmt;

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
