//! What the command line's tests share: the `ccl` binary, running it, fresh folders, output text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `ccl` binary: `CCL_BIN` when set (binaries copied to another machine, or an older build
/// to compare with), else cargo's.
pub fn ccl() -> Command {
    Command::new(std::env::var("CCL_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ccl").to_string()))
}

/// Standard output and error together.
pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `cmd`: its output and its standard output and error together; never a panic.
pub fn run_checked(cmd: &mut Command) -> (Output, String) {
    let out = cmd.output().expect("run ccl");
    let text = text(&out);
    assert!(!text.contains("panicked"), "ccl panicked:\n{text}");
    (out, text)
}

/// A fresh, empty folder for one test's files, named after the test file and `name`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccl-{}-{}-{name}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names of the entries of `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}
