//! Multi-label images: integer values (classes, a segmentation, an atlas) whose components are
//! the connected sets of equal values, every value but a background value being foreground, as
//! cc3d and scikit-image label a label image. A binary image is the case of two values.
//!
//! An image on the device carries its [`ImageKind`]: a binary mask (one byte an element, nonzero
//! is foreground) or [`ImageKind::MultiLabel`] values of 1, 2, 4 or 8 bytes with their background.
//! The labelers build the kernels of an algorithm for each kind they meet (`MULTILABEL`,
//! `PIXEL_BYTES` and the background as defines, `kernels/common.h`), so a multi-label labeling
//! costs a kernel build per width and background value (then the kernel cache's). Only the
//! algorithms whose kernels compare values take one ([`crate::Algorithm::supports_multilabel`]:
//! the pixel algorithms, LE, OLE, UF, KE and their _IC variants, at every connectivity; TUF at
//! 4, 8 and 6, its runs made of equal values, the default there); the block algorithms refuse
//! it with [`crate::Error::UnsupportedMultiLabel`]. Equality is of the values'
//! bytes, so signed and unsigned types of one width label alike. Labels, relabeling, statistics
//! and filters are those of binary images: they never read the input.

use crate::gpu::Define;

/// What the elements of an image on a device are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// One byte an element; nonzero is foreground and foreground neighbours join.
    #[default]
    Binary,
    /// Integer values of `bytes` bytes (1, 2, 4 or 8) in the device's byte order; the value
    /// whose bits are `background` (its low `bytes` bytes) is background, and neighbours join
    /// only where their values are equal.
    MultiLabel {
        /// Bytes per value.
        bytes: u8,
        /// The background's bits.
        background: u64,
    },
}

impl ImageKind {
    /// The multi-label kind of values of type `T` with background `background`.
    pub fn multilabel<T: LabelValue>(background: T) -> Self {
        ImageKind::MultiLabel { bytes: std::mem::size_of::<T>() as u8, background: background.bits() }
    }

    /// The kernel defines of images of this kind (`kernels/common.h`): none for binary images.
    pub fn defines(self) -> Vec<Define> {
        match self {
            ImageKind::Binary => Vec::new(),
            ImageKind::MultiLabel { bytes, background } => vec![
                Define::flag("MULTILABEL", true),
                Define::int("PIXEL_BYTES", bytes.into()),
                Define::int("BACKGROUND_HI", (background >> 32) as i64),
                Define::int("BACKGROUND_LO", (background & 0xffff_ffff) as i64),
            ],
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            ImageKind::Binary => 1,
            ImageKind::MultiLabel { bytes, .. } => bytes.into(),
        }
    }
}

/// An integer type a multi-label image holds: 8 to 64 bits, signed or not.
pub trait LabelValue: bytemuck::Pod + PartialEq + Send + Sync {
    /// Its bits, zero-extended to 64 (what the kernels compare: the type's own bytes).
    fn bits(self) -> u64;
}

macro_rules! label_value {
    ($($signed:ty => $unsigned:ty),*) => {$(
        impl LabelValue for $unsigned {
            fn bits(self) -> u64 {
                self as u64
            }
        }
        impl LabelValue for $signed {
            fn bits(self) -> u64 {
                self as $unsigned as u64
            }
        }
    )*};
}
label_value!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);

/// The values of an image of `kind` held in `bytes` (native byte order), widened to u64 bits,
/// and the background's: what the CPU reference compares.
pub(crate) fn values_of(kind: ImageKind, bytes: &[u8]) -> (Vec<u64>, u64) {
    match kind {
        ImageKind::Binary => (bytes.iter().map(|&b| u64::from(b != 0)).collect(), 0),
        ImageKind::MultiLabel { bytes: width, background } => {
            let width = usize::from(width);
            let mask = if width == 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
            let values = bytes
                .chunks_exact(width)
                .map(|e| {
                    let mut word = [0u8; 8];
                    if cfg!(target_endian = "little") {
                        word[..width].copy_from_slice(e);
                    } else {
                        word[8 - width..].copy_from_slice(e);
                    }
                    u64::from_ne_bytes(word)
                })
                .collect();
            (values, background & mask)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_values_compare_by_their_bits() {
        assert_eq!(ImageKind::multilabel(-1i16), ImageKind::MultiLabel { bytes: 2, background: 0xffff });
        assert_eq!(ImageKind::multilabel(7u64), ImageKind::MultiLabel { bytes: 8, background: 7 });
        let values: Vec<i16> = vec![-1, 3, -1, 300];
        let (widened, background) = values_of(ImageKind::multilabel(-1i16), bytemuck::cast_slice(&values));
        assert_eq!(widened, vec![0xffff, 3, 0xffff, 300]);
        assert_eq!(background, 0xffff);
        assert_eq!(ImageKind::multilabel(0u32).bytes(), 4);
        assert_eq!(ImageKind::Binary.bytes(), 1);
    }
}
