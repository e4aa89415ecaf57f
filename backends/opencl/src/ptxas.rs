//! NVIDIA OpenCL programs assembled by the CUDA toolkit's `ptxas`, where one is installed.
//!
//! NVIDIA's OpenCL compiler writes PTX, and the driver assembles it into slower machine code
//! than `ptxas` makes of the same PTX: measured on an H100, the fast Nick kernel ran 10-16 %
//! slower from the driver's assembly, and 3-6 % faster than CUDA's own build from ptxas's
//! (`kernels/binarize.kernel`, docs/cli.md). NVIDIA OpenCL takes a CUBIN as a program binary, so where
//! a `ptxas` is found, [`crate::Runtime`] builds each program from source, assembles the PTX the
//! driver returns with it, and rebuilds the program from the CUBIN. Whatever fails on that way
//! (no `.target` in the binary, ptxas refusing a PTX newer than itself, a driver refusing a
//! CUBIN newer than itself) leaves the program the driver built from source.
//!
//! Where ptxas is looked for: `CCL_PTXAS` (a path, or `off` to never use one), then
//! `$CUDA_PATH/bin`, `$CUDA_HOME/bin`, `PATH`, and `/usr/local/cuda/bin`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A `ptxas` that ran: its path and the version it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptxas {
    path: PathBuf,
    version: String,
}

impl Ptxas {
    /// The ptxas of this process (looked for once, from the environment as the module says), or
    /// `None` where there is none, or `CCL_PTXAS` is `off`.
    pub fn installed() -> Option<&'static Ptxas> {
        static FOUND: OnceLock<Option<Ptxas>> = OnceLock::new();
        FOUND.get_or_init(|| Self::find(|name| std::env::var_os(name))).as_ref()
    }

    /// The ptxas that the variables `var` gives lead to (see the module), if it runs.
    pub fn find(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<Ptxas> {
        if let Some(chosen) = var("CCL_PTXAS").filter(|v| !v.is_empty()) {
            let off = matches!(chosen.to_str(), Some("off" | "0" | "none"));
            return if off { None } else { Self::at(Path::new(&chosen)) };
        }
        let program = format!("ptxas{}", std::env::consts::EXE_SUFFIX);
        let mut candidates: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
            .iter()
            .filter_map(|name| var(name).map(|root| Path::new(&root).join("bin").join(&program)))
            .collect();
        if let Some(path) = var("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|dir| dir.join(&program)));
        }
        candidates.push(Path::new("/usr/local/cuda/bin").join(&program));
        candidates.iter().filter(|p| p.is_file()).find_map(|p| Self::at(p))
    }

    /// The ptxas at `path`, if `ptxas --version` runs there and names a CUDA release.
    pub fn at(path: &Path) -> Option<Ptxas> {
        let out = Command::new(path).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text.lines().rev().find(|l| l.contains("release"))?.trim().to_string();
        out.status.success().then(|| Ptxas { path: path.to_path_buf(), version })
    }

    /// Where this ptxas is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The version line it reports (`Cuda compilation tools, release 13.0, V13.0.88`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The version's last word (`V13.0.88`), or the whole line where it has none.
    pub fn release(&self) -> &str {
        self.version.rsplit([' ', ',']).find(|w| !w.is_empty()).unwrap_or(&self.version)
    }

    /// `ptx` (PTX text, as NVIDIA OpenCL returns a program's binary) assembled at `-O3` for the
    /// architecture its `.target` names, with at most `registers` registers a thread where given
    /// (as `-cl-nv-maxrregcount` caps the driver's build): the CUBIN, or the reason it failed.
    pub fn assemble(&self, ptx: &[u8], registers: Option<i64>) -> Result<Vec<u8>, String> {
        // NVIDIA OpenCL's binary is the text and NUL padding.
        let text = ptx.split(|&b| b == 0).next().unwrap_or_default();
        let text = std::str::from_utf8(text).map_err(|_| "not PTX text")?;
        let arch = target_of(text).ok_or("no .target sm_NN line in the PTX")?;
        let dir =
            tempfile::Builder::new().prefix("ccl-ptxas-").tempdir().map_err(|e| format!("no scratch folder: {e}"))?;
        let (input, output) = (dir.path().join("program.ptx"), dir.path().join("program.cubin"));
        std::fs::write(&input, text).map_err(|e| format!("writing {}: {e}", input.display()))?;
        let mut command = Command::new(&self.path);
        command.arg(format!("-arch={arch}")).arg("-O3");
        if let Some(n) = registers {
            command.arg(format!("-maxrregcount={n}"));
        }
        let out = command
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .map_err(|e| format!("running {}: {e}", self.path.display()))?;
        if !out.status.success() {
            return Err(format!("{} failed: {}", self.path.display(), String::from_utf8_lossy(&out.stderr).trim()));
        }
        let cubin = std::fs::read(&output).map_err(|e| format!("reading {}: {e}", output.display()))?;
        if cubin.starts_with(b"\x7fELF") {
            Ok(cubin)
        } else {
            Err("ptxas wrote no ELF image".into())
        }
    }
}

/// The `sm_NN` a PTX module's `.target` directive names (`.target sm_90` or `.target sm_90a,
/// debug`).
fn target_of(ptx: &str) -> Option<&str> {
    let line = ptx.lines().map(str::trim).find(|l| l.starts_with(".target"))?;
    let arch = line[".target".len()..].split(',').next()?.trim();
    (arch.starts_with("sm_") && arch.len() > 3).then_some(arch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// A kernel that stores its thread index, in PTX as NVIDIA OpenCL writes it for an H100.
    const PTX: &str = "//\n// test\n//\n\n.version 8.0\n.target sm_90, texmode_independent\n\
        .address_size 64\n\n.entry put(\n\t.param .u64 .ptr .global .align 4 put_param_0\n)\n{\n\
        \t.reg .b32 %r<2>;\n\t.reg .b64 %rd<4>;\n\n\tld.param.u64 %rd1, [put_param_0];\n\
        \tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
        \tst.global.u32 [%rd3], %r1;\n\tret;\n}\n";

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_target_comes_from_the_ptx() {
        assert_eq!(target_of(PTX), Some("sm_90"));
        assert_eq!(target_of(".version 8.0\n  .target sm_90a\n"), Some("sm_90a"));
        assert_eq!(target_of(".target compute_90\n"), None);
        assert_eq!(target_of("no directive"), None);
    }

    #[test]
    fn off_and_missing_paths_find_nothing() {
        assert_eq!(Ptxas::find(env(&[("CCL_PTXAS", "off"), ("CUDA_PATH", "/usr/local/cuda")])), None);
        assert_eq!(Ptxas::find(env(&[("CCL_PTXAS", "/no/such/ptxas")])), None);
        assert_eq!(Ptxas::at(Path::new("/bin/true")), None, "a program that names no release is no ptxas");
    }

    /// With a ptxas (the one `CCL_PTXAS` or the usual places give; `ptxas` in
    /// `CCL_REQUIRE_BACKENDS` makes its absence a failure): PTX becomes a CUBIN, and what it
    /// refuses is an error naming why.
    #[test]
    fn ptxas_assembles_ptx_into_a_cubin() {
        let Some(ptxas) = Ptxas::installed() else {
            let required = std::env::var("CCL_REQUIRE_BACKENDS").unwrap_or_default();
            assert!(!required.split(',').any(|b| b.trim() == "ptxas"), "CCL_REQUIRE_BACKENDS requires ptxas");
            eprintln!("note: no ptxas found, assembly not checked");
            return;
        };
        assert!(ptxas.version().contains("release"), "{ptxas:?}");
        assert!(ptxas.release().starts_with('V') && !ptxas.release().contains(' '), "{ptxas:?}");
        let cubin = ptxas.assemble(PTX.as_bytes(), Some(32)).unwrap();
        assert!(cubin.starts_with(b"\x7fELF") && cubin.len() > 500, "{} bytes", cubin.len());
        let mut nul_ended = PTX.as_bytes().to_vec();
        nul_ended.extend([0, 0]);
        assert_eq!(ptxas.assemble(&nul_ended, Some(32)).unwrap(), cubin, "the driver's NUL padding is the text's end");
        let err = ptxas.assemble(PTX.replace("mov.u32", "mov.bogus").as_bytes(), None).unwrap_err();
        assert!(err.contains("failed"), "{err}");
        assert!(ptxas.assemble(b"\x7fELF", None).unwrap_err().contains(".target"));
    }
}
