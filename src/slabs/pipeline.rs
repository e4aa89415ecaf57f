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
use crate::{
    ComponentStat, ComponentStats, Connectivity, Error, Filter, Labeler, Options, Phase, PhaseTime, Result, Stats,
    Timings,
};

/// Local buffers each labeler owns. With two, a labeler labels its next slab while the host
/// keeps the last one; but two measured slower on the H200 machine (1700^3 at 50 % in 64-bit
/// labels: 21.9 s uncapped and 14.2 s capped at 16 GiB, against 7.8 and 8.9 s with one), when
/// each buffer was zero-filled on the labeler's thread before its first use. The buffers are
/// now zeroed pages mapped as the download touches them; two stay off until that is measured.
const BUFFERS_PER_LABELER: usize = 1;

/// A labeled slab on its way to the calling thread: its index, its count and phases (or the
/// error that stopped it), and the buffer holding its local labels.
type Labeled = (usize, SlabResult, Vec<u32>);

/// A slab's count of labels, phases and statistics, or the error that stopped its labeling.
type SlabResult = Result<(u32, Timings, Option<ComponentStats>)>;

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
    label_slabs_with(labelers, plan, &Options::new(connectivity).consecutive(), source, sink)
}

/// [`label_slabs_through`] with `options`' statistics and filters too, as a whole labeling would
/// make them: each slab's statistics come from its device, are moved to the slab's place and
/// joined on the host per component (boxes, areas, coordinate sums); the filters then choose
/// components by the joined statistics, and one renumbering gives the kept ones 1..M in raster
/// order. Labels are always consecutive (raw labels are not made in slabs).
pub fn label_slabs_with<L, W, S>(
    labelers: &mut [L],
    plan: &SlabPlan,
    options: &Options,
    source: &S,
    sink: &mut impl LabelSink<W>,
) -> Result<SlabRun>
where
    L: Labeler + Send,
    W: LabelWord,
    S: ElementSource + ?Sized,
{
    let connectivity = options.connectivity;
    let with_stats = options.stats != Stats::None || !options.filters.is_empty();
    let slab_options = if with_stats {
        Options::new(connectivity).consecutive().stats(Stats::Components)
    } else {
        Options::new(connectivity).consecutive()
    };
    let slab_options = &slab_options;
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
    // The statistics of every slab's components, in the order of their global labels.
    let mut provisional: Vec<ComponentStat> = Vec::new();
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
                        .and_then(|elements| label_slab(labeler, plan, k, &elements, slab_options, &mut local));
                    let failed = result.is_err();
                    if done.send((k, result, local)).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(done);
        let mut pending: BTreeMap<usize, (SlabResult, Vec<u32>)> = BTreeMap::new();
        let provisional = &mut provisional;
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
            let (count, slab_timings, slab_stats) = result?;
            timings.phases.extend(slab_timings.phases);
            if let Some(slab_stats) = slab_stats {
                let first = plan.plane_range(k).start as u64;
                provisional.extend(slab_stats.components.iter().map(|c| moved(*c, first, shape.depth > 1)));
            }
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
    if slabs == 1 && options.filters.is_empty() {
        let stats = (options.stats != Stats::None).then_some(ComponentStats { components: provisional });
        return Ok(SlabRun { count: merger.labels(), slabs: 1, timings, stats });
    }
    let start = Instant::now();
    let base = plan.label_base;
    let (mut map, mut count) = merger.into_consecutive();
    let mut stats = None;
    if with_stats {
        let mut joined = vec![None::<ComponentStat>; count as usize];
        for (k, stat) in provisional.iter().enumerate() {
            let number = map.get(W::from_u64(base + 1 + k as u64)).index() as u64 - base - 1;
            let slot = &mut joined[number as usize];
            *slot = Some(slot.map_or(*stat, |s| union(s, stat)));
        }
        let mut joined = ComponentStats { components: joined.into_iter().map(Option::unwrap_or_default).collect() };
        for filter in &options.filters {
            let keep = match *filter {
                Filter::MinSize(n) => joined.at_least(n),
                Filter::Largest(k) => joined.largest(k),
            };
            // The kept components' new numbers, in order; the others become background.
            let mut next = base;
            let numbers: Vec<u64> = keep
                .iter()
                .map(|&k| {
                    if k {
                        next += 1;
                        next
                    } else {
                        0
                    }
                })
                .collect();
            map = map.then(|n| W::from_u64(numbers[(n.index() as u64 - base - 1) as usize]));
            joined = joined.kept(&keep);
            count = next - base;
        }
        // Kept only where asked for, as a whole labeling keeps them.
        stats = (options.stats != Stats::None).then_some(joined);
    }
    sink.renumber(&map)?;
    timings.phases.push(PhaseTime { phase: Phase::Relabel, ms: ms_since(start) });
    Ok(SlabRun { count, slabs, timings, stats })
}

/// `stat` of a slab whose first plane is `first`, moved to its place in the array (planes are
/// slices of a `volume`, else rows).
fn moved(mut stat: ComponentStat, first: u64, volume: bool) -> ComponentStat {
    let axis = if volume { 2 } else { 1 };
    if volume {
        stat.front += first as u32;
    } else {
        stat.top += first as u32;
    }
    stat.sums[axis] += first * stat.area;
    stat
}

/// The statistics of the union of two parts of a component.
fn union(a: ComponentStat, b: &ComponentStat) -> ComponentStat {
    let span = |lo_a: u32, len_a: u32, lo_b: u32, len_b: u32| {
        let lo = lo_a.min(lo_b);
        (lo, (lo_a + len_a).max(lo_b + len_b) - lo)
    };
    let (left, width) = span(a.left, a.width, b.left, b.width);
    let (top, height) = span(a.top, a.height, b.top, b.height);
    let (front, depth) = span(a.front, a.depth, b.front, b.depth);
    let sums = [a.sums[0] + b.sums[0], a.sums[1] + b.sums[1], a.sums[2] + b.sums[2]];
    ComponentStat { left, top, front, width, height, depth, area: a.area + b.area, sums }
}

/// Labels slab `k` (its `elements`) on `labeler` into consecutive local labels in `local`
/// (its first elements); returns their count and the slab's phases (upload and download on the
/// host clock).
fn label_slab<L: Labeler>(
    labeler: &mut L,
    plan: &SlabPlan,
    k: usize,
    elements: &[u8],
    options: &Options,
    local: &mut [u32],
) -> Result<(u32, Timings, Option<ComponentStats>)> {
    let planes = plan.plane_range(k);
    let mut timings = Timings::default();
    let start = Instant::now();
    let image = labeler.upload_array(plan.slab_shape(planes.len()), elements)?;
    timings.phases.push(PhaseTime { phase: Phase::Upload, ms: ms_since(start) });
    let run = labeler.run(&image, options)?;
    drop(image);
    timings.phases.extend(run.timings.phases);
    let start = Instant::now();
    labeler.download_into(&run.labels, &mut local[..elements.len()])?;
    timings.phases.push(PhaseTime { phase: Phase::Download, ms: ms_since(start) });
    Ok((run.count.unwrap_or(0), timings, run.stats))
}
