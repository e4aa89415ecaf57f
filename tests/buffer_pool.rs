//! The OpenCL backend's buffer pool: a buffer released by a queue's owner serves that queue's
//! next allocation of the same size (its contents show it: reuse keeps them), and no other
//! size's or other queue's (see backends/opencl/src/pool.rs for why the backend keeps them).
//! One test per kind of OpenCL device, over every device of that kind (`cargo test --test
//! buffer_pool -- ::opencl_gpu` runs the GPUs').

mod common;

#[cfg(feature = "opencl")]
mod opencl {
    use ccl_backend::Gpu;

    const BYTES: usize = 4096;

    /// A pattern no fresh buffer holds by chance.
    fn pattern(seed: u8) -> Vec<u8> {
        (0..BYTES).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8).collect()
    }

    /// Allocates `bytes` on `gpu`, writes `data` there and releases the buffer.
    fn release_written(gpu: &dyn Gpu, bytes: usize, data: &[u8]) {
        let mut buffer = gpu.alloc(bytes).expect("alloc");
        gpu.write(&mut buffer, data).expect("write");
    }

    fn contents(gpu: &dyn Gpu, bytes: usize) -> Vec<u8> {
        let buffer = gpu.alloc(bytes).expect("alloc");
        let mut out = vec![0; bytes];
        gpu.read(&buffer, &mut out).expect("read");
        out
    }

    crate::device_tests! {
        opencl;
        a_released_buffer_serves_the_next_allocation_of_its_size_on_its_queue: [opencl_cpu, opencl_gpu],
    }

    fn a_released_buffer_serves_the_next_allocation_of_its_size_on_its_queue(desc: &ccl_opencl::DeviceDesc) {
        let gpu = ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device");
        let device = &desc.name;
        release_written(&gpu, BYTES, &pattern(1));
        assert!(contents(&gpu, BYTES) == pattern(1), "{device}: the released buffer was not reused");
        // While it is held, the next allocation is a buffer of its own; once both are released,
        // the one released last comes back first.
        let mut held = gpu.alloc(BYTES).expect("alloc");
        gpu.write(&mut held, &pattern(2)).expect("write");
        release_written(&gpu, BYTES, &pattern(3));
        let mut out = vec![0; BYTES];
        gpu.read(&held, &mut out).expect("read");
        assert!(out == pattern(2), "{device}: a held buffer was handed out again");
        drop(held);
        // Another size, or another queue of the same device, gets a buffer of its own.
        let other_size = contents(&gpu, BYTES - 1);
        assert!(other_size[..] != pattern(2)[..BYTES - 1], "{device}: a buffer of another size was reused");
        let other_queue = gpu.new_queue().expect("new queue");
        assert!(contents(other_queue.as_ref(), BYTES) != pattern(2), "{device}: another queue reused the buffer");
        assert!(contents(&gpu, BYTES) == pattern(2), "{device}: the buffer released last did not come back first");
    }
}
