//! Timing events of a handle's marks: a pool that keeps them for the next marks, and the last
//! mark, which a mark with no command since reuses.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaEvent;

/// Timing events a handle keeps for its next marks ([`Runtime`]'s `mark`), instead of creating
/// (and destroying) one per mark: a labeling takes 5-10 marks. H100, `ccl bench average` on 20
/// DIBCO pages, A/B on one machine, three rounds: TUF 0.0227-0.0252 -> 0.0222-0.0224 ms,
/// BKE_IC 0.032-0.036 -> 0.031, TUF + statistics 0.055-0.063 -> 0.053-0.054 (and steadier
/// from run to run); 2048^2 unchanged.
///
/// [`Runtime`]: crate::Runtime
#[derive(Default)]
pub(crate) struct EventPool {
    pub(crate) events: Mutex<Vec<CudaEvent>>,
}

/// A recorded timing event, given back to its handle's pool when its mark drops (its
/// elapsed times, the only use of a mark, are read before that).
pub(crate) struct PooledEvent {
    pub(crate) event: Option<CudaEvent>,
    pub(crate) pool: Arc<EventPool>,
}

impl PooledEvent {
    pub(crate) fn event(&self) -> &CudaEvent {
        self.event.as_ref().expect("held until the mark drops")
    }
}

/// The last mark of a handle, and whether a command went onto its stream since: a mark with no
/// command since the last one reuses that one's event instead of recording another. Each event
/// recorded between commands adds about 1.3 us to the stream's span on an H100 (an empty phase
/// between two marks measured 1.28-1.31 us, queued timing), time that a phase with no device
/// work (allocation from the handle's free list, deallocation into it) only added. A/B on one
/// H100, two rounds, medians of 20 queued runs, CUDA: the fast Nick kernel on the 10 Mpx page
/// 44.6-44.7 / 49.7-49.9 / 55.6-55.7 -> 42.0-42.1 / 47.4-47.6 / 52.7-52.9 us at W = 9 / 45 / 201
/// (two empty phases), TUF at 2048^2 34.7-34.8 / 60.9-61.1 / 49.4-49.6 -> 33.4-33.5 / 59.5 /
/// 48.1 us at 10 / 50 / 90 % (one).
pub(crate) struct LastMark {
    pub(crate) commands_since: AtomicBool,
    pub(crate) event: Mutex<Option<Arc<PooledEvent>>>,
}

impl Default for LastMark {
    fn default() -> Self {
        Self { commands_since: AtomicBool::new(true), event: Mutex::new(None) }
    }
}

impl LastMark {
    /// A command went onto the stream.
    pub(crate) fn command(&self) {
        self.commands_since.store(true, Ordering::Relaxed);
    }
}

impl Drop for PooledEvent {
    fn drop(&mut self) {
        if let Some(event) = self.event.take() {
            self.pool.events.lock().unwrap_or_else(|e| e.into_inner()).push(event);
        }
    }
}
