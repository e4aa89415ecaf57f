//! Why a backend's driver library could not be loaded, for the error a caller sees: absent, or
//! present but broken.

/// The first of `candidates` (library names or paths, in the order a backend tries them) that
/// exists but fails to load, with the dynamic linker's message (e.g. "invalid ELF header",
/// "file too short"); `None` when every candidate is simply absent.
pub fn broken_library<S: AsRef<str>>(candidates: &[S]) -> Option<(String, String)> {
    use std::error::Error as _;
    candidates.iter().map(AsRef::as_ref).find_map(|candidate| {
        // SAFETY: the same load the backend performs; it runs only the library's constructors.
        let error = unsafe { libloading::Library::new(candidate) }.err()?;
        // libloading keeps the dynamic linker's message in the error's source.
        let text = error.source().map_or_else(|| error.to_string(), |s| s.to_string());
        let absent = text.contains("No such file") || text.contains("not found") || text.contains("cannot find");
        (!absent).then(|| (candidate.to_string(), text))
    })
}
