//! `Gpu::launch_overlapping`: a kernel launched to overlap the kernel queued before it reads
//! what that kernel wrote once past `WAIT_FOR_PREVIOUS_KERNEL()` (CUDA's programmatic dependent
//! launch on compute capability 9.0 and later, which the fast Nick kernel uses after its column
//! sums; an ordinary launch elsewhere). The first kernel lets the next start at once and then
//! takes a while before it writes, so a second kernel that did not wait would read zeros.
//! OpenCL has one test per kind of device, over every device of that kind (`cargo test --test
//! overlap -- ::opencl_cpu`); CUDA one, on device 0 (`cuda_overlapping_launches_...`).
#![cfg(any(feature = "opencl", feature = "cuda"))]

mod common;

use ccl_backend::{Arg, Dialect, Gpu, LaunchRange};

/// The two kernels behind the dialect's prelude: `slow_fill` writes `value + i` after a long
/// loop of dependent steps (whose result goes to `sink`); `copy_after` waits for it, then copies.
fn source(dialect: Dialect) -> String {
    let prelude = match dialect {
        Dialect::OpenCl => include_str!("../kernels-cl/prelude.h"),
        Dialect::Cuda => include_str!("../kernels-cu/prelude.cuh"),
    };
    let kernels = "
KERNEL void slow_fill(GLOBAL uint *out, GLOBAL uint *sink, uint n, uint value, uint steps)
{
    LET_NEXT_KERNEL_START();
    const uint i = GLOBAL_ID_X;
    uint state = i | 1u;
    for (uint s = 0; s < steps; s++)
        state = state * 1664525u + 1013904223u;
    if (i < n) {
        sink[i] = state; // (keeps the loop)
        out[i] = value + i;
    }
}

KERNEL void copy_after(GLOBAL const uint *in, GLOBAL uint *out, uint n)
{
    const uint i = GLOBAL_ID_X;
    WAIT_FOR_PREVIOUS_KERNEL();
    if (i < n)
        out[i] = in[i];
}
";
    format!("{prelude}\n{kernels}")
}

/// Fills, then copies overlapping, three times; the copy holds what the fill wrote.
fn check(gpu: &dyn Gpu, dialect: Dialect) {
    let program = gpu.build(&source(dialect), &[]).unwrap_or_else(|e| panic!("{}: {e}", gpu.name()));
    let mut fill = gpu.kernel(&program, "slow_fill").unwrap();
    let mut copy = gpu.kernel(&program, "copy_after").unwrap();
    let n = 4096u32;
    let range = LaunchRange::over([n as usize, 1, 1], [128, 1, 1]);
    for round in 0..3u32 {
        let mut filled = gpu.alloc(n as usize * 4).unwrap();
        let mut copied = gpu.alloc(n as usize * 4).unwrap();
        let sink = gpu.alloc(n as usize * 4).unwrap();
        gpu.zero(&mut filled).unwrap();
        gpu.zero(&mut copied).unwrap();
        let value = 1000 * (round + 1);
        let args = [Arg::Buffer(&filled), Arg::Buffer(&sink), Arg::U32(n), Arg::U32(value), Arg::U32(20000)];
        gpu.launch(&mut fill, &range, &args).unwrap();
        gpu.launch_overlapping(&mut copy, &range, &[Arg::Buffer(&filled), Arg::Buffer(&copied), Arg::U32(n)]).unwrap();
        gpu.finish().unwrap();
        let mut bytes = vec![0u8; n as usize * 4];
        gpu.read(&copied, &mut bytes).unwrap();
        let wrong = bytes
            .chunks_exact(4)
            .enumerate()
            .filter(|(i, c)| u32::from_ne_bytes((*c).try_into().unwrap()) != value + *i as u32)
            .count();
        assert_eq!(wrong, 0, "{}: round {round}: {wrong} of {n} values copied before they were written", gpu.name());
    }
}

device_tests! {
    opencl;
    #[cfg(feature = "opencl")]
    overlapping_launches_read_what_the_previous_kernel_wrote: [opencl_cpu, opencl_gpu],
}

#[cfg(feature = "opencl")]
fn overlapping_launches_read_what_the_previous_kernel_wrote(desc: &ccl_opencl::DeviceDesc) {
    let gpu = ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device");
    check(&gpu, Dialect::OpenCl);
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_overlapping_launches_read_what_the_previous_kernel_wrote() {
    if !common::cuda_present("overlapping launches on CUDA") {
        return;
    }
    let gpu = ccl_cuda::Runtime::new(0).expect("open CUDA device");
    check(&gpu, Dialect::Cuda);
}
