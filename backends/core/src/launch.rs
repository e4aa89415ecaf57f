//! What a launch is made of: the range (global and local sizes in x, y, z), the device's
//! limits and how a large 2D range is folded into them, and build defines (kernel arguments,
//! which name buffers, are with the handles).

use crate::{Error, Result};
use std::fmt;

/// The language a device compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ through NVRTC.
    Cuda,
}

impl Dialect {
    /// Both dialects.
    pub const ALL: [Dialect; 2] = [Dialect::OpenCl, Dialect::Cuda];
}

/// The value of a build-time define.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefineValue {
    /// An integer.
    Int(i64),
    /// A 32-bit float, written so that it reads back exactly (`0.1f`).
    Float(f32),
    /// A type or other token, written as is (`uint`).
    Token(&'static str),
}

/// The name of an integer define that caps the registers of each work-item of the program's
/// kernels, for compilers that take no per-kernel budget: NVIDIA's OpenCL builds with
/// `-cl-nv-maxrregcount` (`cl_nv_compiler_options`). CUDA kernels take theirs from their launch
/// bounds (`REQUIRED_GROUP_SIZE`) instead; other compilers ignore it.
pub const REGISTER_BUDGET: &str = "REGISTER_BUDGET";

/// The name of a flag define saying that no float of the program's kernels needs to be
/// denormal (no single- or double-precision value they compute depends on one), so that a
/// compiler may flush denormals to zero: OpenCL builds with `-cl-denorms-are-zero` (NVIDIA's
/// compiler then drops the denormal scaling around its reciprocal square root and division).
/// CUDA kernels choose flush-to-zero per operation instead (the preludes' intrinsics).
pub const FLUSH_DENORMALS: &str = "FLUSH_DENORMALS";

/// A build-time define, `-D NAME=VALUE`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Define {
    /// The macro name.
    pub name: &'static str,
    /// Its value.
    pub value: DefineValue,
}

impl Define {
    /// An integer define.
    pub const fn int(name: &'static str, value: i64) -> Self {
        Self { name, value: DefineValue::Int(value) }
    }

    /// A boolean define (0 or 1).
    pub const fn flag(name: &'static str, on: bool) -> Self {
        Self { name, value: DefineValue::Int(on as i64) }
    }

    /// A float define.
    pub const fn float(name: &'static str, value: f32) -> Self {
        Self { name, value: DefineValue::Float(value) }
    }

    /// A token define (a type name, say).
    pub const fn token(name: &'static str, value: &'static str) -> Self {
        Self { name, value: DefineValue::Token(value) }
    }

    /// The compiler option: `-D NAME=VALUE` (OpenCL) or `-DNAME=VALUE` (NVRTC).
    pub fn option(&self, dialect: Dialect) -> String {
        match dialect {
            Dialect::OpenCl => format!("-D {}={}", self.name, self.value),
            Dialect::Cuda => format!("-D{}={}", self.name, self.value),
        }
    }
}

impl fmt::Display for DefineValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DefineValue::Int(v) => write!(f, "{v}"),
            // Rust prints the shortest text that reads back to the same f32.
            DefineValue::Float(v) if v.is_finite() => {
                let text = format!("{v:?}");
                let text = if text.contains(['.', 'e']) { text } else { format!("{text}.0") };
                write!(f, "{text}f")
            }
            DefineValue::Float(v) => write!(f, "({v})"),
            DefineValue::Token(t) => f.write_str(t),
        }
    }
}

/// Launch limits of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most work-items in one work-group (thread block).
    pub max_group_size: usize,
    /// Most work-items of a work-group along x, y and z (OpenCL `CL_DEVICE_MAX_WORK_ITEM_SIZES`,
    /// CUDA 1024, 1024, 64).
    pub max_group_sizes: [usize; 3],
    /// Most work-groups along x, y and z (CUDA: 2^31 - 1, 65535, 65535).
    pub max_groups: [u64; 3],
    /// Compute units (CUDA multiprocessors, OpenCL `CL_DEVICE_MAX_COMPUTE_UNITS`): how many
    /// groups run at once is a multiple of it, which schedules may size their grids by.
    pub compute_units: usize,
    /// Bytes of local (shared) memory one work-group may use (OpenCL `CL_DEVICE_LOCAL_MEM_SIZE`,
    /// at least 32 KiB on a conformant full-profile device; CUDA 48 KiB of static shared memory).
    pub local_memory: usize,
    /// Bytes of the largest single allocation (OpenCL `CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_allocation: u64,
    /// Work-group sizes that run best are multiples of this (OpenCL's preferred work-group size
    /// multiple, a SIMD or wavefront width: 8 to 64; CUDA's warp of 32).
    pub group_multiple: usize,
}

impl Limits {
    /// A device without grid limits (OpenCL ranges are bounded only by `size_t`) and with the
    /// OpenCL minimum of local memory.
    pub const UNBOUNDED: Limits = Limits {
        max_group_size: 256,
        max_group_sizes: [256, 256, 256],
        max_groups: [u64::MAX; 3],
        compute_units: 1,
        local_memory: 32 * 1024,
        max_allocation: u64::MAX,
        group_multiple: 1,
    };

    /// Whether work-groups of `group` work-items (x, y, z) fit these limits.
    pub fn fits(&self, group: [usize; 3]) -> bool {
        group.iter().product::<usize>() <= self.max_group_size && (0..3).all(|d| group[d] <= self.max_group_sizes[d])
    }

    /// Whether one buffer of `bytes` fits the device's largest single allocation: else
    /// [`Error::DeviceLimit`] for the device named `device` (OpenCL drivers may otherwise fail
    /// the allocation late, or, on some, hand out a buffer that wraps around).
    pub fn check_allocation(&self, device: &str, bytes: usize) -> Result<()> {
        if bytes as u64 > self.max_allocation {
            return Err(Error::DeviceLimit {
                device: device.to_string(),
                kernel: "a buffer".to_string(),
                limit: "bytes in one buffer",
                needs: bytes as u64,
                allows: self.max_allocation,
            });
        }
        Ok(())
    }

    /// The work-group shape to launch where `preferred` is the best, for kernels that work with
    /// any shape: `preferred` where it fits; else each dimension capped at the device's maximum
    /// along it, then the last dimension above 1 halved (z, then y, then x: rows stay long, for
    /// coalesced accesses) until the group fits. Never empty: 1 x 1 x 1 fits every device.
    pub fn fit_group(&self, preferred: [usize; 3]) -> [usize; 3] {
        let mut group: [usize; 3] = std::array::from_fn(|d| preferred[d].clamp(1, self.max_group_sizes[d].max(1)));
        while !self.fits(group) {
            match (0..3).rev().find(|&d| group[d] > 1) {
                Some(d) => group[d] /= 2,
                None => break,
            }
        }
        group
    }
}

/// What one compiled kernel allows on its device: compilers cap the work-group of a kernel that
/// needs many registers below the device's maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelLimits {
    /// Most work-items in one work-group of this kernel (OpenCL `CL_KERNEL_WORK_GROUP_SIZE`, CUDA
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_group_size: usize,
    /// Bytes of local memory the kernel's own arrays take (OpenCL `CL_KERNEL_LOCAL_MEM_SIZE`, CUDA
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
    pub local_memory: usize,
}

impl KernelLimits {
    /// No cap beyond the device's.
    pub const NONE: KernelLimits = KernelLimits { max_group_size: usize::MAX, local_memory: 0 };
}

/// A launch range: `global` work-items in groups of `local`, in x, y and z; `global` is a
/// multiple of `local` in each dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRange {
    /// Work-items along x, y, z.
    pub global: [usize; 3],
    /// Work-group size along x, y, z.
    pub local: [usize; 3],
}

impl LaunchRange {
    /// At least one work-item per element of an `extent` (x, y, z), in groups of `local`: the
    /// range is rounded up, so kernels check their coordinates.
    pub fn over(extent: [usize; 3], local: [usize; 3]) -> Self {
        let global = std::array::from_fn(|d| extent[d].max(1).div_ceil(local[d]) * local[d]);
        Self { global, local }
    }

    /// Work-groups along x, y, z.
    pub fn groups(&self) -> [u64; 3] {
        std::array::from_fn(|d| (self.global[d] / self.local[d]) as u64)
    }

    /// Whether the range is 2D (one work-item along z).
    pub fn is_2d(&self) -> bool {
        self.global[2] == 1 && self.local[2] == 1
    }

    /// The grid of work-groups to launch for this range on a device with `limits`.
    ///
    /// Within the limits, the grid is the range's groups. A 2D range with more groups along y
    /// than the device allows (CUDA: 65535) is folded: y is split into `y1 = min(groups_y,
    /// max_y)` groups times `z1 = ceil(groups_y / y1)`, and the kernel reads its group along y
    /// as `group.y + grid.y * group.z` (the preludes' `GROUP_ID_Y`). The last `y1 * z1 -
    /// groups_y` groups lie past the range, like the rounded-up items of [`LaunchRange::over`];
    /// kernels check their coordinates. Any other excess is refused with the reason.
    pub fn fold(&self, limits: &Limits) -> std::result::Result<[u64; 3], String> {
        let groups = self.groups();
        let [mx, my, mz] = limits.max_groups;
        if groups[0] > mx {
            return Err(format!("{} work-groups along x, more than the device's {mx}", groups[0]));
        }
        if groups[1] <= my && groups[2] <= mz {
            return Ok(groups);
        }
        if !self.is_2d() {
            return Err(format!(
                "{} x {} work-groups along y and z, more than the device's {my} x {mz}",
                groups[1], groups[2]
            ));
        }
        let y1 = groups[1].min(my);
        let z1 = groups[1].div_ceil(y1);
        if z1 > mz {
            return Err(format!("{} work-groups along y cannot be folded into {my} x {mz}", groups[1]));
        }
        Ok([groups[0], y1, z1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUDA: Limits = Limits {
        max_group_size: 1024,
        max_group_sizes: [1024, 1024, 64],
        max_groups: [(1 << 31) - 1, 65535, 65535],
        compute_units: 132,
        local_memory: 48 * 1024,
        max_allocation: u64::MAX,
        group_multiple: 32,
    };

    #[test]
    fn buffers_past_the_largest_allocation_are_refused_by_name() {
        let small = Limits { max_allocation: 1 << 20, ..Limits::UNBOUNDED };
        assert!(small.check_allocation("dev", 1 << 20).is_ok());
        match small.check_allocation("dev", (1 << 20) + 1) {
            Err(Error::DeviceLimit { limit, needs, allows, .. }) => {
                assert_eq!((limit, needs, allows), ("bytes in one buffer", (1 << 20) + 1, 1 << 20));
            }
            other => panic!("expected a device limit, got {other:?}"),
        }
    }

    #[test]
    fn ranges_round_up_to_whole_groups() {
        let r = LaunchRange::over([100, 17, 1], [32, 8, 1]);
        assert_eq!(r.global, [128, 24, 1]);
        assert_eq!(r.groups(), [4, 3, 1]);
        assert!(r.is_2d());
        assert_eq!(LaunchRange::over([0, 5, 1], [32, 8, 1]).global, [32, 8, 1]);
    }

    #[test]
    fn tall_2d_ranges_fold_y_into_z_and_cover_every_row() {
        // 1 x 600000 pixels in 32 x 8 groups: 75000 groups along y.
        let r = LaunchRange::over([1, 600_000, 1], [32, 8, 1]);
        let grid = r.fold(&CUDA).unwrap();
        assert_eq!(grid, [1, 65535, 2]);
        assert!(grid[1] * grid[2] >= 75_000);
        // Within the limits nothing changes.
        assert_eq!(LaunchRange::over([600_000, 1, 1], [32, 8, 1]).fold(&CUDA).unwrap(), [18750, 1, 1]);
        // The largest 2D image (2^32 - 1 rows of one pixel) still fits.
        let r = LaunchRange::over([1, u32::MAX as usize, 1], [32, 8, 1]);
        let grid = r.fold(&CUDA).unwrap();
        assert!(grid[1] <= 65535 && grid[2] <= 65535 && grid[1] * grid[2] >= r.groups()[1]);
    }

    #[test]
    fn ranges_that_cannot_fold_are_refused() {
        let tiny = Limits { max_group_size: 64, max_groups: [4, 4, 4], ..Limits::UNBOUNDED };
        assert!(LaunchRange::over([1, 200, 1], [1, 8, 1]).fold(&tiny).is_err(), "25 > 4 x 4");
        assert_eq!(LaunchRange::over([1, 100, 1], [1, 8, 1]).fold(&tiny).unwrap(), [1, 4, 4]);
        assert!(LaunchRange::over([8, 8, 40], [1, 1, 8]).fold(&tiny).is_err(), "3D is not folded");
        assert!(LaunchRange::over([40, 1, 1], [8, 1, 1]).fold(&tiny).is_err());
    }

    #[test]
    fn groups_shrink_to_fit_the_device() {
        assert_eq!(CUDA.fit_group([32, 8, 1]), [32, 8, 1]);
        let small = Limits { max_group_size: 64, ..Limits::UNBOUNDED };
        assert_eq!(small.fit_group([32, 8, 1]), [32, 2, 1]);
        assert_eq!(small.fit_group([8, 8, 4]), [8, 8, 1]);
        assert_eq!(small.fit_group([32, 4, 2]), [32, 2, 1]);
        let narrow = Limits { max_group_sizes: [16, 256, 256], ..Limits::UNBOUNDED };
        assert_eq!(narrow.fit_group([32, 8, 1]), [16, 8, 1]);
        let one = Limits { max_group_size: 1, max_group_sizes: [1, 1, 1], ..Limits::UNBOUNDED };
        assert_eq!(one.fit_group([32, 4, 2]), [1, 1, 1]);
        assert!(one.fits([1, 1, 1]) && !one.fits([2, 1, 1]));
    }

    #[test]
    fn defines_render_for_each_compiler() {
        assert_eq!(Define::int("CONNECTIVITY", 8).option(Dialect::OpenCl), "-D CONNECTIVITY=8");
        assert_eq!(Define::int("CONNECTIVITY", 8).option(Dialect::Cuda), "-DCONNECTIVITY=8");
        assert_eq!(Define::flag("INLINE_COMPRESSION", true).option(Dialect::Cuda), "-DINLINE_COMPRESSION=1");
        assert_eq!(Define::float("K", -0.1).option(Dialect::OpenCl), "-D K=-0.1f");
        assert_eq!(Define::float("K", 2.0).option(Dialect::OpenCl), "-D K=2.0f");
        assert_eq!(Define::float("K", 1e-30).value.to_string(), "1e-30f");
        assert_eq!(Define::token("LABEL_T", "uint").option(Dialect::OpenCl), "-D LABEL_T=uint");
    }
}
