//! `ccl bench` end to end on the devices present (small sizes): every mode writes its results
//! file, summary and plots, on images and on volumes; `bench plot` redraws from results files,
//! the committed ones written before volumes too; an interrupted run keeps the rows it measured.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
mod support;
use support::{ccl, scratch};

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run ccl");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && !text.contains("panicked"), "{text}");
    text
}

fn rows(csv: &Path) -> Vec<ccl_cli::benchmark::Record> {
    ccl_cli::benchmark::read_records(&[csv]).expect("readable results")
}

fn devices_arg() -> String {
    // Every device present except the CPU reference, which is slow at any size; plus `cpu`.
    let found = ccl::discover();
    found.devices.iter().map(|d| d.id.to_string()).collect::<Vec<_>>().join(",")
}

#[test]
fn density_mode_writes_results_summary_and_plots() {
    let dir = scratch("density");
    let devices = devices_arg();
    run_ok(
        ccl()
            .args(["bench", "density", "--size", "96x64", "--densities", "0:100:50", "--granularities", "1,4"])
            .args([
                "--images",
                "2",
                "--runs",
                "2",
                "--warmup",
                "1",
                "--algos",
                "uf,bke_ic,ole,be",
                "--devices",
                &devices,
                "--save-images",
                "--out",
            ])
            .arg(&dir),
    );
    let records = rows(&dir.join("results.csv"));
    let gpu_devices = ccl::discover().devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).count();
    // 3 densities x 2 granularities x 2 images = 12 inputs, 2 runs; 4 algorithms per device,
    // one reference run set on the CPU.
    assert_eq!(records.len(), 12 * 2 * (4 * gpu_devices + 1), "{} records", records.len());
    assert!(records.iter().all(|r| r.labeling_ms > 0.0 && r.mode == "density"));
    // Device marks behind a queue hold by default; the CPU reference by the host clock.
    assert!(records.iter().all(|r| r.timing == if r.device_id == "cpu" { "host" } else { "queued" }));
    assert!(records.iter().filter(|r| r.algorithm == "OLE").all(|r| r.iterations >= 1));
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("granularity 4") && summary.contains("| BKE_IC |"), "{summary}");
    for g in [1, 4] {
        for ext in ["png", "svg"] {
            assert!(dir.join(format!("density-cpu-g{g}.{ext}")).is_file());
        }
    }
    assert!(dir.join("backends.png").is_file() == (gpu_devices > 0));
    let manifest = std::fs::read_to_string(dir.join("images/inputs.csv")).unwrap();
    assert_eq!(manifest.lines().count(), 13);
    // Redraw from the results file.
    let replot = dir.join("replot");
    run_ok(ccl().args(["bench", "plot", "--results"]).arg(dir.join("results.csv")).arg("--out").arg(&replot));
    assert_eq!(std::fs::read_to_string(replot.join("summary.md")).unwrap(), summary);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn average_steps_and_size_modes() {
    let dir = scratch("modes");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for (k, d) in [20u32, 60].iter().enumerate() {
        let img = ccl::random_image(70, 33, *d, 2, k as u32).unwrap();
        let gray = image::GrayImage::from_raw(70, 33, img.values().iter().map(|p| p * 255).collect()).unwrap();
        gray.save(data.join(format!("page{k}.png"))).unwrap();
    }
    let devices = devices_arg();
    let common = ["--runs", "2", "--warmup", "0", "--algos", "le,bke", "--devices", &devices];
    let avg = dir.join("avg");
    let text = run_ok(
        ccl()
            .args(["bench", "average", "--dataset"])
            .arg(&data)
            .args(["--threshold", "128"])
            .args(common)
            .arg("--out")
            .arg(&avg),
    );
    assert!(text.contains("ms (Mpx/s)") && text.contains("upload ms"), "{text}");
    assert_eq!(rows(&avg.join("results.csv")).iter().filter(|r| r.image == "page1").count() % 2, 0);
    let idle = dir.join("idle");
    run_ok(ccl().args(["bench", "steps", "--size", "40x30", "--timing", "idle"]).args(common).arg("--out").arg(&idle));
    assert!(rows(&idle.join("results.csv"))
        .iter()
        .all(|r| r.timing == if r.device_id == "cpu" { "host" } else { "idle" }));
    let steps = dir.join("steps");
    let text = run_ok(
        ccl().args(["bench", "steps", "--size", "40x30", "--images", "2"]).args(common).arg("--out").arg(&steps),
    );
    assert!(text.contains("| iterations |"), "{text}");
    let size = dir.join("size");
    run_ok(ccl().args(["bench", "size", "--sizes", "16,32"]).args(common).arg("--out").arg(&size));
    assert!(size.join("size-cpu.png").is_file());
    let recs = rows(&size.join("results.csv"));
    assert!(recs.iter().any(|r| r.width == 32) && recs.iter().any(|r| r.width == 16));
    // Bad arguments are errors, not panics.
    let out = ccl().args(["bench", "density", "--densities", "0:200:10"]).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("percentages"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_interrupted_run_keeps_what_it_measured() {
    let dir = scratch("interrupted");
    let mut child = ccl()
        .args(["bench", "density", "--size", "256x256", "--densities", "0:100:1", "--images", "3", "--runs", "3"])
        .args(["--devices", "cpu", "--out"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let csv = dir.join("results.csv");
    let start = Instant::now();
    while std::fs::read_to_string(&csv).map(|s| s.lines().count()).unwrap_or(0) < 10 {
        assert!(start.elapsed() < Duration::from_secs(60), "no rows written");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = rows(&csv);
    assert!(kept.len() >= 9 && kept.len() < 101 * 3 * 3, "{} rows", kept.len());
    run_ok(ccl().args(["bench", "plot", "--results"]).arg(&csv).arg("--out").arg(dir.join("plots")));
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every results file starts with the header, even when nothing is recorded, and the header is
/// the one serde gives `Record`.
#[test]
fn results_files_always_have_the_header() {
    let dir = scratch("header");
    let path = dir.join("results.csv");
    drop(ccl_cli::benchmark::RecordWriter::create(&path).unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.trim_end(), ccl_cli::benchmark::HEADER.join(","));
    let record = ccl_cli::benchmark::Record {
        mode: "average".into(),
        machine: String::new(),
        device_id: "cpu".into(),
        device: String::new(),
        driver: String::new(),
        backend: "cpu".into(),
        algorithm: "reference".into(),
        connectivity: 8,
        image: "x".into(),
        width: 1,
        height: 1,
        depth: 1,
        density: 0.0,
        granularity: 0,
        run: 0,
        labeling_ms: 1.0,
        upload_ms: 0.0,
        download_ms: 0.0,
        iterations: 0,
        phases: String::new(),
        timing: "queued".into(),
    };
    let mut serde_csv = csv::Writer::from_writer(Vec::new());
    serde_csv.serialize(&record).unwrap();
    let serde_text = String::from_utf8(serde_csv.into_inner().unwrap()).unwrap();
    assert_eq!(serde_text.lines().next().unwrap(), ccl_cli::benchmark::HEADER.join(","));
    let mut writer = ccl_cli::benchmark::RecordWriter::create(&path).unwrap();
    writer.write(&record).unwrap();
    assert_eq!(rows(&path), vec![record]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Nonsense is refused before anything runs: no input, an algorithm set that cannot run at the
/// connectivity; repeats run once; a folder's undecodable file is skipped and named.
#[test]
fn bench_refuses_nonsense_and_skips_bad_files() {
    use ccl::{Algorithm, Connectivity, DeviceId};
    use ccl_cli::benchmark::{BenchOptions, Mode};
    let opts = |algorithms: Vec<Algorithm>, devices: Vec<DeviceId>| BenchOptions {
        mode: Mode::Average,
        algorithms,
        devices,
        connectivity: Connectivity::Four,
        runs: 1,
        warmup: 0,
        progress: false,
        stats: false,
        timing: ccl_cli::benchmark::Timing::Idle,
    };
    let err = opts(vec![Algorithm::BKE, Algorithm::BUF], vec![DeviceId::OpenCl(0)]).validate().unwrap_err();
    assert!(err.to_string().contains("none of [BKE, BUF] supports 4-connectivity"), "{err}");
    assert!(opts(vec![Algorithm::BKE], vec![DeviceId::Cpu]).validate().is_ok(), "the CPU runs the reference");
    assert!(opts(vec![Algorithm::UF], vec![]).validate().is_err());
    let dir = scratch("nonsense");
    let mut writer = ccl_cli::benchmark::RecordWriter::create(&dir.join("r.csv")).unwrap();
    let err = ccl_cli::benchmark::run(&opts(vec![Algorithm::UF], vec![DeviceId::Cpu]), &[], &mut writer).unwrap_err();
    assert!(err.to_string().contains("no input"), "{err}");

    // A folder with one good image, one undecodable and one text file.
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    image::GrayImage::from_fn(20, 10, |x, _| image::Luma([if x % 3 == 0 { 255 } else { 0 }]))
        .save(data.join("good.png"))
        .unwrap();
    std::fs::write(data.join("broken.png"), b"\x89PNG\r\n\x1a\n truncated").unwrap();
    std::fs::write(data.join("notes.txt"), b"not an image").unwrap();
    let out = ccl()
        .args(["bench", "average", "--dataset"])
        .arg(&data)
        .args(["--devices", "cpu,cpu", "--runs", "2", "--warmup", "0", "--out"])
        .arg(dir.join("avg"))
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("skipping") && text.contains("broken.png") && text.contains("notes.txt"), "{text}");
    assert!(text.contains("cpu (CPU reference)") && !text.contains("11 algorithms"), "{text}");
    assert!(text.contains("device cpu is listed more than once"), "{text}");
    let records = rows(&dir.join("avg/results.csv"));
    assert_eq!(records.len(), 2, "one image, one device once, two runs");
    assert!(records.iter().all(|r| r.image == "good"));

    // A device that does not exist fails the run before anything is measured.
    let out = ccl()
        .args(["bench", "average", "--size", "32x32", "--devices", "cpu,opencl:99", "--out"])
        .arg(dir.join("bad-device"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && err.contains("opencl"), "{err}");
    assert!(rows(&dir.join("bad-device/results.csv")).is_empty(), "nothing was measured");

    // Nothing readable: an error, not an empty run.
    std::fs::remove_file(data.join("good.png")).unwrap();
    let out = ccl().args(["bench", "average", "--devices", "cpu", "--dataset"]).arg(&data).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && err.contains("no readable image"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Granularities up to 65535 give valid seeds (the per-point seed wraps modulo 2^32, as
/// std::mt19937 seeds do) instead of overflowing.
#[test]
fn large_granularities_make_valid_inputs() {
    let extent = ccl_cli::benchmark::Extent::Image(16, 16);
    let inputs = ccl_cli::benchmark::density_inputs(extent, &[0, 100], &[1, 65535], 1, u32::MAX - 3).unwrap();
    assert_eq!(inputs.len(), 4);
    assert!(inputs[3].values().iter().all(|&p| p == 1), "density 100 is all foreground");
    let dir = scratch("granularity");
    run_ok(
        ccl()
            .args(["bench", "density", "--size", "16x16", "--densities", "50", "--granularities", "65535"])
            .args(["--devices", "cpu", "--runs", "1", "--warmup", "0", "--out"])
            .arg(&dir),
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `ccl bench end-to-end`: host image in, consecutive labels out; one row per run with the
/// host-to-host time, at least the sum of the copies.
#[test]
fn end_to_end_mode_times_host_to_host() {
    let dir = scratch("e2e");
    let devices = devices_arg();
    let text = run_ok(
        ccl()
            .args(["bench", "end-to-end", "--size", "64x48", "--images", "2", "--runs", "2", "--warmup", "1"])
            .args(["--algos", "uf,bke", "--devices", &devices, "--out"])
            .arg(&dir),
    );
    assert!(text.contains("consecutive labels in host memory out"), "{text}");
    let records = rows(&dir.join("results.csv"));
    let gpu_devices = ccl::discover().devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).count();
    assert_eq!(records.len(), 2 * 2 * (2 * gpu_devices + 1));
    for r in &records {
        assert_eq!((r.mode.as_str(), r.timing.as_str()), ("end-to-end", "host"));
        assert!(r.labeling_ms > 0.0 && r.labeling_ms >= r.upload_ms + r.download_ms, "{r:?}");
        assert!(r.phases.contains("relabel="), "{r:?}");
    }
    assert!(dir.join("end-to-end-64x48.png").is_file());
    std::fs::remove_dir_all(dir).unwrap();
}

/// The 3D experiments: random volumes over densities and granularities, the Hilbert volumes and
/// growing cubes, at the connectivity asked (26 by default), every volume algorithm that supports
/// it on every device; the records carry the depth and the inputs are saved as (D, H, W).
#[test]
fn volume_modes_run_on_volumes() {
    use ccl::{Algorithm, Connectivity};
    let dir = scratch("volumes");
    let devices = devices_arg();
    let gpu_devices = ccl::discover().devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).count();
    let algorithms = |c: Connectivity| Algorithm::ALL.iter().filter(|a| a.supports(c)).count();
    let density = dir.join("density");
    let text = run_ok(
        ccl()
            .args(["bench", "density", "--size", "12x10x8", "--densities", "0:100:50", "--granularities", "1,2"])
            .args(["--images", "1", "--runs", "2", "--warmup", "1", "--connectivity", "6", "--devices", &devices])
            .arg("--save-images")
            .arg("--out")
            .arg(&density),
    );
    assert!(text.contains("6 volumes on") && text.contains("6-connectivity"), "{text}");
    let records = rows(&density.join("results.csv"));
    assert_eq!(records.len(), 6 * 2 * (algorithms(Connectivity::Six) * gpu_devices + 1));
    assert!(records.iter().all(|r| (r.width, r.height, r.depth, r.connectivity) == (12, 10, 8, 6)));
    assert!(records.iter().all(|r| r.is_volume() && r.extent() == "12x10x8"));
    let manifest = std::fs::read_to_string(density.join("images/inputs.csv")).unwrap();
    assert!(manifest.starts_with("name,file,width,height,depth,density,granularity\n"), "{manifest}");
    let npy = npyz::NpyFile::new(std::fs::File::open(density.join("images/12x10x8-d50-g2-s255489.npy")).unwrap());
    let npy = npy.unwrap();
    assert_eq!(npy.shape(), &[8, 10, 12]);
    let saved: Vec<u8> = npy.into_vec().unwrap();
    assert_eq!(saved, ccl::random_volume(12, 10, 8, 50, 2, 255489).unwrap().values());
    assert!(density.join("density-cpu-g2.svg").is_file());

    let hilbert = dir.join("hilbert");
    let text = run_ok(
        ccl()
            .args(["bench", "average", "--hilbert", "1:2", "--hilbert-side", "9", "--runs", "1", "--warmup", "0"])
            .args(["--devices", &devices, "--out"])
            .arg(&hilbert),
    );
    assert!(text.contains("ms (Mvox/s)") && text.contains("26-connectivity"), "{text}");
    let records = rows(&hilbert.join("results.csv"));
    assert_eq!(records.len(), 2 * (algorithms(Connectivity::TwentySix) * gpu_devices + 1));
    let names = ["hilbert-9-o1", "hilbert-9-o2"];
    assert!(records.iter().all(|r| names.contains(&r.image.as_str()) && r.depth == 9 && r.granularity == 0));

    let size = dir.join("size");
    let text = run_ok(
        ccl()
            .args(["bench", "size", "--dims", "3", "--sizes", "5,9", "--connectivity", "18", "--runs", "1"])
            .args(["--warmup", "0", "--devices", &devices, "--out"])
            .arg(&size),
    );
    assert!(text.contains("| 5x5x5 | 9x9x9 |"), "{text}");
    assert!(size.join("size-cpu.png").is_file());
    let e2e = dir.join("e2e");
    run_ok(
        ccl()
            .args(["bench", "end-to-end", "--size", "9x8x7", "--images", "1", "--runs", "1", "--warmup", "0"])
            .args(["--devices", &devices, "--out"])
            .arg(&e2e),
    );
    assert!(rows(&e2e.join("results.csv")).iter().all(|r| r.phases.contains("relabel=") && r.depth == 7));

    // A connectivity of the other kind is refused before anything is written.
    for (size, connectivity, says) in [("9x8x7", "8", "for images, not for a volume"), ("9x8", "26", "for volumes")] {
        let out = ccl()
            .args(["bench", "average", "--size", size, "--connectivity", connectivity, "--devices", "cpu", "--out"])
            .arg(dir.join("refused"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains(says), "{size} {connectivity}: {err}");
        assert!(!dir.join("refused/results.csv").exists());
    }
    // Too large, or a Hilbert cube too small for its curve: errors, not panics.
    for args in [&["--size", "2000x2000x1100"][..], &["--hilbert", "7", "--hilbert-side", "128"]] {
        let out = ccl().args(["bench", "average", "--devices", "cpu"]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && !err.contains("panicked") && err.contains("invalid"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The results committed before volumes (no depth column, nor timing: idle) still read, as
/// images, and redraw.
#[test]
fn results_written_before_volumes_still_read() {
    let csv = common::repo_root().join("bench-results/h100/size/results.csv");
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(!header.lines().next().unwrap().contains("depth"), "the file predates volumes");
    let records = rows(&csv);
    assert!(!records.is_empty() && records.iter().all(|r| r.depth == 1 && !r.is_volume() && r.timing == "idle"));
    let dir = scratch("old");
    run_ok(ccl().args(["bench", "plot", "--results"]).arg(&csv).arg("--out").arg(&dir));
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("| 16384x16384 |") && summary.contains("8-connectivity"), "{summary}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `--stats`: every algorithm is also timed into consecutive labels, as rows `NAME+consecutive`,
/// and with the component statistics after it, as rows `NAME+stats` whose phases include the
/// relabeling and the statistics; end-to-end refuses it.
#[test]
fn stats_option_times_labeling_with_statistics() {
    let dir = scratch("stats");
    let devices = devices_arg();
    run_ok(
        ccl()
            .args(["bench", "average", "--size", "64x48", "--images", "2", "--runs", "2", "--warmup", "1", "--stats"])
            .args(["--algos", "uf,bke", "--devices", &devices, "--out"])
            .arg(&dir),
    );
    let records = rows(&dir.join("results.csv"));
    let gpu_devices = ccl::discover().devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu).count();
    assert!(gpu_devices > 0, "a GPU or OpenCL device is needed");
    assert_eq!(records.len(), 2 * 2 * (6 * gpu_devices + 1), "2 images x 2 runs x (2 algorithms x 3 + the reference)");
    for name in ["UF+consecutive", "BKE+consecutive"] {
        let consecutive: Vec<_> = records.iter().filter(|r| r.algorithm == name).collect();
        assert_eq!(consecutive.len(), 2 * 2 * gpu_devices, "{name}");
        assert!(consecutive.iter().all(|r| !r.phases.contains("component-stats=")), "{consecutive:?}");
    }
    for name in ["UF+stats", "BKE+stats"] {
        let with_stats: Vec<_> = records.iter().filter(|r| r.algorithm == name).collect();
        assert_eq!(with_stats.len(), 2 * 2 * gpu_devices, "{name}");
        // Outside `steps` the relabeling is timed with the statistics (its end is left unmarked).
        for r in with_stats {
            assert!(r.phases.contains("component-stats=") && !r.phases.contains("relabel="), "{r:?}");
        }
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("BKE+stats") && summary.contains("BKE+consecutive"), "{summary}");

    let out = ccl()
        .args(["bench", "end-to-end", "--size", "16x16", "--devices", "cpu", "--stats", "--out"])
        .arg(dir.join("e2e"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains("stats") && err.contains("device-resident"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
