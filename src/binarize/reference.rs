//! The CPU reference of every binarization: the same integer window sums and the same IEEE
//! double operations, in the same order, as `kernels/binarize.kernel`, so a GPU result must
//! equal it bit for bit. Window sums by running column sums and per-row prefix sums: O(1) per
//! pixel whatever the window.

use super::params::{Border, Method, NickFormula, Params};
use super::GrayImage;
use crate::{BinaryImage, Result};

/// Binarizes `gray` with `params`: 1 = ink (p <= T), 0 = background.
pub fn binarize(gray: &GrayImage, params: &Params) -> Result<BinaryImage> {
    params.validate()?;
    let ink = match params.method {
        Method::Otsu => {
            let t = otsu_threshold(&histogram(gray.values()));
            gray.values().iter().map(|&p| u8::from(p <= t)).collect()
        }
        Method::Wolf => {
            let stats = wolf_statistics(gray, params);
            decide(gray, params, stats)
        }
        _ => decide(gray, params, [0.0; 2]),
    };
    BinaryImage::image(gray.width(), gray.height(), ink)
}

/// The 256-bin histogram of a page.
pub fn histogram(pixels: &[u8]) -> [u64; 256] {
    let mut bins = [0u64; 256];
    for &p in pixels {
        bins[p as usize] += 1;
    }
    bins
}

/// Otsu's threshold t (ink: p <= t): the first t maximising the between-class variance, in
/// proportion (S(t) N - S W(t))^2 / (W(t) (N - W(t))), with W(t) and S(t) the count and gray
/// sum of the pixels <= t. A page of one gray level has no split: t = 0.
pub fn otsu_threshold(histogram: &[u64; 256]) -> u8 {
    let n: u64 = histogram.iter().sum();
    let total: u64 = histogram.iter().enumerate().map(|(v, &c)| v as u64 * c).sum();
    let (mut below, mut below_sum, mut best, mut t) = (0u64, 0u64, -1.0f64, 0u8);
    for (v, &count) in histogram.iter().enumerate() {
        below += count;
        below_sum += v as u64 * count;
        if below == 0 || below == n {
            continue;
        }
        let d = below_sum as f64 * n as f64 - total as f64 * below as f64;
        let between = d * d / (below as f64 * (n - below) as f64);
        if between > best {
            best = between;
            t = v as u8;
        }
    }
    t
}

/// Whether a pixel of value `p` is ink given its window sums, as the kernel's `is_ink` decides.
/// `stats` is Wolf's (minimum gray, largest deviation).
pub(crate) fn is_ink(p: u8, (s1, s2, np): (u64, u64, u64), params: &Params, stats: [f64; 2]) -> bool {
    let (k, n) = (params.k, np as f64);
    let m = s1 as f64 / n;
    let t = match params.method {
        Method::Nick => match params.formula {
            NickFormula::Paper => m + k * ((s2 as f64 - m * m) / n).max(0.0).sqrt(),
            NickFormula::Doxa => m + k * (s2 as f64 / n).sqrt(),
            NickFormula::OpenCv => {
                let mean_square = s2 as f64 / n;
                let radicand = (mean_square + mean_square) - m * m;
                (m + k * radicand.max(0.0).sqrt()).round_ties_even().clamp(0.0, 255.0)
            }
        },
        method => {
            let deviation = (deviation_numerator(s1, s2, np) as f64 / (n * n)).sqrt();
            match method {
                Method::Niblack => m + k * deviation,
                Method::Sauvola => m * (1.0 + k * (deviation / params.r - 1.0)),
                _ => {
                    let [lowest, widest] = stats;
                    let ratio = if widest > 0.0 { deviation / widest } else { 0.0 };
                    m - k * (1.0 - ratio) * (m - lowest)
                }
            }
        }
    };
    f64::from(p) <= t
}

/// NP^2 times the window's variance, exactly: NP S2 - S1^2 (never negative).
fn deviation_numerator(s1: u64, s2: u64, np: u64) -> u64 {
    np * s2 - s1 * s1
}

/// Every pixel's decision.
fn decide(gray: &GrayImage, params: &Params, stats: [f64; 2]) -> Vec<u8> {
    let mut ink = vec![0u8; gray.values().len()];
    for_each_window(gray, params, |i, sums| ink[i] = u8::from(is_ink(gray.values()[i], sums, params, stats)));
    ink
}

/// Wolf's statistics: the page's minimum gray and its largest window deviation.
fn wolf_statistics(gray: &GrayImage, params: &Params) -> [f64; 2] {
    let lowest = gray.values().iter().copied().min().unwrap_or(255);
    let mut widest = 0.0f64;
    for_each_window(gray, params, |_, (s1, s2, np)| {
        let n = np as f64;
        let variance = deviation_numerator(s1, s2, np) as f64 / (n * n);
        if variance > widest {
            widest = variance;
        }
    });
    [f64::from(lowest), widest.sqrt()]
}

/// Calls `visit(index, (S1, S2, NP))` for every pixel in raster order, with the sums over its
/// window (clipped or replicated as `params` says).
fn for_each_window(gray: &GrayImage, params: &Params, mut visit: impl FnMut(usize, (u64, u64, u64))) {
    let (w, h) = (gray.width() as i64, gray.height() as i64);
    let window = i64::from(params.window);
    let (before, after) = ((window - 1) / 2, window / 2);
    let border = params.border();
    let pixel = |x: i64, y: i64| -> u64 {
        match border {
            Border::Replicate => u64::from(gray.values()[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize]),
            Border::Clip if x < 0 || y < 0 || x >= w || y >= h => 0,
            Border::Clip => u64::from(gray.values()[(y * w + x) as usize]),
        }
    };
    let extent = |c: i64, n: i64| -> u64 {
        match border {
            Border::Replicate => window as u64,
            Border::Clip => ((c + after).min(n - 1) - (c - before).max(0) + 1) as u64,
        }
    };
    // Span columns -before ..= w - 1 + after; column j of the span is image column j - before.
    let span = (w + window - 1) as usize;
    let (mut v1, mut v2) = (vec![0u64; span], vec![0u64; span]);
    for (j, (a, b)) in v1.iter_mut().zip(v2.iter_mut()).enumerate() {
        for y in -before..=after {
            let p = pixel(j as i64 - before, y);
            *a += p;
            *b += p * p;
        }
    }
    let (mut p1, mut p2) = (vec![0u64; span + 1], vec![0u64; span + 1]);
    for y in 0..h {
        if y > 0 {
            for j in 0..span {
                let x = j as i64 - before;
                let (enter, leave) = (pixel(x, y + after), pixel(x, y - 1 - before));
                v1[j] = v1[j] + enter - leave;
                v2[j] = v2[j] + enter * enter - leave * leave;
            }
        }
        for j in 0..span {
            p1[j + 1] = p1[j] + v1[j];
            p2[j + 1] = p2[j] + v2[j];
        }
        let rows = extent(y, h);
        for x in 0..w {
            let c = x as usize; // the window of x starts at span column x
            let sums = (p1[c + window as usize] - p1[c], p2[c + window as usize] - p2[c], extent(x, w) * rows);
            visit((y * w + x) as usize, sums);
        }
    }
}
