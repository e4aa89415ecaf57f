//! The conformance matrix, one test per cell: for every algorithm of the registry x backend x
//! connectivity, `ALGORITHM::BACKEND::cN` labels every conformance image (tests/common/images.rs,
//! and real DIBCO pages when present) and checks the raw labels exactly against the CPU
//! reference under the algorithm's convention ([`ccl::RawLabels`]), which implies the same
//! partition with background 0; then renumbers them on the device and requires the host's
//! consecutive labels byte for byte, with the same count, and the same again from a consecutive
//! `Labeler::run` (TUF's fused renumbering). `cargo test --test conformance
//! bke_ic::cuda` runs one cell. The large images (`large_cN`: megapixels, and images past
//! CUDA's grid) and the real DIBCO pages (`pages_cN`, when ../shared/data has them) are slow on
//! a CPU device: they run in full mode (`scripts/test.sh --full`).
//!
//! Backends: `cpu`, `opencl_cpu`, `opencl_gpu`, `cuda`. A cell of an absent backend passes with
//! a note, unless `CCL_REQUIRE_BACKENDS` names it; a connectivity the algorithm does not
//! support must be refused with [`ccl::Error::UnsupportedConnectivity`].

mod common;

use std::sync::OnceLock;

use ccl::io::{read_binary, Binarize};
use ccl::reference::{self, partition_difference};
use ccl::testing::Stages;
use ccl::{Algorithm, Connectivity, Error, Labeler, Options};
use common::images::{conformance_cases, large_conformance_cases, Case};

/// The synthetic images of every cell, made once per test process.
fn synthetic() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(conformance_cases)
}

/// The large images (megapixels, and past CUDA's grid), made once per test process.
fn large() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(large_conformance_cases)
}

/// Up to four real pages, dark ink as foreground (gray <= 128); none without the data folder.
fn pages() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        common::dibco_pages(4)
            .into_iter()
            .map(|path| {
                let image =
                    read_binary(&path, Binarize { threshold: Some(128.0), invert: true }).expect("readable page");
                Case { name: format!("dibco-{}", path.file_stem().unwrap().to_string_lossy()), image }
            })
            .collect()
    })
}

/// Runs one cell: `algorithm` on the device named by `token`, at `connectivity`, on the images
/// `cases` gives (with a note when the device is absent, unless it is required:
/// [`common::on_device`]).
fn cell(algorithm: Algorithm, token: &str, connectivity: Connectivity, cases: fn() -> &'static [Case]) {
    let test = format!("{algorithm}/{token}/{}", connectivity.neighbours());
    common::on_device(token, &test, |dev| cell_on(algorithm, dev, connectivity, cases));
}

/// A cell on its device.
fn cell_on(algorithm: Algorithm, dev: &common::TestDevice, connectivity: Connectivity, cases: fn() -> &'static [Case]) {
    let token = dev.token;
    let mut labeler = dev.device.labeler(algorithm).expect("labeler");
    let name = |case: &str| format!("{algorithm}/{token}/{}/{case}", connectivity.neighbours());
    if !algorithm.supports(connectivity) {
        let image = &synthetic()[0].image;
        let on_device = labeler.upload(image).expect("upload");
        match labeler.run(&on_device, &Options::new(connectivity)) {
            Err(Error::UnsupportedConnectivity { .. }) => return,
            other => panic!("{}: expected UnsupportedConnectivity, got {:?}", name("*"), other.map(|_| ())),
        }
    }
    if cases().is_empty() {
        eprintln!("note: no real pages (../shared/data or CCL_DATA_DIR is absent); {} checks none", name("*"));
        return;
    }
    let mut failures = Vec::new();
    for case in cases() {
        let expected = reference::label_as(&case.image, connectivity, algorithm.raw_labels());
        let on_device = labeler.upload(&case.image);
        let labels = on_device.and_then(|image| labeler.run(&image, &Options::new(connectivity)));
        let (mut labels, actual) = match labels.and_then(|r| labeler.download(&r.labels).map(|host| (r.labels, host))) {
            Ok(both) => both,
            Err(e) => {
                failures.push(format!("{}: {e}", name(&case.name)));
                continue;
            }
        };
        if let Some(diff) = partition_difference(&expected, &actual) {
            failures.push(format!("{}: wrong partition: {diff}", name(&case.name)));
            continue;
        } else if let Some(i) = expected.values().iter().zip(actual.values()).position(|(a, b)| a != b) {
            failures.push(format!(
                "{}: raw label at index {i} is {}, convention says {}",
                name(&case.name),
                actual.values()[i],
                expected.values()[i]
            ));
            continue;
        }
        // Consecutive labels made on the device are the host's renumbering, byte for byte, with
        // the same count.
        let (host, host_count) = expected.into_consecutive();
        match labeler.relabel(&mut labels).and_then(|(count, _)| Ok((count, labeler.download(&labels)?))) {
            Err(e) => failures.push(format!("{}: relabel: {e}", name(&case.name))),
            Ok((count, device)) => {
                if count != host_count {
                    failures.push(format!("{}: relabel counts {count}, the host {host_count}", name(&case.name)));
                } else if let Some(i) = host.values().iter().zip(device.values()).position(|(a, b)| a != b) {
                    failures.push(format!(
                        "{}: consecutive label at index {i} is {}, the host's is {}",
                        name(&case.name),
                        device.values()[i],
                        host.values()[i]
                    ));
                }
            }
        }
        // Labeled straight into consecutive labels (TUF renumbers in its last pass on images):
        // the same labels and count.
        let consecutive = labeler.upload(&case.image).and_then(|image| {
            let run = labeler.run(&image, &Options::new(connectivity).consecutive())?;
            Ok((run.count.expect("counted"), labeler.download(&run.labels)?))
        });
        match consecutive {
            Err(e) => failures.push(format!("{}: consecutive run: {e}", name(&case.name))),
            Ok((count, device)) => {
                if count != host_count {
                    failures.push(format!(
                        "{}: consecutive labeling counts {count}, the host {host_count}",
                        name(&case.name)
                    ));
                } else if let Some(i) = host.values().iter().zip(device.values()).position(|(a, b)| a != b) {
                    failures.push(format!(
                        "{}: consecutive labeling: label at index {i} is {}, the host's is {}",
                        name(&case.name),
                        device.values()[i],
                        host.values()[i]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} images failed:\n{}", failures.len(), cases().len(), failures.join("\n"));
    eprintln!("{}: {} images exact", name("*"), cases().len());
}

/// One module per algorithm, one per backend inside, one test per connectivity.
macro_rules! cells {
    ($( ($konst:ident, $lower:ident) )*) => {
        $(
            mod $lower {
                use super::*;
                cells!(@backend $konst, cpu, "cpu");
                cells!(@backend $konst, opencl_cpu, "opencl-cpu");
                cells!(@backend $konst, opencl_gpu, "opencl-gpu");
                cells!(@backend $konst, cuda, "cuda");
            }
        )*
    };
    (@backend $konst:ident, $backend:ident, $token:literal) => {
        mod $backend {
            use super::*;
            #[test]
            fn c4() {
                cell(Algorithm::$konst, $token, Connectivity::Four, synthetic);
            }
            #[test]
            fn c8() {
                cell(Algorithm::$konst, $token, Connectivity::Eight, synthetic);
            }
            #[test]
            #[ignore = "full mode: scripts/test.sh --full"]
            fn large_c4() {
                cell(Algorithm::$konst, $token, Connectivity::Four, large);
            }
            #[test]
            #[ignore = "full mode: scripts/test.sh --full"]
            fn large_c8() {
                cell(Algorithm::$konst, $token, Connectivity::Eight, large);
            }
            #[test]
            #[ignore = "full mode: scripts/test.sh --full"]
            fn pages_c4() {
                cell(Algorithm::$konst, $token, Connectivity::Four, pages);
            }
            #[test]
            #[ignore = "full mode: scripts/test.sh --full"]
            fn pages_c8() {
                cell(Algorithm::$konst, $token, Connectivity::Eight, pages);
            }
        }
    };
}

ccl::for_each_algorithm!(cells);
