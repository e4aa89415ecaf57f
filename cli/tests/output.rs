//! Outputs are never lost or half-written: every file goes through a temporary file and a rename,
//! the output is checked before any work, the input is never overwritten, and a closed or full
//! standard output neither panics nor loses the file. A large `.npy` of labels is written as
//! they arrive from the device, whole or not at all.

use std::path::{Path, PathBuf};
use std::process::Stdio;
#[path = "../../tests/common/mod.rs"]
mod common;
mod support;
use support::{ccl, files_in, run_checked, scratch, text};

/// Makes every write of `cmd`'s process past `bytes` fail with EFBIG (`RLIMIT_FSIZE`, SIGXFSZ
/// ignored), as a full disk would.
fn limit_file_size(cmd: &mut std::process::Command, bytes: libc::rlim_t) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A file-size limit makes every write past 64 kB fail (EFBIG), as a full disk would: the label
/// command fails cleanly, the good file already at the target is untouched, and no partial or
/// temporary file is left, for every output format.
#[test]
fn a_failed_write_keeps_the_old_file_and_leaves_nothing_behind() {
    let dir = scratch("efbig");
    for ext in ["npy", "png", "tiff"] {
        let target = dir.join(format!("labels.{ext}"));
        std::fs::write(&target, b"the good file of an earlier run").unwrap();
        let mut cmd = ccl();
        cmd.args(["label", "--backend", "cpu", "-o"]).arg(&target);
        limit_file_size(&mut cmd, 64 << 10);
        let out = cmd.output().unwrap();
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{ext}: {t}");
        assert!(t.contains(&format!("cannot write {}", target.display())) && !t.contains("panicked"), "{ext}: {t}");
        let kept = std::fs::read(&target).unwrap();
        assert!(
            kept == b"the good file of an earlier run",
            "{ext}: the earlier file was replaced ({} bytes)",
            kept.len()
        );
        assert_eq!(files_in(&dir), vec![format!("labels.{ext}")], "{ext}: leftovers");
        std::fs::remove_file(&target).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Targets that cannot be written are reported before any labeling: unknown extension, missing
/// folder, a folder, a read-only file system; and the input is never the output.
#[test]
fn outputs_are_checked_before_any_work() {
    let dir = scratch("checks");
    let input = dir.join("in.png");
    image::GrayImage::from_fn(40, 30, |x, _| image::Luma([if x % 7 == 0 { 255 } else { 0 }])).save(&input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let missing = dir.join("no-such-folder").join("l.npy");
    let cases: Vec<(PathBuf, &str)> = vec![
        (dir.join("l.bmp"), "unknown output extension 'bmp'"),
        (missing, "does not exist"),
        (dir.clone(), "unknown output extension"),
        (input.clone(), "refusing to write over the input"),
        (dir.join(".").join("in.png"), "refusing to write over the input"),
    ];
    for (output, message) in cases {
        let out = ccl().arg("label").arg(&input).arg("-o").arg(&output).output().unwrap();
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{}: {t}", output.display());
        assert!(t.contains(message), "{}: expected '{message}' in {t}", output.display());
        assert!(!t.contains("device:") && !t.contains("components"), "{}: work was done: {t}", output.display());
    }
    // A hard link to the input is the input too.
    let link = dir.join("link.png");
    std::fs::hard_link(&input, &link).unwrap();
    let out = ccl().arg("label").arg(&input).arg("-o").arg(&link).output().unwrap();
    assert!(text(&out).contains("refusing to write over the input"), "{}", text(&out));
    assert!(std::fs::read(&input).unwrap() == before, "the input was modified");
    // A read-only file system: a clean error, no panic.
    let out = ccl().args(["label", "--backend", "cpu", "-o", "/proc/ccl-labels.npy"]).output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("cannot write /proc/ccl-labels.npy") && !t.contains("panicked"), "{t}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Two processes writing one path at once leave one complete file: one of the two results,
/// byte for byte, never a mix.
#[test]
fn concurrent_writers_leave_one_complete_file() {
    let dir = scratch("race");
    let inputs = [dir.join("one.png"), dir.join("two.png")];
    for (seed, input) in inputs.iter().enumerate() {
        let out = ccl()
            .args(["generate", "--width", "2000", "--height", "2000", "--density", "30", "--seed", &seed.to_string()])
            .arg("-o")
            .arg(input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let label = |input: &Path, output: &Path| {
        let mut cmd = ccl();
        cmd.arg("label").arg(input).args(["--backend", "cpu", "-o"]).arg(output);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        cmd
    };
    let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
    assert!(label(&inputs[0], &a).status().unwrap().success() && label(&inputs[1], &b).status().unwrap().success());
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    let shared = dir.join("shared.npy");
    for round in 0..4 {
        let mut first = label(&inputs[0], &shared).spawn().unwrap();
        let mut second = label(&inputs[1], &shared).spawn().unwrap();
        assert!(first.wait().unwrap().success() && second.wait().unwrap().success());
        let got = std::fs::read(&shared).unwrap();
        assert!(got == a || got == b, "round {round}: the file is neither result ({} bytes)", got.len());
    }
    let leftovers: Vec<String> = files_in(&dir).into_iter().filter(|n| n.starts_with('.')).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `ccl label ... | head -1` and `ccl devices | head -1`: a closed standard output ends the
/// program quietly (exit 0) with the file written; `> /dev/full` is a clean error after the file
/// is written.
#[test]
fn a_closed_or_full_stdout_neither_panics_nor_loses_the_file() {
    let dir = scratch("stdout");
    let output = dir.join("labels.npy");
    for args in [vec!["label", "--backend", "cpu", "-o", output.to_str().unwrap()], vec!["devices"]] {
        let mut child = ccl().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take()); // the reader goes away before the first line
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "{args:?}: {:?} {stderr}", out.status);
    }
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 128 + 1024 * 768 * 4);
    std::fs::remove_file(&output).unwrap();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = ccl().args(["label", "--backend", "cpu", "-o"]).arg(&output).stdout(full).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write standard output") && !stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::metadata(&output).unwrap().len(), 128 + 1024 * 768 * 4, "the file is written");
    std::fs::remove_dir_all(dir).unwrap();
}

device_tests! {
    a_large_npy_is_written_as_its_labels_arrive_whole_or_not_at_all: [cpu, opencl_cpu, opencl_gpu, cuda],
}

/// A 2100 x 2000 .npy (16.8 MB of labels: two pieces of a streamed download) labeled into a .npy
/// equals the CPU reference's consecutive labels; with writes failing past 8 MiB (mid-stream),
/// the command fails cleanly and the earlier file stays, with nothing left beside it.
fn a_large_npy_is_written_as_its_labels_arrive_whole_or_not_at_all(d: &common::TestDevice) {
    let dir = scratch(&format!("streamed-{}", d.token));
    let (width, height) = (2100, 2000);
    let image = ccl::random_image(width, height, 50, 1, 3).unwrap();
    let input = dir.join("image.npy");
    std::fs::write(&input, common::npy_bytes("|b1", &[height, width], false, image.values())).unwrap();
    let (expected, n) = ccl::reference::label(&image, ccl::Connectivity::Eight).to_consecutive();
    let target = dir.join("labels.npy");
    let device = d.device.info().id.to_string();
    let label = || {
        let mut cmd = ccl();
        cmd.args(["label", input.to_str().unwrap(), "-o", target.to_str().unwrap(), "--device", &device, "-v"]);
        cmd
    };
    let (out, t) = run_checked(&mut label());
    assert!(out.status.success() && t.contains(&format!("{n} components")), "{}: {t}", d.token);
    assert!(t.contains("label and write"), "{}: the labels were not streamed: {t}", d.token);
    let bytes = std::fs::read(&target).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), [height as u64, width as u64], "{}", d.token);
    assert!(npy.into_vec::<u32>().unwrap() == *expected.values(), "{}: labels differ", d.token);

    std::fs::write(&target, b"the good file of an earlier run").unwrap();
    let mut cmd = label();
    limit_file_size(&mut cmd, 8 << 20);
    let (out, t) = run_checked(&mut cmd);
    assert_eq!(out.status.code(), Some(1), "{}: {t}", d.token);
    assert!(t.contains(&format!("cannot write {}", target.display())), "{}: {t}", d.token);
    assert_eq!(std::fs::read(&target).unwrap(), b"the good file of an earlier run", "{}", d.token);
    assert_eq!(files_in(&dir), vec!["image.npy".to_string(), "labels.npy".to_string()], "{}: leftovers", d.token);
    std::fs::remove_dir_all(dir).unwrap();
}
