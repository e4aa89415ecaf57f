//! Multi-label images (`ccl::multilabel`): the connected sets of equal values, the background
//! value excepted. On every device, for every connectivity and every value width (8 to 64 bits,
//! signed and unsigned), with backgrounds of 0, of another value, negative, and with high bits
//! set: the consecutive labels of every algorithm that takes them (the pixel algorithms: LE,
//! OLE, UF, KE and their _IC variants; TUF at 4, 8 and 6) equal the CPU reference's, which equals a
//! breadth-first search written here; TUF's raw labels equal the reference's on images of many
//! tiles whose rows hold up to 32 runs, stripes, checkerboards and runs of touching values, and
//! on volumes at 6-connectivity;
//! statistics and filters are those of the labels; two classes that touch stay two components;
//! the other algorithms refuse with a typed error. One test per device.

mod common;

use std::collections::VecDeque;

use ccl::{reference, Algorithm, Connectivity, Error, Filter, ImageKind, LabelValue, Labeler, Options, Shape, Stats};

device_tests! {
    multilabel_images_label_as_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    multilabel_statistics_and_filters: [cpu, opencl_cpu, opencl_gpu, cuda],
    algorithms_without_multilabel_refuse_it: [cpu, opencl_cpu, opencl_gpu, cuda],
    tuf_labels_multilabel_tiles_and_borders: [opencl_cpu, opencl_gpu, cuda],
}

/// TUF's multi-label path (runs of equal values in 32 x 32 tiles, up to 32 runs a row, joined
/// across the tiles' borders by value; a volume's slices so, then across them): raw labels, the
/// first pixel's raster index + 1, equal to the reference's, and consecutive labels with their
/// count, at 4- and 8-connectivity on images of one tile to many, at 6 on volumes, 64- and
/// 16-bit values.
fn tuf_labels_multilabel_tiles_and_borders(d: &common::TestDevice) {
    let mut cases: Vec<(String, Shape, Vec<u64>)> = Vec::new();
    for (w, h) in [(32, 32), (33, 31), (100, 70), (257, 65), (300, 97)] {
        let shape = Shape::image(w, h);
        for (classes_n, cell) in [(40, 1), (3, 1), (5, 2), (4, 5), (2, 9)] {
            let values = classes(shape, classes_n, cell, (w * h + classes_n as usize * 7 + cell) as u64);
            cases.push((format!("{w}x{h} {classes_n} classes, cells of {cell}"), shape, values));
        }
    }
    let shape = Shape::image(96, 64);
    let (w, h) = (shape.width, shape.height);
    let pattern = |name: &str, f: &dyn Fn(usize, usize) -> u64| {
        (name.to_string(), shape, (0..w * h).map(|i| f(i % w, i / w)).collect::<Vec<u64>>())
    };
    cases.push(pattern("vertical stripes", &|x, _| 1 + (x % 3) as u64));
    cases.push(pattern("every pixel its own value", &|x, y| 1 + (y * w + x) as u64));
    cases.push(pattern("checkerboard", &|x, y| 1 + ((x + y) % 2) as u64));
    cases.push(pattern("diagonals", &|x, y| 1 + ((x + 2 * h - y) % 4) as u64));
    cases.push(pattern("one value", &|_, _| 9));
    cases.push(pattern("background and diagonal steps", &|x, y| {
        if (x + y) % 3 == 0 {
            0
        } else {
            1 + (x / 2 % 2) as u64
        }
    }));
    // Volumes (6-connectivity: the slices stacked along the rows, then joined across them), with
    // slices of fewer, as many and more rows than a tile, so that tiles cross slices.
    for (w, h, depth) in [(33, 31, 5), (40, 70, 9), (64, 32, 4), (20, 7, 30)] {
        let shape = Shape { width: w, height: h, depth };
        for (classes_n, cell) in [(40, 1), (3, 1), (4, 3)] {
            let values = classes(shape, classes_n, cell, (w * h * depth + cell) as u64);
            cases.push((format!("{w}x{h}x{depth} {classes_n} classes, cells of {cell}"), shape, values));
        }
        let layers = (0..shape.len()).map(|i| 1 + (i / (w * h) % 2) as u64).collect();
        cases.push((format!("{w}x{h}x{depth} alternating slices"), shape, layers));
        let columns = (0..shape.len()).map(|i| 1 + ((i % w + i / (w * h)) % 3) as u64).collect();
        cases.push((format!("{w}x{h}x{depth} slanted columns"), shape, columns));
    }
    // A real page (the first DIBCO original, where the data folder has it) in 8 gray bands.
    for path in common::dibco_pages(1) {
        let (gray, _) = ccl::io::read_gray(&path, u64::MAX).expect("a DIBCO page");
        let bands = gray.values().iter().map(|&v| u64::from(v / 32)).collect();
        cases.push((format!("{} in 8 gray bands", path.display()), gray.shape(), bands));
    }
    let mut labeler = d.device.labeler(Algorithm::TUF).expect("labeler");
    for (name, shape, values) in &cases {
        let connectivities = if shape.depth > 1 { &[Connectivity::Six][..] } else { &Connectivity::PLANAR[..] };
        for &connectivity in connectivities {
            let what = format!("TUF {name} {connectivity:?} on {}", d.token);
            let want = reference::label_values(*shape, values, 0, connectivity).expect("reference");
            let image = labeler.upload_values(*shape, values, 0).expect("upload");
            let run = labeler.run(&image, &Options::new(connectivity)).expect("run");
            let raw = labeler.download(&run.labels).expect("download");
            assert!(raw.values() == want.values(), "{what}: raw labels differ from the reference's");
            let (consecutive, count) = want.into_consecutive();
            let narrow: Vec<u16> = values.iter().map(|&v| v as u16).collect();
            let image = labeler.upload_values(*shape, &narrow, 0).expect("upload");
            let run = labeler.run(&image, &Options::new(connectivity).consecutive()).expect("run");
            assert_eq!(run.count, Some(count), "{what}: count (16-bit values)");
            let got = labeler.download(&run.labels).expect("download");
            assert!(got.values() == consecutive.values(), "{what}: consecutive labels (16-bit values)");
        }
    }
}

/// `classes` random classes (0 the background among them) in square cells of `cell` elements,
/// so that classes meet along edges, at corners and across faces.
fn classes(shape: Shape, classes: u64, cell: usize, seed: u64) -> Vec<u64> {
    let mut next = common::stream(seed);
    let (cw, ch, cd) = (shape.width.div_ceil(cell), shape.height.div_ceil(cell), shape.depth.div_ceil(cell));
    let cells: Vec<u64> = (0..cw * ch * cd).map(|_| next() % classes).collect();
    let mut values = Vec::with_capacity(shape.len());
    for z in 0..shape.depth {
        for y in 0..shape.height {
            for x in 0..shape.width {
                // A few single elements of other classes inside the cells.
                let noise = next().is_multiple_of(11);
                let cell_value = cells[((z / cell) * ch + y / cell) * cw + x / cell];
                values.push(if noise { next() % classes } else { cell_value });
            }
        }
    }
    values
}

/// Consecutive labels of `values` by a breadth-first search from each unlabeled foreground
/// element in raster order: independent of the union-find reference.
fn flood(shape: Shape, values: &[u64], background: u64, connectivity: Connectivity) -> Vec<u32> {
    let hops = match connectivity {
        Connectivity::Four | Connectivity::Six => 1,
        Connectivity::Eight | Connectivity::Eighteen => 2,
        Connectivity::TwentySix => 3,
    };
    let planar = connectivity.dims() == 2;
    let (w, h, d) = (shape.width as isize, shape.height as isize, shape.depth as isize);
    let mut labels = vec![0u32; values.len()];
    let mut next = 0;
    for start in 0..values.len() {
        if values[start] == background || labels[start] != 0 {
            continue;
        }
        next += 1;
        labels[start] = next;
        let mut queue = VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            let (x, y, z) = ((i as isize) % w, (i as isize) / w % h, (i as isize) / (w * h));
            for dz in -1..=1isize {
                for dy in -1..=1isize {
                    for dx in -1..=1isize {
                        let steps = [dx, dy, dz].iter().filter(|&&s| s != 0).count();
                        if steps == 0 || steps > hops || (planar && dz != 0) {
                            continue;
                        }
                        let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                        if nx < 0 || ny < 0 || nz < 0 || nx >= w || ny >= h || nz >= d {
                            continue;
                        }
                        let j = ((nz * h + ny) * w + nx) as usize;
                        if labels[j] == 0 && values[j] == values[i] {
                            labels[j] = next;
                            queue.push_back(j);
                        }
                    }
                }
            }
        }
    }
    labels
}

/// `values` as elements of type `T` (truncated), with the background `background` of `T`.
fn typed<T: LabelValue>(values: &[u64], convert: fn(u64) -> T) -> Vec<T> {
    values.iter().map(|&v| convert(v)).collect()
}

/// Labels `values` on the device with `algorithm` into consecutive labels, and checks them
/// against the reference and the flood fill of `widened` (the same values as u64 bits).
fn check<T: LabelValue>(
    d: &common::TestDevice,
    algorithm: Algorithm,
    (shape, connectivity): (Shape, Connectivity),
    values: &[T],
    background: T,
    what: &str,
) {
    let widened: Vec<u64> = values.iter().map(|v| v.bits()).collect();
    let want = flood(shape, &widened, background.bits(), connectivity);
    let (reference, count) =
        reference::label_values(shape, values, background, connectivity).expect("reference").into_consecutive();
    assert!(reference.values() == want.as_slice(), "{what}: the reference differs from the flood fill");
    let mut labeler = d.device.labeler(algorithm).expect("labeler");
    let image = labeler.upload_values(shape, values, background).expect("upload");
    assert_eq!(image.kind(), ImageKind::multilabel(background));
    let run = labeler.run(&image, &Options::new(connectivity).consecutive()).expect("run");
    assert_eq!(run.count, Some(count), "{what} with {} on {}: count", algorithm.name(), d.token);
    let got = labeler.download(&run.labels).expect("download");
    assert!(got.values() == want.as_slice(), "{what} with {} on {}: labels differ", algorithm.name(), d.token);
}

fn multilabel_images_label_as_the_reference(d: &common::TestDevice) {
    let image = Shape::image(71, 45);
    let volume = Shape { width: 13, height: 11, depth: 9 };
    let algorithms: Vec<Algorithm> =
        Algorithm::ALL.iter().copied().filter(|a| !a.multilabel_connectivities().is_empty()).collect();
    let pixel_based = [Algorithm::LE, Algorithm::OLE, Algorithm::UF, Algorithm::UF_IC, Algorithm::KE, Algorithm::KE_IC];
    assert_eq!(algorithms, [&pixel_based[..], &[Algorithm::TUF]].concat());
    for algorithm in algorithms {
        for (shape, connectivities) in [(image, &Connectivity::PLANAR[..]), (volume, &Connectivity::VOLUMETRIC[..])] {
            for &connectivity in connectivities.iter().filter(|&&c| algorithm.supports_multilabel(c)) {
                let at = (shape, connectivity);
                let values = classes(shape, 5, 3, shape.len() as u64 + connectivity.neighbours() as u64);
                let what = format!("{shape} {connectivity:?}");
                check(d, algorithm, at, &typed(&values, |v| v as u8), 0, &format!("{what} u8"));
                check(d, algorithm, at, &typed(&values, |v| v as u8 * 50), 100, &format!("{what} u8, background 100"));
                check(d, algorithm, at, &typed(&values, |v| v as i16 - 2), -2, &format!("{what} i16, background -2"));
                check(d, algorithm, at, &typed(&values, |v| v as u32 * 70_000), 0, &format!("{what} u32"));
                check(d, algorithm, at, &typed(&values, |v| v as i32 - 1), 2, &format!("{what} i32, background 2"));
                // 64 bits whose classes differ only in the high word, and a background there too.
                let high = |v: u64| (v << 40) | 7;
                check(d, algorithm, at, &typed(&values, high), high(3), &format!("{what} u64, high bits"));
                check(d, algorithm, at, &typed(&values, |v| -(v as i64)), 0i64, &format!("{what} i64"));
            }
        }
    }
    // Two classes that touch are two components, where a binary labeling sees one.
    let shape = Shape::image(6, 4);
    let values: Vec<u16> = [1, 1, 1, 2, 2, 2].repeat(4);
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let image = labeler.upload_values(shape, &values, 0).expect("upload");
    let run = labeler.run(&image, &Options::new(Connectivity::Eight).consecutive()).expect("run");
    assert_eq!(run.count, Some(2), "two touching classes on {}", d.token);
    // Values that do not match the shape are refused.
    assert!(matches!(labeler.upload_values(shape, &values[1..], 0), Err(Error::SizeMismatch { .. })));
}

fn multilabel_statistics_and_filters(d: &common::TestDevice) {
    let shape = Shape::image(64, 48);
    let values: Vec<u8> = typed(&classes(shape, 4, 4, 9), |v| v as u8);
    let (labels, count) =
        reference::label_values(shape, &values, 0, Connectivity::Four).expect("ref").into_consecutive();
    let mut labeler = d.device.labeler(Algorithm::UF).expect("labeler");
    let image = labeler.upload_values(shape, &values, 0).expect("upload");
    let options = Options::new(Connectivity::Four).stats(Stats::Components);
    let run = labeler.run(&image, &options).expect("run");
    let stats = run.stats.expect("statistics");
    assert_eq!(stats.len(), count as usize, "on {}", d.token);
    for (k, component) in stats.components.iter().enumerate() {
        let area = labels.values().iter().filter(|&&l| l == k as u32 + 1).count() as u64;
        assert_eq!(component.area, area, "area of {} on {}", k + 1, d.token);
    }
    let kept = labeler.run(&image, &Options::new(Connectivity::Four).filter(Filter::MinSize(5))).expect("filtered");
    let big = stats.components.iter().filter(|c| c.area >= 5).count() as u32;
    assert_eq!(kept.count, Some(big), "components of 5 or more on {}", d.token);
}

fn algorithms_without_multilabel_refuse_it(d: &common::TestDevice) {
    let shape = Shape::image(8, 8);
    let values = vec![3u32; 64];
    for &algorithm in Algorithm::ALL {
        let mut labeler = d.device.labeler(algorithm).expect("labeler");
        let image = labeler.upload_values(shape, &values, 0).expect("upload");
        let run = labeler.run(&image, &Options::new(Connectivity::Eight).consecutive());
        if algorithm.supports_multilabel(Connectivity::Eight) {
            assert_eq!(run.expect("labeled").count, Some(1), "{} on {}", algorithm.name(), d.token);
        } else {
            match run {
                Err(Error::UnsupportedMultiLabel { algorithm: name, connectivity, supported }) => {
                    assert_eq!((name, connectivity), (algorithm.name(), Connectivity::Eight));
                    assert_eq!(supported, ["LE", "OLE", "UF", "UF_IC", "KE", "KE_IC", "TUF"]);
                }
                other => panic!("{} on {}: {:?}", algorithm.name(), d.token, other.map(|r| r.count)),
            }
        }
    }
    // Volumes: TUF labels multi-label ones at 6-connectivity (it has no 18 or 26); the block
    // algorithms refuse them.
    let volume = Shape { width: 4, height: 4, depth: 4 };
    let mut labeler = d.device.labeler(Algorithm::TUF).expect("labeler");
    let image = labeler.upload_values(volume, &values, 0).expect("upload");
    let run = labeler.run(&image, &Options::new(Connectivity::Six).consecutive()).expect("6-connected");
    assert_eq!(run.count, Some(1), "TUF, a multi-label volume on {}", d.token);
    let mut labeler = d.device.labeler(Algorithm::BKE).expect("labeler");
    let image = labeler.upload_values(volume, &values, 0).expect("upload");
    match labeler.run(&image, &Options::new(Connectivity::TwentySix)) {
        Err(Error::UnsupportedMultiLabel { algorithm: "BKE", connectivity: Connectivity::TwentySix, supported }) => {
            assert_eq!(supported, ["LE", "OLE", "UF", "UF_IC", "KE", "KE_IC"]);
        }
        other => panic!("BKE, a multi-label volume on {}: {:?}", d.token, other.map(|r| r.count)),
    }
}

/// `BinaryImage::foreground_of`: every value but the background is foreground (one class).
#[test]
fn foreground_of_masks_every_other_value() {
    let values: [i16; 6] = [-1, 3, -1, 0, 7, -1];
    let mask = ccl::BinaryImage::foreground_of(Shape::image(3, 2), &values, -1).expect("mask");
    assert_eq!(mask.values(), &[0, 1, 0, 1, 1, 0]);
    assert!(matches!(ccl::BinaryImage::foreground_of(Shape::image(4, 2), &values, 0), Err(Error::SizeMismatch { .. })));
}
