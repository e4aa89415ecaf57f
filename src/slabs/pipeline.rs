//! The labeling in slabs as a pipeline: each labeler labels its slabs (`k`, `k + n`, `k + 2n`,
//! ... of `n` labelers) on a thread of its own, reading their elements from the source, into a
//! local buffer it owns ([`BUFFERS_PER_LABELER`]); the calling thread takes the slabs in order,
//! makes their labels global (offset by the labels of the slabs before), joins each to the slab
//! before across their face, hands the labels to the sink and gives the buffer back. So several
//! devices label at once while the host keeps the slabs in order (and, with two buffers a
//! labeler, a labeler's next slab would run while the host keeps its last one). The final
//! renumbering follows the last slab.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;

use super::io::{ElementSource, LabelSink};
use super::{merge, ms_since, planes_of, LabelMerger, LabelWord, SlabPlan, SlabRun};
use crate::{Connectivity, Error, Labeler, Options, Phase, PhaseTime, Result, Timings};

/// Local buffers each labeler owns. With two, a labeler labels its next slab while the host
/// keeps the last one; but two measured slower on the H200 machine (1700^3 at 50 % in 64-bit
/// labels: 21.9 s uncapped and 14.2 s capped at 16 GiB, against 7.8 and 8.9 s with one), when
/// each buffer was zero-filled on the labeler's thread before its first use. The buffers are
/// now zeroed pages mapped as the download touches them; two stay off until that is measured.
const BUFFERS_PER_LABELER: usize = 1;

/// A labeled slab on its way to the calling thread: its index, its count and phases (or the
/// error that stopped it), and the buffer holding its local labels.
type Labeled = (usize, SlabResult, Vec<u32>);

/// A slab's count of labels and phases, or the error that stopped its labeling.
type SlabResult = Result<(u32, Timings)>;

/// Labels the array of `plan`'s shape that `source` holds, slab by slab with `labelers` on
/// their own threads (see the module), into consecutive labels 1..N in raster order (B+1..B+N
/// from the plan's base B) kept by `sink`: the labels of labeling the array whole. The first
/// error (of a labeler, the source or the sink) stops the labelers and is returned. No labeler is
/// an [`Error::InvalidParameter`].
pub fn label_slabs_through<L, W, S>(
    labelers: &mut [L],
    plan: &SlabPlan,
    connectivity: Connectivity,
    source: &S,
    sink: &mut impl LabelSink<W>,
) -> Result<SlabRun>
where
    L: Labeler + Send,
    W: LabelWord,
    S: ElementSource + ?Sized,
{
    let shape = plan.shape();
    if labelers.is_empty() {
        return Err(Error::InvalidParameter { name: "labelers".into(), reason: "none given".into() });
    }
    crate::labeler::check_shape_connectivity(shape, connectivity)?;
    for labeler in labelers.iter() {
        labeler.algorithm().check(connectivity)?;
    }
    let (plane_extent, _) = planes_of(shape);
    let plane = plane_extent.0 * plane_extent.1;
    let slabs = plan.slabs();
    let used = labelers.len().min(slabs);
    let buffer_len = plan.planes_per_slab() * plane;
    let mut merger = LabelMerger::<W>::with_base(plan.label_base);
    let mut timings = Timings::default();
    std::thread::scope(|scope| -> Result<()> {
        let (done, labeled) = mpsc::channel::<Labeled>();
        // Each labeler's free buffers come back through its own channel.
        let mut give_back = Vec::with_capacity(used);
        for (first, labeler) in labelers.iter_mut().take(used).enumerate() {
            let (back, free) = mpsc::channel::<Vec<u32>>();
            for _ in 0..BUFFERS_PER_LABELER.min(slabs.div_ceil(used)) {
                back.send(Vec::new()).expect("the receiver is alive");
            }
            give_back.push(back);
            let done = done.clone();
            scope.spawn(move || {
                for k in (first..slabs).step_by(used) {
                    let Ok(mut local) = free.recv() else { return };
                    if local.len() < buffer_len {
                        // Zeroed pages the kernel maps as the download first touches them, on
                        // every core, not a fill of gigabytes on this thread first.
                        local = vec![0; buffer_len];
                    }
                    let result = source
                        .elements(plan.plane_range(k))
                        .and_then(|elements| label_slab(labeler, plan, k, &elements, connectivity, &mut local));
                    let failed = result.is_err();
                    if done.send((k, result, local)).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(done);
        let mut pending: BTreeMap<usize, (SlabResult, Vec<u32>)> = BTreeMap::new();
        // The global labels of the last plane of the slab before, which the next one joins.
        let mut last_plane: Vec<W> = Vec::new();
        for k in 0..slabs {
            while !pending.contains_key(&k) {
                let Ok((index, result, local)) = labeled.recv() else {
                    return Err(Error::InconsistentLabels { what: format!("slab {k} of {shape} was never labeled") });
                };
                pending.insert(index, (result, local));
            }
            let (result, local) = pending.remove(&k).expect("waited for above");
            let (count, slab_timings) = result?;
            timings.phases.extend(slab_timings.phases);
            let planes = plan.plane_range(k);
            let start = Instant::now();
            let local_labels = &local[..planes.len() * plane];
            let offset = merger.add_labels(u64::from(count))?;
            let out = sink.labels_mut(planes.clone())?;
            // Global labels written, and the largest local one found, in one pass.
            let most = out
                .par_iter_mut()
                .zip(local_labels.par_iter())
                .map(|(o, &l)| {
                    *o = if l == 0 { W::default() } else { W::from_u64(offset + u64::from(l)) };
                    l
                })
                .max()
                .unwrap_or(0);
            if most > count {
                return Err(Error::InconsistentLabels {
                    what: format!("slab {k} of {shape} holds label {most} of a consecutive labeling of {count}"),
                });
            }
            if k > 0 {
                merge::join_planes(
                    &mut merger,
                    &last_plane,
                    &local_labels[..plane],
                    offset,
                    plane_extent,
                    connectivity,
                );
            }
            last_plane.clear();
            last_plane.extend_from_slice(&out[out.len() - plane..]);
            sink.commit(planes)?;
            // The labeler may fill the buffer again (it has ended when it has no slab left).
            let _ = give_back[k % used].send(local);
            timings.phases.push(PhaseTime { phase: Phase::Relabel, ms: ms_since(start) });
        }
        Ok(())
    })?;
    if slabs == 1 {
        return Ok(SlabRun { count: merger.labels(), slabs: 1, timings });
    }
    let start = Instant::now();
    let (map, count) = merger.into_consecutive();
    sink.renumber(&map)?;
    timings.phases.push(PhaseTime { phase: Phase::Relabel, ms: ms_since(start) });
    Ok(SlabRun { count, slabs, timings })
}

/// Labels slab `k` (its `elements`) on `labeler` into consecutive local labels in `local`
/// (its first elements); returns their count and the slab's phases (upload and download on the
/// host clock).
fn label_slab<L: Labeler>(
    labeler: &mut L,
    plan: &SlabPlan,
    k: usize,
    elements: &[u8],
    connectivity: Connectivity,
    local: &mut [u32],
) -> Result<(u32, Timings)> {
    let planes = plan.plane_range(k);
    let mut timings = Timings::default();
    let start = Instant::now();
    let image = labeler.upload_array(plan.slab_shape(planes.len()), elements)?;
    timings.phases.push(PhaseTime { phase: Phase::Upload, ms: ms_since(start) });
    let run = labeler.run(&image, &Options::new(connectivity).consecutive())?;
    drop(image);
    timings.phases.extend(run.timings.phases);
    let start = Instant::now();
    labeler.download_into(&run.labels, &mut local[..elements.len()])?;
    timings.phases.push(PhaseTime { phase: Phase::Download, ms: ms_since(start) });
    Ok((run.count.unwrap_or(0), timings))
}
