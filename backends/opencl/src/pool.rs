//! Device buffers kept for reuse: the buffers a queue's owners release serve that queue's later
//! allocations of the same size, as the CUDA backend's stream-ordered memory pool does. The
//! pools of one device's queues (one per labeler or binarizer) share one budget of kept bytes,
//! so that many labelers of one device never keep more than it between them.
//!
//! Creating an OpenCL buffer is cheap, but drivers (NVIDIA's among them) back it with device
//! memory only at its first command, inside that command's enqueue: a labeling or binarization
//! that allocates its output on every call pays that on every call (about 60 us for 10 MB on an
//! H100), and where the first command comes after a queued kernel the device idles meanwhile.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use opencl3::memory::Buffer as ClBuffer;

/// The bytes that the pools of one device keep between them, and their limit.
pub(crate) struct KeptBudget {
    limit: usize,
    kept: AtomicUsize,
}

impl KeptBudget {
    /// A budget of `limit` bytes, shared by the pools made with it.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self { limit, kept: AtomicUsize::new(0) })
    }
}

/// The released buffers (`B`: OpenCL buffers; other types in the unit tests) of one command
/// queue, oldest first, within the device's budget.
pub(crate) struct BufferPool<B = ClBuffer<u8>> {
    kept: Mutex<Kept<B>>,
    budget: Arc<KeptBudget>,
}

struct Kept<B> {
    buffers: VecDeque<(usize, B)>,
    bytes: usize,
}

impl<B> Default for Kept<B> {
    fn default() -> Self {
        Self { buffers: VecDeque::new(), bytes: 0 }
    }
}

impl<B> BufferPool<B> {
    /// A pool that keeps released buffers while all the pools of `budget` keep at most its
    /// limit between them.
    pub(crate) fn new(budget: Arc<KeptBudget>) -> Arc<Self> {
        Arc::new(Self { kept: Mutex::new(Kept::default()), budget })
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept<B>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept buffer of exactly `bytes` bytes (the most recently released), if any.
    pub(crate) fn take(&self, bytes: usize) -> Option<B> {
        let mut kept = self.kept();
        let at = kept.buffers.iter().rposition(|(size, _)| *size == bytes)?;
        let (_, buffer) = kept.buffers.remove(at)?;
        kept.bytes -= bytes;
        self.budget.kept.fetch_sub(bytes, Ordering::Relaxed);
        Some(buffer)
    }

    /// Keeps `buffer` (of `bytes` bytes) for reuse, releasing this pool's oldest kept buffers
    /// while the device's pools keep more than the budget (the buffer itself when this pool
    /// has no other: a buffer larger than the budget, or one the other pools leave no room for).
    fn put(&self, bytes: usize, buffer: B) {
        let released = {
            let mut kept = self.kept();
            kept.buffers.push_back((bytes, buffer));
            kept.bytes += bytes;
            let mut total = self.budget.kept.fetch_add(bytes, Ordering::Relaxed) + bytes;
            let mut released = Vec::new();
            while total > self.budget.limit {
                let Some((size, oldest)) = kept.buffers.pop_front() else { break };
                kept.bytes -= size;
                total = self.budget.kept.fetch_sub(size, Ordering::Relaxed) - size;
                released.push(oldest);
            }
            released
        };
        drop(released); // clReleaseMemObject outside the lock
    }

    /// Releases every kept buffer (before retrying an allocation the device refused).
    pub(crate) fn release_all(&self) {
        let released = std::mem::take(&mut *self.kept());
        self.budget.kept.fetch_sub(released.bytes, Ordering::Relaxed);
        drop(released);
    }
}

/// A buffer of a queue's pool: given back to the pool when dropped.
///
/// Reuse is safe on the queue that allocated it: the queue is in order, so the next owner's
/// commands run after the previous owner's. A buffer used on another queue of the same context
/// must be idle there when dropped, as ccl's labelers and binarizers leave theirs (they wait for
/// their commands before they return).
pub(crate) struct PooledBuffer {
    buffer: Option<ClBuffer<u8>>,
    bytes: usize,
    pool: Arc<BufferPool>,
}

impl PooledBuffer {
    /// `buffer`, of `bytes` bytes, owned until dropped and then kept by `pool`.
    pub(crate) fn new(buffer: ClBuffer<u8>, bytes: usize, pool: Arc<BufferPool>) -> Self {
        Self { buffer: Some(buffer), bytes, pool }
    }

    /// The OpenCL buffer.
    pub(crate) fn buffer(&self) -> &ClBuffer<u8> {
        self.buffer.as_ref().expect("a buffer until dropped")
    }

    /// The OpenCL buffer, for commands that write it.
    pub(crate) fn buffer_mut(&mut self) -> &mut ClBuffer<u8> {
        self.buffer.as_mut().expect("a buffer until dropped")
    }
}

impl<B> Drop for BufferPool<B> {
    /// The pool's buffers leave the budget with it.
    fn drop(&mut self) {
        self.release_all();
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.pool.put(self.bytes, buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BufferPool, KeptBudget};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A stand-in buffer that counts its releases.
    struct Counted(u32, Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_last_released_buffer_of_the_size_comes_back_first() {
        let released = Arc::new(AtomicUsize::new(0));
        let pool = BufferPool::<Counted>::new(KeptBudget::new(1000));
        pool.put(100, Counted(1, released.clone()));
        pool.put(200, Counted(2, released.clone()));
        pool.put(100, Counted(3, released.clone()));
        assert_eq!(pool.take(100).map(|b| b.0), Some(3));
        assert_eq!(pool.take(100).map(|b| b.0), Some(1));
        assert!(pool.take(100).is_none(), "each buffer is handed out once");
        assert!(pool.take(150).is_none(), "only the exact size is reused");
        assert_eq!(released.load(Ordering::SeqCst), 2, "the two buffers taken, dropped by the test");
        assert_eq!(pool.kept().bytes, 200);
    }

    #[test]
    fn the_oldest_buffers_are_released_beyond_the_limit() {
        let released = Arc::new(AtomicUsize::new(0));
        let pool = BufferPool::<Counted>::new(KeptBudget::new(250));
        pool.put(100, Counted(1, released.clone()));
        pool.put(100, Counted(2, released.clone()));
        assert_eq!(released.load(Ordering::SeqCst), 0);
        pool.put(100, Counted(3, released.clone()));
        assert_eq!(released.load(Ordering::SeqCst), 1, "300 bytes > 250: the oldest goes");
        assert_eq!(pool.take(100).map(|b| b.0), Some(3));
        assert_eq!(pool.take(100).map(|b| b.0), Some(2));
        pool.put(300, Counted(4, released.clone()));
        assert_eq!(released.load(Ordering::SeqCst), 4, "a buffer above the limit is not kept");
        pool.put(50, Counted(5, released.clone()));
        pool.release_all();
        assert_eq!(released.load(Ordering::SeqCst), 5);
        assert_eq!(pool.kept().bytes, 0);
    }

    #[test]
    fn the_pools_of_a_device_share_its_budget() {
        let released = Arc::new(AtomicUsize::new(0));
        let budget = KeptBudget::new(250);
        let (a, b) = (BufferPool::<Counted>::new(budget.clone()), BufferPool::<Counted>::new(budget.clone()));
        a.put(100, Counted(1, released.clone()));
        a.put(100, Counted(2, released.clone()));
        b.put(100, Counted(3, released.clone()));
        assert_eq!(released.load(Ordering::SeqCst), 1, "300 bytes kept by two pools > 250");
        assert!(b.take(100).is_none(), "the pool over the budget let its own buffer go");
        assert_eq!(budget.kept.load(Ordering::SeqCst), 200);
        assert_eq!(a.take(100).map(|b| b.0), Some(2));
        b.put(100, Counted(4, released.clone()));
        assert_eq!(budget.kept.load(Ordering::SeqCst), 200, "taken bytes leave the budget");
        drop(a);
        assert_eq!(budget.kept.load(Ordering::SeqCst), 100, "a dropped pool's buffers leave it too");
        b.release_all();
        assert_eq!(budget.kept.load(Ordering::SeqCst), 0);
    }
}
