//! Every kernel on Oclgrind, a third OpenCL implementation that runs the work-items of a
//! work-group one after another between barriers and checks every access: each test is a cell,
//! one algorithm x connectivity (raw and consecutive labels, the labels' statistics, OpenCV's
//! tables and a component filter) or one binarization method (every kernel), run in a child
//! process (this test binary again, `oclgrind_child`) that sees Oclgrind as its only OpenCL
//! platform and labels small images exactly as the CPU reference does; the cell then fails on
//! any report in Oclgrind's log (data races, reads of uninitialized memory, accesses out of
//! bounds, or its own failures), except those listed in [`HARMLESS`].
//!
//! Two simulated devices, as a test of each cell (and a third for the default algorithm). Quick
//! mode runs every algorithm x connectivity on `tight`, the default algorithm's cells, the hold
//! and Nick and Otsu there; full mode (`scripts/test.sh --full`) adds every `roomy` cell and the
//! other binarization methods:
//! - `roomy`: 64 KiB of local memory, work-groups of up to 1024; programs built without
//!   optimisation (`-cl-opt-disable`), because Oclgrind's uninitialized-memory check (on here)
//!   stops at LLVM's `freeze`, which Clang's optimiser writes;
//! - `tight`: 32 KiB of local memory (the OpenCL minimum) and work-groups of up to 256, with the
//!   programs optimised as on a user's device (Oclgrind mis-executed one of them: see UF's border
//!   merge in `kernels/uf.kernel`);
//! - `small` (only the default algorithm's cells, `default::small::cN`): 32 KiB and work-groups of
//!   up to 128, which TUF's tiles (256) do not fit: the default falls back to the next fastest
//!   algorithm (with a note) and still labels exactly.
//!
//! Oclgrind: `apt-get install oclgrind` (Debian, Ubuntu). Its ICD library is looked for in
//! `CCL_OCLGRIND_ICD`, then the Debian path; absent, the cells note it and pass, unless
//! `CCL_REQUIRE_BACKENDS` names `oclgrind`. `cargo test --test oclgrind uf::c8` runs one
//! algorithm's cells.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use ccl::binarize::{reference as binarize_reference, GrayImage, KernelKind, Method, Params};
use ccl::testing::Stages;
use ccl::{
    random_image, random_volume, reference, Algorithm, AnyLabeler, BinaryImage, ComponentStats, Connectivity, Device,
    DeviceId, DeviceLabels, Labeler, OpenCvStats, Shape,
};

/// Where Oclgrind's ICD library may be.
const ICD_PATHS: [&str; 2] =
    ["/usr/lib/oclgrind/liboclgrind-rt-icd.so", "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so"];

/// Reports that may stay, each proven harmless at its kernel: (kernel, the report's first line).
/// None today.
const HARMLESS: &[(&str, &str)] = &[];

/// The variable that tells the child process its cell.
const CELL_VAR: &str = "CCL_OCLGRIND_CELL";

/// A simulated device: its local memory, largest work-group, and the checks on.
#[derive(Clone, Copy, Debug)]
enum Config {
    Roomy,
    Tight,
    Small,
}

impl Config {
    fn name(self) -> &'static str {
        match self {
            Config::Roomy => "roomy",
            Config::Tight => "tight",
            Config::Small => "small",
        }
    }

    /// Oclgrind's settings for this device.
    fn env(self) -> Vec<(&'static str, &'static str)> {
        // One thread per simulation: the cells run side by side, one per core.
        let mut env = vec![("OCLGRIND_DATA_RACES", "1"), ("OCLGRIND_MAX_ERRORS", "50"), ("OCLGRIND_NUM_THREADS", "1")];
        match self {
            Config::Roomy => env.extend([
                ("OCLGRIND_LOCAL_MEM_SIZE", "65536"),
                ("OCLGRIND_MAX_WGSIZE", "1024"),
                ("OCLGRIND_UNINITIALIZED", "1"),
                ("OCLGRIND_BUILD_OPTIONS", "-cl-opt-disable"),
            ]),
            Config::Tight => env.extend([("OCLGRIND_LOCAL_MEM_SIZE", "32768"), ("OCLGRIND_MAX_WGSIZE", "256")]),
            Config::Small => env.extend([("OCLGRIND_LOCAL_MEM_SIZE", "32768"), ("OCLGRIND_MAX_WGSIZE", "128")]),
        }
        env
    }
}

/// Oclgrind's ICD library, if installed.
fn icd() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("CCL_OCLGRIND_ICD") {
        return Some(PathBuf::from(path));
    }
    ICD_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Runs `cell` (see `oclgrind_child`) under Oclgrind as `config`, and fails on a failure of the
/// child or on any report in Oclgrind's log not in [`HARMLESS`].
fn run(cell: &str, config: Config) {
    let Some(icd) = icd() else {
        assert!(!common::is_required("oclgrind"), "CCL_REQUIRE_BACKENDS requires oclgrind, which is not installed");
        eprintln!("note: Oclgrind is not installed (apt-get install oclgrind); {cell} does not run");
        return;
    };
    let work = tempfile::tempdir().expect("temporary folder");
    let vendors = work.path().join("vendors");
    std::fs::create_dir(&vendors).unwrap();
    std::fs::write(vendors.join("oclgrind.icd"), format!("{}\n", icd.display())).unwrap();
    let log = work.path().join("oclgrind.log");
    // One kernel cache per simulated device (the builds of `roomy` are unoptimised).
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oclgrind-cache-{}", config.name()));
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", "oclgrind_child", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(CELL_VAR, cell)
        .env("OCL_ICD_VENDORS", &vendors)
        .env_remove("OCL_ICD_FILENAMES")
        .env("OCLGRIND_LOG", &log)
        .env("CCL_CACHE_DIR", &cache)
        .env_remove("CCL_KERNEL_DIR");
    for (name, value) in config.env() {
        command.env(name, value);
    }
    let output = command.output().expect("run the child");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{cell} on Oclgrind ({}) failed:\n{stdout}\n{stderr}", config.name());
    assert!(stdout.contains("oclgrind cell done"), "{cell}: the child did not run its cell:\n{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let reports = unexplained_reports(&text);
    assert!(
        reports.is_empty(),
        "{cell} on Oclgrind ({}): {} reports, the first:\n{}",
        config.name(),
        reports.len(),
        reports.iter().take(3).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Oclgrind's reports in `log` (blank-line separated blocks) that [`HARMLESS`] does not list.
fn unexplained_reports(log: &str) -> Vec<String> {
    log.split("\n\n")
        .map(str::trim)
        .filter(|block| !block.is_empty())
        .filter(|block| {
            let first = block.lines().next().unwrap_or("");
            !HARMLESS
                .iter()
                .any(|(kernel, what)| first.starts_with(what) && block.contains(&format!("Kernel: {kernel}")))
        })
        .map(str::to_string)
        .collect()
}

/// The child: runs the cell named in `CCL_OCLGRIND_CELL` on OpenCL device 0 (Oclgrind, the only
/// platform its parent leaves it), panicking at the first wrong result. Without the variable
/// (a plain `--ignored` run) it does nothing.
#[test]
#[ignore = "run by the Oclgrind cells, in a process of their own"]
fn oclgrind_child() {
    let Ok(cell) = std::env::var(CELL_VAR) else { return };
    let device = Device::open(DeviceId::OpenCl(0)).expect("Oclgrind as OpenCL device 0");
    assert!(device.info().name.contains("Oclgrind"), "device 0 is {}, not Oclgrind", device.info().name);
    let (kind, rest) = cell.split_once(':').expect("cell KIND:WHAT");
    match kind {
        "label" => {
            let (algorithm, connectivity) = rest.split_once(':').expect("label:ALGORITHM:CONNECTIVITY");
            let algorithm: Algorithm = algorithm.parse().expect("algorithm");
            let connectivity = Connectivity::from_neighbours(connectivity.parse().expect("number")).unwrap();
            label_cell(&device, algorithm, connectivity);
        }
        "binarize" => binarize_cell(&device, rest.parse().expect("method")),
        "hold" => hold_cell(rest),
        "regionprops" => regionprops_cell(&device),
        "default" => {
            let (connectivity, fallback) = rest.split_once(':').expect("default:CONNECTIVITY:FALLBACK");
            let connectivity = Connectivity::from_neighbours(connectivity.parse().expect("number")).unwrap();
            default_cell(&device, connectivity, fallback == "fallback");
        }
        _ => panic!("unknown cell {cell}"),
    }
    println!("oclgrind cell done");
}

/// The images of a labeling cell (a simulator is slow: small ones): odd sizes and partial
/// tiles, and for TUF (`wide`) one of more than one of its groups of 8 tiles each way.
fn images(wide: bool) -> Vec<(String, BinaryImage)> {
    let mut sizes = vec![(67, 37, 45, 2)];
    if wide {
        sizes.push((290, 40, 50, 3));
    }
    sizes
        .into_iter()
        .map(|(w, h, d, seed)| (format!("{w}x{h} d{d}"), random_image(w, h, d, 1, seed).unwrap()))
        .collect()
}

/// The volumes of a labeling cell: odd sizes, and for TUF (`wide`) one of more than one of its
/// 32 x 16 x 16 regions each way.
fn volumes(wide: bool) -> Vec<(String, BinaryImage)> {
    let mut sizes = vec![(19, 11, 7, 45, 4)];
    if wide {
        sizes.push((37, 18, 17, 45, 5));
    }
    sizes
        .into_iter()
        .map(|(w, h, d, density, seed)| {
            (format!("{w}x{h}x{d} d{density}"), random_volume(w, h, d, density, 1, seed).unwrap())
        })
        .collect()
}

/// One algorithm at one connectivity on every image (or volume): raw labels under its
/// convention, consecutive labels (relabeled, and labeled into them at once), and for TUF and
/// BKE_IC (the statistics' kernels take consecutive labels, whatever labeled them) the
/// statistics of the consecutive labels, OpenCV's tables, and the components of at least 3
/// pixels kept; for TUF's images a stacked batch too ([`stacked_exact`]). (Each labeler also
/// labels a 67x37 image or a 19x11x7 volume when it is made.)
fn label_cell(device: &Device, algorithm: Algorithm, connectivity: Connectivity) {
    let mut labeler = device.labeler_for(algorithm, connectivity).expect("labeler");
    let wide = algorithm == Algorithm::TUF;
    let cases: Vec<(String, Shape, Vec<u8>)> = if connectivity.dims() == 2 {
        images(wide).into_iter().map(|(n, i)| (n, Shape::image(i.width(), i.height()), i.values().to_vec())).collect()
    } else {
        volumes(wide).into_iter().map(|(n, v)| (n, v.shape(), v.values().to_vec())).collect()
    };
    for (name, shape, pixels) in cases {
        let what = format!("{algorithm} {connectivity} {name}");
        let (raw, consecutive, n) = expected(shape, &pixels, connectivity, algorithm);
        let on_device = labeler.upload_array(shape, &pixels).expect("upload");
        let (mut labels, _) = labeler.label_on_device(&on_device, connectivity).expect("label");
        assert_eq!(download(&mut labeler, &labels), raw, "{what}: raw labels");
        let (count, _) = labeler.relabel(&mut labels).expect("relabel");
        assert_eq!((download(&mut labeler, &labels), count), (consecutive.clone(), n), "{what}: relabeled");
        let (mut direct, count, _) = labeler.label_on_device_consecutive(&on_device, connectivity).expect("label");
        assert_eq!((download(&mut labeler, &direct), count), (consecutive.clone(), n), "{what}: consecutive");
        if algorithm != Algorithm::TUF && algorithm != Algorithm::BKE_IC {
            continue;
        }
        statistics_exact(&mut labeler, &mut direct, (shape, &consecutive, n), &what);
    }
    if algorithm == Algorithm::TUF && connectivity.dims() == 2 {
        stacked_exact(&mut labeler, connectivity);
    }
    if algorithm.supports_multilabel(connectivity) {
        multilabel_exact(&mut labeler, connectivity, &format!("{algorithm} {connectivity}"));
    }
}

/// A multi-label image (or volume) of 16-bit classes in cells of 2 elements, background 2,
/// labeled into consecutive labels as the CPU reference labels it (UF's kernels built with
/// `MULTILABEL=1`).
fn multilabel_exact(labeler: &mut AnyLabeler, connectivity: Connectivity, what: &str) {
    let shape = if connectivity.dims() == 2 { Shape::image(67, 37) } else { Shape { width: 19, height: 11, depth: 7 } };
    let (w, h) = (shape.width, shape.height);
    let class = |i: usize| {
        let (x, y, z) = (i % w / 2, i / w % h / 2, i / (w * h) / 2);
        ((x * 73 + y * 151 + z * 199 + x * y) % 5) as u16
    };
    let values: Vec<u16> = (0..shape.len()).map(class).collect();
    let (want, n) = reference::label_values(shape, &values, 2, connectivity).expect("reference").into_consecutive();
    let on_device = labeler.upload_values(shape, &values, 2).expect("upload");
    let (labels, count, _) = labeler.label_on_device_consecutive(&on_device, connectivity).expect("label");
    assert_eq!((download(labeler, &labels), count), (want.values().to_vec(), n), "{what}: multi-label");
}

/// Three images of 70 x 32 stacked along the rows, labeled as one (TUF's border merge keeping
/// the items apart, its item offsets, pass 3 numbering each item from 1): each item's labels and
/// count are the reference's of the item alone.
fn stacked_exact(labeler: &mut AnyLabeler, connectivity: Connectivity) {
    let (width, height, items) = (70, 32, 3);
    let pixels: Vec<u8> =
        (0..items).flat_map(|k| random_image(width, height, 60, 1, k as u32 + 9).unwrap().values().to_vec()).collect();
    let shape = Shape::image(width, height * items);
    let on_device = labeler.upload_array(shape, &pixels).expect("upload");
    let (mut labels, _) = labeler.label_on_device(&on_device, connectivity).expect("label");
    let counts = labeler.label_stacked_into(&on_device, items, connectivity, &mut labels).expect("stacked");
    let counts = counts.expect("TUF labels a stacked batch as one");
    let got = download(labeler, &labels);
    for k in 0..items {
        let part = &pixels[k * width * height..(k + 1) * width * height];
        let (_, consecutive, n) = expected(Shape::image(width, height), part, connectivity, Algorithm::TUF);
        assert_eq!(counts[k], n, "stacked item {k}: count");
        assert_eq!(&got[k * width * height..(k + 1) * width * height], &consecutive[..], "stacked item {k}: labels");
    }
}

/// The statistics of `direct`, consecutive labels (`consecutive`, `n` components, of `shape`),
/// OpenCV's tables and the components of at least 3 pixels kept, against the reference.
fn statistics_exact(
    labeler: &mut AnyLabeler,
    direct: &mut DeviceLabels,
    (shape, consecutive, n): (Shape, &[u32], u32),
    what: &str,
) {
    let all = ComponentStats::of_labels(consecutive, shape, n);
    let (stats, _) = labeler.component_stats(direct).expect("statistics");
    assert_eq!(stats, all, "{what}: statistics");
    let dims = usize::from(shape.dims());
    let (tables, _) = labeler.opencv_stats(direct, dims as u8).expect("OpenCV tables");
    let want = OpenCvStats::of_labels(consecutive, shape, dims, n);
    assert!(tables.stats == want.stats && tables.rows == want.rows, "{what}: OpenCV's tables");
    let keep = all.at_least(3);
    let (kept, _) = labeler.keep_components(direct, &keep).expect("keep");
    assert_eq!(kept as usize, keep.iter().filter(|&&k| k).count(), "{what}: kept");
    assert_eq!(ComponentStats::of_labels(&download(labeler, direct), shape, kept), all.kept(&keep));
}

/// The default algorithm for `connectivity` on this device: the first of the ranking, or (with
/// `fallback`, on a device too small for it) another one, with a note; its raw and consecutive
/// labels and their statistics exact.
fn default_cell(device: &Device, connectivity: Connectivity, fallback: bool) {
    let (algorithm, note) = device.default_algorithm(connectivity).expect("a default algorithm");
    let first = Algorithm::default_for(connectivity);
    if fallback {
        assert_ne!(algorithm, first, "{first} should not fit this device");
        let note = note.expect("a note on the fallback");
        assert!(note.contains(first.name()) && note.contains("work-items"), "{note}");
    } else {
        assert_eq!((algorithm, note), (first, None));
    }
    let mut labeler = device.labeler_for(algorithm, connectivity).expect("labeler");
    let cases: Vec<(Shape, Vec<u8>)> = if connectivity.dims() == 2 {
        images(false).into_iter().map(|(_, i)| (Shape::image(i.width(), i.height()), i.values().to_vec())).collect()
    } else {
        volumes(false).into_iter().map(|(_, v)| (v.shape(), v.values().to_vec())).collect()
    };
    for (shape, pixels) in cases {
        let (raw, consecutive, n) = expected(shape, &pixels, connectivity, algorithm);
        let on_device = labeler.upload_array(shape, &pixels).expect("upload");
        let (labels, _) = labeler.label_on_device(&on_device, connectivity).expect("label");
        assert_eq!(download(&mut labeler, &labels), raw, "{algorithm} {connectivity} {shape}: raw");
        let (mut direct, count, _) = labeler.label_on_device_consecutive(&on_device, connectivity).expect("label");
        let what = format!("{algorithm} {connectivity} {shape}");
        assert_eq!((download(&mut labeler, &direct), count), (consecutive.clone(), n), "{what}: consecutive");
        // The statistics' work-groups are fitted to the device as the labeling's are.
        statistics_exact(&mut labeler, &mut direct, (shape, &consecutive, n), &what);
    }
}

/// The reference's raw labels of `algorithm`'s convention, its consecutive labels and their count.
fn expected(
    shape: Shape,
    pixels: &[u8],
    connectivity: Connectivity,
    algorithm: Algorithm,
) -> (Vec<u32>, Vec<u32>, u32) {
    let convention = algorithm.raw_labels();
    if shape.depth > 1 || connectivity.dims() == 3 {
        let volume = BinaryImage::volume(shape.width, shape.height, shape.depth, pixels.to_vec()).unwrap();
        let raw = reference::label_volume_as(&volume, connectivity, convention).unwrap();
        let (consecutive, n) = raw.to_consecutive();
        (raw.values().to_vec(), consecutive.values().to_vec(), n)
    } else {
        let image = BinaryImage::image(shape.width, shape.height, pixels.to_vec()).unwrap();
        let raw = reference::label_as(&image, connectivity, convention);
        let (consecutive, n) = raw.to_consecutive();
        (raw.values().to_vec(), consecutive.values().to_vec(), n)
    }
}

fn download(labeler: &mut AnyLabeler, labels: &ccl::DeviceLabels) -> Vec<u32> {
    let mut out = vec![0u32; labels.shape().len()];
    labeler.download_into(labels, &mut out).expect("download");
    out
}

/// The queue hold (`kernels/hold.kernel`) that `ccl bench`'s queued timing launches before each
/// run: held runs of TUF (raw, consecutive, with the statistics) on a small image, each checked
/// against the reference.
fn hold_cell(_folder: &str) {
    let device = Device::open(DeviceId::OpenCl(0)).expect("device");
    let mut labeler = device.labeler(Algorithm::TUF).expect("labeler");
    let image = random_image(40, 23, 50, 1, 7).expect("image");
    let want = reference::label(&image, Connectivity::Eight);
    let on_device = labeler.upload(&image).expect("upload");
    labeler.hold_queue().expect("hold");
    let (labels, _) = labeler.label_on_device(&on_device, Connectivity::Eight).expect("raw");
    assert!(reference::same_partition(&want, &labeler.download(&labels).expect("download")), "raw labels, held");
    labeler.hold_queue().expect("hold");
    let (labels, count, _) = labeler.label_on_device_consecutive(&on_device, Connectivity::Eight).expect("consecutive");
    assert_eq!(count, want.component_count(), "consecutive labels after a hold");
    assert!(reference::same_partition(&want, &labeler.download(&labels).expect("download")), "consecutive, held");
    labeler.hold_queue().expect("hold");
    let (_, stats, _) = labeler.label_on_device_with_stats(&on_device, Connectivity::Eight).expect("statistics");
    assert_eq!(stats.len() as u32, want.component_count(), "statistics after a hold");
}

/// The region properties' kernels (`kernels/regionprops.kernel`): on an image and a volume, the
/// sums of every moment order with and without intensity images (float and double), the Euler
/// and perimeter sums, each equal to the CPU reference's (integers exactly, floating-point sums
/// to 1e-9 of their scale).
fn regionprops_cell(device: &Device) {
    use ccl::regions::{Intensity, RegionRequest};
    let mut labeler = device.labeler_for(Algorithm::KE, Connectivity::Eight).expect("labeler");
    let image = random_image(37, 23, 50, 1, 9).expect("image");
    let volume = random_volume(13, 9, 7, 45, 1, 10).expect("volume");
    for (array, connectivity, axes) in [(image, Connectivity::Eight, 2u8), (volume, Connectivity::TwentySix, 3)] {
        let shape = array.shape();
        let (labels, n) = reference::label(&array, connectivity).into_consecutive();
        let mut on_device = labeler.upload_labels(shape, labels.values(), n).expect("labels");
        let values: Vec<f64> = (0..shape.len()).map(|i| ((i * 37) % 101) as f64 - 20.5).collect();
        let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let wide_image = labeler.upload_intensity(shape, &values).expect("intensity");
        let narrow_image = labeler.upload_intensity(shape, &narrow).expect("intensity");
        for order in [0u8, 2, 3] {
            for intensity in [None, Some(Intensity::F32(&narrow_image)), Some(Intensity::F64(&wide_image))] {
                let request = RegionRequest { order, shape: true, intensity };
                let (got, _) = labeler.region_sums(&mut on_device, axes, &request).expect("region sums");
                let host = intensity.map(|_| values.clone());
                let want = ccl::RegionSums::of_labels(labels.values(), shape, n, axes, &request, host.as_deref());
                let what = format!("{shape} order {order}");
                assert_eq!(
                    (&got.stats, &got.euler, &got.perimeter),
                    (&want.stats, &want.euler, &want.perimeter),
                    "{what}"
                );
                for (k, c) in want.stats.components.iter().enumerate() {
                    let scale = c.area as f64 * f64::from(c.width.max(c.height).max(c.depth)).powi(9);
                    for (g, w) in got.central_of(k).iter().zip(want.central_of(k)) {
                        assert!((g - w).abs() <= 1e-9 * scale, "{what}: component {k}: {g} vs {w}");
                    }
                }
                assert_eq!(got.intensity.is_some(), intensity.is_some(), "{what}: intensity");
            }
        }
    }
}

/// One binarization method with every kernel that computes it, on a small page whose windows
/// reach past its edges and a wider one (more than one of the fast kernel's tiles).
fn binarize_cell(device: &Device, method: Method) {
    let mut binarizer = device.binarizer().expect("binarizer");
    for (width, height) in [(37, 29), (150, 9)] {
        let page = GrayImage::image(
            width,
            height,
            (0..width * height).map(|i| ((i * 37 + i / width * 11) % 251) as u8).collect(),
        )
        .unwrap();
        let on_device = binarizer.upload(&page).expect("upload");
        let kernels: &[KernelKind] = if method == Method::Otsu { &[KernelKind::Fast] } else { &KernelKind::ALL };
        for &kernel in kernels {
            for window in [3, 15] {
                let params = Params { window, kernel, ..method.defaults() };
                let want = binarize_reference::binarize(&page, &params).expect("reference");
                let (ink, _) = binarizer.binarize_on_device(&on_device, &params).expect("binarize");
                let got = binarizer.download(&ink).expect("download");
                assert_eq!(got.values(), want.values(), "{} on {width}x{height}", params.describe());
            }
        }
    }
}

/// One module per algorithm, one per simulated device inside, one test per connectivity.
macro_rules! label_cells {
    ($( ($konst:ident, $lower:ident) )*) => {
        $(
            mod $lower {
                use super::*;
                label_cells!(@config $konst, roomy, Roomy, #[ignore = "full mode: scripts/test.sh --full"]);
                label_cells!(@config $konst, tight, Tight, );
            }
        )*
    };
    (@config $konst:ident, $config:ident, $variant:ident, $(#[$mode:meta])?) => {
        mod $config {
            use super::*;
            fn cell(connectivity: Connectivity) {
                if Algorithm::$konst.supports(connectivity) {
                    run(&format!("label:{}:{}", Algorithm::$konst, connectivity.neighbours()), Config::$variant);
                }
            }
            #[test]
            $(#[$mode])?
            fn c4() { cell(Connectivity::Four) }
            #[test]
            $(#[$mode])?
            fn c8() { cell(Connectivity::Eight) }
            #[test]
            $(#[$mode])?
            fn c6() { cell(Connectivity::Six) }
            #[test]
            $(#[$mode])?
            fn c18() { cell(Connectivity::Eighteen) }
            #[test]
            $(#[$mode])?
            fn c26() { cell(Connectivity::TwentySix) }
        }
    };
}

ccl::for_each_algorithm!(label_cells);

/// The default algorithm of each image and volume connectivity: the first of the ranking on the
/// tight device, the next that fits on the small one.
mod default {
    use super::*;

    macro_rules! default_cells {
        ($($name:ident: $conn:literal,)*) => {
            $(
                mod $name {
                    use super::*;
                    // (Not on `roomy`: the choice builds a labeler and drops it, and Oclgrind's
                    // uninitialized-memory check loses track of buffers allocated again after
                    // that; the kernels are checked there by the label cells.)
                    #[test]
                    fn tight() { run(concat!("default:", $conn, ":first"), Config::Tight) }
                    #[test]
                    fn small() {
                        // TUF (4, 8, 6) does not fit; UF, the default at 18 and 26, does.
                        let fallback = if matches!($conn, "4" | "8" | "6") { "fallback" } else { "first" };
                        run(&format!("default:{}:{fallback}", $conn), Config::Small)
                    }
                }
            )*
        };
    }

    default_cells! {
        c4: "4",
        c8: "8",
        c6: "6",
        c18: "18",
        c26: "26",
    }
}

/// The queue hold of `ccl bench` on each simulated device.
mod hold {
    use super::*;

    fn cell(config: Config) {
        let out = tempfile::tempdir().expect("temporary folder");
        run(&format!("hold:{}", out.path().display()), config);
    }

    #[test]
    #[ignore = "full mode: scripts/test.sh --full"]
    fn roomy() {
        cell(Config::Roomy)
    }

    #[test]
    fn tight() {
        cell(Config::Tight)
    }
}

/// The region properties' kernels on each simulated device.
mod regionprops {
    use super::*;

    #[test]
    #[ignore = "full mode: scripts/test.sh --full"]
    fn roomy() {
        run("regionprops:all", Config::Roomy)
    }

    #[test]
    fn tight() {
        run("regionprops:all", Config::Tight)
    }
}

/// Binarization: each method on each simulated device.
mod binarize {
    use super::*;

    macro_rules! binarize_cells {
        ($($name:ident: $method:literal $(, #[$mode:meta])?;)*) => {
            $(
                mod $name {
                    use super::*;
                    #[test]
                    #[ignore = "full mode: scripts/test.sh --full"]
                    fn roomy() { run(concat!("binarize:", $method), Config::Roomy) }
                    #[test]
                    $(#[$mode])?
                    fn tight() { run(concat!("binarize:", $method), Config::Tight) }
                }
            )*
        };
    }

    // Nick and Otsu (a window method and the global one) in quick mode; all in full mode.
    binarize_cells! {
        nick: "nick";
        niblack: "niblack", #[ignore = "full mode: scripts/test.sh --full"];
        sauvola: "sauvola", #[ignore = "full mode: scripts/test.sh --full"];
        wolf: "wolf", #[ignore = "full mode: scripts/test.sh --full"];
        otsu: "otsu";
    }
}

#[test]
fn reports_are_split_and_filtered() {
    let log = "Read-write data race at global memory address 0x1\n\tKernel: k\n\nUninitialized value\n\tKernel: j\n";
    assert_eq!(unexplained_reports(log).len(), 2);
    assert!(unexplained_reports("\n\n").is_empty());
}
