//! Criterion benches: every GPU algorithm on every available device, on a few fixed images,
//! with the input already on the device. The measured time is the labeling's device time
//! (allocation, kernels, synchronisation), from device events, as in TPDS 2020 Sec. 6.2.

use std::time::Duration;

use ccl::{Connectivity, Device, Labeler, Options};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench_labeling(c: &mut Criterion) {
    let images = [
        ("sample-page", ccl::sample_image()),
        ("1024x1024-d10", ccl::random_image(1024, 1024, 10, 1, 1).expect("valid size")),
        ("1024x1024-d50", ccl::random_image(1024, 1024, 50, 1, 2).expect("valid size")),
        ("1024x1024-d90", ccl::random_image(1024, 1024, 90, 1, 3).expect("valid size")),
    ];
    let found = ccl::discover();
    for info in found.devices.iter().filter(|d| d.id.backend() != ccl::BackendKind::Cpu) {
        let Ok(device) = Device::open(info.id) else {
            continue;
        };
        for &algorithm in ccl::Algorithm::ALL {
            let Ok(mut labeler) = device.labeler(algorithm) else {
                continue;
            };
            let mut group = c.benchmark_group(format!("{algorithm}/{}", info.id));
            for (name, image) in &images {
                let on_device = labeler.upload(image).expect("upload");
                group.throughput(Throughput::Elements((image.width() * image.height()) as u64));
                group.bench_with_input(BenchmarkId::from_parameter(name), &on_device, |b, input| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let run = labeler.run(input, &Options::new(Connectivity::Eight)).expect("label");
                            total += Duration::from_secs_f64(run.timings.labeling_ms() * 1e-3);
                        }
                        total
                    })
                });
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_millis(500));
    targets = bench_labeling
}
criterion_main!(benches);
