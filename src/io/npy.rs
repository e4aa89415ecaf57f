//! Helpers of `.npy` arrays that the image and the volume readers share.

use std::path::Path;

/// Whether `path` names a `.npy` (by its extension, in any case).
pub fn is_npy(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// A `.npy` shape as NumPy prints it, e.g. `(0, 5)`.
pub(super) fn numpy_shape(shape: &[u64]) -> String {
    let sides: Vec<String> = shape.iter().map(u64::to_string).collect();
    match sides.len() {
        1 => format!("({},)", sides[0]),
        _ => format!("({})", sides.join(", ")),
    }
}

/// `values` of an array of `shape` stored in Fortran order (first axis fastest), reordered
/// into C order (last axis fastest), as `np.ascontiguousarray` does.
pub(super) fn fortran_to_c_order<T: Copy>(values: &[T], shape: &[u64]) -> Vec<T> {
    let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    // Each axis's step in the Fortran-ordered values.
    let mut strides = Vec::with_capacity(shape.len());
    let mut step = 1;
    for &n in &shape {
        strides.push(step);
        step *= n;
    }
    let mut index = vec![0usize; shape.len()];
    let mut out = Vec::with_capacity(values.len());
    let mut at = 0;
    for _ in 0..values.len() {
        out.push(values[at]);
        // The next C-order index: the last axis first, carrying into the ones before it.
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            at += strides[axis];
            if index[axis] < shape[axis] {
                break;
            }
            at -= strides[axis] * shape[axis];
            index[axis] = 0;
        }
    }
    out
}
