//! Volumes in and out: NumPy `.npy` files of shape (D, H, W) in C order.

use std::path::Path;

use npyz::WriterBuilder;

use crate::{BinaryVolume, Error, LabelVolume, Result};

/// Reads a binary volume from a `.npy` of shape (D, H, W), C order, uint8 or bool: nonzero is
/// foreground. Any other shape, order or element type is an [`Error::FileRead`] saying which.
pub fn read_volume_npy(path: &Path) -> Result<BinaryVolume> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| fail(format!("not a .npy file: {e}")))?;
    let dtype = npy.dtype().descr();
    if !matches!(dtype.trim_matches('\''), "|u1" | "<u1" | ">u1" | "|b1") {
        return Err(fail(format!("voxels of type {dtype}; a volume is uint8 or bool")));
    }
    if npy.order() != npyz::Order::C {
        return Err(fail("Fortran order; a volume is stored in C order (np.ascontiguousarray)".into()));
    }
    let &[depth, height, width] = npy.shape() else {
        return Err(fail(format!("shape {:?}; a volume has three axes (D, H, W)", npy.shape())));
    };
    let n = (depth as u128 * height as u128 * width as u128).min(usize::MAX as u128) as usize;
    // One byte per voxel after the header, whose length the format stores after the magic
    // string and the version: 2 bytes (version 1) or 4 (versions 2 and 3), little-endian.
    let data = match bytes[6] {
        1 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
        _ => 12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
    };
    let held = bytes.len().saturating_sub(data);
    if held != n {
        return Err(fail(format!("the file holds {held} voxels; its shape ({depth}, {height}, {width}) has {n}")));
    }
    let voxels = bytes[data..].to_vec();
    BinaryVolume::new(width as usize, height as usize, depth as usize, voxels)
}

/// Writes labels as a `.npy` of uint32 with shape (D, H, W), atomically (see
/// [`super::write_atomically`]).
pub fn write_volume_npy(path: &Path, labels: &LabelVolume) -> Result<()> {
    let s = labels.shape();
    super::write_atomically(path, |w| {
        let mut writer = npyz::WriteOptions::<u32>::new()
            .default_dtype()
            .shape(&[s.depth as u64, s.height as u64, s.width as u64])
            .writer(w)
            .begin_nd()?;
        writer.extend(labels.labels().iter().copied())?;
        writer.finish()
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}
