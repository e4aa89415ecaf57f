//! Joining labels across the faces between parts of an array: a union-find over the global
//! labels of every part, and its consecutive renumbering.
//!
//! Each part of an array (a slab, a chunk) is labeled on its own into consecutive labels
//! 1..n_k; offset by the counts of the parts before it, they are global. Every union links the
//! larger root below the smaller one, so a label's parent is never above it and each set's root
//! is its smallest label: the label of the part that comes first, and within it the first in
//! raster order. [`LabelMerger::into_consecutive`] then numbers the roots in increasing order in
//! one ascending pass (a label's parent is numbered before the label), so where parts are slabs
//! along the slowest axis the result is the whole array's consecutive labeling, bit for bit.

use crate::{Connectivity, Error, Result};

/// An unsigned label of host memory: 32 or 64 bits.
pub trait LabelWord: Copy + Default + Eq + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// Its width in bits.
    const BITS: u32;
    /// The largest label it holds.
    const MAX: u64;
    /// The label `value` (at most [`LabelWord::MAX`]).
    fn from_u64(value: u64) -> Self;
    /// The label as an index.
    fn index(self) -> usize;
}

impl LabelWord for u32 {
    const BITS: u32 = 32;
    const MAX: u64 = u32::MAX as u64;
    fn from_u64(value: u64) -> Self {
        value as u32
    }
    fn index(self) -> usize {
        self as usize
    }
}

impl LabelWord for u64 {
    const BITS: u32 = 64;
    const MAX: u64 = u64::MAX;
    fn from_u64(value: u64) -> Self {
        value
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// A union-find over labels B+1..=B+N (0 is background; B is a base, 0 unless a labeling is
/// a part of a larger one), grown part by part. Labels are kept relative to B, so a base past
/// 2^32 costs no memory.
#[derive(Debug)]
pub struct LabelMerger<W: LabelWord> {
    base: u64,
    parent: Vec<W>,
}

impl<W: LabelWord> Default for LabelMerger<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<W: LabelWord> LabelMerger<W> {
    /// No label yet, base 0.
    pub fn new() -> Self {
        Self { base: 0, parent: vec![W::default()] }
    }

    /// No label yet: labels will be `base`+1, `base`+2, ... (and so their numbers).
    pub fn with_base(base: u64) -> Self {
        Self { base, parent: vec![W::default()] }
    }

    /// The base B.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The number of labels N so far.
    pub fn labels(&self) -> u64 {
        (self.parent.len() - 1) as u64
    }

    /// Adds `count` labels B+N+1..=B+N+count, each a set of its own; returns B+N, the offset of
    /// the new part's local labels. Labels past what the word holds are an
    /// [`Error::InvalidParameter`] naming the width (checked before any memory is taken).
    pub fn add_labels(&mut self, count: u64) -> Result<u64> {
        let offset = self.base + self.labels();
        let last = offset.checked_add(count).filter(|&t| t <= W::MAX);
        let fits_memory = usize::try_from(self.labels() + count).is_ok();
        if last.is_none() || !fits_memory {
            return Err(Error::InvalidParameter {
                name: "label bits".into(),
                reason: format!("labels {offset} + {count} do not fit {}-bit labels; ask for 64-bit labels", W::BITS),
            });
        }
        let first = self.labels() + 1;
        self.parent.extend((first..first + count).map(W::from_u64));
        Ok(offset)
    }

    fn find(&mut self, mut label: usize) -> usize {
        loop {
            let parent = self.parent[label].index();
            if parent == label {
                return label;
            }
            let grandparent = self.parent[parent];
            self.parent[label] = grandparent; // path halving keeps parent <= label
            label = grandparent.index();
        }
    }

    /// The index of a label of 1..=N relative to the base; `None` for background.
    fn relative(&self, label: W) -> Option<usize> {
        (label != W::default()).then(|| (label.index() as u64 - self.base) as usize)
    }

    /// Joins the sets of labels `a` and `b` (both in B+1..=B+N; 0 is ignored).
    pub fn union(&mut self, a: W, b: W) {
        let (Some(a), Some(b)) = (self.relative(a), self.relative(b)) else { return };
        let (ra, rb) = (self.find(a), self.find(b));
        if ra < rb {
            self.parent[rb] = W::from_u64(ra as u64);
        } else if rb < ra {
            self.parent[ra] = W::from_u64(rb as u64);
        }
    }

    /// Joins each pair `(a[i], b[i])` (0 is ignored); a label outside B+1..=B+N, or slices of
    /// two lengths, are an [`Error::InvalidParameter`] (nothing joined then).
    pub fn union_pairs(&mut self, a: &[W], b: &[W]) -> Result<()> {
        let (low, high) = (self.base, self.base + self.labels());
        let outside = a.iter().chain(b).find(|l| l.index() != 0 && !(low + 1..=high).contains(&(l.index() as u64)));
        if a.len() != b.len() || outside.is_some() {
            return Err(Error::InvalidParameter {
                name: "pairs".into(),
                reason: match outside {
                    Some(l) => format!("label {l:?} is outside the labels {}..={high}", low + 1),
                    None => format!("{} labels paired with {}", a.len(), b.len()),
                },
            });
        }
        for (&x, &y) in a.iter().zip(b) {
            self.union(x, y);
        }
        Ok(())
    }

    /// Numbers the sets B+1..B+M in increasing order of their smallest label and returns the
    /// [`LabelMap`] of every label to its set's number, with M.
    pub fn into_consecutive(self) -> (LabelMap<W>, u64) {
        let mut map = self.parent;
        let mut sets = 0u64;
        for label in 1..map.len() {
            let parent = map[label].index();
            map[label] = if parent == label {
                sets += 1;
                W::from_u64(self.base + sets)
            } else {
                map[parent] // numbered already: parent < label
            };
        }
        (LabelMap { base: self.base, map }, sets)
    }
}

/// Every label of a [`LabelMerger`] to its set's number.
#[derive(Debug)]
pub struct LabelMap<W: LabelWord> {
    base: u64,
    map: Vec<W>,
}

impl<W: LabelWord> LabelMap<W> {
    /// The number of `label` (0 stays 0; a label the merger did not hold is a panic).
    pub fn get(&self, label: W) -> W {
        if label == W::default() {
            label
        } else {
            self.map[(label.index() as u64 - self.base) as usize]
        }
    }

    /// The numbers as a table: entry k is the number of label B+k (entry 0, background, is 0).
    pub fn into_table(self) -> Vec<W> {
        self.map
    }

    /// Every number `n` but background (0, also where an earlier renumbering removed a label)
    /// replaced by `renumber(n)`: a second numbering (of the components a filter keeps, say)
    /// made one map.
    pub fn then(mut self, renumber: impl Fn(W) -> W) -> Self {
        for number in self.map.iter_mut().filter(|n| **n != W::default()) {
            *number = renumber(*number);
        }
        self
    }
}

/// The offsets `(dx, dy)` within a plane from an element of one plane to its neighbours in the
/// next plane under `connectivity` (the neighbour one plane further, plus those offsets).
pub(crate) fn plane_offsets(connectivity: Connectivity) -> Vec<(isize, isize)> {
    let most_steps = match connectivity {
        Connectivity::Four | Connectivity::Six => 0,
        Connectivity::Eighteen => 1,
        Connectivity::Eight | Connectivity::TwentySix => 2,
    };
    let mut offsets = Vec::new();
    for dy in -1isize..=1 {
        for dx in -1isize..=1 {
            if (dx != 0) as usize + (dy != 0) as usize <= most_steps {
                offsets.push((dx, dy));
            }
        }
    }
    offsets
}

/// Joins the labels of two touching planes of `width x height` elements, `before` (global
/// labels) and `after` (a part's local labels, global once `offset` is added), under
/// `connectivity`.
pub(crate) fn join_planes<W: LabelWord>(
    merger: &mut LabelMerger<W>,
    before: &[W],
    after: &[u32],
    offset: u64,
    (width, height): (usize, usize),
    connectivity: Connectivity,
) {
    let offsets = plane_offsets(connectivity);
    for y in 0..height {
        for x in 0..width {
            let local = after[y * width + x];
            if local == 0 {
                continue;
            }
            let label = W::from_u64(offset + u64::from(local));
            for &(dx, dy) in &offsets {
                let (nx, ny) = (x as isize + dx, y as isize + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
                    merger.union(label, before[ny as usize * width + nx as usize]);
                }
            }
        }
    }
}
