//! `ccl label --stats CSV --properties NAMES`: scikit-image's region properties as CSV columns,
//! computed on every device: an image whose properties scikit-image gave (0.26
//! `regionprops_table`, written here), with an intensity image and a spacing; a volume's Euler
//! numbers; and the refusals (no CSV written).

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use std::collections::HashMap;
use std::path::Path;

use support::{ccl, run_checked, scratch};

device_tests! {
    properties_are_written_as_csv_columns: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// A CSV's columns by name.
fn read_csv(path: &Path) -> (Vec<String>, HashMap<String, Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let names: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
    let mut columns: HashMap<String, Vec<f64>> = names.iter().map(|n| (n.clone(), Vec::new())).collect();
    for line in lines {
        for (name, cell) in names.iter().zip(line.split(',')) {
            columns.get_mut(name).unwrap().push(cell.parse().unwrap());
        }
    }
    (names, columns)
}

/// The 12 x 16 image of tests/regionprops.rs as a .npy of uint8 (its components in ccl's
/// order: a 3 x 5 rectangle, a diagonal pair, a 5 x 7 rectangle with a hole, a notched block on
/// the border).
fn known_image(path: &Path) -> Vec<u8> {
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
    let mask: Vec<u8> = rows.iter().flat_map(|r| r.bytes().map(|b| u8::from(b == b'#'))).collect();
    std::fs::write(path, common::npy_bytes("|u1", &[12, 16], false, &mask)).unwrap();
    mask
}

fn properties_are_written_as_csv_columns(d: &common::TestDevice) {
    let dir = scratch(&format!("regionprops-{}", d.token));
    let device = d.device.info().id.to_string();
    let input = dir.join("known.npy");
    let mask = known_image(&input);
    // An intensity image: 10 x the column index, as 8-bit gray levels.
    let gray: Vec<u8> = (0..mask.len()).map(|i| (i % 16 * 10) as u8).collect();
    let intensity = dir.join("gray.npy");
    std::fs::write(&intensity, common::npy_bytes("|u1", &[12, 16], false, &gray)).unwrap();
    let (out, csv) = (dir.join("labels.npy"), dir.join("props.csv"));
    let args = [
        "label",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--device",
        &device,
        "--stats",
        csv.to_str().unwrap(),
        "--properties",
        "area,perimeter,euler_number,orientation,bbox,intensity_mean,intensity_max",
        "--intensity",
        intensity.to_str().unwrap(),
    ];
    let (status, text) = run_checked(ccl().args(args));
    assert!(status.status.success(), "{text}");
    let (names, columns) = read_csv(&csv);
    assert_eq!(
        names,
        [
            "label",
            "area",
            "perimeter",
            "euler_number",
            "orientation",
            "bbox-0",
            "bbox-1",
            "bbox-2",
            "bbox-3",
            "intensity_mean",
            "intensity_max"
        ]
    );
    let want: [(&str, [f64; 4]); 8] = [
        ("label", [1.0, 2.0, 3.0, 4.0]),
        ("area", [15.0, 2.0, 34.0, 10.0]),
        ("perimeter", [12.0, 0.0, 22.82842712474619, 9.0]),
        ("euler_number", [1.0, 1.0, 0.0, 0.0]),
        (
            "orientation",
            [std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_4, std::f64::consts::FRAC_PI_2, 1.3073247132001817],
        ),
        ("bbox-0", [1.0, 2.0, 5.0, 9.0]),
        ("intensity_mean", [30.0, 105.0, 50.0, 124.0]),
        ("intensity_max", [50.0, 110.0, 80.0, 140.0]),
    ];
    for (name, values) in want {
        for (k, (got, want)) in columns[name].iter().zip(values).enumerate() {
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{name} of {} on {}: {got} vs {want}",
                k + 1,
                d.token
            );
        }
    }
    // Spacing: areas scale by the pixel's area.
    let spaced = dir.join("spaced.csv");
    let args = ["label", input.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", &device, "--stats"];
    let (status, text) =
        run_checked(ccl().args(args).arg(&spaced).args(["--properties", "area", "--spacing", "2,0.5"]));
    assert!(status.status.success(), "{text}");
    assert_eq!(read_csv(&spaced).1["area"], [15.0, 2.0, 34.0, 10.0]);

    // A volume: a hollow cube (Euler number 2) and a ring (0).
    let (w, h, depth) = (12, 7, 7);
    let mut solid = vec![0u8; w * h * depth];
    for z in 1..6 {
        for y in 1..6 {
            for x in 1..11 {
                let shell = x == 1 || x == 5 || y == 1 || y == 5 || z == 1 || z == 5;
                let ring = x >= 7 && z == 3 && (x == 7 || x == 10 || y == 1 || y == 5);
                if (x <= 5 && shell) || ring {
                    solid[(z * h + y) * w + x] = 1;
                }
            }
        }
    }
    let volume = dir.join("volume.npy");
    std::fs::write(&volume, common::npy_bytes("|u1", &[depth, h, w], false, &solid)).unwrap();
    let volume_csv = dir.join("volume.csv");
    let args = ["label", volume.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", &device, "--stats"];
    let (status, text) = run_checked(ccl().args(args).arg(&volume_csv).args(["--properties", "euler_number,area"]));
    assert!(status.status.success(), "{text}");
    let (names, columns) = read_csv(&volume_csv);
    assert_eq!(names, ["label", "euler_number", "area"]);
    assert_eq!(columns["euler_number"], [2.0, 0.0]);

    // Refusals, before any CSV is written.
    let refused = dir.join("refused.csv");
    for extra in [
        &["--properties", "perimeter"][..],
        &["--properties", "solidity"],
        &["--properties", "intensity_mean"],
        &["--properties", "area", "--spacing", "1,0"],
    ] {
        let args = ["label", volume.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", &device, "--stats"];
        let (status, text) = run_checked(ccl().args(args).arg(&refused).args(extra));
        assert!(!status.status.success(), "{extra:?} accepted: {text}");
        assert!(!refused.exists(), "{extra:?}: a CSV was written");
    }
    let (status, _) =
        run_checked(ccl().args(["label", input.to_str().unwrap(), "-o"]).arg(&out).args(["--properties", "area"]));
    assert!(!status.status.success(), "--properties without --stats accepted");
}
