//! The entries of an input folder: which are images to read, which are other files, and which
//! look like images but cannot be read as files (named, with why, so that no input is skipped
//! in silence).

use std::fs::Metadata;
use std::path::{Path, PathBuf};

use image::ImageFormat;

use crate::{Error, Result};

/// The entries directly in a folder (not in its subfolders), each list sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FolderListing {
    /// Files (or links to files) with an image extension or `.npy`: the inputs.
    pub images: Vec<PathBuf>,
    /// Entries without an image extension, which are not read.
    pub others: Vec<PathBuf>,
    /// Entries with an image extension that cannot be read as a file, with why: a dangling or
    /// looping symbolic link, a FIFO, socket or device, an entry whose type cannot be read.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Lists the entries directly in `folder` (see [`FolderListing`]); subfolders are left out. A
/// folder that cannot be listed is an [`Error::FileRead`].
pub fn list_images(folder: &Path) -> Result<FolderListing> {
    let fail = |e: std::io::Error| Error::FileRead { path: folder.display().to_string(), reason: e.to_string() };
    let mut listing = FolderListing::default();
    for entry in std::fs::read_dir(folder).map_err(fail)? {
        let path = entry.map_err(fail)?.path();
        let image = ImageFormat::from_path(&path).is_ok() || super::npy::is_npy(&path);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) if !image => listing.others.push(path),
            Ok(m) if m.is_file() => listing.images.push(path),
            Ok(m) => listing.unreadable.push((path, format!("not a regular file ({})", kind(&m)))),
            Err(_) if !image => listing.others.push(path),
            Err(e) => {
                let why = unfollowable(&path, &e);
                listing.unreadable.push((path, why));
            }
        }
    }
    listing.images.sort();
    listing.others.sort();
    listing.unreadable.sort();
    Ok(listing)
}

/// Why an entry whose metadata cannot be read (`e`) is not a file: a dangling or looping
/// symbolic link, or `e` itself.
fn unfollowable(path: &Path, e: &std::io::Error) -> String {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
    match (link, e.kind()) {
        (true, std::io::ErrorKind::NotFound) => format!("a dangling symbolic link (to {target}, which does not exist)"),
        (true, _) => format!("a symbolic link that cannot be followed (to {target}: {e})"),
        (false, _) => e.to_string(),
    }
}

/// What kind of entry other than a file or folder `m` describes.
fn kind(m: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    let _ = m;
    "a special file"
}
