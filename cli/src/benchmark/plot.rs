//! Plots of benchmark records (PNG and SVG, with `plotters`): density curves per algorithm as in
//! the papers' figures, stacked per-phase bars, a backend comparison and time against size.
//! Peer libraries (records whose backend is not cpu/opencl/cuda) are drawn next to each device.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::record::Record;
use super::report::{best_runs, mean, ordered, Mode};
use ccl::{Error, Result};

type Plot = std::result::Result<(), String>;

pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bitmap backend has no system fonts with ab_glyph: embed DejaVu Sans.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

fn is_peer(r: &Record) -> bool {
    !matches!(r.backend.as_str(), "cpu" | "opencl" | "cuda")
}

fn color(i: usize) -> RGBColor {
    // Distinct colors (Tableau 10, then black and indigo), cycling.
    const COLORS: [(u8, u8, u8); 12] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
        (0, 0, 0),
        (90, 90, 200),
    ];
    let (r, g, b) = COLORS[i % COLORS.len()];
    RGBColor(r, g, b)
}

/// Axis numbers without float noise: up to 4 significant digits.
fn tick(v: &f64) -> String {
    let digits = if *v == 0.0 { 0 } else { (3 - v.abs().log10().floor() as i32).max(0) as usize };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A named series of (x, y) points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    peer: bool,
}

fn line_chart<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    series: &[Series],
    log: bool,
) -> Plot {
    root.fill(&WHITE).map_err(err)?;
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (y0, y1) =
        ys.filter(|y| y.is_finite() && *y > 0.0).fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    if x0 > x1 || y0 > y1 {
        return Ok(());
    }
    let mut builder = ChartBuilder::on(&root);
    builder.caption(title, ("sans-serif", 22)).margin(12).x_label_area_size(40).y_label_area_size(64);
    let whole = |x: &f64| format!("{x:.0}");
    if log {
        // Size: log-log, with markers on the measured sizes.
        let x = (x0 * 0.9..x1 * 1.1).log_scale();
        let mut chart = builder.build_cartesian_2d(x, (y0 * 0.8..y1 * 1.25).log_scale()).map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("ms")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .draw()
            .map_err(err)?;
        draw_lines(&mut chart, series, true)?;
    } else if y1 / y0 > 30.0 {
        // Peers or slow devices next to fast ones: a log time axis keeps every curve readable.
        let mut chart = builder.build_cartesian_2d(x0..x1, (y0 * 0.8..y1 * 1.25).log_scale()).map_err(err)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_label).y_desc("ms (log scale)").y_label_formatter(&tick).x_label_formatter(&whole);
        mesh.draw().map_err(err)?;
        draw_lines(&mut chart, series, false)?;
    } else {
        let mut chart = builder.build_cartesian_2d(x0..x1, 0.0..y1 * 1.1).map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("ms")
            .y_label_formatter(&tick)
            .x_label_formatter(&whole)
            .draw()
            .map_err(err)?;
        draw_lines(&mut chart, series, false)?;
    }
    root.present().map_err(err)
}

/// Draws every series (peers thin), optional point markers, and the legend.
fn draw_lines<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &[Series],
    markers: bool,
) -> Plot {
    // Size curves rise to the right, density curves sit low: keep the legend off them.
    let corner = if markers { SeriesLabelPosition::UpperLeft } else { SeriesLabelPosition::UpperRight };
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        let stroke = if s.peer { c.stroke_width(1) } else { c.stroke_width(2) };
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), stroke))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        if markers {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 2, c.filled()))).map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// Bars: for every category, one bar per group (grouped, log scale: backends differ by orders of
/// magnitude), or one bar stacked from the groups (stacked, linear). `values[c][g]` is the
/// height of group `g` in category `c`.
fn bar_chart<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    categories: &[String],
    groups: &[String],
    values: &[Vec<f64>],
    stacked: bool,
) -> Plot {
    root.fill(&WHITE).map_err(err)?;
    let n = categories.len();
    let finite = values.iter().flatten().copied().filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = finite.fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if n == 0 || groups.is_empty() || hi <= 0.0 {
        return Ok(());
    }
    let mut builder = ChartBuilder::on(&root);
    builder.caption(title, ("sans-serif", 22)).margin(12).x_label_area_size(10).y_label_area_size(64);
    let x_range = -0.5..n as f64 - 0.5;
    if stacked {
        let top = values.iter().map(|v| v.iter().filter(|x| x.is_finite()).sum::<f64>()).fold(0.0, f64::max);
        let floor = -0.08 * top;
        let mut chart = builder.build_cartesian_2d(x_range, floor..top * 1.15).map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("ms")
            .y_label_formatter(&tick)
            .draw()
            .map_err(err)?;
        draw_bars(&mut chart, categories, groups, values, true, 0.0, floor)
    } else {
        let floor = lo / 4.0;
        let mut chart = builder.build_cartesian_2d(x_range, (floor..hi * 2.0).log_scale()).map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("ms (log scale)")
            .y_label_formatter(&tick)
            .draw()
            .map_err(err)?;
        draw_bars(&mut chart, categories, groups, values, false, floor * 1.6, floor * 1.15)
    }?;
    root.present().map_err(err)
}

fn draw_bars<'a, DB: DrawingBackend + 'a, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    categories: &[String],
    groups: &[String],
    values: &[Vec<f64>],
    stacked: bool,
    base: f64,
    label_y: f64,
) -> Plot {
    let width = 0.8 / if stacked { 1.0 } else { groups.len() as f64 };
    for (g, group) in groups.iter().enumerate() {
        let c = color(g);
        let rects = values.iter().enumerate().filter(|(_, v)| v[g].is_finite() && v[g] > 0.0).map(|(i, v)| {
            let (x0, y0) = if stacked {
                (i as f64 - 0.4, base + v[..g].iter().filter(|x| x.is_finite()).sum::<f64>())
            } else {
                (i as f64 - 0.4 + g as f64 * width, base)
            };
            let y1 = if stacked { y0 + v[g] } else { v[g] };
            Rectangle::new([(x0, y0), (x0 + width, y1)], c.filled())
        });
        chart
            .draw_series(rects)
            .map_err(err)?
            .label(group.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    let style = TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    chart
        .draw_series(
            categories.iter().enumerate().map(|(i, name)| Text::new(name.clone(), (i as f64, label_y), style.clone())),
        )
        .map_err(err)?;
    chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw().map_err(err)
}

/// Renders through a temporary file beside `path` (same extension, so the backend picks the
/// same format), then renames it over `path`: a failed plot leaves no partial file.
fn render_atomically(path: &Path, draw: impl FnOnce(&Path) -> Plot) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = path.with_file_name(format!(".tmp-{}-{name}", std::process::id()));
    let result = draw(&temp).and_then(|()| std::fs::rename(&temp, path).map_err(|e| e.to_string()));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map_err(|reason| Error::FileWrite { path: path.display().to_string(), reason })
}

/// Renders one chart to `<dir>/<stem>.png` and `.svg`.
macro_rules! render {
    ($out:expr, $dir:expr, $stem:expr, $size:expr, $chart:ident ( $($arg:expr),* )) => {{
        let png = $dir.join(format!("{}.png", $stem));
        render_atomically(&png, |p| $chart(BitMapBackend::new(p, $size).into_drawing_area(), $($arg),*))?;
        let svg = $dir.join(format!("{}.svg", $stem));
        render_atomically(&svg, |p| $chart(SVGBackend::new(p, $size).into_drawing_area(), $($arg),*))?;
        $out.push(png);
        $out.push(svg);
    }};
}

fn file_stem(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect()
}

/// Writes the plots that fit `mode` into `dir`; returns the files written.
pub fn write_plots(records: &[Record], mode: Mode, dir: &Path) -> Result<Vec<PathBuf>> {
    register_font();
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::FileWrite { path: dir.display().to_string(), reason: e.to_string() })?;
    let best = best_runs(records);
    let mut written = Vec::new();
    let ours: Vec<String> = ordered(best.iter().filter(|r| !is_peer(r)).map(|r| r.device_id.clone()));
    let peers: Vec<&&Record> = best.iter().filter(|r| is_peer(r)).collect();
    let name_of = |id: &str| best.iter().find(|r| r.device_id == id).map(|r| r.device.clone()).unwrap_or_default();

    match mode {
        Mode::Density => {
            for d in &ours {
                for g in ordered(best.iter().filter(|r| &r.device_id == d).map(|r| r.granularity)) {
                    let mine: Vec<&&Record> =
                        best.iter().filter(|r| (&r.device_id == d || is_peer(r)) && r.granularity == g).collect();
                    let series: Vec<Series> = ordered(mine.iter().map(|r| (r.device_id.clone(), r.algorithm.clone())))
                        .into_iter()
                        .map(|(dev, a)| {
                            let pts = ordered(
                                mine.iter()
                                    .filter(|r| r.device_id == dev && r.algorithm == a)
                                    .map(|r| r.density.to_bits()),
                            )
                            .into_iter()
                            .map(|b| {
                                let ms = mean(
                                    mine.iter()
                                        .filter(|r| r.device_id == dev && r.algorithm == a && r.density.to_bits() == b)
                                        .map(|r| r.labeling_ms),
                                );
                                (f64::from_bits(b), ms)
                            })
                            .collect();
                            let peer = &dev != d;
                            Series { name: if peer { format!("{a} ({dev})") } else { a }, points: pts, peer }
                        })
                        .collect();
                    let size = mine.first().map(|r| r.extent()).unwrap_or_default();
                    let c = mine.first().map(|r| r.connectivity).unwrap_or_default();
                    let title = format!("{d} {}: {size}, granularity {g}, {c}-connectivity", name_of(d));
                    let stem = format!("density-{}-g{g}", file_stem(d));
                    render!(
                        written,
                        dir,
                        stem,
                        (1000, 650),
                        line_chart(&title, "foreground density (%)", &series, false)
                    );
                }
            }
        }
        Mode::Size => {
            for d in &ours {
                let mine: Vec<&&Record> = best.iter().filter(|r| &r.device_id == d || is_peer(r)).collect();
                let series: Vec<Series> = ordered(mine.iter().map(|r| (r.device_id.clone(), r.algorithm.clone())))
                    .into_iter()
                    .map(|(dev, a)| {
                        let mut pts: Vec<(f64, f64)> = mine
                            .iter()
                            .filter(|r| r.device_id == dev && r.algorithm == a)
                            .map(|r| (r.elements() as f64 / 1e6, r.labeling_ms))
                            .collect();
                        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                        let peer = &dev != d;
                        Series { name: if peer { format!("{a} ({dev})") } else { a }, points: pts, peer }
                    })
                    .collect();
                let volumes = mine.iter().all(|r| r.is_volume());
                let (what, unit) = if volumes { ("volume", "megavoxels") } else { ("image", "megapixels") };
                let title = format!("{d} {}: time against {what} size", name_of(d));
                let stem = format!("size-{}", file_stem(d));
                render!(written, dir, stem, (1000, 650), line_chart(&title, unit, &series, true));
            }
        }
        Mode::Steps => {
            for d in &ours {
                let mine: Vec<&&Record> = best.iter().filter(|r| &r.device_id == d).collect();
                let algos = ordered(mine.iter().map(|r| r.algorithm.clone()));
                let phases = ordered(mine.iter().flat_map(|r| r.phase_list().into_iter().map(|(n, _)| n)));
                let values: Vec<Vec<f64>> = algos
                    .iter()
                    .map(|a| {
                        phases
                            .iter()
                            .map(|p| {
                                mean(mine.iter().filter(|r| &r.algorithm == a).map(|r| {
                                    r.phase_list().iter().find(|(n, _)| n == p).map(|(_, ms)| *ms).unwrap_or(0.0)
                                }))
                            })
                            .collect()
                    })
                    .collect();
                let title = format!("{d} {}: time per phase", name_of(d));
                let stem = format!("steps-{}", file_stem(d));
                render!(written, dir, stem, (1100, 650), bar_chart(&title, &algos, &phases, &values, true));
            }
        }
        Mode::EndToEnd => {
            // Host-to-host time of every device and algorithm, peers included, per group of
            // inputs (random images by size, files together).
            for (group, rows) in super::report::end_to_end_groups(&best) {
                let algos = ordered(rows.iter().map(|r| r.algorithm.clone()));
                let devs = ordered(rows.iter().map(|r| r.device_id.clone()));
                let values: Vec<Vec<f64>> = algos
                    .iter()
                    .map(|a| {
                        devs.iter()
                            .map(|d| {
                                mean(
                                    rows.iter()
                                        .filter(|r| &r.device_id == d && &r.algorithm == a)
                                        .map(|r| r.labeling_ms),
                                )
                            })
                            .collect()
                    })
                    .collect();
                let title = format!("{group}: host image in, consecutive labels out (ms, log scale)");
                let stem = format!("end-to-end-{}", file_stem(&group));
                render!(written, dir, stem, (1300, 650), bar_chart(&title, &algos, &devs, &values, false));
            }
        }
        Mode::Average => {}
    }

    // Backend comparison: the same algorithm on every device (and the peers), mean over inputs.
    let algos: Vec<String> =
        ordered(best.iter().filter(|r| !is_peer(r) && r.algorithm != "reference").map(|r| r.algorithm.clone()));
    if !algos.is_empty() {
        let devs: Vec<String> = ours
            .iter()
            .filter(|d| best.iter().any(|r| &r.device_id == *d && r.algorithm != "reference"))
            .cloned()
            .collect();
        let values: Vec<Vec<f64>> = algos
            .iter()
            .map(|a| {
                devs.iter()
                    .map(|d| {
                        mean(best.iter().filter(|r| &r.device_id == d && &r.algorithm == a).map(|r| r.labeling_ms))
                    })
                    .collect()
            })
            .collect();
        let labels: Vec<String> = devs.iter().map(|d| format!("{d} {}", name_of(d))).collect();
        let title = format!("{} mode: the same algorithms on every backend (mean ms)", mode.name());
        render!(written, dir, "backends", (1200, 650), bar_chart(&title, &algos, &labels, &values, false));
        let _ = peers;
    }
    Ok(written)
}
