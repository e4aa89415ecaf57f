//! The conformance matrix: every GPU algorithm x every available backend x every supported
//! connectivity x every test image, against the CPU reference. Raw labels must equal the
//! reference's exactly under the algorithm's documented convention ([`ccl::RawLabels`]: first
//! pixel or first 2x2 block of each component, + 1), which implies the same partition with
//! background 0.
//!
//! `CCL_REQUIRE_BACKENDS=opencl-cpu,cuda,...` makes an absent backend a failure.

mod common;

use ccl::io::{read_binary, Binarize};
use ccl::reference::{self, partition_difference};
use ccl::{Algorithm, Labeler};
use common::images::{conformance_cases, Case};

/// The algorithms under test: every one with a GPU schedule. Adding an algorithm to the
/// library's schedule table adds its cases here.
fn algorithms() -> &'static [Algorithm] {
    ccl::Algorithm::ALL
}

fn real_pages() -> Vec<Case> {
    common::dibco_pages(4)
        .into_iter()
        .map(|path| {
            // Dark ink is foreground: gray <= 128.
            let image = read_binary(&path, Binarize { threshold: Some(128.0), invert: true }).expect("readable page");
            Case { name: format!("dibco-{}", path.file_stem().unwrap().to_string_lossy()), image }
        })
        .collect()
}

#[test]
fn conformance_matrix() {
    let devices = common::devices();
    let mut cases = conformance_cases();
    cases.extend(real_pages());
    let mut failures = Vec::new();
    let mut passed = 0usize;
    for dev in &devices {
        for &algorithm in algorithms() {
            let mut labeler = match dev.device.labeler(algorithm) {
                Ok(l) => l,
                Err(e) => {
                    failures.push(format!("{algorithm}/{}: labeler creation failed: {e}", dev.token));
                    continue;
                }
            };
            for case in &cases {
                let on_device = match labeler.upload(&case.image) {
                    Ok(d) => d,
                    Err(e) => {
                        failures.push(format!("{algorithm}/{}/*/{}: upload failed: {e}", dev.token, case.name));
                        continue;
                    }
                };
                for &connectivity in algorithm.connectivities() {
                    let name = format!("{algorithm}/{}/{}/{}", dev.token, connectivity.neighbours(), case.name);
                    let expected = reference::label_as(&case.image, connectivity, algorithm.raw_labels());
                    let got = labeler
                        .label_on_device(&on_device, connectivity)
                        .and_then(|(labels, _)| labeler.download(&labels));
                    match got {
                        Err(e) => failures.push(format!("{name}: {e}")),
                        Ok(actual) => {
                            if let Some(diff) = partition_difference(&expected, &actual) {
                                failures.push(format!("{name}: wrong partition: {diff}"));
                            } else if let Some(i) =
                                expected.labels().iter().zip(actual.labels()).position(|(a, b)| a != b)
                            {
                                failures.push(format!(
                                    "{name}: raw label at index {i} is {}, convention says {}",
                                    actual.labels()[i],
                                    expected.labels()[i]
                                ));
                            } else {
                                passed += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    let tokens: Vec<&str> = devices.iter().map(|d| d.token).collect();
    eprintln!("conformance: {passed} cases passed, {} failed, on {tokens:?}", failures.len());
    assert!(failures.is_empty(), "{} conformance failures:\n{}", failures.len(), failures.join("\n"));
    assert!(passed > 0, "no conformance case ran");
}
