//! Summaries of benchmark records: per input the best (minimum) run, then means, as markdown.

use std::collections::HashMap;
use std::fmt::Write;

use super::record::Record;

/// The benchmark experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Mean over a dataset of the per-image minimum.
    Average,
    /// Average, broken down by phase.
    Steps,
    /// Random images over densities and granularities.
    Density,
    /// Random images of growing size.
    Size,
    /// Host image in, consecutive labels in host memory out (every copy included), host clock.
    EndToEnd,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [Mode::Average, Mode::Steps, Mode::Density, Mode::Size, Mode::EndToEnd];

    /// Lowercase name, as written in the records.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Average => "average",
            Mode::Steps => "steps",
            Mode::Density => "density",
            Mode::Size => "size",
            Mode::EndToEnd => "end-to-end",
        }
    }

    /// The mode a record was written by.
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Items in order of first appearance, without repeats.
pub(crate) fn ordered<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// For every (device, algorithm, image), the run with the smallest labeling time.
pub(crate) fn best_runs(records: &[Record]) -> Vec<&Record> {
    // Index of the best record per key, keys in order of first appearance.
    let mut slot: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let mut out: Vec<&Record> = Vec::new();
    for r in records {
        let key = (r.device_id.as_str(), r.algorithm.as_str(), r.image.as_str());
        match slot.get(&key) {
            Some(&i) if out[i].labeling_ms <= r.labeling_ms => {}
            Some(&i) => out[i] = r,
            None => {
                slot.insert(key, out.len());
                out.push(r);
            }
        }
    }
    out
}

pub(crate) fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values.into_iter().fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

fn fmt_ms(ms: f64) -> String {
    if ms.is_nan() {
        "—".into()
    } else if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.3}")
    }
}

fn header(out: &mut String, first: &str, columns: &[String]) {
    let _ = writeln!(out, "| {first} | {} |", columns.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(columns.len()));
}

/// Devices (id, name, driver) in order of appearance.
fn devices(records: &[Record]) -> Vec<(String, String, String)> {
    ordered(records.iter().map(|r| (r.device_id.clone(), r.device.clone(), r.driver.clone())))
}

/// A markdown summary of `records` for `mode`: the machine and devices, then the mode's tables.
/// Times are milliseconds of labeling (input already on the device), per input the minimum over
/// the runs, then the mean over the inputs of a group.
pub fn summary_markdown(records: &[Record], mode: Mode) -> String {
    let mut out = String::new();
    let best = best_runs(records);
    let machines = ordered(records.iter().map(|r| r.machine.clone()));
    let _ = writeln!(out, "Machine: {}\n", machines.join("; "));
    for (id, name, driver) in devices(records) {
        let _ = writeln!(out, "- `{id}`: {name} ({driver})");
    }
    let runs = records.iter().map(|r| r.run + 1).max().unwrap_or(0);
    let inputs = ordered(records.iter().map(|r| r.image.clone())).len();
    let connectivities: Vec<String> =
        ordered(records.iter().map(|r| r.connectivity)).iter().map(|c| format!("{c}-connectivity")).collect();
    let _ = writeln!(
        out,
        "\n{inputs} inputs, {}, {runs} timed runs each (minimum kept), times in ms.\n",
        connectivities.join(" / ")
    );
    match mode {
        Mode::Average => average_tables(&mut out, &best),
        Mode::Steps => steps_tables(&mut out, &best),
        Mode::Density => density_tables(&mut out, &best),
        Mode::Size => size_tables(&mut out, &best),
        Mode::EndToEnd => end_to_end_tables(&mut out, &best),
    }
    out
}

fn average_tables(out: &mut String, best: &[&Record]) {
    let devs = ordered(best.iter().map(|r| r.device_id.clone()));
    let algos = ordered(best.iter().map(|r| r.algorithm.clone()));
    // Throughput in millions of pixels, or of voxels when every input is a volume.
    let unit = if best.iter().all(|r| r.is_volume()) { "Mvox/s" } else { "Mpx/s" };
    let columns: Vec<String> = devs.iter().map(|d| format!("`{d}` ms ({unit})")).collect();
    header(out, "algorithm", &columns);
    for a in &algos {
        let cells: Vec<String> = devs
            .iter()
            .map(|d| {
                let rows: Vec<&&Record> = best.iter().filter(|r| &r.device_id == d && &r.algorithm == a).collect();
                if rows.is_empty() {
                    return "—".into();
                }
                let ms = mean(rows.iter().map(|r| r.labeling_ms));
                let mpx = rows.iter().map(|r| r.elements() as f64).sum::<f64>() / rows.len() as f64 / 1e6;
                format!("{} ({:.0})", fmt_ms(ms), mpx / (ms * 1e-3))
            })
            .collect();
        let _ = writeln!(out, "| {a} | {} |", cells.join(" | "));
    }
    let _ = writeln!(out, "\nTransfers (host clock, blocking copies; excluded from the times above):\n");
    header(out, "device", &["upload ms".into(), "download ms".into()]);
    for d in &devs {
        let rows: Vec<&&Record> = best.iter().filter(|r| &r.device_id == d).collect();
        let _ = writeln!(
            out,
            "| `{d}` | {} | {} |",
            fmt_ms(mean(rows.iter().map(|r| r.upload_ms))),
            fmt_ms(mean(rows.iter().map(|r| r.download_ms)))
        );
    }
}

/// The groups of an end-to-end summary: random inputs by extent, files (granularity 0) together.
pub(crate) fn end_to_end_groups<'a>(best: &[&'a Record]) -> Vec<(String, Vec<&'a Record>)> {
    let mut groups = Vec::new();
    let files: Vec<&Record> = best.iter().copied().filter(|r| r.granularity == 0).collect();
    if !files.is_empty() {
        let n = ordered(files.iter().map(|r| r.image.clone())).len();
        groups.push((format!("{n} images"), files));
    }
    let random: Vec<&Record> = best.iter().copied().filter(|r| r.granularity != 0).collect();
    for extent in ordered(random.iter().map(|r| r.extent())) {
        groups.push((extent.clone(), random.iter().copied().filter(|r| r.extent() == extent).collect()));
    }
    groups
}

/// Host-to-host times per group of inputs: ms (images/s) per algorithm and device, then the
/// parts.
fn end_to_end_tables(out: &mut String, best: &[&Record]) {
    let devs = ordered(best.iter().map(|r| r.device_id.clone()));
    for (group, rows) in end_to_end_groups(best) {
        let rows: Vec<&&Record> = rows.iter().collect();
        let _ = writeln!(out, "{group}, host image in, consecutive labels in host memory out, ms (images/s):\n");
        let columns: Vec<String> = devs.iter().map(|d| format!("`{d}`")).collect();
        header(out, "algorithm", &columns);
        for a in ordered(rows.iter().map(|r| r.algorithm.clone())) {
            let cells: Vec<String> = devs
                .iter()
                .map(|d| {
                    let ms = mean(rows.iter().filter(|r| &r.device_id == d && r.algorithm == a).map(|r| r.labeling_ms));
                    if ms.is_nan() {
                        "—".into()
                    } else {
                        format!("{} ({:.0})", fmt_ms(ms), 1e3 / ms)
                    }
                })
                .collect();
            let _ = writeln!(out, "| {a} | {} |", cells.join(" | "));
        }
        let _ = writeln!(out, "\nParts (ms, the same runs):\n");
        let phases = ordered(rows.iter().flat_map(|r| r.phase_list().into_iter().map(|(n, _)| n)));
        header(out, "device / algorithm", &phases);
        for d in &devs {
            for a in ordered(rows.iter().filter(|r| &r.device_id == d).map(|r| r.algorithm.clone())) {
                let mine: Vec<&&&Record> = rows.iter().filter(|r| &r.device_id == d && r.algorithm == a).collect();
                let cells: Vec<String> = phases
                    .iter()
                    .map(|p| {
                        let v = mean(
                            mine.iter()
                                .filter_map(|r| r.phase_list().into_iter().find(|(n, _)| n == p).map(|(_, ms)| ms)),
                        );
                        if v.is_nan() {
                            "—".into()
                        } else {
                            fmt_ms(v)
                        }
                    })
                    .collect();
                let _ = writeln!(out, "| `{d}` {a} | {} |", cells.join(" | "));
            }
        }
        let _ = writeln!(out);
    }
}

fn steps_tables(out: &mut String, best: &[&Record]) {
    for d in ordered(best.iter().map(|r| r.device_id.clone())) {
        let rows: Vec<&&Record> = best.iter().filter(|r| r.device_id == d).collect();
        let phases = ordered(rows.iter().flat_map(|r| r.phase_list().into_iter().map(|(n, _)| n)));
        let _ = writeln!(out, "`{d}`:\n");
        let mut columns: Vec<String> = phases.clone();
        columns.push("total".into());
        columns.push("iterations".into());
        header(out, "algorithm", &columns);
        for a in ordered(rows.iter().map(|r| r.algorithm.clone())) {
            let mine: Vec<&&&Record> = rows.iter().filter(|r| r.algorithm == a).collect();
            let mut cells: Vec<String> = phases
                .iter()
                .map(|p| {
                    fmt_ms(mean(
                        mine.iter()
                            .map(|r| r.phase_list().iter().find(|(n, _)| n == p).map(|(_, ms)| *ms).unwrap_or(0.0)),
                    ))
                })
                .collect();
            cells.push(fmt_ms(mean(mine.iter().map(|r| r.labeling_ms))));
            let iterations = mean(mine.iter().map(|r| f64::from(r.iterations)));
            cells.push(if iterations > 0.0 { format!("{iterations:.1}") } else { "—".into() });
            let _ = writeln!(out, "| {a} | {} |", cells.join(" | "));
        }
        let _ = writeln!(out);
    }
}

fn density_tables(out: &mut String, best: &[&Record]) {
    for d in ordered(best.iter().map(|r| r.device_id.clone())) {
        for g in ordered(best.iter().filter(|r| r.device_id == d).map(|r| r.granularity)) {
            let rows: Vec<&&Record> = best.iter().filter(|r| r.device_id == d && r.granularity == g).collect();
            let densities = ordered(rows.iter().map(|r| r.density.to_bits()));
            let _ = writeln!(out, "`{d}`, granularity {g}:\n");
            let columns: Vec<String> = densities.iter().map(|b| format!("{}%", f64::from_bits(*b))).collect();
            header(out, "algorithm", &columns);
            for a in ordered(rows.iter().map(|r| r.algorithm.clone())) {
                let cells: Vec<String> = densities
                    .iter()
                    .map(|b| {
                        fmt_ms(mean(
                            rows.iter()
                                .filter(|r| r.algorithm == a && r.density.to_bits() == *b)
                                .map(|r| r.labeling_ms),
                        ))
                    })
                    .collect();
                let _ = writeln!(out, "| {a} | {} |", cells.join(" | "));
            }
            let _ = writeln!(out);
        }
    }
}

fn size_tables(out: &mut String, best: &[&Record]) {
    for d in ordered(best.iter().map(|r| r.device_id.clone())) {
        let rows: Vec<&&Record> = best.iter().filter(|r| r.device_id == d).collect();
        let sizes = ordered(rows.iter().map(|r| r.extent()));
        let _ = writeln!(out, "`{d}`:\n");
        let columns: Vec<String> = sizes.clone();
        header(out, "algorithm", &columns);
        for a in ordered(rows.iter().map(|r| r.algorithm.clone())) {
            let cells: Vec<String> = sizes
                .iter()
                .map(|s| {
                    fmt_ms(mean(rows.iter().filter(|r| r.algorithm == a && r.extent() == *s).map(|r| r.labeling_ms)))
                })
                .collect();
            let _ = writeln!(out, "| {a} | {} |", cells.join(" | "));
        }
        let _ = writeln!(out);
    }
}
