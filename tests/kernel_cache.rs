//! The on-disk kernel cache: entries found again, bad entries (truncated, corrupt, refused by
//! the driver) rebuilt, concurrent writers (threads and processes) leaving one valid entry,
//! builds that differ never sharing an entry, `CCL_CACHE=off`; then the backends: OpenCL builds
//! through a cache folder (every device present, one test per kind: `cargo test --test
//! kernel_cache -- ::opencl_gpu` runs the GPUs'), NVRTC CUBINs of the project's kernels, and
//! CUDA builds when a CUDA device is present.
//!
//! Every test uses a temporary cache folder of its own ([`KernelCache::at`]); none reads or
//! sets the process's `CCL_CACHE*` variables.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use ccl_backend::{CacheKey, KernelCache};

fn key(name: &str) -> CacheKey {
    CacheKey::new("test").part("source", name).part("options", "-D A=1")
}

/// The files in a cache folder (entries and anything left behind).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.sort();
    files
}

fn flip_byte(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = at.min(bytes.len() - 1);
    bytes[at] ^= 0x5a;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn miss_then_hit() {
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    assert!(cache.is_enabled());
    assert_eq!(cache.load(&key("a")), None);
    cache.store(&key("a"), b"binary of a").unwrap();
    assert_eq!(cache.load(&key("a")).as_deref(), Some(&b"binary of a"[..]));
    assert_eq!(cache.load(&key("b")), None, "another key misses");
    // A store replaces the entry.
    cache.store(&key("a"), b"newer binary of a").unwrap();
    assert_eq!(cache.load(&key("a")).as_deref(), Some(&b"newer binary of a"[..]));
    assert_eq!(files_in(dir.path()), vec![cache.entry_path(&key("a")).unwrap()], "one entry, no temporary file");
    // An empty payload is an entry too.
    cache.store(&key("empty"), b"").unwrap();
    assert_eq!(cache.load(&key("empty")), Some(Vec::new()));
}

#[test]
fn the_cache_folder_is_created_on_the_first_store() {
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path().join("deeper/ccl"));
    assert_eq!(cache.load(&key("a")), None);
    cache.store(&key("a"), b"x").unwrap();
    assert_eq!(cache.load(&key("a")).as_deref(), Some(&b"x"[..]));
}

#[test]
fn truncated_entries_are_misses_and_get_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    cache.store(&key("t"), &payload).unwrap();
    let path = cache.entry_path(&key("t")).unwrap();
    let whole = std::fs::read(&path).unwrap();
    for len in [0, 1, 15, 16, 20, 52, 56, 60, whole.len() - payload.len() - 1, whole.len() - 1] {
        std::fs::write(&path, &whole[..len]).unwrap();
        assert_eq!(cache.load(&key("t")), None, "entry truncated to {len} of {} bytes", whole.len());
    }
    cache.store(&key("t"), &payload).unwrap();
    assert_eq!(cache.load(&key("t")), Some(payload.clone()));
    // Bytes after the payload are refused too.
    let mut longer = whole.clone();
    longer.extend_from_slice(b"tail");
    std::fs::write(&path, longer).unwrap();
    assert_eq!(cache.load(&key("t")), None);
}

#[test]
fn corrupt_entries_are_misses_and_get_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    let payload = vec![0xabu8; 4096];
    cache.store(&key("c"), &payload).unwrap();
    let path = cache.entry_path(&key("c")).unwrap();
    let whole = std::fs::read(&path).unwrap();
    // Magic, version, key hash, payload length, payload hash and payload.
    let header = whole.len() - payload.len();
    for at in [0, 15, 16, 19, 20, 51, header - 40, header - 33, header - 32, header - 1, header, whole.len() - 1] {
        std::fs::write(&path, &whole).unwrap();
        flip_byte(&path, at);
        assert_eq!(cache.load(&key("c")), None, "byte {at} of {} flipped", whole.len());
    }
    cache.store(&key("c"), &payload).unwrap();
    assert_eq!(cache.load(&key("c")), Some(payload));
    // Garbage, a folder, and another key's entry under this key's name are misses.
    std::fs::write(&path, b"not a cache entry at all").unwrap();
    assert_eq!(cache.load(&key("c")), None);
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    assert_eq!(cache.load(&key("c")), None);
    assert!(cache.store(&key("c"), b"x").is_err(), "a folder in the entry's place cannot be replaced");
    std::fs::remove_dir(&path).unwrap();
    cache.store(&key("other"), b"other").unwrap();
    std::fs::copy(cache.entry_path(&key("other")).unwrap(), &path).unwrap();
    assert_eq!(cache.load(&key("c")), None, "an entry is bound to its key");
}

#[test]
fn an_unusable_folder_never_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a file");
    std::fs::write(&file, b"in the way").unwrap();
    let cache = KernelCache::at(&file);
    assert_eq!(cache.load(&key("a")), None);
    assert!(cache.store(&key("a"), b"x").is_err());
    assert_eq!(cache.load(&key("a")), None);
}

#[test]
fn different_parts_never_share_an_entry() {
    let base = || CacheKey::new("opencl").part("device", "d");
    let keys = [
        base().part("options", "-D N=1").part("source", "s"),
        base().part("options", "-D N=2").part("source", "s"),
        base().part("options", "-D N=1").part("source", "t"),
        base().part("options", "-D N=1 ").part("source", "s"),
        base().part("options", "-D N=1s").part("source", ""),
        CacheKey::new("cuda").part("device", "d").part("options", "-D N=1").part("source", "s"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    for (i, k) in keys.iter().enumerate() {
        cache.store(k, format!("payload {i}").as_bytes()).unwrap();
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(cache.load(k).unwrap(), format!("payload {i}").as_bytes(), "{k:?}");
    }
    assert_eq!(files_in(dir.path()).len(), keys.len());
    let same = base().part("options", "-D N=1").part("source", "s");
    assert_eq!(same.hex(), keys[0].hex(), "the same parts make the same key");
}

#[test]
fn ccl_cache_off_disables_and_ccl_cache_dir_chooses_the_folder() {
    use std::ffi::OsStr;
    let user = Some(PathBuf::from("/home/u/.cache"));
    let os = |s: &'static str| Some(OsStr::new(s));
    for off in ["off", "OFF", " off ", "0", "false", "no", "disabled"] {
        let cache = KernelCache::from_settings(os(off), os("/tmp/x"), user.clone());
        assert!(!cache.is_enabled(), "CCL_CACHE={off:?}");
        assert_eq!(cache.dir(), None);
    }
    let at = |cache: Option<&OsStr>, dir: Option<&OsStr>, user: Option<PathBuf>| {
        KernelCache::from_settings(cache, dir, user).dir().map(Path::to_path_buf)
    };
    assert_eq!(at(None, os("/tmp/x"), user.clone()), Some(PathBuf::from("/tmp/x")));
    assert_eq!(at(os("on"), os("/tmp/x"), user.clone()), Some(PathBuf::from("/tmp/x")));
    assert_eq!(at(None, None, user.clone()), Some(PathBuf::from("/home/u/.cache/ccl")));
    assert_eq!(at(None, os(""), user.clone()), Some(PathBuf::from("/home/u/.cache/ccl")), "empty CCL_CACHE_DIR");
    assert_eq!(at(os("1"), None, user), Some(PathBuf::from("/home/u/.cache/ccl")));
    assert_eq!(at(None, None, None), None, "no user cache directory: disabled, not an error");
    assert_eq!(at(None, os("/tmp/x"), None), Some(PathBuf::from("/tmp/x")));

    let disabled = KernelCache::disabled();
    disabled.store(&key("a"), b"x").unwrap();
    assert_eq!(disabled.load(&key("a")), None);
    // from_env answers whatever the environment says, without failing.
    let _ = KernelCache::from_env();
}

/// Payloads of one writer, recognisable after the fact: every byte is the writer's tag.
fn writer_payload(tag: u8) -> Vec<u8> {
    vec![tag; 256 * 1024 + tag as usize]
}

fn check_whole(payload: &[u8]) {
    let tag = payload[0];
    assert_eq!(payload, writer_payload(tag), "a mixed or partial payload (tag {tag})");
}

#[test]
fn concurrent_writers_in_threads_leave_one_valid_entry() {
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::at(dir.path());
    let k = key("shared");
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    std::thread::scope(|s| {
        for t in 0..threads {
            let (cache, k, barrier) = (&cache, &k, barrier.clone());
            s.spawn(move || {
                barrier.wait();
                for _ in 0..20 {
                    cache.store(k, &writer_payload(t as u8 + 1)).unwrap();
                    // A reader at any moment sees nothing or one whole payload.
                    check_whole(&cache.load(k).expect("an entry is there after a store"));
                }
            });
        }
    });
    check_whole(&cache.load(&k).unwrap());
    assert_eq!(files_in(dir.path()), vec![cache.entry_path(&k).unwrap()], "temporary files left behind");
}

/// Not a test on its own (ignored): the writer process of
/// [`concurrent_writers_in_processes_leave_one_valid_entry`], which runs this test binary
/// again with `--ignored` and `CCL_KERNEL_CACHE_WRITER=<folder>,<tag>`.
#[test]
#[ignore = "the child process of concurrent_writers_in_processes_leave_one_valid_entry"]
fn writer_process() {
    // Without the variable (a run with --include-ignored, as scripts/test.sh --full does) it does
    // nothing.
    let Ok(spec) = std::env::var("CCL_KERNEL_CACHE_WRITER") else { return };
    let (dir, tag) = spec.rsplit_once(',').expect("folder,tag");
    let tag: u8 = tag.parse().expect("tag");
    let cache = KernelCache::at(dir);
    for _ in 0..100 {
        cache.store(&key("shared"), &writer_payload(tag)).unwrap();
        check_whole(&cache.load(&key("shared")).expect("an entry is there after a store"));
    }
}

#[test]
fn concurrent_writers_in_processes_leave_one_valid_entry() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (1..=3u8)
        .map(|tag| {
            std::process::Command::new(&exe)
                .args(["--exact", "writer_process", "--ignored", "--test-threads=1", "--nocapture"])
                .env("CCL_KERNEL_CACHE_WRITER", format!("{},{tag}", dir.path().display()))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start a writer process")
        })
        .collect();
    // This process reads while they write.
    let cache = KernelCache::at(dir.path());
    let mut seen = 0;
    let mut children = children;
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if let Some(payload) = cache.load(&key("shared")) {
            check_whole(&payload);
            seen += 1;
        }
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "writer failed: {text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("1 passed"), "the writer did not run: {text}");
    }
    check_whole(&cache.load(&key("shared")).unwrap());
    assert_eq!(files_in(dir.path()), vec![cache.entry_path(&key("shared")).unwrap()], "temporary files left behind");
    eprintln!("read {seen} whole entries while three processes wrote");
}

/// The backends: OpenCL builds through a cache folder, NVRTC CUBINs, CUDA builds.
#[cfg(any(feature = "opencl", feature = "cuda"))]
mod backends {
    use super::*;
    use ccl_backend::{Arg, Define, Dialect, Gpu, LaunchRange, Program};

    /// A runtime's cache key of a build (source, defines).
    type KeyOf<'a> = &'a dyn Fn(&str, &[Define]) -> CacheKey;

    /// A kernel whose output depends on a define: `out[i] = VALUE + i`.
    fn put_source(dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::OpenCl => {
                "kernel void put(global uint *out, uint n) {\n\
                 \x20   uint i = get_global_id(0);\n\
                 \x20   if (i < n) out[i] = VALUE + i;\n\
                 }\n"
            }
            Dialect::Cuda => {
                "extern \"C\" __global__ void put(unsigned int *out, unsigned int n) {\n\
                 \x20   unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 \x20   if (i < n) out[i] = VALUE + i;\n\
                 }\n"
            }
        }
    }

    /// Runs `put` of `program` over 100 items and checks that it wrote `value + i`.
    fn check_put(gpu: &dyn Gpu, program: &Program, value: u32) {
        let n = 100u32;
        let mut kernel = gpu.kernel(program, "put").expect("kernel from the program");
        let mut out = gpu.alloc(n as usize * 4).unwrap();
        gpu.zero(&mut out).unwrap();
        let range = LaunchRange::over([n as usize, 1, 1], [32, 1, 1]);
        gpu.launch(&mut kernel, &range, &[Arg::Buffer(&out), Arg::U32(n)]).unwrap();
        gpu.finish().unwrap();
        let mut bytes = vec![0u8; n as usize * 4];
        gpu.read(&out, &mut bytes).unwrap();
        let got: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        let expected: Vec<u32> = (0..n).map(|i| value + i).collect();
        assert_eq!(got, expected, "{}: wrong output for VALUE={value}", gpu.name());
    }

    /// The cache contract on one device, through `open` (a runtime with the given cache) and
    /// `key_of` (the runtime's key for a build):
    /// miss then hit (also from a fresh runtime), different defines and sources in entries of
    /// their own, truncated, corrupt and driver-refused entries rebuilt from source and rewritten,
    /// and a disabled cache.
    fn backend_contract(dialect: Dialect, open: &dyn Fn(KernelCache) -> Box<dyn Gpu>, key_of: KeyOf) {
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let source = put_source(dialect);
        let one = [Define::int("VALUE", 1000)];
        let two = [Define::int("VALUE", 2000)];

        let gpu = open(cache.clone());
        let first = gpu.build(source, &one).unwrap();
        assert!(!first.from_cache(), "{}: the first build cannot come from an empty cache", gpu.name());
        assert!(first.build_ms() > 0.0);
        check_put(gpu.as_ref(), &first, 1000);
        let entry = cache.entry_path(&key_of(source, &one)).unwrap();
        assert!(entry.is_file(), "{}: no entry stored at {}", gpu.name(), entry.display());

        let second = gpu.build(source, &one).unwrap();
        assert!(second.from_cache(), "{}: the second build did not come from the cache", gpu.name());
        check_put(gpu.as_ref(), &second, 1000);
        eprintln!(
            "{}: compiled in {:.1} ms, from the cache in {:.1} ms",
            gpu.name(),
            first.build_ms(),
            second.build_ms()
        );

        // Another process would open the device again: a fresh runtime finds the entry.
        let fresh = open(cache.clone());
        let third = fresh.build(source, &one).unwrap();
        assert!(third.from_cache());
        check_put(fresh.as_ref(), &third, 1000);

        // Other defines, another source: entries of their own, and each program is its own.
        let other = gpu.build(source, &two).unwrap();
        assert!(!other.from_cache(), "different defines must not share an entry");
        check_put(gpu.as_ref(), &other, 2000);
        let spaced = source.replace("VALUE + i", "VALUE + i + 0");
        assert!(!gpu.build(&spaced, &one).unwrap().from_cache(), "a different source must not share an entry");
        assert_eq!(files_in(dir.path()).len(), 3, "one entry per build");
        let (again_one, again_two) = (gpu.build(source, &one).unwrap(), gpu.build(source, &two).unwrap());
        assert!(again_one.from_cache() && again_two.from_cache());
        check_put(gpu.as_ref(), &again_one, 1000);
        check_put(gpu.as_ref(), &again_two, 2000);

        // A corrupt entry (one byte flipped in the binary) is rebuilt from source and rewritten.
        let len = std::fs::metadata(&entry).unwrap().len() as usize;
        flip_byte(&entry, len - 10);
        let rebuilt = gpu.build(source, &one).unwrap();
        assert!(!rebuilt.from_cache(), "a corrupt entry was trusted");
        check_put(gpu.as_ref(), &rebuilt, 1000);
        assert!(gpu.build(source, &one).unwrap().from_cache(), "the corrupt entry was not rewritten");

        // A truncated entry too.
        let whole = std::fs::read(&entry).unwrap();
        std::fs::write(&entry, &whole[..whole.len() / 2]).unwrap();
        let rebuilt = gpu.build(source, &one).unwrap();
        assert!(!rebuilt.from_cache(), "a truncated entry was trusted");
        check_put(gpu.as_ref(), &rebuilt, 1000);
        assert_eq!(std::fs::read(&entry).unwrap(), whole, "the truncated entry was not rewritten");

        // An intact entry whose binary the driver refuses (a stale or foreign binary).
        let k = key_of(source, &one);
        cache.store(&k, b"\x7fELF but not a binary of this device").unwrap();
        let rebuilt = gpu.build(source, &one).unwrap();
        assert!(!rebuilt.from_cache(), "a refused binary counted as a cache hit");
        check_put(gpu.as_ref(), &rebuilt, 1000);
        assert!(gpu.build(source, &one).unwrap().from_cache(), "the refused entry was not rewritten");

        // A build error is still the build log, and stores nothing.
        let before = files_in(dir.path()).len();
        match gpu.build("this is not a kernel", &one) {
            Err(ccl_backend::Error::Build { log, .. }) => assert!(!log.trim().is_empty()),
            other => panic!("{}: expected a build error, got {:?}", gpu.name(), other.map(|_| ())),
        }
        assert_eq!(files_in(dir.path()).len(), before);

        // Disabled: never from the cache, even with an entry there.
        let off = open(KernelCache::disabled());
        for _ in 0..2 {
            let p = off.build(source, &one).unwrap();
            assert!(!p.from_cache());
            check_put(off.as_ref(), &p, 1000);
        }
    }

    crate::device_tests! {
        opencl;
        #[cfg(feature = "opencl")]
        opencl_builds_through_the_cache: [opencl_cpu, opencl_gpu],
    }

    #[cfg(feature = "opencl")]
    fn opencl_builds_through_the_cache(desc: &ccl_opencl::DeviceDesc) {
        let open = |cache: KernelCache| -> Box<dyn Gpu> {
            Box::new(
                ccl_opencl::Runtime::new(desc.platform, desc.device).expect("open OpenCL device").with_cache(cache),
            )
        };
        let probe = ccl_opencl::Runtime::new(desc.platform, desc.device).unwrap();
        let key_of = |source: &str, defines: &[Define]| probe.cache_key(source, defines);
        backend_contract(Dialect::OpenCl, &open, &key_of);
        ptxas_assembles_nvidia_programs(&probe);
    }

    /// On NVIDIA OpenCL with a ptxas (`ptxas` in `CCL_REQUIRE_BACKENDS` requires one there),
    /// programs are built from the CUBIN ptxas makes, with the register budget: the cache keeps
    /// that CUBIN, and a project kernel built so labels right (the conformance tests run them all).
    #[cfg(feature = "opencl")]
    fn ptxas_assembles_nvidia_programs(runtime: &ccl_opencl::Runtime) {
        let nvidia = runtime.desc().platform_name.contains("NVIDIA");
        let Some(ptxas) = runtime.ptxas() else {
            assert!(
                !(nvidia && common::is_required("ptxas")),
                "{}: no ptxas found, CCL_REQUIRE_BACKENDS requires it",
                runtime.name()
            );
            return;
        };
        assert!(nvidia, "{}: only NVIDIA OpenCL programs are assembled by ptxas", runtime.name());
        let dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(dir.path());
        let gpu =
            ccl_opencl::Runtime::new(runtime.desc().platform, runtime.desc().device).unwrap().with_cache(cache.clone());
        // The cached binary of a build is ptxas's CUBIN (an ELF image), else the assembly failed.
        let assert_assembled = |what: &str, source: &str, defines: &[Define]| {
            let payload = cache.load(&gpu.cache_key(source, defines)).expect("an entry");
            let why = gpu.ptxas_fallback();
            assert!(payload.starts_with(b"\x7fELF"), "{}: {what} not assembled by ptxas: {why:?}", gpu.name());
        };
        let source = put_source(Dialect::OpenCl);
        let budget = Define::int(ccl_backend::REGISTER_BUDGET, 32);
        for (value, defines) in [(5, vec![Define::int("VALUE", 5)]), (6, vec![Define::int("VALUE", 6), budget])] {
            let program = gpu.build(source, &defines).unwrap();
            check_put(&gpu, &program, value);
            assert_assembled("put", source, &defines);
        }
        eprintln!("{}: programs assembled by {} ({})", gpu.name(), ptxas.path().display(), ptxas.version());
        let listed = ccl::discover().devices.into_iter().find(|d| d.driver.contains("programs assembled by ptxas"));
        assert!(listed.is_some(), "`ccl devices` does not say that ptxas assembles NVIDIA OpenCL's programs");

        // Every program of the project: the labelers' and the binarizer's (the fast Nick kernel
        // is the one the driver's assembly slows down).
        let labelers = ccl::registry::kernel_builds().into_iter().map(|b| (b.file, b.defines));
        let binarize = *ccl::registry::stage("binarize").expect("the binarization stage").kernel();
        let binarizers = ccl::binarize::kernel_builds().into_iter().map(|d| (binarize, d));
        for (file, defines) in labelers.chain(binarizers) {
            let source = file.source(Dialect::OpenCl);
            gpu.build(source, &defines).unwrap_or_else(|e| panic!("{}: {e}", file.name));
            assert_assembled(&format!("{} {defines:?}", file.name), source, &defines);
        }
    }

    /// Every queue of a runtime shares its cache, and builds from several threads at once agree.
    #[cfg(feature = "opencl")]
    #[test]
    fn opencl_queues_and_threads_share_the_cache() {
        let Some(desc) = common::opencl_devices("sharing the OpenCL kernel cache").into_iter().next() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let runtime =
            ccl_opencl::Runtime::new(desc.platform, desc.device).unwrap().with_cache(KernelCache::at(dir.path()));
        let queue = runtime.new_queue().unwrap();
        let source = put_source(Dialect::OpenCl);
        let defines = [Define::int("VALUE", 7)];
        assert!(!runtime.build(source, &defines).unwrap().from_cache());
        assert!(queue.build(source, &defines).unwrap().from_cache(), "a queue of the runtime uses its cache");
        let defines = [Define::int("VALUE", 9)];
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let gpu = runtime.new_queue().unwrap();
                    let program = gpu.build(source, &defines).unwrap();
                    check_put(gpu.as_ref(), &program, 9);
                });
            }
        });
        assert!(runtime.build(source, &defines).unwrap().from_cache());
        assert_eq!(files_in(dir.path()).len(), 2);
    }

    /// A real kernel of the project (UF, every connectivity) compiles to a CUBIN (an ELF image) for
    /// real architectures, without a GPU.
    #[cfg(feature = "cuda")]
    #[test]
    fn nvrtc_compiles_the_project_kernels_to_cubins() {
        let uf = ccl::Algorithm::UF.info().kernel();
        let builds: Vec<_> = ccl::registry::kernel_builds().into_iter().filter(|b| b.file.name == uf.name).collect();
        assert!(!builds.is_empty(), "no UF build in the registry");
        let source = uf.source(Dialect::Cuda);
        for build in &builds {
            for arch in ["sm_75", "sm_90"] {
                match ccl_cuda::compile_cubin(source, &build.defines, arch) {
                    Ok(cubin) => {
                        assert!(cubin.starts_with(b"\x7fELF"), "{arch}: not an ELF image");
                        assert!(cubin.len() > 1000, "{arch}: a CUBIN of {} bytes", cubin.len());
                    }
                    Err(ccl_backend::Error::Unavailable { reason, .. }) => {
                        assert!(!common::is_required("nvrtc"), "CCL_REQUIRE_BACKENDS requires nvrtc: {reason}");
                        eprintln!("note: NVRTC absent, CUBINs not compiled: {reason}");
                        return;
                    }
                    Err(e) => panic!("UF/{} for {arch}: {e}", build.connectivity),
                }
            }
        }
        // Different defines, different machine code.
        let a = ccl_cuda::compile_cubin(source, &builds[0].defines, "sm_90").unwrap();
        let mut wide = builds[0].defines.clone();
        wide.push(Define::int("LABEL_BITS", 64));
        assert_ne!(a, ccl_cuda::compile_cubin(source, &wide, "sm_90").unwrap());
        // A source error is the build log; an architecture NVRTC does not know is an error, not a
        // panic.
        match ccl_cuda::compile_cubin("this is not CUDA", &[], "sm_90") {
            Err(ccl_backend::Error::Build { log, .. }) => assert!(log.contains("error"), "{log}"),
            other => panic!("expected a build error, got {:?}", other.map(|b| b.len())),
        }
        assert!(ccl_cuda::compile_cubin(source, &builds[0].defines, "sm_1").is_err());
        assert!(ccl_cuda::compile_cubin("nul \0 inside", &[], "sm_90").is_err());
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn cuda_builds_through_the_cache() {
        if !common::cuda_present("CUDA module loading from the cache") {
            return;
        }
        let open = |cache: KernelCache| -> Box<dyn Gpu> {
            Box::new(ccl_cuda::Runtime::new(0).expect("open CUDA device").with_cache(cache))
        };
        let probe = ccl_cuda::Runtime::new(0).unwrap();
        let key_of = |source: &str, defines: &[Define]| probe.cache_key(source, defines);
        backend_contract(Dialect::Cuda, &open, &key_of);

        // The project's kernels load from CUBIN entries and from the cache.
        let dir = tempfile::tempdir().unwrap();
        let gpu = ccl_cuda::Runtime::new(0).unwrap().with_cache(KernelCache::at(dir.path()));
        for build in ccl::registry::kernel_builds() {
            let source = build.file.source(Dialect::Cuda);
            assert!(!gpu.build(source, &build.defines).unwrap().from_cache());
            let entry = std::fs::read(gpu.cache().entry_path(&gpu.cache_key(source, &build.defines)).unwrap()).unwrap();
            assert!(entry.windows(4).any(|w| w == b"\x7fELF"), "{}: the entry is not a CUBIN", build.algorithm);
            assert!(gpu.build(source, &build.defines).unwrap().from_cache());
        }
    }
}
