//! TUF labels an image with one of three tile kernels, chosen by the image's size, the device's
//! compute units and the connectivity: `tuf_tiles_small` (one 32 x 32 tile per work-group, its 8
//! warps sharing each row's runs) where the image has few tiles, `tuf_tiles_wide` (8 tiles per
//! work-group, two warps each) at 4-connectivity where it has a few more, else `tuf_tiles_groups` (8
//! tiles per work-group, a warp each). The conformance matrix reaches the small and wide kernels
//! on a device of few compute units (as POCL in CI) only for a few image sizes; here each kernel
//! is forced on every conformance image, at 4- and 8-connectivity, on every GPU backend present.
//! The raw labels must equal the reference's under TUF's convention, and the consecutive labels
//! (`run` with consecutive numbering, ranked from passes 1 and 2's root marks with 8 tiles per
//! group, which the wide kernel's two warps per tile gather first) the host's renumbering, with
//! the same count. One test per GPU backend (`cargo test --test tuf_tiles -- ::cuda` runs the
//! CUDA one), one at a time: the kernel choice is process-wide.

mod common;

use std::sync::{Mutex, OnceLock, PoisonError};

use ccl::reference::{self, partition_difference};
use ccl::testing::TufTileKernel;
use ccl::{Algorithm, Connectivity, LabelImage, Labeler};
use common::images::{conformance_cases, large_conformance_cases, Case};

/// The reference's labels, once per image and connectivity (and test process).
fn cases() -> &'static [(Connectivity, Case, LabelImage)] {
    static CASES: OnceLock<Vec<(Connectivity, Case, LabelImage)>> = OnceLock::new();
    CASES.get_or_init(|| {
        [Connectivity::Four, Connectivity::Eight]
            .into_iter()
            .flat_map(|c| {
                // The large images (TUF's wide region grids among them) in full mode only.
                let mut cases = conformance_cases();
                if common::full_mode() {
                    cases.extend(large_conformance_cases());
                }
                cases.into_iter().map(move |case| (c, case))
            })
            .map(|(c, case)| {
                let expected = reference::label_as(&case.image, c, Algorithm::TUF.raw_labels());
                (c, case, expected)
            })
            .collect()
    })
}

device_tests! {
    every_tile_kernel_labels_every_conformance_image_exactly: [opencl_cpu, opencl_gpu, cuda],
}

fn every_tile_kernel_labels_every_conformance_image_exactly(dev: &common::TestDevice) {
    // The forced kernel is the process's: one device at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut failures = Vec::new();
    let mut labelings = 0;
    for (kernel, name) in [
        (TufTileKernel::Small, "tuf_tiles_small"),
        (TufTileKernel::Groups, "tuf_tiles_groups"),
        (TufTileKernel::Wide, "tuf_tiles_wide"),
    ] {
        ccl::testing::force_tuf_tile_kernel(Some(kernel));
        let Some(mut labeler) = common::tuf_labeler_with(&dev.device, kernel) else {
            continue;
        };
        for (connectivity, case, expected) in cases() {
            let name = format!("{name}/{}/{}/{}", dev.token, connectivity.neighbours(), case.name);
            let actual = labeler
                .upload(&case.image)
                .and_then(|image| labeler.run(&image, &ccl::Options::new(*connectivity)))
                .and_then(|run| labeler.download(&run.labels));
            labelings += 1;
            match actual {
                Err(e) => failures.push(format!("{name}: {e}")),
                Ok(actual) => {
                    if let Some(diff) = partition_difference(expected, &actual) {
                        failures.push(format!("{name}: wrong partition: {diff}"));
                    } else if expected.values() != actual.values() {
                        failures.push(format!("{name}: raw labels differ from TUF's convention"));
                    }
                }
            }
            // Straight into consecutive labels: with 8 tiles per group the relabeling ranks
            // the root marks of passes 1 and 2 (on widths that are multiples of 32 and not).
            let (host, host_count) = expected.clone().into_consecutive();
            let consecutive = labeler.upload(&case.image).and_then(|image| {
                let run = labeler.run(&image, &ccl::Options::new(*connectivity).consecutive())?;
                Ok((run.count.expect("counted"), labeler.download(&run.labels)?))
            });
            labelings += 1;
            match consecutive {
                Err(e) => failures.push(format!("{name}: consecutive: {e}")),
                Ok((count, actual)) if count != host_count || actual.values() != host.values() => {
                    failures.push(format!("{name}: consecutive labels or count ({count}, host {host_count}) differ"));
                }
                Ok(_) => {}
            }
        }
    }
    ccl::testing::force_tuf_tile_kernel(None);
    assert!(failures.is_empty(), "{} of {labelings} labelings failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{labelings} labelings exact with every tile kernel on {}", dev.token);
}
