//! What the schedules and the stages (relabeling, statistics) share to launch kernels: the
//! work-groups, launch ranges over pixels, voxels and 2x2 blocks, kernel lookup and checks, the
//! launch after (or overlapping) the previous kernel, and the iterate-until-stable loop of LE,
//! OLE and BE. It uses only the device layer.

use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, Limits, Program};
use crate::{Connectivity, Result, Shape};

/// Work-group shape of every 2D schedule: 32 x 8 = 256 work-items, a size every OpenCL device
/// accepts, and a full warp per row for coalesced accesses.
pub(crate) const GROUP: [usize; 3] = [32, 8, 1];
/// UF's tiles on volumes (its work-group): 8 x 8 x 4 voxels, so that most neighbours of a
/// voxel lie in its tile.
pub(crate) const GROUP_3D: [usize; 3] = [8, 8, 4];
/// The work-group of the other kernels over voxels or 2x2x2 blocks: 32 x 4 x 2 = 256 work-items,
/// a warp along x, so that rows are read and written in long coalesced runs.
pub(crate) const VOXEL_GROUP: [usize; 3] = [32, 4, 2];

/// Bytes of one label (`label_t` in the kernels, 32-bit in this build).
pub(crate) const LABEL_BYTES: usize = 4;

/// Launches `kernel` to start while the kernel before it ends where `overlap`
/// ([`Gpu::launch_overlapping`]: it must wait for that kernel before it reads what it writes),
/// else after it.
pub(crate) fn launch_after(
    gpu: &dyn Gpu,
    overlap: bool,
    kernel: &mut Kernel,
    range: &LaunchRange,
    args: &[Arg],
) -> Result<()> {
    if overlap {
        Ok(gpu.launch_overlapping(kernel, range, args)?)
    } else {
        Ok(gpu.launch(kernel, range, args)?)
    }
}

/// The kernels `names` of a compiled program.
pub(crate) fn kernels<const N: usize>(gpu: &dyn Gpu, program: &Program, names: [&str; N]) -> Result<[Kernel; N]> {
    let mut out = Vec::with_capacity(N);
    for name in names {
        out.push(gpu.kernel(program, name)?);
    }
    Ok(out.try_into().unwrap_or_else(|_| unreachable!("N kernels were made")))
}

/// [`BackendError::DeviceLimit`](crate::BackendError::DeviceLimit) unless `kernel` runs in
/// work-groups of `group` on `gpu` (its local memory, and the work-items of a group in all and
/// along each axis): a schedule checks its kernels when it is built, so that a labeler for an
/// algorithm the device cannot run is refused at once, naming the limit, rather than at its first
/// launch.
pub(crate) fn check_group(gpu: &dyn Gpu, kernel: &Kernel, group: [usize; 3]) -> Result<()> {
    Ok(kernel.check_group(gpu.name(), group, gpu.limits())?)
}

/// The work-group of the kernels over pixels (GROUP) or, with `volumes`, over voxels
/// (VOXEL_GROUP), fitted to a device with `limits` ([`Limits::fit_group`]): those kernels work
/// with any shape.
pub(crate) fn pixel_group(limits: &Limits, volumes: bool) -> [usize; 3] {
    limits.fit_group(if volumes { VOXEL_GROUP } else { GROUP })
}

/// [`check_group`] for each of `kernels`, all launched in groups of `group`.
pub(crate) fn check_kernels(gpu: &dyn Gpu, kernels: &[&Kernel], group: [usize; 3]) -> Result<()> {
    kernels.iter().try_for_each(|kernel| check_group(gpu, kernel, group))
}

/// One work-item per pixel of `shape`, in groups of [`pixel_group`].
pub(crate) fn over_pixels(limits: &Limits, shape: Shape) -> LaunchRange {
    LaunchRange::over([shape.width, shape.height, 1], pixel_group(limits, false))
}

/// One work-item per voxel of `shape`, in groups of [`pixel_group`] (kernels built with DIMS=3).
pub(crate) fn over_voxels(limits: &Limits, shape: Shape) -> LaunchRange {
    LaunchRange::over([shape.width, shape.height, shape.depth], pixel_group(limits, true))
}

/// One work-item per 2x2 block of `shape` (`ceil(width / 2)` x `ceil(height / 2)` blocks), or
/// with `volumes` per 2x2x2 block, in groups of [`pixel_group`] (kernels built with DIMS=3).
pub(crate) fn over_blocks(limits: &Limits, shape: Shape, volumes: bool) -> LaunchRange {
    let blocks = [shape.width.div_ceil(2), shape.height.div_ceil(2), shape.depth.div_ceil(2)];
    if volumes {
        LaunchRange::over(blocks, pixel_group(limits, true))
    } else {
        LaunchRange::over([blocks[0], blocks[1], 1], pixel_group(limits, false))
    }
}

/// The `DIMS=3` define of kernels built for a volume connectivity (none for images).
pub(crate) fn dims_defines(connectivity: Connectivity) -> Vec<Define> {
    if connectivity.dims() == 3 {
        vec![Define::int("DIMS", 3)]
    } else {
        Vec::new()
    }
}

/// Runs `iteration` until it leaves the one-word `flag` clear: the flag is zeroed before and
/// read back after each iteration (the read waits for it). Returns the number of iterations.
pub(crate) fn until_stable(
    gpu: &dyn Gpu,
    flag: &mut Buffer,
    mut iteration: impl FnMut(&Buffer) -> ccl_backend::Result<()>,
) -> Result<u32> {
    let mut iterations = 0;
    loop {
        iterations += 1;
        gpu.zero(flag)?;
        iteration(flag)?;
        let mut word = [0u8; 4];
        gpu.read(flag, &mut word)?;
        if word == [0; 4] {
            return Ok(iterations);
        }
    }
}
