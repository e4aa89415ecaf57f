//! The Euler number's coefficients: for each pattern of a component's pixels in a 2x2 window
//! (volumes: 2x2x2), its share of the component's Euler characteristic, from Ohser, Nagel and
//! Schladitz (2002), as scikit-image's `euler_number` takes them at full connectivity (8 in 2D,
//! 26 in 3D: what `regionprops` uses). Bit i of a pattern is the window's corner i: 1 the last
//! corner (x, y, z), 2 the row before, 4 the column before, 8 both, and 16 to 128 the same in the
//! slice before. The sum over the windows is the Euler number of an image, eight times that of a
//! volume. The device sums them from these tables (a kernel argument), as the host reference does.

/// Images, 8-connectivity (scikit-image's `EULER_COEFS2D_8`).
pub(crate) const IMAGE: [i32; 16] = [0, 0, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, 0, 0, -1, 0];

/// Volumes, 26-connectivity (scikit-image's `EULER_COEFS3D_26`); the sum is 8 times the number.
pub(crate) const VOLUME: [i32; 256] = [
    0, 1, 1, 0, 1, 0, -2, -1, 1, -2, 0, -1, 0, -1, -1, 0, 1, 0, -2, -1, -2, -1, -1, -2, -6, -3, -3, -2, -3, -2, 0, -1,
    1, -2, 0, -1, -6, -3, -3, -2, -2, -1, -1, -2, -3, 0, -2, -1, 0, -1, -1, 0, -3, -2, 0, -1, -3, 0, -2, -1, 0, 1, 1,
    0, 1, -2, -6, -3, 0, -1, -3, -2, -2, -1, -3, 0, -1, -2, -2, -1, 0, -1, -3, -2, -1, 0, 0, -1, -3, 0, 0, 1, -2, -1,
    1, 0, -2, -1, -3, 0, -3, 0, 0, 1, -1, 4, 0, 3, 0, 3, 1, 2, -1, -2, -2, -1, -2, -1, 1, 0, 0, 3, 1, 2, 1, 2, 2, 1, 1,
    -6, -2, -3, -2, -3, -1, 0, 0, -3, -1, -2, -1, -2, -2, -1, -2, -3, -1, 0, -1, 0, 4, 3, -3, 0, 0, 1, 0, 1, 3, 2, 0,
    -3, -1, -2, -3, 0, 0, 1, -1, 0, 0, -1, -2, 1, -1, 0, -1, -2, -2, -1, 0, 1, 3, 2, -2, 1, -1, 0, 1, 2, 2, 1, 0, -3,
    -3, 0, -1, -2, 0, 1, -1, 0, -2, 1, 0, -1, -1, 0, -1, -2, 0, 1, -2, -1, 3, 2, -2, 1, 1, 2, -1, 0, 2, 1, -1, 0, -2,
    1, -2, 1, 1, 2, -2, 3, -1, 2, -1, 2, 0, 1, 0, -1, -1, 0, -1, 0, 2, 1, -1, 2, 0, 1, 0, 1, 1, 0,
];

/// The table of an array of `axes` dimensions (2 or 3).
pub(crate) fn coefficients(axes: u8) -> &'static [i32] {
    if axes == 3 {
        &VOLUME
    } else {
        &IMAGE
    }
}

/// The Euler number from a component's sum of coefficients over an array of `axes` dimensions:
/// volumes divide by 8, rounding toward zero as scikit-image does.
pub(crate) fn number(sum: i64, axes: u8) -> i64 {
    if axes == 3 {
        sum / 8
    } else {
        sum
    }
}
