//! An on-disk cache of compiled kernels, shared by later processes: a backend looks a build up
//! by a [`CacheKey`] made of everything that changes the binary (source, defines and options,
//! device, driver and compiler versions) and stores what it compiled on a miss.
//!
//! Where: `CCL_CACHE_DIR` when set, else the user's cache directory (`~/.cache` on Linux, as the
//! `dirs` crate finds it) under `ccl/`; `CCL_CACHE=off` disables the cache
//! ([`KernelCache::from_env`]).
//!
//! An entry is one file named after the key's SHA-256, `<kind>-<hex>.bin`, holding a header and
//! the payload:
//!
//! | bytes | field |
//! | --- | --- |
//! | 16 | magic, `ccl kernel cache` |
//! | 4 | format version ([`FORMAT_VERSION`]), little endian |
//! | 32 | the key's SHA-256 |
//! | 4 | length of the key's description (UTF-8, for people debugging the cache) |
//! | n | the description: one `name: value` line per key part |
//! | 8 | payload length, little endian |
//! | 32 | the payload's SHA-256 |
//! | m | the payload |
//!
//! [`KernelCache::load`] checks all of it and answers `None` for anything that is not exactly a
//! complete entry of this format for this key (missing, truncated, corrupt, another version or
//! another key), so a bad entry is rebuilt, never trusted. [`KernelCache::store`] writes a
//! temporary file in the same folder and renames it over the entry, so readers never see a
//! partial entry and concurrent writers (threads or processes) leave one valid entry.

use std::any::Any;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::{Program, Result};

/// Version of the entry format; an entry of another version is a miss.
pub const FORMAT_VERSION: u32 = 1;

const MAGIC: &[u8; 16] = b"ccl kernel cache";
/// Entries larger than this are not read (no kernel binary comes near it).
const MAX_ENTRY_BYTES: u64 = 1 << 30;
/// Longest description written into an entry's header.
const MAX_DESCRIPTION_BYTES: usize = 64 * 1024;
/// Key part values up to this length appear verbatim in the description, longer ones as a hash.
const SHOWN_VALUE_BYTES: usize = 160;

/// What identifies one compiled kernel binary: a kind (e.g. `opencl`, `cuda`) and named parts,
/// hashed with SHA-256 in order. Two keys are equal only when kind, names, values and order are.
///
/// ```
/// use ccl_backend::CacheKey;
/// let key = CacheKey::new("opencl").part("source", "kernel void k() {}").part("options", "-D N=4");
/// assert_eq!(key.hex().len(), 64);
/// ```
#[derive(Clone)]
pub struct CacheKey {
    kind: String,
    hasher: Sha256,
    description: String,
}

impl CacheKey {
    /// A key of `kind`, which also prefixes the entry's file name (characters other than ASCII
    /// letters, digits, `-` and `_` become `_` there).
    pub fn new(kind: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"ccl kernel cache key\0");
        hash_field(&mut hasher, kind.as_bytes());
        Self { kind: kind.to_string(), hasher, description: format!("kind: {kind}\n") }
    }

    /// Adds a named part (its name and value are both hashed, with their lengths, so no two
    /// different part lists hash alike by concatenation).
    pub fn part(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        let value = value.as_ref();
        hash_field(&mut self.hasher, name.as_bytes());
        hash_field(&mut self.hasher, value);
        let shown = std::str::from_utf8(value)
            .ok()
            .filter(|v| v.len() <= SHOWN_VALUE_BYTES && !v.chars().any(char::is_control));
        match shown {
            Some(text) => {
                let _ = writeln!(self.description, "{name}: {text}");
            }
            None => {
                let digest = hex(&Sha256::digest(value));
                let _ = writeln!(self.description, "{name}: {} bytes, sha256 {digest}", value.len());
            }
        }
        self
    }

    /// The kind given to [`CacheKey::new`].
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The key's SHA-256.
    pub fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }

    /// The key's SHA-256 in lowercase hexadecimal.
    pub fn hex(&self) -> String {
        hex(&self.digest())
    }

    /// The parts in readable form, one `name: value` line each (long values as length and hash).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The entry's file name: `<kind>-<hex>.bin`.
    pub fn file_name(&self) -> String {
        let kind: String = self
            .kind
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        format!("{kind}-{}.bin", self.hex())
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheKey").field("kind", &self.kind).field("sha256", &self.hex()).finish()
    }
}

fn hash_field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// A kernel cache folder that could not keep an entry, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreFailure {
    /// The cache folder.
    pub dir: PathBuf,
    /// The error of creating the folder or writing the entry.
    pub reason: String,
}

/// The first [`StoreFailure`] of this process.
static STORE_FAILURE: OnceLock<StoreFailure> = OnceLock::new();

/// Where compiled kernels are kept, or a disabled cache. Cheap to clone.
///
/// A cache never fails a build: a folder that cannot be read or written only makes every
/// lookup a miss, and the first entry it could not keep is told by
/// [`KernelCache::store_failure`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelCache {
    dir: Option<PathBuf>,
}

impl KernelCache {
    /// The cache the environment asks for: disabled when `CCL_CACHE` is `off` (or `0`, `false`,
    /// `no`, `disabled`, in any case); else the folder `CCL_CACHE_DIR` when it is set and not
    /// empty; else `ccl/` in the user's cache directory; disabled when there is none.
    pub fn from_env() -> Self {
        let cache = std::env::var_os("CCL_CACHE");
        let dir = std::env::var_os("CCL_CACHE_DIR");
        Self::from_settings(cache.as_deref(), dir.as_deref(), dirs::cache_dir())
    }

    /// [`KernelCache::from_env`]'s rule on given values: `cache` is `CCL_CACHE`, `cache_dir`
    /// is `CCL_CACHE_DIR` and `user_cache_dir` the platform's user cache directory (the cache
    /// then lives in its `ccl/` folder).
    pub fn from_settings(cache: Option<&OsStr>, cache_dir: Option<&OsStr>, user_cache_dir: Option<PathBuf>) -> Self {
        let off = cache.is_some_and(|v| {
            let v = v.to_string_lossy();
            ["off", "0", "false", "no", "disabled"].iter().any(|o| v.trim().eq_ignore_ascii_case(o))
        });
        if off {
            return Self::disabled();
        }
        match cache_dir.filter(|d| !d.is_empty()) {
            Some(dir) => Self::at(dir),
            None => Self { dir: user_cache_dir.map(|d| d.join("ccl")) },
        }
    }

    /// A cache in folder `dir` (created when the first entry is stored).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: Some(dir.into()) }
    }

    /// A cache that finds nothing and keeps nothing.
    pub fn disabled() -> Self {
        Self { dir: None }
    }

    /// The cache's folder, `None` when disabled.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Whether the cache is in use.
    pub fn is_enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// The file that holds (or would hold) `key`'s entry; `None` when disabled.
    pub fn entry_path(&self, key: &CacheKey) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(key.file_name()))
    }

    /// The payload stored for `key`, when a complete, intact entry of this format for this key
    /// is there; `None` for anything else (never an error, never a panic).
    pub fn load(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.entry_path(key)?;
        let file = std::fs::File::open(&path).ok()?;
        if file.metadata().ok()?.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut io::Read::take(file, MAX_ENTRY_BYTES + 1), &mut bytes).ok()?;
        parse_entry(&bytes, &key.digest())
    }

    /// Builds a program through this cache, as every backend does: when the cache is enabled
    /// and holds an intact entry for `key()` that `from_binary` accepts (a driver may refuse a
    /// binary), that program, marked as from the cache; otherwise `compile(wants_binary)`'s,
    /// whose binary (asked for only when the cache is enabled) is stored, a failed store being
    /// recorded for [`KernelCache::store_failure`] (the next process compiles again). The
    /// program records the build's host time.
    pub fn build<T: Any + Send + Sync>(
        &self,
        key: impl FnOnce() -> CacheKey,
        from_binary: impl FnOnce(Vec<u8>) -> Option<T>,
        compile: impl FnOnce(bool) -> Result<(T, Option<Vec<u8>>)>,
    ) -> Result<Program> {
        let started = Instant::now();
        let elapsed_ms = || started.elapsed().as_secs_f64() * 1e3;
        let key = self.is_enabled().then(key);
        if let Some(native) = key.as_ref().and_then(|k| self.load(k)).and_then(from_binary) {
            return Ok(Program::new(native).with_origin(true, elapsed_ms()));
        }
        let (native, binary) = compile(key.is_some())?;
        if let (Some(key), Some(binary)) = (&key, binary) {
            if let Err(e) = self.store(key, &binary) {
                let dir = self.dir.clone().unwrap_or_default();
                let _ = STORE_FAILURE.set(StoreFailure { dir, reason: e.to_string() });
            }
        }
        Ok(Program::new(native).with_origin(false, elapsed_ms()))
    }

    /// The first failure of this process to keep a compiled program in a kernel cache (by
    /// [`KernelCache::build`]): the builds went on, but later processes compile again. `None`
    /// when every store succeeded.
    pub fn store_failure() -> Option<&'static StoreFailure> {
        STORE_FAILURE.get()
    }

    /// Stores `payload` as `key`'s entry, replacing any entry there: written to a temporary file
    /// in the cache folder, then renamed over the entry. A disabled cache stores nothing and
    /// answers `Ok`. Builds ignore the error: a cache that cannot be written is only slower.
    pub fn store(&self, key: &CacheKey, payload: &[u8]) -> io::Result<()> {
        let Some(dir) = self.dir.as_deref() else {
            return Ok(());
        };
        let path = dir.join(key.file_name());
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").suffix(".part").tempfile_in(dir)?;
        let mut description = key.description().as_bytes();
        if description.len() > MAX_DESCRIPTION_BYTES {
            description = &description[..MAX_DESCRIPTION_BYTES];
        }
        let mut header = Vec::with_capacity(96 + description.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        header.extend_from_slice(&key.digest());
        header.extend_from_slice(&(description.len() as u32).to_le_bytes());
        header.extend_from_slice(description);
        header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        header.extend_from_slice(&Sha256::digest(payload));
        let file = tmp.as_file_mut();
        file.write_all(&header)?;
        file.write_all(payload)?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The payload of an entry's bytes, when they are exactly one entry of this format for `key`.
fn parse_entry(bytes: &[u8], key: &[u8; 32]) -> Option<Vec<u8>> {
    let mut rest = bytes;
    let mut take = |n: usize| -> Option<&[u8]> {
        if rest.len() < n {
            return None;
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    };
    if take(MAGIC.len())? != MAGIC {
        return None;
    }
    if u32::from_le_bytes(take(4)?.try_into().ok()?) != FORMAT_VERSION {
        return None;
    }
    if take(32)? != key {
        return None;
    }
    let description_len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
    take(description_len)?;
    let payload_len = u64::from_le_bytes(take(8)?.try_into().ok()?);
    let digest: [u8; 32] = take(32)?.try_into().ok()?;
    let payload = take(usize::try_from(payload_len).ok()?)?;
    if !rest.is_empty() || Sha256::digest(payload).as_slice() != digest {
        return None;
    }
    Some(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(source: &str) -> CacheKey {
        CacheKey::new("test").part("source", source).part("options", "-D A=1")
    }

    #[test]
    fn parts_are_delimited() {
        let a = CacheKey::new("k").part("a", "bc");
        let b = CacheKey::new("k").part("ab", "c");
        let c = CacheKey::new("k").part("a", "b").part("", "c");
        assert_ne!(a.hex(), b.hex());
        assert_ne!(a.hex(), c.hex());
        assert_eq!(a.hex(), CacheKey::new("k").part("a", "bc").hex());
        assert_ne!(a.hex(), CacheKey::new("j").part("a", "bc").hex());
    }

    #[test]
    fn every_prefix_of_an_entry_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let k = key("x");
        cache.store(&k, b"payload bytes").unwrap();
        let bytes = std::fs::read(cache.entry_path(&k).unwrap()).unwrap();
        assert_eq!(parse_entry(&bytes, &k.digest()).as_deref(), Some(&b"payload bytes"[..]));
        for n in 0..bytes.len() {
            assert_eq!(parse_entry(&bytes[..n], &k.digest()), None, "prefix of {n} bytes");
        }
        for i in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0x01;
            let parsed = parse_entry(&flipped, &k.digest());
            // Only the description is not checked (it is for people, not for the lookup).
            let in_description = (56..56 + k.description().len()).contains(&i);
            assert!(parsed.is_none() || in_description, "flipped byte {i} accepted");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(parse_entry(&longer, &k.digest()), None);
        assert_eq!(parse_entry(&bytes, &key("y").digest()), None);
    }

    #[test]
    fn a_disabled_cache_keeps_nothing() {
        let cache = KernelCache::disabled();
        cache.store(&key("x"), b"p").unwrap();
        assert_eq!(cache.load(&key("x")), None);
        assert_eq!(cache.entry_path(&key("x")), None);
    }

    #[test]
    fn file_names_are_safe() {
        let name = CacheKey::new("../a b").file_name();
        assert!(name.starts_with("___a_b-") && name.ends_with(".bin"), "{name}");
    }
}
