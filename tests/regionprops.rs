//! Region properties (`ccl::regions`): on every device, the sums the device computes (moments,
//! Euler number, perimeter classes, intensity) equal the CPU reference's (integers exactly,
//! floating-point sums within 1e-9 of their scale), on images and volumes of random blobs with
//! holes and tunnels; scikit-image's values for a handful of shapes (computed with scikit-image
//! 0.26 `regionprops_table` and written here) come out of `Labeler::regionprops` to 1e-12; and
//! requests that scikit-image refuses are refused with typed errors. One test per device. The
//! Python tests compare every property with scikit-image on larger and real images.

// scikit-image's printed values, some of them near pi / 2, 1 / sqrt 2, ...
#![allow(clippy::approx_constant)]

mod common;

use ccl::regions::{Intensity, RegionRequest};
use ccl::testing::Stages;
use ccl::{Algorithm, Connectivity, Error, Labeler, Options, Property, RegionSums, Shape};

device_tests! {
    region_sums_equal_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
    known_shapes_have_scikit_image_properties: [cpu, opencl_cpu, opencl_gpu, cuda],
    undefined_requests_are_refused: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Random blobs: cells of `cell` elements, each foreground with probability 1/2, with single
/// elements flipped, so that components have holes, tunnels, thin parts and touch the border.
fn blobs(shape: Shape, cell: usize, seed: u64) -> Vec<u8> {
    let mut next = common::stream(seed);
    let (cw, ch) = (shape.width.div_ceil(cell), shape.height.div_ceil(cell));
    let cells: Vec<bool> = (0..cw * ch * shape.depth.div_ceil(cell)).map(|_| next().is_multiple_of(2)).collect();
    let mut out = Vec::with_capacity(shape.len());
    for z in 0..shape.depth {
        for y in 0..shape.height {
            for x in 0..shape.width {
                let inside = cells[((z / cell) * ch + y / cell) * cw + x / cell];
                out.push(u8::from(inside != next().is_multiple_of(7)));
            }
        }
    }
    out
}

/// An intensity image: smooth with noise, negative and positive values.
fn intensity_of(shape: Shape, seed: u64) -> Vec<f64> {
    let mut next = common::stream(seed);
    (0..shape.len()).map(|i| (i % 97) as f64 * 0.25 - 7.0 + (next() % 1000) as f64 / 3.0).collect()
}

/// Asserts that `got` equals `want`: integers exactly, the floating-point sums within 1e-9 of
/// each component's scale (its area times its extent to the moment's order, which bounds every
/// term).
fn assert_sums_close(got: &RegionSums, want: &RegionSums, what: &str) {
    assert_eq!(got.stats, want.stats, "{what}: statistics");
    assert_eq!(got.euler, want.euler, "{what}: Euler sums");
    assert_eq!(got.perimeter, want.perimeter, "{what}: perimeter classes");
    assert_eq!((got.axes, got.order), (want.axes, want.order), "{what}: layout");
    assert_eq!(got.central.len(), want.central.len(), "{what}: moments");
    let per = want.moments_per_component();
    for (k, c) in want.stats.components.iter().enumerate() {
        let extent = f64::from(c.width.max(c.height).max(c.depth));
        let scale = c.area as f64 * extent.powi(3 * i32::from(want.axes));
        for (j, (g, w)) in got.central_of(k).iter().zip(want.central_of(k)).enumerate() {
            assert!((g - w).abs() <= 1e-9 * scale.max(1.0), "{what}: component {k} moment {j} of {per}: {g} vs {w}");
        }
        if let (Some(g), Some(w)) = (&got.intensity, &want.intensity) {
            let [gs, gl, gh] = g[k];
            let [ws, wl, wh] = w[k];
            assert_eq!((gl, gh), (wl, wh), "{what}: component {k} intensity bounds");
            assert!((gs - ws).abs() <= 1e-9 * (1.0 + ws.abs()), "{what}: component {k} intensity sum {gs} vs {ws}");
        }
    }
    assert_eq!(got.intensity.is_some(), want.intensity.is_some(), "{what}: intensity");
}

fn region_sums_equal_the_reference(d: &common::TestDevice) {
    let image = Shape::image(83, 61);
    let volume = Shape { width: 23, height: 19, depth: 17 };
    for (shape, connectivity, axes) in
        [(image, Connectivity::Eight, 2u8), (image, Connectivity::Four, 2), (volume, Connectivity::TwentySix, 3)]
    {
        let mask = blobs(shape, 4, shape.len() as u64 + axes as u64);
        let values = intensity_of(shape, 7);
        let mut labeler = d.device.labeler(Algorithm::default_for(connectivity)).expect("labeler");
        let image = labeler.upload_array(shape, &mask).expect("upload");
        let run = labeler.run(&image, &Options::new(connectivity).consecutive()).expect("label");
        let mut labels = run.labels;
        let host = labeler.download(&labels).expect("download");
        let n = run.count.expect("count");
        assert!(n > 5, "{shape}: {n} components");
        let as_f32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let wide = labeler.upload_intensity(shape, &values).expect("intensity");
        let narrow = labeler.upload_intensity(shape, &as_f32).expect("intensity");
        let narrow_values: Vec<f64> = as_f32.iter().map(|&v| f64::from(v)).collect();
        for order in 0..=3u8 {
            for (intensity, host_values) in [
                (None, None),
                (Some(Intensity::F64(&wide)), Some(&values)),
                (Some(Intensity::F32(&narrow)), Some(&narrow_values)),
            ] {
                let request = RegionRequest { order, shape: order % 2 == 0, intensity };
                let what = format!("{shape} {connectivity:?} order {order} on {}", d.token);
                let (got, _) = labeler.region_sums(&mut labels, axes, &request).expect("region sums");
                let want = RegionSums::of_labels(host.values(), shape, n, axes, &request, host_values.map(|v| &v[..]));
                assert_sums_close(&got, &want, &what);
            }
        }
    }
}

/// The 12 x 16 image of scikit-image's check, its components in raster order of their first
/// pixel (as ccl numbers them): a 3 x 5 rectangle, a diagonal pair, a 5 x 7 rectangle with a
/// hole, and a notched block with a hole on the image's border.
fn known_image() -> (Shape, Vec<u8>) {
    let rows = [
        "................",
        ".#####..........",
        ".#####....#.....",
        ".#####.....#....",
        "................",
        "..#######.......",
        "..#######.......",
        "..###.###.......",
        "..#######.......",
        "..#######..###..",
        "...........#.##.",
        "...........####.",
    ];
    let mask = rows.iter().flat_map(|r| r.bytes().map(|b| u8::from(b == b'#'))).collect();
    (Shape::image(16, 12), mask)
}

fn known_shapes_have_scikit_image_properties(d: &common::TestDevice) {
    let (shape, mask) = known_image();
    let mut labeler = d.device.labeler(Algorithm::default_for(Connectivity::Eight)).expect("labeler");
    let image = labeler.upload_array(shape, &mask).expect("upload");
    let mut labels = labeler.run(&image, &Options::new(Connectivity::Eight).consecutive()).expect("label").labels;
    let properties: Vec<Property> = [
        "label",
        "area",
        "perimeter",
        "euler_number",
        "orientation",
        "eccentricity",
        "axis_major_length",
        "axis_minor_length",
        "moments_hu",
        "moments_central",
        "moments",
    ]
    .iter()
    .map(|name| Property::parse(name).expect("known"))
    .collect();
    let (table, _) = labeler.regionprops(&mut labels, 2, &properties, None, None).expect("regionprops");
    assert_eq!(table.rows(), 4);
    // scikit-image's values of the components as it numbers them (1: 3 x 5, 2: with a hole, 3:
    // on the border, 4: the diagonal pair), listed in ccl's order: 1, 4, 2, 3.
    let want: [(&str, [f64; 4]); 13] = [
        ("label", [1.0, 2.0, 3.0, 4.0]),
        ("area", [15.0, 2.0, 34.0, 10.0]),
        ("perimeter", [12.0, 0.0, 22.82842712474619, 9.0]),
        ("euler_number", [1.0, 1.0, 0.0, 0.0]),
        ("orientation", [1.5707963267948966, 0.7853981633974483, 1.5707963267948966, 1.3073247132001817]),
        ("eccentricity", [0.816496580927726, 1.0, 0.7071067811865476, 0.7042011771182416]),
        ("axis_major_length", [5.656854249492381, 2.8284271247461903, 8.116794499134278, 4.531063919917547]),
        ("axis_minor_length", [3.265986323710904, 0.0, 5.739440431835514, 3.2170576236090995]),
        ("moments_hu-1", [0.007901234567901233, 0.0625, 0.0036667424958992346, 0.004048999999999998]),
        ("moments_central-2-0", [10.0, 0.5, 70.0, 6.9]),
        ("moments_central-1-1", [0.0, 0.5, 0.0, 1.6]),
        ("moments-3-3", [900.0, 1.0, 43884.0, 323.0]),
        ("moments_hu-6", [0.0, 0.0, 0.0, 1.8431999999999554e-10]),
    ];
    for (name, values) in want {
        let column = table.column(name).unwrap_or_else(|| panic!("column {name}"));
        for (k, (&got, want)) in column.values.iter().zip(values).enumerate() {
            let close =
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()) || (name == "moments_hu-6" && got.abs() < 1e-9);
            assert!(close, "{name} of component {} on {}: {got} vs scikit-image {want}", k + 1, d.token);
        }
    }
    // Volumes: a hollow cube (an object and a cavity: Euler number 2) and a ring (a tunnel: 0).
    let volume = Shape { width: 12, height: 7, depth: 7 };
    let mut solid = vec![0u8; volume.len()];
    for z in 1..6 {
        for y in 1..6 {
            for x in 1..11 {
                let shell = x == 1 || x == 5 || y == 1 || y == 5 || z == 1 || z == 5;
                let ring = x >= 7 && z == 3 && (x == 7 || x == 10 || y == 1 || y == 5);
                if (x <= 5 && shell) || ring {
                    solid[(z * 7 + y) * 12 + x] = 1;
                }
            }
        }
    }
    let mut labeler = d.device.labeler(Algorithm::default_for(Connectivity::TwentySix)).expect("labeler");
    let image = labeler.upload_array(volume, &solid).expect("upload");
    let mut labels = labeler.run(&image, &Options::new(Connectivity::TwentySix).consecutive()).expect("label").labels;
    let euler = [Property::Label, Property::EulerNumber, Property::Area];
    let (table, _) = labeler.regionprops(&mut labels, 3, &euler, None, None).expect("regionprops");
    assert_eq!(table.column("euler_number").expect("euler").values, [2.0, 0.0], "on {}", d.token);
    assert_eq!(table.column("area").expect("area").values, [98.0, 14.0], "on {}", d.token);
}

fn undefined_requests_are_refused(d: &common::TestDevice) {
    let volume = Shape { width: 5, height: 4, depth: 3 };
    let mut labeler = d.device.labeler(Algorithm::default_for(Connectivity::TwentySix)).expect("labeler");
    let mut labels = labeler.upload_labels(volume, &[1; 60], 1).expect("labels");
    fn refused<T>(result: ccl::Result<T>, what: &str) {
        match result {
            Err(Error::InvalidParameter { .. } | Error::ShapeMismatch { .. }) => {}
            Err(other) => panic!("{what}: {other}"),
            Ok(_) => panic!("{what}: accepted"),
        }
    }
    for p in [Property::Perimeter, Property::Orientation, Property::Eccentricity, Property::MomentsHu] {
        refused(labeler.regionprops(&mut labels, 3, &[p], None, None), p.name());
    }
    refused(labeler.regionprops(&mut labels, 2, &[Property::Area], None, None), "2 axes of a volume");
    refused(labeler.regionprops(&mut labels, 3, &[Property::Area], Some(&[1.0, 2.0]), None), "short spacing");
    refused(labeler.regionprops(&mut labels, 3, &[Property::Area], Some(&[1.0, 0.0, 1.0]), None), "zero spacing");
    refused(labeler.regionprops(&mut labels, 3, &[Property::IntensityMean], None, None), "no intensity image");
    let small = labeler.upload_intensity(Shape::image(5, 4), &[0.0f32; 20]).expect("intensity");
    let intensity = Some(Intensity::F32(&small));
    refused(labeler.regionprops(&mut labels, 3, &[Property::IntensityMax], None, intensity), "intensity shape");
    let request = RegionRequest { order: 4, ..RegionRequest::default() };
    refused(labeler.region_sums(&mut labels, 3, &request), "order 4");
    assert!(matches!(Property::parse("solidity"), Err(Error::InvalidParameter { .. })));
    // What is defined is computed: one component of 60 voxels, anisotropic spacing.
    let spacing = [2.0, 1.0, 0.5];
    let (table, _) = labeler.regionprops(&mut labels, 3, &[Property::Area], Some(&spacing), None).expect("area");
    assert_eq!(table.column("area").expect("area").values, [60.0]);
}
