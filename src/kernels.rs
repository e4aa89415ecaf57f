//! Kernel sources, and nothing else: this module depends on no other part of the crate. Each
//! kernel is written once in `kernels/` in a portable vocabulary (`KERNEL`, `GLOBAL`,
//! `LOCAL_ARRAY`, `LOCAL_BARRIER()`, `ATOMIC_MIN`, `label_t`, ...). The exact file each backend
//! compiles is that source behind its dialect prelude, committed as `kernels-cl/NAME.cl` and
//! `kernels-cu/NAME.cu`; `tests/kernel_sources.rs` fails when those drift from [`generate`]
//! (`CCL_BLESS=1 cargo test --test kernel_sources` rewrites them). Specialisation is done with
//! compile-time defines (`-D CONNECTIVITY=8`), never by editing the text; which file and
//! defines each algorithm uses is the registry's business (`crate::registry`).

pub use ccl_backend::Dialect;

/// Folder of the generated files of `dialect`, relative to the repository root.
pub fn folder(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenCl => "kernels-cl",
        Dialect::Cuda => "kernels-cu",
    }
}

/// File extension of the generated files of `dialect`.
pub fn extension(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenCl => "cl",
        Dialect::Cuda => "cu",
    }
}

fn prelude(dialect: Dialect) -> (&'static str, &'static str) {
    match dialect {
        Dialect::OpenCl => ("kernels-cl/prelude.h", include_str!("../kernels-cl/prelude.h")),
        Dialect::Cuda => ("kernels-cu/prelude.cuh", include_str!("../kernels-cu/prelude.cuh")),
    }
}

/// One kernel file: shared parts concatenated in order.
#[derive(Clone, Copy, Debug)]
pub struct KernelFile {
    /// Base name of the generated files (`uf` gives `kernels-cl/uf.cl`, `kernels-cu/uf.cu`).
    pub name: &'static str,
    /// (path under `kernels/`, text) of each shared part.
    parts: &'static [(&'static str, &'static str)],
    opencl: &'static str,
    cuda: &'static str,
}

const COMMON: (&str, &str) = ("common.h", include_str!("../kernels/common.h"));
const UNION_FIND: (&str, &str) = ("union_find.h", include_str!("../kernels/union_find.h"));
const COMPRESS: (&str, &str) = ("compress.kernel", include_str!("../kernels/compress.kernel"));
const BLOCKS: (&str, &str) = ("blocks.h", include_str!("../kernels/blocks.h"));
const NEIGHBOURS: (&str, &str) = ("neighbours.h", include_str!("../kernels/neighbours.h"));
const RANKS: (&str, &str) = ("ranks.h", include_str!("../kernels/ranks.h"));
const BITS: (&str, &str) = ("bits.h", include_str!("../kernels/bits.h"));

/// UF and UF_IC: tile-local merge, border merge, compression.
pub const UF: KernelFile = KernelFile {
    name: "uf",
    parts: &[COMMON, UNION_FIND, COMPRESS, NEIGHBOURS, ("uf.kernel", include_str!("../kernels/uf.kernel"))],
    opencl: include_str!("../kernels-cl/uf.cl"),
    cuda: include_str!("../kernels-cu/uf.cu"),
};

const EQUIVALENCE: (&str, &str) = ("equivalence.h", include_str!("../kernels/equivalence.h"));

/// LE: init, then scan, analysis, labelling until no change.
pub const LE: KernelFile = KernelFile {
    name: "le",
    parts: &[COMMON, EQUIVALENCE, ("le.kernel", include_str!("../kernels/le.kernel"))],
    opencl: include_str!("../kernels-cl/le.cl"),
    cuda: include_str!("../kernels-cu/le.cu"),
};

/// OLE: init, then scan, analysis (fused labelling) until no change.
pub const OLE: KernelFile = KernelFile {
    name: "ole",
    parts: &[COMMON, EQUIVALENCE, ("ole.kernel", include_str!("../kernels/ole.kernel"))],
    opencl: include_str!("../kernels-cl/ole.cl"),
    cuda: include_str!("../kernels-cu/ole.cu"),
};

/// BE: block init (labels, connectivity bytes), OLE on blocks until no change, final labeling.
pub const BE: KernelFile = KernelFile {
    name: "be",
    parts: &[COMMON, EQUIVALENCE, BLOCKS, ("be.kernel", include_str!("../kernels/be.kernel"))],
    opencl: include_str!("../kernels-cl/be.cl"),
    cuda: include_str!("../kernels-cu/be.cu"),
};

/// KE and KE_IC: initialization, compression, reduction, compression.
pub const KE: KernelFile = KernelFile {
    name: "ke",
    parts: &[COMMON, UNION_FIND, COMPRESS, NEIGHBOURS, ("ke.kernel", include_str!("../kernels/ke.kernel"))],
    opencl: include_str!("../kernels-cl/ke.cl"),
    cuda: include_str!("../kernels-cu/ke.cu"),
};

/// BUF and BUF_IC: initialization, merge, compression, final labeling over 2x2 blocks.
pub const BUF: KernelFile = KernelFile {
    name: "buf",
    parts: &[COMMON, UNION_FIND, COMPRESS, BLOCKS, ("buf.kernel", include_str!("../kernels/buf.kernel"))],
    opencl: include_str!("../kernels-cl/buf.cl"),
    cuda: include_str!("../kernels-cu/buf.cu"),
};

/// BKE and BKE_IC: initialization, compression, reduction, compression, final labeling.
pub const BKE: KernelFile = KernelFile {
    name: "bke",
    parts: &[COMMON, UNION_FIND, COMPRESS, BLOCKS, ("bke.kernel", include_str!("../kernels/bke.kernel"))],
    opencl: include_str!("../kernels-cl/bke.cl"),
    cuda: include_str!("../kernels-cu/bke.cu"),
};

/// TUF: tile-local labeling over runs, border merge, final labeling from the input.
pub const TUF: KernelFile = KernelFile {
    name: "tuf",
    parts: &[COMMON, BITS, UNION_FIND, RANKS, ("tuf.kernel", include_str!("../kernels/tuf.kernel"))],
    opencl: include_str!("../kernels-cl/tuf.cl"),
    cuda: include_str!("../kernels-cu/tuf.cu"),
};

/// Consecutive relabeling and the label count on the device (a stage after any algorithm).
pub const RELABEL: KernelFile = KernelFile {
    name: "relabel",
    parts: &[COMMON, RANKS, ("relabel.kernel", include_str!("../kernels/relabel.kernel"))],
    opencl: include_str!("../kernels-cl/relabel.cl"),
    cuda: include_str!("../kernels-cu/relabel.cu"),
};

/// Binarization of gray pages: the ICPADS 2015 paper's three Nick kernels, the fast kernel,
/// Niblack, Sauvola, Wolf and Otsu.
pub const BINARIZE: KernelFile = KernelFile {
    name: "binarize",
    parts: &[COMMON, ("binarize.kernel", include_str!("../kernels/binarize.kernel"))],
    opencl: include_str!("../kernels-cl/binarize.cl"),
    cuda: include_str!("../kernels-cu/binarize.cu"),
};

/// Component statistics from consecutive labels: area, bounding box, coordinate sums.
pub const STATS: KernelFile = KernelFile {
    name: "stats",
    parts: &[COMMON, BITS, ("stats.kernel", include_str!("../kernels/stats.kernel"))],
    opencl: include_str!("../kernels-cl/stats.cl"),
    cuda: include_str!("../kernels-cu/stats.cu"),
};

/// A one-work-item spin that holds a queue busy while a benchmark queues its commands.
pub const HOLD: KernelFile = KernelFile {
    name: "hold",
    parts: &[COMMON, ("hold.kernel", include_str!("../kernels/hold.kernel"))],
    opencl: include_str!("../kernels-cl/hold.cl"),
    cuda: include_str!("../kernels-cu/hold.cu"),
};

/// Environment variable naming a folder whose `kernels-cl/` and `kernels-cu/` files replace the
/// committed sources at run time ([`KernelFile::load`]).
pub const KERNEL_DIR: &str = "CCL_KERNEL_DIR";

/// Every kernel file.
pub const ALL: &[KernelFile] = &[LE, OLE, BE, UF, KE, BUF, BKE, TUF, RELABEL, BINARIZE, STATS, HOLD];

impl KernelFile {
    /// The committed source this dialect's compiler builds.
    pub fn source(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::OpenCl => self.opencl,
            Dialect::Cuda => self.cuda,
        }
    }

    /// The source to build for `dialect`: the committed one, or, where the environment variable
    /// [`KERNEL_DIR`] names a folder, that folder's `kernels-cl/NAME.cl` or `kernels-cu/NAME.cu`
    /// (to try a kernel change without rebuilding the crate). Errs with the override's path when
    /// it cannot be read: an experiment never silently runs the committed kernel.
    pub fn load(&self, dialect: Dialect) -> Result<std::borrow::Cow<'static, str>, (String, std::io::Error)> {
        self.load_from(std::env::var_os(KERNEL_DIR).filter(|dir| !dir.is_empty()).as_deref(), dialect)
    }

    /// [`Self::load`] with the override folder given (`None`: the committed source).
    fn load_from(
        &self,
        dir: Option<&std::ffi::OsStr>,
        dialect: Dialect,
    ) -> Result<std::borrow::Cow<'static, str>, (String, std::io::Error)> {
        match dir {
            Some(dir) => {
                let path = std::path::Path::new(dir).join(self.path(dialect));
                std::fs::read_to_string(&path).map(std::borrow::Cow::Owned).map_err(|e| (path.display().to_string(), e))
            }
            None => Ok(std::borrow::Cow::Borrowed(self.source(dialect))),
        }
    }

    /// Path of the committed file for `dialect`, relative to the repository root.
    pub fn path(&self, dialect: Dialect) -> String {
        format!("{}/{}.{}", folder(dialect), self.name, extension(dialect))
    }

    /// The shared parts, as (path under `kernels/`, text), in order.
    pub fn parts(&self) -> &'static [(&'static str, &'static str)] {
        self.parts
    }
}

/// The source that `kernels-cl/` or `kernels-cu/` must hold for `file`: a header, the
/// dialect prelude, then the shared parts.
pub fn generate(file: &KernelFile, dialect: Dialect) -> String {
    let (prelude_path, prelude_text) = prelude(dialect);
    let mut out = format!(
        "// GENERATED from {prelude_path} and kernels/{{{}}}: edit those, then run\n\
         // `CCL_BLESS=1 cargo test --test kernel_sources`.\n\n",
        file.parts.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(", ")
    );
    for (path, text) in std::iter::once((prelude_path, prelude_text)).chain(file.parts.iter().copied()) {
        out.push_str(&format!("// ---- {path}\n"));
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_folder_replaces_the_committed_source_or_names_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("ccl-kernel-dir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("kernels-cu")).unwrap();
        std::fs::write(dir.join("kernels-cu/tuf.cu"), "// changed\n").unwrap();
        assert_eq!(TUF.load_from(None, Dialect::Cuda).unwrap(), TUF.source(Dialect::Cuda));
        assert_eq!(TUF.load_from(Some(dir.as_os_str()), Dialect::Cuda).unwrap(), "// changed\n");
        let (path, _) = TUF.load_from(Some(dir.as_os_str()), Dialect::OpenCl).unwrap_err();
        assert!(path.ends_with("kernels-cl/tuf.cl"), "{path}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
