//! Binarization quality: a binarization result against its ground truth, both ink masks, by the
//! metrics of the DIBCO (Document Image Binarization Contest) evaluations. Ink (text) is the
//! positive class throughout.
//!
//! - F-measure and PSNR as defined in the DIBCO 2009 report (Gatos, Ntirogiannis and Pratikakis,
//!   "ICDAR 2009 Document Image Binarization Contest (DIBCO 2009)", ICDAR 2009).
//! - Pseudo F-measure as defined for H-DIBCO 2010 and DIBCO 2011 (Pratikakis, Gatos and
//!   Ntirogiannis, "H-DIBCO 2010 - Handwritten Document Image Binarization Competition", ICFHR
//!   2010): the pseudo-recall is the fraction of the ground truth's skeleton that the result
//!   marks as ink; the skeleton is the Zhang-Suen thinning of the ground-truth ink ([`skeleton`]).
//!   The weighted pseudo-recall and pseudo-precision of Ntirogiannis, Gatos and Pratikakis
//!   (IEEE TIP 2013), used from DIBCO 2013 on, are NOT what is implemented.
//! - DRD, the distance-reciprocal distortion of Lu, Kot and Shi ("Distance-reciprocal distortion
//!   measure for binary document images", IEEE Signal Processing Letters 11(2), 2004), as used by
//!   DIBCO since 2011.
//!
//! A ratio whose denominator is zero counts as 1: with no ink to find none is missed (recall 1),
//! and with no ink marked none is marked wrongly (precision 1). So two masks without ink score
//! F-measure 100, while ink on one side only scores 0, as `2 TP / (2 TP + FP + FN)` gives.

/// Quality of one binarization against its ground truth (DIBCO metrics).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// F-measure of the ink, `2 R P / (R + P)` in percent (0..=100).
    pub f_measure: f64,
    /// Pseudo F-measure (H-DIBCO 2010): the F-measure with the recall measured on the
    /// ground truth's skeleton, in percent (0..=100).
    pub pseudo_f_measure: f64,
    /// Peak signal-to-noise ratio in dB with C = 1; `f64::INFINITY` when the masks are identical.
    pub psnr: f64,
    /// Distance-reciprocal distortion (Lu et al. 2004); 0 when identical, lower is better.
    pub drd: f64,
}

/// Evaluates `result` against `truth`: row-major masks of `width * height` bytes, nonzero = ink
/// (text), 0 = background.
///
/// Returns `Err` naming the problem when a size is zero, `width * height` overflows, or a mask's
/// length is not `width * height`.
///
/// DRD details: pixels of a 5x5 block that fall outside the image are skipped, and when the
/// ground truth has no non-uniform 8x8 block the sum is divided by 1.
pub fn evaluate(result: &[u8], truth: &[u8], width: usize, height: usize) -> Result<Quality, String> {
    let pixels = checked_pixels(width, height)?;
    check_len("result", result, pixels)?;
    check_len("truth", truth, pixels)?;
    let counts = Counts::of(result, truth);
    let on_skeleton = Counts::of(result, &skeleton(truth, width, height));
    let precision = counts.precision();
    Ok(Quality {
        f_measure: percent(harmonic_mean(counts.recall(), precision)),
        pseudo_f_measure: percent(harmonic_mean(on_skeleton.recall(), precision)),
        psnr: psnr(counts.wrong(), pixels),
        drd: drd(Grid::new(result, width, height), Grid::new(truth, width, height)),
    })
}

/// The skeleton (thinning) of an ink mask, same layout, 1 = skeleton pixel.
///
/// Zhang-Suen thinning (Zhang and Suen, CACM 27(3), 1984): an 8-connected skeleton; pixels
/// outside the image count as background. Isolated pixels and 1-pixel-wide lines are kept; as
/// the algorithm is defined, a component that is exactly a 2x2 square vanishes entirely.
/// Returns an empty vector when `mask.len()` is not `width * height`.
pub fn skeleton(mask: &[u8], width: usize, height: usize) -> Vec<u8> {
    if width.checked_mul(height) != Some(mask.len()) {
        return Vec::new();
    }
    let mut image: Vec<u8> = mask.iter().map(|&v| u8::from(v != 0)).collect();
    loop {
        let first = thinning_pass(&mut image, width, height, &FIRST_PASS_GUARDS);
        let second = thinning_pass(&mut image, width, height, &SECOND_PASS_GUARDS);
        if !first && !second {
            return image;
        }
    }
}

fn checked_pixels(width: usize, height: usize) -> Result<usize, String> {
    if width == 0 || height == 0 {
        return Err(format!("image size {width}x{height} is empty: width and height must be nonzero"));
    }
    width.checked_mul(height).ok_or_else(|| format!("image size {width}x{height} overflows usize"))
}

fn check_len(name: &str, mask: &[u8], pixels: usize) -> Result<(), String> {
    if mask.len() == pixels {
        Ok(())
    } else {
        Err(format!("{name} mask has {} bytes but width * height is {pixels}", mask.len()))
    }
}

/// Pixel counts of a result against a reference, ink being the positive class.
struct Counts {
    hits: usize,
    false_alarms: usize,
    misses: usize,
}

impl Counts {
    fn of(result: &[u8], reference: &[u8]) -> Counts {
        let mut counts = Counts { hits: 0, false_alarms: 0, misses: 0 };
        for (&r, &t) in result.iter().zip(reference) {
            match (r != 0, t != 0) {
                (true, true) => counts.hits += 1,
                (true, false) => counts.false_alarms += 1,
                (false, true) => counts.misses += 1,
                (false, false) => {}
            }
        }
        counts
    }

    fn recall(&self) -> f64 {
        ratio(self.hits, self.hits + self.misses)
    }

    fn precision(&self) -> f64 {
        ratio(self.hits, self.hits + self.false_alarms)
    }

    fn wrong(&self) -> usize {
        self.false_alarms + self.misses
    }
}

/// `part / whole`, and 1 when `whole` is 0 (see the module documentation).
fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// `2 a b / (a + b)`, and 0 when both are 0.
fn harmonic_mean(a: f64, b: f64) -> f64 {
    if a + b == 0.0 {
        0.0
    } else {
        2.0 * a * b / (a + b)
    }
}

fn percent(fraction: f64) -> f64 {
    100.0 * fraction
}

/// `10 log10(C^2 / MSE)` with C = 1 and MSE = `wrong / pixels`.
fn psnr(wrong: usize, pixels: usize) -> f64 {
    if wrong == 0 {
        f64::INFINITY
    } else {
        10.0 * (pixels as f64 / wrong as f64).log10()
    }
}

/// A row-major mask whose length is known to be `width * height`.
#[derive(Clone, Copy)]
struct Grid<'a> {
    pixels: &'a [u8],
    width: usize,
    height: usize,
}

impl<'a> Grid<'a> {
    fn new(pixels: &'a [u8], width: usize, height: usize) -> Grid<'a> {
        Grid { pixels, width, height }
    }

    /// Whether the in-image pixel (x, y) is ink.
    fn ink(&self, x: usize, y: usize) -> bool {
        self.pixels[y * self.width + x] != 0
    }

    /// Whether (x, y) is ink; `None` outside the image.
    fn get(&self, x: isize, y: isize) -> Option<bool> {
        let (x, y) = (usize::try_from(x).ok()?, usize::try_from(y).ok()?);
        (x < self.width && y < self.height).then(|| self.ink(x, y))
    }

    fn coordinates(&self) -> impl Iterator<Item = (usize, usize)> {
        let width = self.width;
        (0..self.height).flat_map(move |y| (0..width).map(move |x| (x, y)))
    }
}

/// Offsets (dx, dy) of Zhang and Suen's neighbours P2..P9: N, NE, E, SE, S, SW, W, NW.
const NEIGHBOURS: [(isize, isize); 8] = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];

/// Neighbour triples (indices into [`NEIGHBOURS`]) that must not all be ink for a pixel to be
/// deleted. First sub-iteration: P2 P4 P6 and P4 P6 P8; second: P2 P4 P8 and P2 P6 P8.
const FIRST_PASS_GUARDS: [[usize; 3]; 2] = [[0, 2, 4], [2, 4, 6]];
const SECOND_PASS_GUARDS: [[usize; 3]; 2] = [[0, 2, 6], [0, 4, 6]];

/// One Zhang-Suen sub-iteration: marks every deletable ink pixel of the image as it stands, then
/// deletes them together. Returns whether any was deleted.
fn thinning_pass(image: &mut [u8], width: usize, height: usize, guards: &[[usize; 3]; 2]) -> bool {
    let grid = Grid::new(image, width, height);
    let doomed: Vec<(usize, usize)> =
        grid.coordinates().filter(|&(x, y)| grid.ink(x, y) && deletable(neighbours(grid, x, y), guards)).collect();
    for &(x, y) in &doomed {
        image[y * width + x] = 0;
    }
    !doomed.is_empty()
}

/// P2..P9 of (x, y); outside the image is background.
fn neighbours(grid: Grid, x: usize, y: usize) -> [bool; 8] {
    NEIGHBOURS.map(|(dx, dy)| grid.get(x as isize + dx, y as isize + dy).unwrap_or(false))
}

/// Zhang and Suen's conditions: 2 <= B <= 6 ink neighbours, exactly one background-to-ink
/// transition A around P2..P9,P2, and no guard triple all ink.
fn deletable(n: [bool; 8], guards: &[[usize; 3]; 2]) -> bool {
    let ink_neighbours = n.iter().filter(|&&v| v).count();
    let transitions = (0..8).filter(|&k| !n[k] && n[(k + 1) % 8]).count();
    (2..=6).contains(&ink_neighbours) && transitions == 1 && guards.iter().all(|triple| !triple.iter().all(|&k| n[k]))
}

/// The 5x5 weight matrix of Lu et al.: the reciprocal distance to the centre, 0 at the centre,
/// normalised to sum to 1.
fn drd_weights() -> [[f64; 5]; 5] {
    let mut weights = [[0.0; 5]; 5];
    for (i, row) in weights.iter_mut().enumerate() {
        for (j, weight) in row.iter_mut().enumerate() {
            let (di, dj) = (i as f64 - 2.0, j as f64 - 2.0);
            if (i, j) != (2, 2) {
                *weight = 1.0 / (di * di + dj * dj).sqrt();
            }
        }
    }
    let sum: f64 = weights.iter().flatten().sum();
    weights.map(|row| row.map(|weight| weight / sum))
}

/// DRD = sum of the distortions of the wrong pixels / the ground truth's non-uniform blocks.
fn drd(result: Grid, truth: Grid) -> f64 {
    let weights = drd_weights();
    let total: f64 = result
        .coordinates()
        .filter(|&(x, y)| result.ink(x, y) != truth.ink(x, y))
        .map(|(x, y)| distortion(&weights, result.ink(x, y), truth, x, y))
        .sum();
    total / non_uniform_blocks(truth).max(1) as f64
}

/// DRD_k of the wrong pixel (x, y) whose result is `ink`: the weights of the 5x5 truth block
/// centred on it that differ from `ink`; block pixels outside the image are skipped.
fn distortion(weights: &[[f64; 5]; 5], ink: bool, truth: Grid, x: usize, y: usize) -> f64 {
    let mut sum = 0.0;
    for (i, row) in weights.iter().enumerate() {
        for (j, &weight) in row.iter().enumerate() {
            let (bx, by) = (x as isize + j as isize - 2, y as isize + i as isize - 2);
            if truth.get(bx, by).is_some_and(|truth_ink| truth_ink != ink) {
                sum += weight;
            }
        }
    }
    sum
}

/// NUBN: the 8x8 blocks tiling the image from (0, 0) that hold both ink and background; edge
/// blocks count over their in-image pixels.
fn non_uniform_blocks(truth: Grid) -> usize {
    let mut count = 0;
    for y0 in (0..truth.height).step_by(8) {
        for x0 in (0..truth.width).step_by(8) {
            let first = truth.ink(x0, y0);
            let ys = y0..(y0 + 8).min(truth.height);
            let uniform = ys.into_iter().all(|y| (x0..(x0 + 8).min(truth.width)).all(|x| truth.ink(x, y) == first));
            count += usize::from(!uniform);
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width x height` mask with ink at `points` (x, y).
    fn mask(width: usize, height: usize, points: &[(usize, usize)]) -> Vec<u8> {
        let mut pixels = vec![0; width * height];
        for &(x, y) in points {
            pixels[y * width + x] = 1;
        }
        pixels
    }

    /// A `width x height` mask with ink on the rectangle `x0..x1, y0..y1`.
    fn rectangle(width: usize, height: usize, (x0, x1): (usize, usize), (y0, y1): (usize, usize)) -> Vec<u8> {
        let points: Vec<_> = (y0..y1).flat_map(|y| (x0..x1).map(move |x| (x, y))).collect();
        mask(width, height, &points)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Sum of the un-normalised DRD weights: 4 at distance 1, 4 at sqrt 2, 4 at 2, 8 at sqrt 5
    /// and 4 at sqrt 8, about 13.8203.
    fn weight_sum() -> f64 {
        4.0 + 4.0 / 2f64.sqrt() + 4.0 / 2.0 + 8.0 / 5f64.sqrt() + 4.0 / 8f64.sqrt()
    }

    #[test]
    fn identical_masks_are_perfect() {
        let truth = rectangle(16, 12, (3, 11), (2, 9));
        let q = evaluate(&truth, &truth, 16, 12).unwrap();
        assert_eq!(q.f_measure, 100.0);
        assert_eq!(q.pseudo_f_measure, 100.0);
        assert_eq!(q.psnr, f64::INFINITY);
        assert_eq!(q.drd, 0.0);
    }

    #[test]
    fn f_measure_and_psnr_by_hand() {
        // 8x1. truth 1111 0000, result 1100 1000: TP 2, FN 2, FP 1.
        // R = 2/4, P = 2/3, FM = 2 (1/2)(2/3) / (1/2 + 2/3) = (2/3) / (7/6) = 4/7 = 57.142857 %.
        // 3 of 8 pixels differ: MSE = 3/8, PSNR = 10 log10(8/3) = 4.2597 dB.
        let truth = [1, 1, 1, 1, 0, 0, 0, 0];
        let result = [1, 1, 0, 0, 1, 0, 0, 0];
        let q = evaluate(&result, &truth, 8, 1).unwrap();
        assert!(close(q.f_measure, 400.0 / 7.0), "{q:?}");
        assert!(close(q.psnr, 10.0 * (8.0f64 / 3.0).log10()), "{q:?}");
        assert!((q.psnr - 4.2597).abs() < 1e-4, "{q:?}");
    }

    #[test]
    fn pseudo_f_measure_by_hand() {
        // Truth: a 3x3 square centred in 5x5. Zhang-Suen, first sub-iteration: the 4 corners,
        // the right middle and the bottom middle go (each has A = 1 and a background P2/P4/P6/P8
        // that breaks the guards); the second removes the top middle and the left middle; the
        // centre (A = 2) stays. Skeleton = {(2, 2)}.
        let truth = rectangle(5, 5, (1, 4), (1, 4));
        assert_eq!(skeleton(&truth, 5, 5), mask(5, 5, &[(2, 2)]));

        // Result = the centre only: TP 1, FN 8, FP 0. FM: R = 1/9, P = 1, FM = 2/10 = 20 %.
        // pFM: pseudo-recall 1/1, P = 1, pFM = 100 %.
        let q = evaluate(&mask(5, 5, &[(2, 2)]), &truth, 5, 5).unwrap();
        assert!(close(q.f_measure, 20.0), "{q:?}");
        assert!(close(q.pseudo_f_measure, 100.0), "{q:?}");

        // Result = the square plus (0, 0): pseudo-recall 1, P = 9/10, pFM = 1.8 / 1.9 = 94.7368 %.
        let mut result = truth.clone();
        result[0] = 1;
        let q = evaluate(&result, &truth, 5, 5).unwrap();
        assert!(close(q.pseudo_f_measure, 180.0 / 1.9), "{q:?}");

        // Result = the square less its centre: pseudo-recall 0, P = 1, pFM = 0; FM = 2(8/9)/(17/9).
        let mut result = truth.clone();
        result[2 * 5 + 2] = 0;
        let q = evaluate(&result, &truth, 5, 5).unwrap();
        assert_eq!(q.pseudo_f_measure, 0.0);
        assert!(close(q.f_measure, 1600.0 / 17.0), "{q:?}");
    }

    #[test]
    fn drd_by_hand() {
        // 16x8: two 8x8 blocks. Truth ink (5,5) in the left block, (12,5) and (13,5) in the
        // right: both blocks non-uniform, NUBN = 2. Result ink (0,0), (5,5), (6,5), (13,5).
        // Wrong pixels, with S = the un-normalised weight sum (13.8203):
        // - (0,0), result ink, corner: only the 8 block pixels with dx, dy in 0..=2 are in the
        //   image, all truth background, so all count: 1 + 1 + 1/2 + 1/2 + 1/sqrt2 + 2/sqrt5
        //   + 1/sqrt8 = 4.9551; DRD_k = 4.9551 / S.
        // - (6,5), result ink: every block pixel is truth background except (5,5), weight 1,
        //   so DRD_k = (S - 1) / S.
        // - (12,5), result background: the only truth ink in its block is (13,5), weight 1,
        //   so DRD_k = 1 / S (the centre has weight 0).
        // DRD = (4.9551 + S - 1 + 1) / S / 2 = (4.9551 / S + 1) / 2 = 0.67927.
        let truth = mask(16, 8, &[(5, 5), (12, 5), (13, 5)]);
        let result = mask(16, 8, &[(0, 0), (5, 5), (6, 5), (13, 5)]);
        let corner = 2.0 + 1.0 + 1.0 / 2f64.sqrt() + 2.0 / 5f64.sqrt() + 1.0 / 8f64.sqrt();
        let expected = (corner / weight_sum() + 1.0) / 2.0;
        let q = evaluate(&result, &truth, 16, 8).unwrap();
        assert!(close(q.drd, expected), "{q:?} expected {expected}");
        assert!((q.drd - 0.67927).abs() < 1e-5, "{q:?}");
    }

    #[test]
    fn drd_of_a_stray_dot_on_blank_truth_is_one() {
        // Truth all background: NUBN = 0, divided by 1. One stray ink pixel away from the
        // edges differs from all 24 neighbours: DRD_k = sum of the normalised weights = 1.
        let result = mask(8, 8, &[(3, 3)]);
        let q = evaluate(&result, &[0; 64], 8, 8).unwrap();
        assert!(close(q.drd, 1.0), "{q:?}");
        assert_eq!(q.f_measure, 0.0);
        assert_eq!(q.pseudo_f_measure, 0.0);
    }

    #[test]
    fn drd_weights_are_normalised_reciprocal_distances() {
        let weights = drd_weights();
        assert_eq!(weights[2][2], 0.0);
        assert!(close(weights.iter().flatten().sum(), 1.0));
        assert!(close(weights[2][1], 1.0 / weight_sum()));
        assert!(close(weights[0][0], 1.0 / 8f64.sqrt() / weight_sum()));
        assert!(close(weights[0][1], 1.0 / 5f64.sqrt() / weight_sum()));
    }

    #[test]
    fn non_uniform_blocks_count_partial_edge_blocks_over_their_pixels() {
        // 10x10: blocks at x 0 and 8, y 0 and 8; the bottom-right one is 2x2.
        let mut truth = rectangle(10, 10, (8, 10), (8, 10));
        assert_eq!(non_uniform_blocks(Grid::new(&truth, 10, 10)), 0, "an all-ink 2x2 edge block is uniform");
        truth[9] = 1; // (9, 0): the top-right 2x8 block now mixes
        assert_eq!(non_uniform_blocks(Grid::new(&truth, 10, 10)), 1);
        truth[0] = 1; // (0, 0)
        assert_eq!(non_uniform_blocks(Grid::new(&truth, 10, 10)), 2);
    }

    #[test]
    fn all_background_masks() {
        let q = evaluate(&[0; 12], &[0; 12], 4, 3).unwrap();
        assert_eq!(q, Quality { f_measure: 100.0, pseudo_f_measure: 100.0, psnr: f64::INFINITY, drd: 0.0 });

        // Ink in the truth only: recall 0, precision 1 (nothing marked), FM = 0.
        // 1 of 12 wrong: PSNR = 10 log10 12.
        let q = evaluate(&[0; 12], &mask(4, 3, &[(1, 1)]), 4, 3).unwrap();
        assert_eq!(q.f_measure, 0.0);
        assert_eq!(q.pseudo_f_measure, 0.0);
        assert!(close(q.psnr, 10.0 * 12f64.log10()), "{q:?}");
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = evaluate(&[0; 5], &[0; 6], 3, 2).unwrap_err();
        assert!(err.contains("result") && err.contains('5') && err.contains('6'), "{err}");
        let err = evaluate(&[0; 6], &[0; 7], 3, 2).unwrap_err();
        assert!(err.contains("truth"), "{err}");
        assert!(evaluate(&[], &[], 0, 4).is_err());
        assert!(evaluate(&[], &[], 4, 0).is_err());
        assert!(evaluate(&[], &[], usize::MAX, 2).is_err());
        assert!(skeleton(&[1; 5], 3, 2).is_empty());
        assert!(skeleton(&[], usize::MAX, 2).is_empty());
    }

    #[test]
    fn skeleton_of_a_filled_rectangle_is_a_thin_line() {
        let (width, height) = (20, 11);
        let rect = rectangle(width, height, (2, 18), (2, 9)); // 16 x 7
        let skel = skeleton(&rect, width, height);
        assert!(skel.iter().any(|&v| v != 0), "the skeleton is empty");
        assert!(skel.iter().zip(&rect).all(|(&s, &r)| s == 0 || r != 0), "skeleton outside the ink");
        for y in 0..height - 1 {
            for x in 0..width - 1 {
                let block = [
                    skel[y * width + x],
                    skel[y * width + x + 1],
                    skel[(y + 1) * width + x],
                    skel[(y + 1) * width + x + 1],
                ];
                assert!(block.contains(&0), "2x2 block of skeleton at ({x}, {y})");
            }
        }
        for x in 0..width {
            let column = (0..height).filter(|&y| skel[y * width + x] != 0).count();
            assert!(column <= 1, "column {x} has {column} skeleton pixels");
        }
    }

    #[test]
    fn skeleton_keeps_isolated_pixels_and_thin_lines() {
        let cases = [
            (mask(5, 5, &[(2, 2)]), 5, 5),
            (mask(1, 1, &[(0, 0)]), 1, 1),
            (mask(7, 3, &[(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1)]), 7, 3), // edge to edge
            (mask(3, 7, &[(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)]), 3, 7), // vertical
            (mask(6, 6, &[(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]), 6, 6),         // diagonal
            (mask(6, 6, &[(5, 0), (4, 1), (3, 2), (2, 3), (1, 4), (0, 5)]), 6, 6),         // anti-diagonal
            (mask(5, 5, &[(0, 0), (4, 0), (2, 2), (0, 4), (4, 4)]), 5, 5),                 // scattered dots
        ];
        for (line, width, height) in cases {
            assert_eq!(skeleton(&line, width, height), line, "{width}x{height}");
        }
    }

    #[test]
    fn skeleton_of_two_pixel_thick_bars_by_hand() {
        // Horizontal bar, rows 1-2, x 1..=5. First sub-iteration: the four corners go, and so
        // does the bottom row (S is background, breaking both guards); the top row's middle
        // stays (E, S, W all ink). The second keeps the rest: ends have B = 1, middles A = 2.
        let bar = rectangle(7, 4, (1, 6), (1, 3));
        assert_eq!(skeleton(&bar, 7, 4), mask(7, 4, &[(2, 1), (3, 1), (4, 1)]));
        // Vertical bar, columns 1-2, y 1..=5: likewise the left column's middle stays
        // (N, E, S all ink) and the right column goes (E is background).
        let bar = rectangle(4, 7, (1, 3), (1, 6));
        assert_eq!(skeleton(&bar, 4, 7), mask(4, 7, &[(1, 2), (1, 3), (1, 4)]));
    }

    #[test]
    fn skeleton_of_a_three_pixel_thick_bar_by_hand() {
        // Rows 1-3, x 1..=6 in 8x5. First sub-iteration: the corners, the bottom row and (6,2)
        // go, leaving x 2..=5 of row 1 and x 1..=5 of row 2. Second: row 1 goes (N is
        // background), as do (1,2) and (5,2) (B = 2 or 3, A = 1); (2,2) has A = 2, and (3,2),
        // (4,2) have N, E, W ink. Then nothing more changes.
        let bar = rectangle(8, 5, (1, 7), (1, 4));
        assert_eq!(skeleton(&bar, 8, 5), mask(8, 5, &[(2, 2), (3, 2), (4, 2)]));
    }

    /// Neighbourhood P2..P9 with ink at the named compass points.
    fn hood(names: &[&str]) -> [bool; 8] {
        ["N", "NE", "E", "SE", "S", "SW", "W", "NW"].map(|name| names.contains(&name))
    }

    #[test]
    fn zhang_suen_conditions() {
        let both = |n| (deletable(n, &FIRST_PASS_GUARDS), deletable(n, &SECOND_PASS_GUARDS));
        // B = 7 (only E background), A = 1: too many neighbours.
        assert_eq!(both(hood(&["N", "NE", "SE", "S", "SW", "W", "NW"])), (false, false));
        // B = 1: an end point.
        assert_eq!(both(hood(&["E"])), (false, false));
        // B = 2, A = 2: the middle of a line.
        assert_eq!(both(hood(&["E", "W"])), (false, false));
        // B = 3, A = 1, S and W background: both guards broken in both sub-iterations.
        assert_eq!(both(hood(&["N", "NE", "E"])), (true, true));
        // Top edge of a thick bar: E, S, W ink keeps it in the first sub-iteration only.
        assert_eq!(both(hood(&["W", "SW", "S", "SE", "E"])), (false, true));
        // Left edge: N, E, S ink keeps it in the first; N, E, W are not all ink in the second,
        // nor N, S, W.
        assert_eq!(both(hood(&["N", "NE", "E", "SE", "S"])), (false, true));
    }

    #[test]
    fn skeleton_erases_a_lone_2x2_square_as_zhang_suen_defines() {
        // Each pixel of a 2x2 square has B = 3, A = 1 and a background P2 or P6 and P4 or P8:
        // all four go in the first sub-iteration. A known property of Zhang-Suen.
        let square = rectangle(4, 4, (1, 3), (1, 3));
        assert_eq!(skeleton(&square, 4, 4), vec![0; 16]);
    }

    #[test]
    fn skeleton_of_nothing_is_nothing() {
        assert_eq!(skeleton(&[0; 12], 4, 3), vec![0; 12]);
    }
}
