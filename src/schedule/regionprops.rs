//! Region properties' sums on the device (issue 53; the design is in [`crate::regions`]): after
//! the statistics stage has given each component's area, box and coordinate sums, the host
//! uploads the centroids and `kernels/regionprops.kernel` sums the rest.
//!
//! 1. `region_moments` (with moments or an intensity image): one work-item per block of SEGMENT
//!    x ROWS pixels (16 x 4) of one slice, which sums one component's pixels of the block in
//!    registers and adds them to its central moments (and intensity sum, minimum, maximum) once,
//!    with double-precision atomics. A region covering a block costs one set of atomics (64 for
//!    a volume), not four as with blocks of one row; an image's pixels pay 16 multiply-adds each
//!    for it (on the H200's 2048^2 page 0.25 ms against 0.15 with blocks of one row:
//!    docs/performance-history.md).
//! 2. `region_shape` (with the Euler number or perimeter): one work-item per 2x2 (2x2x2) window
//!    of the array padded by a pixel, adding each component's Euler coefficient, and per pixel of
//!    an image its perimeter class.
//!
//! The kernels need double precision and a 64-bit compare-and-swap (OpenCL's `cl_khr_fp64` and
//! `cl_khr_int64_base_atomics`): a device without them fails the stage's build, by name.

use super::StageInfo;
use crate::gpu::{Arg, Buffer, Define, Gpu, Kernel, LaunchRange, PhaseRecorder, Program};
use crate::kernels::{kernel_file, KernelFile};
use crate::regions::{euler_coefficients, RegionSums};
use crate::{ComponentStats, Phase, Result, Shape};

/// `kernels/regionprops.kernel`.
pub(crate) const KERNEL: KernelFile = kernel_file!("regionprops": COMMON);

/// The stage's registry entry.
pub(crate) const STAGE: StageInfo = StageInfo::new(
    "Region properties' sums from consecutive labels: central moments, Euler number, perimeter, intensity",
    KERNEL,
);

/// Pixels along a row, and rows, of a work-item's block in `region_moments`.
const SEGMENT: usize = 16;
const ROWS: usize = 4;
/// The work-group of both kernels where the device allows it.
const GROUP: [usize; 3] = [32, 8, 1];

/// What a build of the stage is specialised for: the moments' order (0..=3) and the intensity
/// image's element type (`None`: no image; `Some(true)`: `f64`).
pub(crate) type Variant = (u8, Option<bool>);

/// The compile-time defines of `variant`.
pub(crate) fn defines((order, intensity): Variant) -> Vec<Define> {
    let intensity = match intensity {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    };
    vec![
        Define::int("ORDER", i64::from(order)),
        Define::int("INTENSITY", intensity),
        Define::int("SEGMENT", SEGMENT as i64),
        Define::int("ROWS", ROWS as i64),
        Define::flag("FLOAT64", true),
        Define::flag("FLOAT64_ATOMICS", true),
    ]
}

/// The compiled kernels of one [`Variant`].
pub(crate) struct Regions {
    moments: Kernel,
    shape: Kernel,
    group: [usize; 3],
    variant: Variant,
}

impl Regions {
    pub(crate) fn build(gpu: &dyn Gpu, program: &Program, variant: Variant) -> Result<Self> {
        let [moments, shape] = super::launch::kernels(gpu, program, ["region_moments", "region_shape"])?;
        let group = gpu.limits().fit_group(GROUP);
        super::launch::check_kernels(gpu, &[&moments, &shape], group)?;
        Ok(Self { moments, shape, group, variant })
    }

    /// The sums of the components of consecutive `labels` of `shape`, an array of `axes`
    /// dimensions, whose statistics are `stats`: the moments and intensity of this build's
    /// variant (`intensity` its image), and with `with_shape` the Euler and perimeter sums.
    /// Ends [`Phase::Allocation`], [`Phase::RegionProps`] and [`Phase::Download`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        gpu: &dyn Gpu,
        labels: &Buffer,
        shape: Shape,
        axes: u8,
        stats: ComponentStats,
        with_shape: bool,
        intensity: Option<&Buffer>,
        recorder: &mut PhaseRecorder,
    ) -> Result<RegionSums> {
        let (order, _) = self.variant;
        let n = stats.len();
        let mut sums = RegionSums { axes, order, stats, ..RegionSums::default() };
        if n == 0 {
            sums.euler = with_shape.then(Vec::new);
            sums.perimeter = (with_shape && axes == 2).then(Vec::new);
            sums.intensity = intensity.map(|_| Vec::new());
            return Ok(sums);
        }
        let per = sums.moments_per_component();
        let centroids: Vec<f64> = sums.stats.components.iter().flat_map(|c| c.centroid()).collect();
        let mut centroid = gpu.alloc(centroids.len() * 8)?;
        gpu.write(&mut centroid, bytemuck::cast_slice(&centroids))?;
        let mut central = gpu.alloc((n * per).max(1) * 8)?;
        gpu.zero(&mut central)?;
        let mut bounds = gpu.alloc(3 * n * 8)?;
        let initial: Vec<f64> = [0.0, f64::INFINITY, f64::NEG_INFINITY].iter().flat_map(|&v| vec![v; n]).collect();
        gpu.write(&mut bounds, bytemuck::cast_slice(&initial))?;
        let mut euler = gpu.alloc(n * 4)?;
        gpu.zero(&mut euler)?;
        let mut perimeter = gpu.alloc(3 * n * 4)?;
        gpu.zero(&mut perimeter)?;
        let table = euler_coefficients(axes);
        let mut coefficients = gpu.alloc(table.len() * 4)?;
        gpu.write(&mut coefficients, bytemuck::cast_slice(table))?;
        recorder.end(Phase::Allocation)?;

        let sizes = [shape.width, shape.height, shape.depth].map(|s| s as u32);
        let (count, axes_arg) = (Arg::U32(n as u32), Arg::U32(u32::from(axes)));
        if per > 0 || intensity.is_some() {
            let block_rows = shape.height.div_ceil(ROWS) * shape.depth;
            let range = LaunchRange::over([shape.width.div_ceil(SEGMENT), block_rows, 1], self.group);
            let args = [
                Arg::Buffer(labels),
                Arg::Buffer(intensity.unwrap_or(&centroid)),
                Arg::Buffer(&centroid),
                count,
                Arg::U32(sizes[0]),
                Arg::U32(sizes[1]),
                Arg::U32(block_rows as u32),
                axes_arg,
                Arg::Buffer(&central),
                Arg::Buffer(&bounds),
            ];
            gpu.launch(&mut self.moments, &range, &args)?;
        }
        if with_shape {
            let windows = if axes == 3 { (shape.height + 1) * (shape.depth + 1) } else { shape.height + 1 };
            let range = LaunchRange::over([shape.width + 1, windows, 1], self.group);
            let args = [
                Arg::Buffer(labels),
                count,
                Arg::U32(sizes[0]),
                Arg::U32(sizes[1]),
                Arg::U32(sizes[2]),
                axes_arg,
                Arg::Buffer(&coefficients),
                Arg::Buffer(&euler),
                Arg::Buffer(&perimeter),
            ];
            gpu.launch(&mut self.shape, &range, &args)?;
        }
        recorder.end(Phase::RegionProps)?;

        if per > 0 {
            sums.central = vec![0.0; n * per];
            gpu.read(&central, bytemuck::cast_slice_mut(&mut sums.central))?;
        }
        if intensity.is_some() {
            let mut values = vec![0.0f64; 3 * n];
            gpu.read(&bounds, bytemuck::cast_slice_mut(&mut values))?;
            sums.intensity = Some((0..n).map(|k| [values[k], values[n + k], values[2 * n + k]]).collect());
        }
        if with_shape {
            let mut values = vec![0i32; n];
            gpu.read(&euler, bytemuck::cast_slice_mut(&mut values))?;
            sums.euler = Some(values.into_iter().map(i64::from).collect());
            if axes == 2 {
                let mut classes = vec![0u32; 3 * n];
                gpu.read(&perimeter, bytemuck::cast_slice_mut(&mut classes))?;
                let per_class = |k: usize| [0, 1, 2].map(|c| u64::from(classes[c * n + k]));
                sums.perimeter = Some((0..n).map(per_class).collect());
            }
        }
        recorder.end(Phase::Download)?;
        Ok(sums)
    }
}
