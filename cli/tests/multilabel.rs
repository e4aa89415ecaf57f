//! `ccl label --multilabel`: a `.npy` of integer values labeled as a multi-label image on every
//! device (the connected sets of equal values, `--background` excepted), equal to the CPU
//! reference's consecutive labels for images and volumes, signed and unsigned values of every
//! width, in both byte orders and memory orders; statistics and filters; `--background` alone
//! (every other value one foreground); and the refusals.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use std::path::Path;

use support::{ccl, run_checked, scratch};

/// A .npy of uint32 labels: its shape and values.
fn read_labels(path: &Path) -> (Vec<u64>, Vec<u32>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<u32>().unwrap())
}

fn device_arg(d: &common::TestDevice) -> String {
    d.device.info().id.to_string()
}

device_tests! {
    multilabel_npy_files_label_as_the_reference: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// Classes 0..4 in cells of 3 (and a few single elements), as i64.
fn classes(len: usize, width: usize) -> Vec<i64> {
    (0..len).map(|i| ((i % width / 3 * 7 + i / width / 3 * 13 + (i % 11 == 0) as usize) % 5) as i64).collect()
}

fn multilabel_npy_files_label_as_the_reference(d: &common::TestDevice) {
    let dir = scratch(&format!("multilabel-{}", d.token));
    let (w, h) = (47, 31);
    let values = classes(w * h, w);
    // int16 little-endian, uint64 big-endian, int8 in Fortran order: the same classes.
    let le: Vec<u8> = values.iter().flat_map(|&v| ((v - 2) as i16).to_le_bytes()).collect();
    let be: Vec<u8> = values.iter().flat_map(|&v| ((v as u64) << 40).to_be_bytes()).collect();
    let fortran: Vec<u8> = (0..w * h).map(|i| values[(i % h) * w + i / h] as i8 as u8).collect();
    let shape = ccl::Shape::image(w, h);
    for (name, descr, bytes, fortran_order, background, shift) in [
        ("int16", "<i2", le, false, "-2", -2i64),
        ("uint64", ">u8", be, false, "0", 0),
        ("int8", "|i1", fortran, true, "3", 3),
    ] {
        let input = dir.join(format!("{name}.npy"));
        std::fs::write(&input, common::npy_bytes(descr, &[h, w], fortran_order, &bytes)).unwrap();
        let typed: Vec<i64> = values.iter().map(|&v| if name == "int16" { v - 2 } else { v }).collect();
        let background_value = if name == "uint64" { 0 } else { shift };
        for connectivity in ["4", "8"] {
            let conn = ccl::Connectivity::from_neighbours(connectivity.parse().unwrap()).unwrap();
            let (want, n) =
                ccl::reference::label_values(shape, &typed, background_value, conn).unwrap().to_consecutive();
            let out = dir.join(format!("{name}-{connectivity}.npy"));
            let (status, text) =
                run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap()]).args([
                    "--device",
                    &device_arg(d),
                    "--multilabel",
                    "--background",
                    background,
                    "--connectivity",
                    connectivity,
                ]));
            assert!(status.status.success(), "{name} on {}: {text}", d.token);
            assert!(text.contains(&format!("{n} components")) && text.contains("multi-label"), "{text}");
            let (got_shape, labels) = read_labels(&out);
            assert_eq!(got_shape, vec![h as u64, w as u64]);
            assert!(labels == want.values(), "{name} {connectivity} on {}: labels differ", d.token);
            // Without --multilabel, every value but the background is one foreground.
            let mask: Vec<u8> = typed.iter().map(|&v| u8::from(v != background_value)).collect();
            let image = ccl::BinaryImage::new(shape, mask).unwrap();
            let (want, n) = ccl::reference::label(&image, conn).to_consecutive();
            let (status, text) =
                run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap()]).args([
                    "--device",
                    &device_arg(d),
                    "--background",
                    background,
                    "--connectivity",
                    connectivity,
                ]));
            assert!(status.status.success() && text.contains(&format!("{n} components")), "{name}: {text}");
            assert!(read_labels(&out).1 == want.values(), "{name} {connectivity} binary on {}", d.token);
        }
    }
    // A volume of uint32 classes, with statistics and a filter.
    let (vw, vh, vd) = (9, 8, 7);
    let volume: Vec<i64> = classes(vw * vh * vd, vw);
    let input = dir.join("volume.npy");
    let bytes: Vec<u8> = volume.iter().flat_map(|&v| (v as u32).to_le_bytes()).collect();
    std::fs::write(&input, common::npy_bytes("<u4", &[vd, vh, vw], false, &bytes)).unwrap();
    let vshape = ccl::Shape { width: vw, height: vh, depth: vd };
    let (want, n) = ccl::reference::label_values(vshape, &volume, 0, ccl::Connectivity::Six).unwrap().to_consecutive();
    let (out, stats) = (dir.join("volume-labels.npy"), dir.join("volume.csv"));
    let (status, text) =
        run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap()]).args([
            "--device",
            &device_arg(d),
            "--multilabel",
            "--connectivity",
            "6",
            "--stats",
            stats.to_str().unwrap(),
        ]));
    assert!(status.status.success(), "volume on {}: {text}", d.token);
    let (got_shape, labels) = read_labels(&out);
    assert_eq!(got_shape, vec![vd as u64, vh as u64, vw as u64]);
    assert!(labels == want.values(), "volume on {}", d.token);
    let rows = std::fs::read_to_string(&stats).unwrap().lines().count();
    assert_eq!(rows, n as usize + 1, "a header and a row per component");
    let (status, text) =
        run_checked(ccl().args(["label", input.to_str().unwrap(), "-o", out.to_str().unwrap()]).args([
            "--device",
            &device_arg(d),
            "--multilabel",
            "--algo",
            "BKE",
        ]));
    assert!(
        !status.status.success()
            && text.contains(
                "BKE does not label multi-label images with 26-connectivity; LE, OLE, UF, UF_IC, KE, KE_IC do"
            ),
        "{text}"
    );
}

#[test]
fn multilabel_refusals_come_before_any_work() {
    let dir = scratch("multilabel-refusals");
    let floats = dir.join("floats.npy");
    std::fs::write(&floats, common::npy_bytes("<f4", &[2, 2], false, &[0u8; 16])).unwrap();
    let ints = dir.join("ints.npy");
    std::fs::write(&ints, common::npy_bytes("|u1", &[2, 2], false, &[0, 1, 2, 3])).unwrap();
    let out = dir.join("out.npy");
    let cases: [(&[&str], &str); 5] = [
        (&[floats.to_str().unwrap(), "--multilabel"], "a multi-label image holds integers"),
        (&[ints.to_str().unwrap(), "--multilabel", "--background", "256"], "256 is not a value of uint8 labels"),
        (&["page.png", "--background", "1"], "reads one .npy of integer values"),
        (&[ints.to_str().unwrap(), "--multilabel", "--threshold", "3"], "cannot be used with"),
        (&[ints.to_str().unwrap(), "--multilabel", "--label-bits", "64"], "not --label-bits 64"),
    ];
    for (args, message) in cases {
        let (status, text) =
            run_checked(ccl().arg("label").args(args).args(["-o", out.to_str().unwrap(), "--device", "cpu"]));
        assert!(!status.status.success() && text.contains(message), "{args:?}: {text}");
        assert!(!out.exists(), "{args:?} wrote an output");
    }
}
