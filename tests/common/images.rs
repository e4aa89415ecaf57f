//! Test images that break naive labelers: degenerate sizes, long chains, random textures.

use ccl::BinaryImage;

/// A named test image.
pub struct Case {
    pub name: String,
    pub image: BinaryImage,
}

fn case(name: impl Into<String>, image: BinaryImage) -> Case {
    Case { name: name.into(), image }
}

fn from_fn(w: usize, h: usize, f: impl FnMut(usize, usize) -> bool) -> BinaryImage {
    BinaryImage::image_from_fn(w, h, f).expect("valid test size")
}

/// MT19937 random image (see [`ccl::random_image`]).
pub fn random(w: usize, h: usize, density: u32, granularity: usize, seed: u32) -> BinaryImage {
    ccl::random_image(w, h, density, granularity, seed).expect("valid test size")
}

/// A square spiral corridor: one long component winding inwards.
pub fn spiral(n: usize) -> BinaryImage {
    let mut on = vec![false; n * n];
    let (mut lo, mut hi) = (0isize, n as isize - 1);
    while lo <= hi {
        for x in lo..=hi {
            on[lo as usize * n + x as usize] = true; // top edge
        }
        for y in lo..=hi {
            on[y as usize * n + hi as usize] = true; // right edge
        }
        for x in lo..=hi {
            on[hi as usize * n + x as usize] = true; // bottom edge
        }
        for y in (lo + 2)..=hi {
            on[y as usize * n + lo as usize] = true; // left edge, open at the top
        }
        if lo + 2 <= hi {
            on[(lo + 2) as usize * n + (lo + 1) as usize] = true; // step into the next ring
        }
        lo += 2;
        hi -= 2;
    }
    from_fn(n, n, |x, y| on[y * n + x])
}

/// A snake: rows on every other line joined alternately at the right and left ends.
pub fn snake(w: usize, h: usize) -> BinaryImage {
    from_fn(w, h, |x, y| y % 2 == 0 || (y % 4 == 1 && x == w - 1) || (y % 4 == 3 && x == 0))
}

/// A diagonal-only staircase: connected under 8-connectivity, single pixels under 4.
pub fn diagonals(w: usize, h: usize) -> BinaryImage {
    from_fn(w, h, |x, y| (x + y) % 4 == 0)
}

/// Concentric square rings, one pixel wide, one apart.
pub fn rings(w: usize, h: usize) -> BinaryImage {
    from_fn(w, h, |x, y| x.min(y).min(w - 1 - x).min(h - 1 - y) % 2 == 0)
}

/// Vertical stripes `width` wide, `gap` apart.
pub fn stripes(w: usize, h: usize, width: usize, gap: usize) -> BinaryImage {
    from_fn(w, h, |x, _| x % (width + gap) < width)
}

/// The most components a 8-connected image can have: foreground on even rows and even columns.
pub fn max_labels(w: usize, h: usize) -> BinaryImage {
    from_fn(w, h, |x, y| x % 2 == 0 && y % 2 == 0)
}

/// Images with foreground value `value` instead of 1.
pub fn with_value(image: &BinaryImage, value: u8) -> BinaryImage {
    let pixels = image.values().iter().map(|&p| if p != 0 { value } else { 0 }).collect();
    BinaryImage::image(image.width(), image.height(), pixels).expect("same size")
}

/// The conformance images small enough for every device in quick mode (at most 256x256-ish);
/// [`large_conformance_cases`] holds the rest.
pub fn conformance_cases() -> Vec<Case> {
    let mut cases = vec![case("1x1-bg", from_fn(1, 1, |_, _| false)), case("1x1-fg", from_fn(1, 1, |_, _| true))];
    for n in [2usize, 7, 8, 33, 64, 257] {
        cases.push(case(format!("1x{n}-alternating"), from_fn(1, n, |_, y| y % 3 != 2)));
        cases.push(case(format!("{n}x1-alternating"), from_fn(n, 1, |x, _| x % 3 != 2)));
        cases.push(case(format!("1x{n}-fg"), from_fn(1, n, |_, _| true)));
        cases.push(case(format!("{n}x1-fg"), from_fn(n, 1, |_, _| true)));
    }
    cases.push(case("17x31-random50", random(17, 31, 50, 1, 1)));
    cases.push(case("31x17-random50", random(31, 17, 50, 1, 2)));
    for (w, h) in [(64, 64), (97, 45)] {
        cases.push(case(format!("{w}x{h}-background"), from_fn(w, h, |_, _| false)));
        cases.push(case(format!("{w}x{h}-foreground"), from_fn(w, h, |_, _| true)));
        cases.push(case(format!("{w}x{h}-checkerboard"), from_fn(w, h, |x, y| (x + y) % 2 == 0)));
        cases.push(case(format!("{w}x{h}-checkerboard2"), from_fn(w, h, |x, y| (x / 2 + y / 2) % 2 == 0)));
        cases.push(case(format!("{w}x{h}-diagonals"), diagonals(w, h)));
    }
    cases.push(case("129x129-spiral", spiral(129)));
    cases.push(case("256x256-spiral", spiral(256)));
    cases.push(case("257x130-snake", snake(257, 130)));
    cases.push(case("1x300-snake", snake(1, 300)));
    for density in [5, 30, 45, 60, 90] {
        for granularity in [1, 4, 16] {
            cases.push(case(
                format!("300x200-mt-d{density}-g{granularity}"),
                random(300, 200, density, granularity, 1000 + density * 7 + granularity as u32),
            ));
        }
    }
    // The algorithm issue's additions: small and odd sizes, patterns, the density x granularity
    // grid, big images.
    for (w, h) in [(2, 2), (3, 3), (15, 15), (16, 16), (31, 17), (255, 257)] {
        cases.push(case(format!("{w}x{h}-mt-d50-g1"), random(w, h, 50, 1, (w * 31 + h) as u32)));
    }
    for (w, h) in [(2, 2), (3, 3), (15, 15), (16, 16), (31, 17)] {
        cases.push(case(format!("{w}x{h}-foreground"), from_fn(w, h, |_, _| true)));
        cases.push(case(format!("{w}x{h}-max-labels"), max_labels(w, h)));
    }
    for (w, h) in [(128, 96), (255, 257)] {
        cases.push(case(format!("{w}x{h}-rings"), rings(w, h)));
        cases.push(case(format!("{w}x{h}-max-labels"), max_labels(w, h)));
        cases.push(case(format!("{w}x{h}-stripes1"), stripes(w, h, 1, 1)));
        cases.push(case(format!("{w}x{h}-stripes3"), stripes(w, h, 3, 2)));
        cases.push(case(format!("{w}x{h}-diagonals"), diagonals(w, h)));
    }
    for density in (0..=100).step_by(10) {
        for granularity in [1, 2, 4, 8, 16] {
            cases.push(case(
                format!("255x257-mt-d{density}-g{granularity}"),
                random(255, 257, density, granularity, 7919 * density + granularity as u32),
            ));
        }
    }
    cases.extend(tile_corner_cases(&[(131, 101)]));
    let base = random(123, 77, 55, 2, 9);
    for value in [2u8, 128, 255] {
        cases.push(case(format!("123x77-value{value}"), with_value(&base, value)));
    }
    cases
}

/// The large conformance images (full mode: slow on a CPU device): 1-4 megapixels at three
/// densities, a region grid of TUF's across a wide device, and the images past CUDA's grid.
pub fn large_conformance_cases() -> Vec<Case> {
    let mut cases = vec![case("1000x1000-mt-d45-g1", random(1000, 1000, 45, 1, 45))];
    cases.push(case("1023x1025-mt-d50-g1", random(1023, 1025, 50, 1, 1023 * 31 + 1025)));
    for density in [10, 50, 90] {
        cases.push(case(format!("2048x2048-mt-d{density}-g1"), random(2048, 2048, density, 1, 2048 + density)));
    }
    // 2048x544 has corners where four of TUF's 256 x 32 regions meet (enough of them that even a
    // device of 132 compute units labels 8 tiles per work-group).
    cases.extend(tile_corner_cases(&[(2048, 544)]));
    cases.extend(tall_and_wide_cases());
    cases
}

/// Pieces that meet only at tile corners (every tile size in use is a multiple of 8): 2x2 blocks
/// across each corner, and pixel pairs touching diagonally or anti-diagonally there.
fn tile_corner_cases(sizes: &[(usize, usize)]) -> Vec<Case> {
    let corner = |c: usize| c % 8 == 7 || (c.is_multiple_of(8) && c > 0);
    let mut cases = Vec::new();
    for &(w, h) in sizes {
        cases.push(case(format!("{w}x{h}-tile-corner-blocks"), from_fn(w, h, |x, y| corner(x) && corner(y))));
        cases.push(case(
            format!("{w}x{h}-tile-corner-diagonals"),
            from_fn(w, h, |x, y| corner(x) && corner(y) && (x % 8 == 7) == (y % 8 == 7)),
        ));
        cases.push(case(
            format!("{w}x{h}-tile-corner-antidiagonals"),
            from_fn(w, h, |x, y| corner(x) && corner(y) && (x % 8 == 7) != (y % 8 == 7)),
        ));
    }
    cases
}

/// Images past the CUDA grid's 65535 groups along y (524,280 rows for pixel algorithms, and
/// 1,048,560 for block ones, in groups of 8 rows): the launch is folded, and components must
/// still join across the fold. Plus their transposes, and a wide one.
pub fn tall_and_wide_cases() -> Vec<Case> {
    // Runs of 5 pixels with gaps, and one long run across the middle (and the fold).
    let runs = |i: usize| i % 7 < 5 || (250_000..350_000).contains(&i);
    let mut cases = vec![
        case("1x600000-runs", from_fn(1, 600_000, |_, y| runs(y))),
        case("600000x1-runs", from_fn(600_000, 1, |x, _| runs(x))),
    ];
    // Column 0: foreground but for a gap every 100,000 rows, so components 100,000 rows long
    // cross the fold of every algorithm; column 1: MT19937 at 50 %.
    let noise = random(1, 1_100_000, 50, 1, 1_100_000);
    cases.push(case(
        "2x1100000-columns",
        from_fn(2, 1_100_000, |x, y| if x == 0 { y % 100_000 != 99_999 } else { noise.is_foreground(0, y) }),
    ));
    cases
}
