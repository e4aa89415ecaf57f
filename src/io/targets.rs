//! Every output of a command, checked together before any work: each must be a regular file
//! (new or existing) in an existing folder, or a pipe the user named; none may be an input (by
//! any name or hard link, a file of an input folder included) or another output.

use std::collections::HashMap;
use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The inputs a command reads from `path`: the path itself and, for a folder, every entry
/// directly in it (the slices of a folder volume, the images of a folder batch).
pub fn input_files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(path) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files
}

/// Checks the `outputs` of one command, each `(option, path)` (e.g. `("--stats", stats.csv)`),
/// against each other and against `inputs` (see [`input_files`]), before any work:
///
/// - `-` is refused (ccl writes no file to standard output);
/// - an existing path must be a regular file, which is replaced whole, or a pipe (a FIFO, or a
///   link to one), which is written into, but not for a TIFF (it needs a seekable file);
///   symbolic links to anything else, folders, devices and sockets are refused
///   ([`Error::OutputRefused`]);
/// - a new path's folder must exist ([`Error::ImageWrite`]);
/// - an output that is an input is refused ([`Error::OutputIsInput`]);
/// - two outputs naming one file are refused ([`Error::OutputsCollide`]).
pub fn check_targets(outputs: &[(&str, &Path)], inputs: &[PathBuf]) -> Result<()> {
    let inputs: HashMap<(u64, u64), &PathBuf> = inputs.iter().filter_map(|i| Some((identity(i)?, i))).collect();
    let mut seen: HashMap<PathBuf, &str> = HashMap::new();
    for &(option, path) in outputs {
        check_kind(path)?;
        if let Some(input) = identity(path).and_then(|file| inputs.get(&file)) {
            return Err(Error::OutputIsInput { path: input.display().to_string() });
        }
        if let Some(first) = seen.insert(entry_of(path), option) {
            return Err(Error::OutputsCollide {
                path: path.display().to_string(),
                first: first.to_string(),
                second: option.to_string(),
            });
        }
    }
    Ok(())
}

/// The device and inode of the file `path` names (following links), when it exists: read from
/// its metadata, never by opening it (opening a pipe would wait for a writer).
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `path` exists and is a pipe (or a link to one): written into, not replaced.
pub(super) fn is_pipe(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Refuses an output path that is not a regular file, a new name in an existing folder, or a
/// pipe for a format written front to back.
fn check_kind(path: &Path) -> Result<()> {
    let refuse = |reason: String| Error::OutputRefused { path: path.display().to_string(), reason };
    if path.as_os_str() == "-" {
        return Err(refuse(
            "'-' would be standard output, which ccl does not write files to: give a file name (./- for a file named \
             '-')"
                .into(),
        ));
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        let parent = parent_dir(path);
        if !parent.is_dir() {
            return Err(Error::ImageWrite {
                path: path.display().to_string(),
                reason: format!("the folder {} does not exist", parent.display()),
            });
        }
        return Ok(());
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    if is_pipe(path) {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        if ext == "tif" || ext == "tiff" {
            return Err(refuse("it is a pipe, and a TIFF is written to a file it can seek in".into()));
        }
        return Ok(());
    }
    if kind.is_symlink() {
        let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        let to = std::fs::metadata(path).map(|m| describe(m.file_type())).unwrap_or("nothing that exists");
        return Err(refuse(format!(
            "it is a symbolic link (to {target}, {to}); outputs are written as new regular files, which would \
             replace the link: give the file's own path or another name"
        )));
    }
    Err(refuse(format!(
        "it is {}, not a regular file; outputs are written as new regular files, which would replace it: give \
         another name",
        describe(kind)
    )))
}

/// What a file type is, in words ("a folder", "a character device", ...).
fn describe(kind: FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else if kind.is_file() {
        "a regular file"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_fifo() {
        "a pipe"
    } else {
        "not a regular file"
    }
}

/// The directory entry a path names: its folder, resolved, and its file name.
fn entry_of(path: &Path) -> PathBuf {
    let folder = parent_dir(path);
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    match path.file_name() {
        Some(name) => folder.join(name),
        None => folder,
    }
}

/// The folder a path's file is in (`.` for a bare name).
pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}
