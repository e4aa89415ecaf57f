//! Host volumes: the binary input and the label output of 3D labeling, stored densely with x
//! fastest, then y, then z (a NumPy array of shape (D, H, W) in C order).

use crate::{Error, Result, Shape, MAX_PIXELS};

/// Checks a volume's extent against the limits of 32-bit labels.
pub(crate) fn check_volume(shape: Shape) -> Result<()> {
    if shape.is_empty() {
        return Err(Error::EmptyVolume { shape });
    }
    if shape.width as u128 * shape.height as u128 * shape.depth as u128 > MAX_PIXELS as u128 {
        return Err(Error::TooManyVoxels { shape });
    }
    Ok(())
}

pub(crate) fn check_len(shape: Shape, len: usize) -> Result<()> {
    check_volume(shape)?;
    if len != shape.len() {
        return Err(Error::VolumeSizeMismatch { shape, len });
    }
    Ok(())
}

/// A binary volume, one byte per voxel: any nonzero value is foreground. A volume of depth 1 is
/// still a volume: it is labeled with 6-, 18- or 26-connectivity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryVolume {
    shape: Shape,
    voxels: Vec<u8>,
}

impl BinaryVolume {
    /// Wraps voxels (x fastest, then y, then z); fails when the size is empty, too large, or
    /// does not match.
    pub fn new(width: usize, height: usize, depth: usize, voxels: Vec<u8>) -> Result<Self> {
        let shape = Shape { width, height, depth };
        check_len(shape, voxels.len())?;
        Ok(Self { shape, voxels })
    }

    /// Builds a volume from a predicate on (x, y, z).
    pub fn from_fn(
        width: usize,
        height: usize,
        depth: usize,
        mut f: impl FnMut(usize, usize, usize) -> bool,
    ) -> Result<Self> {
        let shape = Shape { width, height, depth };
        check_volume(shape)?;
        let mut voxels = Vec::with_capacity(shape.len());
        for z in 0..depth {
            for y in 0..height {
                for x in 0..width {
                    voxels.push(u8::from(f(x, y, z)));
                }
            }
        }
        Ok(Self { shape, voxels })
    }

    /// The extent.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The voxel values, x fastest.
    pub fn voxels(&self) -> &[u8] {
        &self.voxels
    }

    /// Whether voxel (x, y, z) is foreground.
    pub fn is_foreground(&self, x: usize, y: usize, z: usize) -> bool {
        self.voxels[(z * self.shape.height + y) * self.shape.width + x] != 0
    }
}

/// A label volume, 32-bit, x fastest: 0 is background.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelVolume {
    shape: Shape,
    labels: Vec<u32>,
}

impl LabelVolume {
    /// Wraps labels (x fastest, then y, then z); fails when the size does not match.
    pub fn new(width: usize, height: usize, depth: usize, labels: Vec<u32>) -> Result<Self> {
        let shape = Shape { width, height, depth };
        check_len(shape, labels.len())?;
        Ok(Self { shape, labels })
    }

    /// The extent.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The labels, x fastest.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// The label of voxel (x, y, z).
    pub fn get(&self, x: usize, y: usize, z: usize) -> u32 {
        self.labels[(z * self.shape.height + y) * self.shape.width + x]
    }

    /// Renumbered 1..=N in order of first appearance (background stays 0), and N.
    pub fn to_consecutive(&self) -> (LabelVolume, u32) {
        let mut labels = self.labels.clone();
        let n = crate::image::renumber(&mut labels);
        (LabelVolume { shape: self.shape, labels }, n)
    }

    /// The number of components.
    pub fn component_count(&self) -> u32 {
        self.to_consecutive().1
    }
}

/// A random volume as the papers' 3D density/granularity experiments (YACCLAB's): the volume is
/// cut into `granularity`^3 cubes, and each cube, in raster order (x fastest), is foreground when
/// the next MT19937 output (std::mt19937 seeded with `seed`) is below `density_percent`% of 2^32.
/// A density above 100 or a granularity of 0 is an [`Error::InvalidParameter`].
pub fn random_volume(
    width: usize,
    height: usize,
    depth: usize,
    density_percent: u32,
    granularity: usize,
    seed: u32,
) -> Result<BinaryVolume> {
    if density_percent > 100 {
        return Err(Error::InvalidParameter {
            name: "density".into(),
            reason: format!("{density_percent} is not a percentage (0 to 100)"),
        });
    }
    if granularity == 0 {
        return Err(Error::InvalidParameter { name: "granularity".into(), reason: "it must be at least 1".into() });
    }
    check_volume(Shape { width, height, depth })?;
    let g = granularity;
    let mut rng = rand_mt::Mt::new(seed);
    let (bw, bh, bd) = (width.div_ceil(g), height.div_ceil(g), depth.div_ceil(g));
    let threshold = (u64::from(density_percent) << 32) / 100;
    let cubes: Vec<bool> = (0..bw * bh * bd).map(|_| u64::from(rng.next_u32()) < threshold).collect();
    BinaryVolume::from_fn(width, height, depth, |x, y, z| cubes[((z / g) * bh + y / g) * bw + x / g])
}
