//! No file destroyed, lost or left behind (issue 49, D1-D6 and D14): every output is checked
//! before any work (not an input, a volume's slices included; not another output; not a link, a
//! device or a folder; its folder exists), an interrupted run removes its temporary files and a
//! later run removes those a killed run left, and sizes past a format or the memory are refused
//! with a message instead of an out-of-memory kill.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
mod support;
use support::{ccl, files_in, scratch, text};

/// A small page of vertical bars saved as `path` (its format from the extension).
fn page(path: &Path) {
    image::GrayImage::from_fn(40, 30, |x, _| image::Luma([if x % 7 == 0 { 255 } else { 0 }])).save(path).unwrap();
}

/// `ccl label --backend cpu` with `args`.
fn label(args: &[&std::ffi::OsStr]) -> Output {
    ccl().arg("label").args(["--backend", "cpu"]).args(args).output().unwrap()
}

/// The command was refused before any work, exit status 1, with `message`.
fn assert_refused(out: &Output, message: &str, what: &str) {
    let t = text(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {t}");
    assert!(t.contains(message), "{what}: expected '{message}' in: {t}");
    assert!(
        !t.contains("device:") && !t.contains("components") && !t.contains("panicked"),
        "{what}: work was done: {t}"
    );
}

/// D2: `--stats` naming the input (by any spelling or a hard link) is refused before any work;
/// the input is kept byte for byte and no labels are written.
#[test]
fn stats_naming_the_input_is_refused_and_the_input_kept() {
    let dir = scratch("stats-input");
    let input = dir.join("in.png");
    page(&input);
    let before = std::fs::read(&input).unwrap();
    let link = dir.join("link.png");
    std::fs::hard_link(&input, &link).unwrap();
    let labels = dir.join("x.npy");
    for stats in [input.clone(), dir.join(".").join("in.png"), link] {
        let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), stats.as_ref()]);
        assert_refused(&out, "refusing to write over the input", &stats.display().to_string());
        assert!(std::fs::read(&input).unwrap() == before, "{}: the input was overwritten", stats.display());
        assert!(!labels.exists(), "{}: labels were written", stats.display());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D3: `--stats` and `-o` naming one file (by any spelling) are refused before any work, and
/// nothing is written; distinct names are written both.
#[test]
fn stats_and_labels_naming_one_file_are_refused() {
    let dir = scratch("stats-labels");
    let input = dir.join("in.png");
    page(&input);
    let labels = dir.join("x.npy");
    for stats in [labels.clone(), dir.join(".").join("x.npy")] {
        let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), stats.as_ref()]);
        assert_refused(&out, "both name", &stats.display().to_string());
        assert!(text(&out).contains("-o and --stats"), "{}", text(&out));
        assert!(!labels.exists(), "{}: a file was written", stats.display());
    }
    let stats = dir.join("x.csv");
    let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), stats.as_ref()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&stats).unwrap().starts_with("label,left,top,width,height,area,cx,cy\n"));
    assert_eq!(&std::fs::read(&labels).unwrap()[..6], b"\x93NUMPY");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D4: an output that is a symbolic link (to a file, or dangling) or a device node is refused
/// and left as it was; so is `-` (no file is made with that name).
#[test]
fn links_devices_and_dash_are_refused_as_outputs() {
    let dir = scratch("links");
    let input = dir.join("in.png");
    page(&input);
    let target = dir.join("precious.txt");
    std::fs::write(&target, b"keep me").unwrap();
    let to_file = dir.join("to-file.csv");
    std::os::unix::fs::symlink(&target, &to_file).unwrap();
    let to_labels = dir.join("to-file.npy");
    std::os::unix::fs::symlink(&target, &to_labels).unwrap();
    let dangling = dir.join("dangling.csv");
    std::os::unix::fs::symlink(dir.join("nowhere.csv"), &dangling).unwrap();
    let labels = dir.join("x.npy");
    let cases: [(&str, &Path); 3] = [("--stats", &to_file), ("--stats", &dangling), ("-o", &to_labels)];
    for (option, link) in cases {
        let mut args: Vec<&std::ffi::OsStr> = vec![input.as_ref()];
        if option == "-o" {
            args.extend([option.as_ref(), link.as_os_str()]);
        } else {
            args.extend(["-o".as_ref(), labels.as_os_str(), option.as_ref(), link.as_os_str()]);
        }
        let out = label(&args);
        assert_refused(&out, "it is a symbolic link", &link.display().to_string());
        let kind = std::fs::symlink_metadata(link).unwrap().file_type();
        assert!(kind.is_symlink(), "{}: the link was replaced", link.display());
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
    assert!(!dir.join("nowhere.csv").exists() && !labels.exists());

    let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), "-".as_ref()]);
    assert_refused(&out, "standard output", "--stats -");

    // A device node (made as `mknod -m 666 myfull c 1 7` would, which takes root).
    let node = dir.join("myfull");
    let path = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: mknod with a valid C string.
    if unsafe { libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) } == 0 {
        let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), node.as_ref()]);
        assert_refused(&out, "it is a character device", "device node");
        assert!(std::fs::symlink_metadata(&node).unwrap().file_type().is_char_device(), "the device was replaced");
    } else {
        eprintln!("skipping the device node case: mknod needs root ({})", std::io::Error::last_os_error());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A pipe the user names is written into: a FIFO, or /dev/stdout when standard output is a pipe
/// (the statistics then come with the messages); a TIFF, which needs a file to seek in, is
/// refused.
#[test]
fn a_named_pipe_is_written_into() {
    let dir = scratch("fifo");
    let input = dir.join("in.png");
    page(&input);
    let labels = dir.join("x.npy");
    let fifo = dir.join("stats.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "{}", std::io::Error::last_os_error());
    // The reader waits in a thread of its own: a build that never opens the pipe leaves it there.
    let (send, received) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || send.send(std::fs::read_to_string(fifo).unwrap()));
    }
    let mut child = ccl()
        .args(["label", "--backend", "cpu"])
        .arg(&input)
        .arg("-o")
        .arg(&labels)
        .arg("--stats")
        .arg(&fifo)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("ccl hung on the pipe");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    let csv = received.recv_timeout(Duration::from_secs(20)).expect("nothing was written into the pipe");
    assert!(csv.starts_with("label,left,top,width,height,area,cx,cy\n") && csv.lines().count() == 7, "{csv}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the pipe was replaced");

    let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), "/dev/stdout".as_ref()]);
    assert!(out.status.success() && text(&out).contains("label,left,top,width"), "{}", text(&out));

    let tiff_fifo = dir.join("labels.tif");
    let c = std::ffi::CString::new(tiff_fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = label(&[input.as_ref(), "-o".as_ref(), tiff_fifo.as_ref()]);
    assert_refused(&out, "seek", "a TIFF into a pipe");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D5: a folder volume's output naming one of its slices is refused before any work, the slice
/// kept; so is a folder batch's output that is a link.
#[test]
fn an_output_naming_an_input_slice_is_refused() {
    let dir = scratch("slices");
    let slices = dir.join("slices");
    std::fs::create_dir(&slices).unwrap();
    for name in ["s0.tif", "s1.tif", "s2.tif"] {
        page(&slices.join(name));
    }
    let before = std::fs::read(slices.join("s0.tif")).unwrap();
    for output in [slices.join("s0.tif"), dir.join("slices").join(".").join("s1.tif")] {
        let out = label(&[slices.as_ref(), "--volume".as_ref(), "-o".as_ref(), output.as_ref()]);
        assert_refused(&out, "refusing to write over the input", &output.display().to_string());
    }
    assert!(std::fs::read(slices.join("s0.tif")).unwrap() == before, "a slice was overwritten");
    assert_eq!(files_in(&slices), ["s0.tif", "s1.tif", "s2.tif"]);

    // A folder batch: OUT/s1.npy is a link to a file elsewhere.
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink(slices.join("s1.tif"), out_dir.join("s1.npy")).unwrap();
    let out = label(&[slices.as_ref(), "-o".as_ref(), out_dir.as_ref()]);
    assert_refused(&out, "it is a symbolic link", "a folder batch");
    assert_eq!(files_in(&out_dir), ["s1.npy"], "work was done");
    std::fs::remove_dir_all(dir).unwrap();
}

/// D14: a `--stats` path that cannot be written (its folder missing, a folder) is refused
/// before any work, not after the labeling.
#[test]
fn a_stats_path_is_checked_before_any_work() {
    let dir = scratch("stats-first");
    let input = dir.join("in.png");
    page(&input);
    let labels = dir.join("x.npy");
    let missing = dir.join("no-such-folder").join("s.csv");
    let cases: [(&Path, &str); 2] = [(&missing, "does not exist"), (&dir, "it is a folder")];
    for (stats, message) in cases {
        let out = label(&[input.as_ref(), "-o".as_ref(), labels.as_ref(), "--stats".as_ref(), stats.as_ref()]);
        assert_refused(&out, message, &stats.display().to_string());
        assert!(!labels.exists(), "{}: labels were written", stats.display());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A folder of `n` copies of one random 3000x3000 page, whose labels take 36 MB each as .npy.
fn large_pages(dir: &Path, n: usize) -> PathBuf {
    let pages = dir.join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let first = pages.join("img00.png");
    let out = ccl()
        .args(["generate", "--width", "3000", "--height", "3000", "--density", "40", "-o"])
        .arg(&first)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    for i in 1..n {
        std::fs::copy(&first, pages.join(format!("img{i:02}.png"))).unwrap();
    }
    pages
}

/// D6: SIGINT or SIGTERM while `ccl label DIR -o OUT` writes an output: the run ends by that
/// signal, removes its temporary file, and every output left is complete.
#[test]
fn an_interrupted_folder_run_leaves_no_temporary_file() {
    let dir = scratch("interrupt");
    let pages = large_pages(&dir, 8);
    let complete = 128 + 3000 * 3000 * 4;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let out_dir = dir.join(format!("out-{signal}"));
        let mut child = ccl()
            .args(["label", "--backend", "cpu"])
            .arg(&pages)
            .arg("-o")
            .arg(&out_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Signal as soon as a temporary file (a hidden one) is being written.
        let start = Instant::now();
        let mut sent = false;
        while start.elapsed() < Duration::from_secs(120) && child.try_wait().unwrap().is_none() {
            let writing = std::fs::read_dir(&out_dir)
                .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with('.')))
                .unwrap_or(false);
            if writing {
                // SAFETY: signalling the child this test started.
                assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
                sent = true;
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(sent, "signal {signal}: no temporary file was seen ({:?}): {stderr}", out.status);
        assert_eq!(out.status.signal(), Some(signal), "{:?}: {stderr}", out.status);
        let left = files_in(&out_dir);
        let hidden: Vec<&String> = left.iter().filter(|n| n.starts_with('.')).collect();
        assert!(hidden.is_empty(), "signal {signal}: temporary files left: {hidden:?}");
        assert!(left.len() < 8, "signal {signal}: the run was not interrupted: {left:?}");
        for name in &left {
            assert_eq!(std::fs::metadata(out_dir.join(name)).unwrap().len(), complete, "{name} is partial");
        }
        assert!(stderr.contains("stopped by SIG"), "{stderr}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// D6: the temporary files a killed run left in an output folder are removed by the next run
/// there, which says so; those of a ccl process still running are left alone.
#[test]
fn a_later_run_removes_what_a_killed_run_left() {
    let dir = scratch("stale");
    let pages = dir.join("pages");
    std::fs::create_dir(&pages).unwrap();
    page(&pages.join("a.png"));
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = format!(".img09.npy.ccl-tmp-{}-xGoxl3", gone.id());
    let live = format!(".img10.npy.ccl-tmp-{}-Ab12Cd", std::process::id());
    for name in [&stale, &live] {
        std::fs::write(out_dir.join(name), vec![7u8; 1 << 20]).unwrap();
    }
    let out = label(&[pages.as_ref(), "-o".as_ref(), out_dir.as_ref()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("removed 1 unfinished temporary file"), "{}", text(&out));
    assert_eq!(files_in(&out_dir), vec![live.clone(), "a.npy".to_string()]);
    // A single output's folder is swept too.
    std::fs::write(out_dir.join(&stale), b"partial").unwrap();
    let out = label(&[pages.join("a.png").as_ref(), "-o".as_ref(), out_dir.join("b.npy").as_ref()]);
    assert!(out.status.success() && text(&out).contains("interrupted ccl run"), "{}", text(&out));
    assert_eq!(files_in(&out_dir), vec![live, "a.npy".to_string(), "b.npy".to_string()]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs `cmd` with its address space limited to `bytes`, so that an older build that tries to
/// allocate the memory it should have refused fails at once instead of exhausting the machine.
fn limited(mut cmd: Command, bytes: u64) -> Output {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// D1: `ccl generate` refuses a side past PNG's limit of 2^31 - 1 as an invalid value (exit 2),
/// before any work, and writes nothing.
#[test]
fn generate_refuses_sizes_a_png_cannot_hold() {
    let dir = scratch("generate");
    let wide = dir.join("wide.png");
    for (w, h) in [("4294967295", "1"), ("1", "2147483648")] {
        let mut cmd = ccl();
        cmd.args(["generate", "--width", w, "--height", h, "-o"]).arg(&wide);
        let out = limited(cmd, 2 << 30);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{w}x{h}: {:?} {t}", out.status);
        assert!(t.contains("2147483647") && !t.contains("panicked"), "{w}x{h}: {t}");
        assert_eq!(files_in(&dir), Vec::<String>::new(), "{w}x{h}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// CRC-32 (ISO-HDLC, as PNG chunks use).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A PNG of `width` x `height` 8-bit gray pixels whose data is cut short: its header is all
/// that the size and memory checks read.
fn png_header(path: &Path, width: u32, height: u32) {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        png.extend((data.len() as u32).to_be_bytes());
        let body = [kind, data].concat();
        png.extend(&body);
        png.extend(crc32(&body).to_be_bytes());
    };
    let mut ihdr = Vec::new();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 0, 0, 0, 0]);
    chunk(b"IHDR", &ihdr);
    chunk(b"IDAT", &[0x78, 0x9c]);
    chunk(b"IEND", &[]);
    std::fs::write(path, png).unwrap();
}

/// The "needs about N GB" of a memory refusal, in bytes.
fn needed_bytes(text: &str) -> Option<f64> {
    let rest = &text[text.find("needs about ")? + "needs about ".len()..];
    let mut words = rest.split_whitespace();
    let value: f64 = words.next()?.parse().ok()?;
    let unit = match words.next()? {
        "GB" => 1e9,
        "MB" => 1e6,
        _ => 1e3,
    };
    Some(value * unit)
}

/// D1: labeling a 4294967295x1 PNG is refused with the memory it needs, counting the decoder's
/// row buffers (a single-row PNG decoded at about 12 bytes a pixel), instead of growing until the
/// out-of-memory killer ends it. The address space is limited to 8 GiB, which the memory check
/// counts, so the refusal is the same on any machine.
#[test]
fn labeling_a_png_wider_than_memory_is_refused_with_its_need() {
    let dir = scratch("wide");
    let wide = dir.join("wide.png");
    png_header(&wide, u32::MAX, 1);
    let mut cmd = ccl();
    cmd.arg("label").arg(&wide).args(["--backend", "cpu", "-o"]).arg(dir.join("x.npy"));
    let out = limited(cmd, 8 << 30);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{:?}: {t}", out.status);
    assert!(t.contains("of host memory, but only") && !t.contains("panicked"), "{t}");
    let needed = needed_bytes(&t).unwrap_or(0.0);
    assert!(needed >= 12.0 * f64::from(u32::MAX), "the estimate leaves out the decoder's buffers: {t}");
    assert_eq!(files_in(&dir), ["wide.png"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// D1, the other readers: a `.npy` volume (and image) whose header promises more than memory
/// holds is refused with the memory it needs before any data is read (as a TIFF's pages and a
/// folder's slices are, through the same check), under an address-space limit of 2 GiB.
#[test]
fn npy_arrays_larger_than_memory_are_refused_before_reading() {
    let dir = scratch("big-npy");
    for (name, shape) in [("volume.npy", vec![4usize, 30000, 30000]), ("image.npy", vec![60000usize, 60000])] {
        let input = dir.join(name);
        // The header alone: the data the shape promises is never read.
        std::fs::write(&input, common::npy_bytes("|u1", &shape, false, &[])).unwrap();
        let mut cmd = ccl();
        cmd.arg("label").arg(&input).args(["--backend", "cpu", "-o"]).arg(dir.join("x.npy"));
        let out = limited(cmd, 2 << 30);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {:?}: {t}", out.status);
        assert!(t.contains("of host memory, but only") && t.contains(name), "{name}: {t}");
        let needed = needed_bytes(&t).unwrap_or(0.0);
        assert!(needed >= 5.0 * shape.iter().product::<usize>() as f64, "{name}: labels not counted: {t}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
