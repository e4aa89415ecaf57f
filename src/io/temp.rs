//! The temporary files outputs are written through: `.NAME.ccl-tmp-PID-XXXXXX` beside the
//! target, locked (`flock`) by the writing process and listed while they exist, so that an
//! interrupted run removes its own ([`remove_live_temporaries`]) and a later run removes those a killed run
//! left behind ([`remove_stale_temporaries`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tempfile::NamedTempFile;

/// What every temporary file's name holds after `.NAME`: `.NAME.ccl-tmp-PID-XXXXXX`.
const MARK: &str = ".ccl-tmp-";

/// This process's temporary files that exist now; `None` once [`remove_live_temporaries`] has run, after
/// which no new one is made.
static LIVE: Mutex<Option<BTreeSet<PathBuf>>> = Mutex::new(Some(BTreeSet::new()));

fn live() -> std::sync::MutexGuard<'static, Option<BTreeSet<PathBuf>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A listed, locked temporary file: removed and unlisted when dropped, unless persisted.
pub(super) struct Temp {
    file: Option<NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    /// Makes the temporary file of `target` in `dir` (the target's folder).
    pub(super) fn new(target: &Path, dir: &Path) -> io::Result<Self> {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
        let prefix = format!(".{name}{MARK}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).rand_bytes(6);
        #[cfg(unix)]
        {
            // The usual mode of a new file (0666 less the umask), not tempfile's private 0600.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // Made and listed under the lock, so an interruption never misses one.
        let mut live = live();
        let Some(set) = live.as_mut() else {
            return Err(io::Error::new(ErrorKind::Interrupted, "interrupted"));
        };
        let file = builder.tempfile_in(dir)?;
        lock(file.as_file())?;
        let path = file.path().to_path_buf();
        set.insert(path.clone());
        Ok(Temp { file: Some(file), path })
    }

    /// The open file.
    pub(super) fn as_file_mut(&mut self) -> &mut File {
        self.file.as_mut().expect("a temporary file until persisted").as_file_mut()
    }

    /// Renames the file over `target`.
    pub(super) fn persist(mut self, target: &Path) -> io::Result<()> {
        let file = self.file.take().expect("a temporary file until persisted");
        let result = file.persist(target).map(drop).map_err(|e| e.error);
        unlist(&self.path);
        result
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // Dropping the NamedTempFile removed it.
            unlist(&self.path);
        }
    }
}

fn unlist(path: &Path) {
    if let Some(set) = live().as_mut() {
        set.remove(path);
    }
}

/// Takes the lock that marks a temporary file as being written (held until the process closes
/// it or ends); `Ok(false)` when another process holds it.
fn lock(file: &File) -> io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor this `File` owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

/// A listed, locked temporary folder (an output that is a folder, such as a zarr array), named
/// as the files are: removed with its contents and unlisted when dropped, unless persisted.
#[cfg(feature = "zarr")]
pub(super) struct TempFolder {
    dir: Option<tempfile::TempDir>,
    /// The folder opened, holding its lock.
    _lock: File,
    path: PathBuf,
}

#[cfg(feature = "zarr")]
impl TempFolder {
    /// Makes the temporary folder of `target` in `dir` (the target's folder).
    pub(super) fn new(target: &Path, dir: &Path) -> io::Result<Self> {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
        let prefix = format!(".{name}{MARK}{}-", std::process::id());
        let mut live = live();
        let Some(set) = live.as_mut() else {
            return Err(io::Error::new(ErrorKind::Interrupted, "interrupted"));
        };
        let folder = tempfile::Builder::new().prefix(&prefix).rand_bytes(6).tempdir_in(dir)?;
        let lock_file = File::open(folder.path())?;
        lock(&lock_file)?;
        let path = folder.path().to_path_buf();
        set.insert(path.clone());
        Ok(TempFolder { dir: Some(folder), _lock: lock_file, path })
    }

    /// The folder.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the folder over `target`; an existing target is moved aside first (a folder is
    /// not renamed over a full one) and removed once the new one is in place, or put back if
    /// the rename fails.
    pub(super) fn persist(mut self, target: &Path) -> io::Result<()> {
        let folder = self.dir.take().expect("a temporary folder until persisted").keep();
        let result = replace(&folder, target);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&folder);
        }
        unlist(&self.path);
        result
    }
}

/// Renames `folder` over `target` (see [`TempFolder::persist`]).
#[cfg(feature = "zarr")]
fn replace(folder: &Path, target: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(target).is_err() {
        return std::fs::rename(folder, target);
    }
    let aside = folder.with_extension("old");
    std::fs::rename(target, &aside)?;
    if let Err(e) = std::fs::rename(folder, target) {
        let _ = std::fs::rename(&aside, target);
        return Err(e);
    }
    if aside.is_dir() {
        std::fs::remove_dir_all(&aside)
    } else {
        std::fs::remove_file(&aside)
    }
}

#[cfg(feature = "zarr")]
impl Drop for TempFolder {
    fn drop(&mut self) {
        if self.dir.take().is_some() {
            // Dropping the TempDir removed it.
            unlist(&self.path);
        }
    }
}

/// Removes a temporary file, or a temporary folder with its contents.
fn remove(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path)?.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// Removes every temporary file and folder this process has now and makes no new one: for a
/// signal handler about to end the process. Returns how many were removed.
pub fn remove_live_temporaries() -> usize {
    let taken = live().take().unwrap_or_default();
    taken.iter().filter(|p| remove(p).is_ok()).count()
}

/// Removes the temporary files (and folders) in `dir` that a ccl process which no longer runs
/// left behind (killed while writing): those named `.NAME.ccl-tmp-PID-XXXXXX` whose PID is not a
/// running process and whose lock nobody holds. Returns their names.
pub fn remove_stale_temporaries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(writer_pid) else { continue };
        let kind = entry.file_type();
        if pid == std::process::id() || running(pid) || !kind.is_ok_and(|t| t.is_file() || t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = File::open(&path) else { continue };
        if lock(&file).unwrap_or(false) && remove(&path).is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// The PID in a temporary file's name `.NAME.ccl-tmp-PID-XXXXXX`.
fn writer_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, tail) = rest.rsplit_once(MARK)?;
    let (pid, random) = tail.split_once('-')?;
    (!random.is_empty()).then_some(())?;
    pid.parse().ok()
}

/// Whether a process of this PID runs (or exists, owned by another user).
fn running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    exists || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_pid_is_read_from_the_name() {
        assert_eq!(writer_pid(".img.npy.ccl-tmp-1234-aB3dE9"), Some(1234));
        assert_eq!(writer_pid(".a.ccl-tmp-.b.ccl-tmp-77-xyzxyz"), Some(77));
        for other in ["img.npy.ccl-tmp-1234-aB3dE9", ".img.npy.xGoxl3.tmp", ".img.npy.ccl-tmp-12x-ab", ".x.ccl-tmp-5-"]
        {
            assert_eq!(writer_pid(other), None, "{other}");
        }
    }
}
