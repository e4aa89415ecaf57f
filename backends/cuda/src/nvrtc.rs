//! Compiling kernel sources with NVRTC: PTX for a virtual architecture, a CUBIN for a real one,
//! the architecture that matches a device, and the images the kernel cache stores.

use std::ffi::{c_char, CStr, CString};

use ccl_backend::{Define, Dialect, Error, Result};
use cudarc::nvrtc::result::NvrtcError;
use cudarc::nvrtc::sys::{nvrtcProgram, nvrtcResult};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

use crate::discovery::nvrtc_present;

/// Compiles `source` to PTX with NVRTC with `defines`; `arch` is a virtual architecture such as
/// `compute_90`, or NVRTC's default. Needs no GPU.
pub fn compile_ptx(source: &str, defines: &[Define], arch: Option<&'static str>) -> Result<String> {
    nvrtc_present()?;
    let options = defines.iter().map(|d| d.option(Dialect::Cuda)).collect();
    let opts = CompileOptions { options, arch, ..Default::default() };
    let build_error = |log: String| Error::Build { device: "NVRTC".into(), log };
    match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, nvrtc, .. }) => {
            let log = log.to_string_lossy().into_owned();
            Err(build_error(if log.trim().is_empty() { format!("{nvrtc:?}") } else { log }))
        }
        Err(e) => Err(build_error(format!("{e:?}"))),
    }
}

/// The NVRTC virtual architecture matching a compute capability, when NVRTC 13 knows it.
pub(crate) fn arch_for(cc: (i32, i32)) -> Option<&'static str> {
    Some(match cc {
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 7) => "compute_87",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (12, 0) => "compute_120",
        _ => return None,
    })
}

/// The NVRTC real architecture (`sm_XY`, for a CUBIN) matching a compute capability, for the
/// capabilities [`arch_for`] knows.
pub(crate) fn sm_arch_for(cc: (i32, i32)) -> Option<String> {
    arch_for(cc).map(|arch| arch.replace("compute_", "sm_"))
}

/// Compiles `source` to a CUBIN (an ELF image of machine code) for real architecture `sm_arch`,
/// e.g. `sm_90`, with NVRTC and `defines`. Needs no GPU.
pub fn compile_cubin(source: &str, defines: &[Define], sm_arch: &str) -> Result<Vec<u8>> {
    nvrtc_present()?;
    nvrtc_cubin(source, &cubin_options(defines, sm_arch)).map_err(|failure| failure.into_error())
}

/// NVRTC options for a CUBIN of real architecture `sm_arch` with `defines`.
pub(crate) fn cubin_options(defines: &[Define], sm_arch: &str) -> Vec<String> {
    let mut options: Vec<String> = defines.iter().map(|d| d.option(Dialect::Cuda)).collect();
    options.push(format!("--gpu-architecture={sm_arch}"));
    options
}

/// Why NVRTC produced no CUBIN: its result code and log.
pub(crate) struct NvrtcFailure {
    pub(crate) code: nvrtcResult,
    log: String,
}

impl NvrtcFailure {
    pub(crate) fn into_error(self) -> Error {
        let log = if self.log.trim().is_empty() { format!("{:?}", self.code) } else { self.log };
        Error::Build { device: "NVRTC".into(), log }
    }
}

/// An NVRTC program, destroyed when dropped.
struct NvrtcProgram(nvrtcProgram);

impl Drop for NvrtcProgram {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once, here.
        let _ = unsafe { cudarc::nvrtc::result::destroy_program(self.0) };
    }
}

/// Compiles `source` with NVRTC `options` (which name a real architecture) and returns the
/// CUBIN. The caller has checked that NVRTC is present.
pub(crate) fn nvrtc_cubin(source: &str, options: &[String]) -> std::result::Result<Vec<u8>, NvrtcFailure> {
    use cudarc::nvrtc::{result, sys};
    let invalid = |what: &str| NvrtcFailure { code: nvrtcResult::NVRTC_ERROR_INVALID_INPUT, log: what.to_string() };
    let src = CString::new(source).map_err(|_| invalid("the kernel source contains a NUL byte"))?;
    if options.iter().any(|o| o.contains('\0')) {
        return Err(invalid("a compile option contains a NUL byte"));
    }
    let fail = |NvrtcError(code)| NvrtcFailure { code, log: String::new() };
    let program = NvrtcProgram(result::create_program(&src, Some(c"ccl.cu")).map_err(fail)?);
    // SAFETY: the program is live until `program` drops, and `src` outlives it.
    if let Err(NvrtcError(code)) = unsafe { result::compile_program(program.0, options) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(program.0) }.map(|log| c_text(&log)).unwrap_or_default();
        return Err(NvrtcFailure { code, log });
    }
    let mut size = 0usize;
    // SAFETY: as above; NVRTC writes the CUBIN's size, then that many bytes into `cubin`.
    unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) }.result().map_err(fail)?;
    if size == 0 {
        return Err(NvrtcFailure {
            code: nvrtcResult::NVRTC_ERROR_INVALID_OPTION,
            log: "NVRTC produced no CUBIN (the architecture is not a real one)".into(),
        });
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds `size` bytes, the size NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) }.result().map_err(fail)?;
    Ok(cubin)
}

/// Text of a NUL-terminated C buffer (all of it when there is no NUL).
fn c_text(bytes: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u8>(), bytes.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// NVRTC's version, e.g. "13.0" (empty when it cannot say).
pub(crate) fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; callers have checked that NVRTC is present.
    match unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }.result() {
        Ok(()) => format!("{major}.{minor}"),
        Err(_) => String::new(),
    }
}

/// The first bytes of an ELF file, as a CUBIN is.
pub(crate) const ELF_MAGIC: &[u8] = b"\x7fELF";

/// A compiled kernel image: a CUBIN (ELF) or PTX text, as stored in the kernel cache.
pub(crate) fn image_to_module_source(image: Vec<u8>) -> Option<Ptx> {
    if image.starts_with(ELF_MAGIC) {
        Some(Ptx::from_binary(image))
    } else {
        // PTX: text without NUL bytes (the driver reads it as a C string).
        String::from_utf8(image).ok().filter(|ptx| !ptx.contains('\0')).map(Ptx::from_src)
    }
}
