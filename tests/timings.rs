//! Every algorithm reports per-phase timings through the trait, and iterative ones their
//! iteration count; phases a labeling overlaps are merged unless every phase is marked. One
//! test per GPU backend (`cargo test --test timings -- ::opencl_cpu` runs POCL's).

mod common;

use ccl::{Connectivity, Labeler, Phase};
use common::images::random;

device_tests! {
    fresh;
    every_algorithm_reports_its_phases: [opencl_cpu, opencl_gpu, cuda],
    merged_phases_keep_the_labels_and_a_total: [opencl_cpu, opencl_gpu, cuda],
    statistics_merge_the_relabeling_unless_every_phase_is_marked: [opencl_cpu, opencl_gpu, cuda],
    a_labeler_for_one_connectivity_builds_only_its_kernels: [opencl_cpu, opencl_gpu, cuda],
    cuda_phases_without_commands_take_no_time: [cuda],
}

fn every_algorithm_reports_its_phases(dev: &common::TestDevice) {
    let image = random(301, 203, 45, 1, 3);
    for &algorithm in ccl::Algorithm::ALL {
        let mut labeler = dev.device.labeler(algorithm).unwrap();
        labeler.mark_every_phase(true);
        let on_device = labeler.upload(&image).unwrap();
        let t = labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap().timings;
        let name = format!("{algorithm}/{}", dev.token);
        let phases: Vec<Phase> = t.phases.iter().map(|p| p.phase).collect();
        assert_eq!(phases.first(), Some(&Phase::Allocation), "{name}: {phases:?}");
        assert!(t.phases.iter().all(|p| p.ms.is_finite() && p.ms >= 0.0), "{name}: {:?}", t.phases);
        assert!(t.labeling_ms() > 0.0, "{name}: no time measured");
        // The phases the registry declares, each reported.
        let expected_kernel_phases = algorithm.info().phases;
        for phase in expected_kernel_phases {
            assert!(phases.contains(phase), "{name}: {phase} missing from {phases:?}");
        }
        let iterative = algorithm.info().iterative;
        assert_eq!(t.iterations.is_some(), iterative, "{name}: iterations {:?}", t.iterations);
        if let Some(n) = t.iterations {
            assert!(n >= 1, "{name}");
        }
    }
}

/// By default TUF leaves the boundaries between its three passes unmarked (so that each pass
/// may start while the one before ends, on CUDA): its timings list allocation and compression
/// only, the total still measured, and the labels are those of a labeling that marks every
/// phase. Every other algorithm marks all of its phases either way.
fn merged_phases_keep_the_labels_and_a_total(dev: &common::TestDevice) {
    let image = random(301, 203, 45, 1, 4);
    for &algorithm in ccl::Algorithm::ALL {
        let name = format!("{algorithm}/{}", dev.token);
        let mut labeler = dev.device.labeler(algorithm).unwrap();
        let on_device = labeler.upload(&image).unwrap();
        let ccl::Run { labels: merged, timings: t, .. } =
            labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap();
        let phases: Vec<Phase> = t.phases.iter().map(|p| p.phase).collect();
        assert!(t.labeling_ms() > 0.0 && t.phases.iter().all(|p| p.ms.is_finite() && p.ms >= 0.0), "{name}: {t:?}");
        if algorithm == ccl::Algorithm::TUF {
            assert_eq!(phases, [Phase::Allocation, Phase::Compression], "{name}");
        } else {
            assert!(algorithm.info().phases.iter().all(|p| phases.contains(p)), "{name}: {phases:?}");
        }
        labeler.mark_every_phase(true);
        let ccl::Run { labels: every, timings: t, .. } =
            labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap();
        let phases: Vec<Phase> = t.phases.iter().map(|p| p.phase).collect();
        assert!(algorithm.info().phases.iter().all(|p| phases.contains(p)), "{name}: {phases:?}");
        let (merged, every) = (labeler.download(&merged).unwrap(), labeler.download(&every).unwrap());
        assert_eq!(merged.values(), every.values(), "{name}: the labels differ");
    }
}

/// With statistics, the relabeling's end is left unmarked by default (its time lands in the
/// statistics phase, whose kernels may start while it ends on CUDA); marking every phase lists it
/// again. Either way the labels, N and the statistics are the same, and right.
fn statistics_merge_the_relabeling_unless_every_phase_is_marked(dev: &common::TestDevice) {
    let image = random(301, 203, 45, 1, 6);
    let reference = ccl::reference::label(&image, Connectivity::Eight);
    let (consecutive, n) = reference.clone().into_consecutive();
    let shape = ccl::Shape::image(image.width(), image.height());
    let expected = ccl::ComponentStats::of_labels(consecutive.values(), shape, n);
    for algorithm in [ccl::Algorithm::TUF, ccl::Algorithm::BKE_IC, ccl::Algorithm::UF] {
        let name = format!("{algorithm}/{}", dev.token);
        let mut labeler = dev.device.labeler(algorithm).unwrap();
        let on_device = labeler.upload(&image).unwrap();
        let mut results = Vec::new();
        for every_phase in [false, true] {
            labeler.mark_every_phase(every_phase);
            let options = ccl::Options::new(Connectivity::Eight).stats(ccl::Stats::Components);
            let ccl::Run { labels, stats, timings: t, .. } = labeler.run(&on_device, &options).unwrap();
            let stats = stats.expect("asked for");
            let phases: Vec<Phase> = t.phases.iter().map(|p| p.phase).collect();
            assert_eq!(phases.contains(&Phase::Relabel), every_phase, "{name}, every phase {every_phase}: {phases:?}");
            assert!(phases.contains(&Phase::ComponentStats), "{name}: {phases:?}");
            assert!(t.labeling_ms() > 0.0, "{name}: {t:?}");
            let host = labeler.download(&labels).unwrap();
            assert!(ccl::reference::same_partition(&reference, &host), "{name}, every phase {every_phase}");
            assert_eq!(stats, expected, "{name}, every phase {every_phase}: statistics");
            results.push(host.values().to_vec());
        }
        assert_eq!(results[0], results[1], "{name}: the labels differ");
    }
}

/// A labeler made for one connectivity builds that connectivity's kernels only; another is
/// built at its first use, before the timed phases (the first labeling is timed like the next),
/// and one for a connectivity its algorithm lacks is refused.
fn a_labeler_for_one_connectivity_builds_only_its_kernels(dev: &common::TestDevice) {
    let image = random(64, 48, 45, 1, 8);
    let mut labeler = dev.device.labeler_for(ccl::Algorithm::UF, Connectivity::Eight).unwrap();
    assert_eq!(labeler.build_report().unwrap().programs, 1, "{}", dev.token);
    let on_device = labeler.upload(&image).unwrap();
    let four = labeler.run(&on_device, &ccl::Options::new(Connectivity::Four)).unwrap().timings;
    assert_eq!(labeler.build_report().unwrap().programs, 2, "{}", dev.token);
    assert!(four.phases.iter().all(|p| p.ms < 100.0), "{}: a build landed in a phase: {:?}", dev.token, four.phases);
    let all = dev.device.labeler(ccl::Algorithm::UF).unwrap();
    assert_eq!(all.build_report().unwrap().programs, 2, "{}", dev.token);
    let err = dev.device.labeler_for(ccl::Algorithm::BKE, Connectivity::Four);
    assert!(matches!(err, Err(ccl::Error::UnsupportedConnectivity { .. })));
}

/// On CUDA a phase with no device command (the labels' allocation from the handle's free list,
/// on the second call) costs nothing: its end mark stands for its start instead of recording an
/// event of its own, which would add its own time to the span. The labels stay right.
fn cuda_phases_without_commands_take_no_time(dev: &common::TestDevice) {
    let image = random(301, 203, 45, 1, 5);
    let reference = ccl::reference::label(&image, Connectivity::Eight);
    let mut labeler = dev.device.labeler(ccl::Algorithm::TUF).unwrap();
    let on_device = labeler.upload(&image).unwrap();
    for call in 0..3 {
        let ccl::Run { labels, timings: t, .. } =
            labeler.run(&on_device, &ccl::Options::new(Connectivity::Eight)).unwrap();
        let allocation = t.phase_ms(Phase::Allocation);
        if call > 0 {
            assert_eq!(allocation, 0.0, "call {call}: an allocation from the free list took time: {:?}", t.phases);
        }
        assert!(t.labeling_ms() > 0.0, "call {call}: {:?}", t.phases);
        let host = labeler.download(&labels).unwrap();
        assert!(ccl::reference::same_partition(&reference, &host), "call {call}: wrong labels");
    }
}
