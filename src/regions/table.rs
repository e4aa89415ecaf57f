//! scikit-image's region properties from the device's sums ([`RegionSums`]), with its names,
//! axis order, column names (`bbox-0`, `moments_central-1-2`, ...) and `spacing`.

use rayon::prelude::*;

use super::region::{MomentLayout, Region, SIDE};
use super::{Property, RegionSums};
use crate::{Error, Result};

/// One column of a [`RegionTable`]: its name (`area`, `bbox-0`, `moments-1-2`) and a value per
/// component.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// scikit-image's column name.
    pub name: String,
    /// The values, in label order (integers as exact `f64`s where [`Column::integer`]).
    pub values: Vec<f64>,
    /// Whether the values are integers.
    pub integer: bool,
}

/// The region properties of every component, as scikit-image's `regionprops_table` gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RegionTable {
    /// The columns, in the order of the properties asked for.
    pub columns: Vec<Column>,
}

impl RegionTable {
    /// The moment order, Euler/perimeter sums and intensity that `properties` need: what to ask
    /// the device for.
    pub fn needs(properties: &[Property]) -> (u8, bool, bool) {
        let order = properties.iter().map(|p| p.order()).max().unwrap_or(0);
        let shape = properties.iter().any(|p| p.needs_shape());
        let intensity = properties.iter().any(|p| p.needs_intensity());
        (order, shape, intensity)
    }

    /// Checks `properties` and `spacing` (one positive finite value per axis) for an array of
    /// `axes` dimensions, `intensity` telling whether an intensity image is given; returns the
    /// spacing to use (ones by default).
    pub fn check(properties: &[Property], axes: u8, spacing: Option<&[f64]>, intensity: bool) -> Result<Vec<f64>> {
        let spacing = match spacing {
            None => vec![1.0; usize::from(axes)],
            Some(s) if s.len() != usize::from(axes) || s.iter().any(|&v| !(v.is_finite() && v > 0.0)) => {
                return Err(Error::InvalidParameter {
                    name: "spacing".into(),
                    reason: format!("{s:?}: one positive finite value per axis ({axes}) is needed"),
                })
            }
            Some(s) => s.to_vec(),
        };
        for &p in properties {
            if let Some(why) = p.unavailable(axes, &spacing) {
                return Err(Error::InvalidParameter {
                    name: "properties".into(),
                    reason: format!("{} {why} (an array of {axes} dimensions, spacing {spacing:?})", p.name()),
                });
            }
            if p.needs_intensity() && !intensity {
                return Err(Error::InvalidParameter {
                    name: "properties".into(),
                    reason: format!("{} needs an intensity image", p.name()),
                });
            }
        }
        Ok(spacing)
    }

    /// The columns of `properties` from `sums` under `spacing` (in axis order: rows first), after
    /// [`RegionTable::check`]. The sums must hold what [`RegionTable::needs`] asks for.
    pub fn from_sums(sums: &RegionSums, properties: &[Property], spacing: Option<&[f64]>) -> Result<RegionTable> {
        let axes = sums.axes;
        let spacing = Self::check(properties, axes, spacing, sums.intensity.is_some())?;
        let (order, shape, _) = Self::needs(properties);
        if sums.order < order || (shape && sums.euler.is_none()) {
            return Err(Error::InvalidParameter {
                name: "properties".into(),
                reason: "the region sums lack what these properties need".into(),
            });
        }
        // Labels without pixels (possible in labels declared consecutive up to a count) have no
        // row, as scikit-image lists only the labels present.
        let present: Vec<usize> = (0..sums.len()).filter(|&k| sums.stats.components[k].area > 0).collect();
        // The columns named first; then the components' rows, chunks of them on the threads of
        // rayon's pool (a row: each property's values, pushed in order), which the columns
        // gather, a column per thread.
        let mut columns = Vec::new();
        let mut spans = Vec::new();
        for &p in properties {
            let first = columns.len();
            for suffix in suffixes(&value_shape(p, axes)) {
                columns.push(Column {
                    name: format!("{}{suffix}", p.name()),
                    values: Vec::with_capacity(present.len()),
                    integer: p.is_integer(),
                });
            }
            spans.push((p, first..columns.len()));
        }
        let layout = MomentLayout::new(sums, &spacing);
        let width = columns.len();
        let chunks: Vec<Vec<f64>> = present
            .par_chunks(ROWS_PER_TASK)
            .map(|chunk| {
                let mut rows = Vec::with_capacity(chunk.len() * width);
                for &k in chunk {
                    let region = Region::new(sums, k, &layout);
                    for (p, span) in &spans {
                        let before = rows.len();
                        region.push_values(*p, sums, k, &spacing, &mut rows);
                        debug_assert_eq!(rows.len() - before, span.len(), "{}", p.name());
                    }
                }
                rows
            })
            .collect();
        columns.par_iter_mut().enumerate().for_each(|(j, column)| {
            column.values.extend(chunks.iter().flat_map(|rows| rows.iter().skip(j).step_by(width.max(1))));
        });
        Ok(RegionTable { columns })
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The number of rows (components).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }
}

/// Components a task of [`RegionTable::from_sums`] derives (a few hundred microseconds of work).
const ROWS_PER_TASK: usize = 512;

/// The shape of a property's value for `axes` dimensions (empty: a scalar).
fn value_shape(p: Property, axes: u8) -> Vec<usize> {
    use Property::*;
    let a = usize::from(axes);
    match p {
        Bbox => vec![2 * a],
        Centroid | CentroidLocal | InertiaTensorEigvals => vec![a],
        Moments | MomentsCentral | MomentsNormalized => vec![SIDE; a],
        MomentsHu => vec![7],
        InertiaTensor => vec![a, a],
        _ => vec![],
    }
}

/// Column name suffixes of a value of `shape`, row-major: `""` for a scalar, `-i`, `-i-j`, ...
fn suffixes(shape: &[usize]) -> Vec<String> {
    let mut out = vec![String::new()];
    for &extent in shape {
        out = out.iter().flat_map(|s| (0..extent).map(move |i| format!("{s}-{i}"))).collect();
    }
    out
}
