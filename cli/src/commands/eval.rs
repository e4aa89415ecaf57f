//! `ccl eval`: binarization quality on the DIBCO pages with their ground truth, for every
//! method at a few parameter settings: F-measure, pseudo F-measure, PSNR and DRD
//! ([`ccl::quality`]), per page into a CSV file and as means per setting on standard output.

use std::path::{Path, PathBuf};

use ccl::binarize::{Method, NickFormula, Params};
use ccl::{io, quality, Error, Result};

use super::console::say;
use super::device_choice::{open_device, BackendChoice};

#[derive(clap::Args)]
pub struct EvalArgs {
    /// The DIBCO folder: YEAR/Originals/NAME.png with YEAR/GT/NAME_gt.png.
    #[arg(long, default_value = "../shared/data/dibco")]
    pub(super) data: PathBuf,
    /// Per-page results (CSV).
    #[arg(short, long, default_value = "eval.csv")]
    pub(super) output: PathBuf,
    /// Backend; auto prefers CUDA, then an OpenCL GPU, then any OpenCL device, then the CPU.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub(super) backend: BackendChoice,
    /// Device identifier from `ccl devices`; every device gives the same binarization.
    #[arg(long)]
    pub(super) device: Option<ccl::DeviceId>,
}

/// The settings evaluated: each method's usual parameters and a few others.
pub fn settings() -> Vec<Params> {
    let nick = |window, k, formula| Params { window, k, formula, ..Method::Nick.defaults() };
    let with = |method: Method, window, k| Params { window, k, ..method.defaults() };
    vec![
        nick(45, -0.1, NickFormula::Paper),
        nick(45, -0.2, NickFormula::Paper),
        nick(15, -0.1, NickFormula::Paper),
        nick(101, -0.1, NickFormula::Paper),
        nick(45, -0.1, NickFormula::Doxa),
        nick(45, -0.1, NickFormula::OpenCv),
        with(Method::Sauvola, 15, 0.5),
        with(Method::Sauvola, 45, 0.2),
        with(Method::Niblack, 15, -0.2),
        with(Method::Wolf, 15, 0.5),
        with(Method::Wolf, 45, 0.5),
        Method::Otsu.defaults(),
    ]
}

/// The (original, ground truth) pairs under `data`, sorted.
fn pairs(data: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let out: Vec<(PathBuf, PathBuf)> =
        io::dibco_pages(data)?.into_iter().filter_map(|(original, truth)| Some((original, truth?))).collect();
    if out.is_empty() {
        return Err(Error::FileRead {
            path: data.display().to_string(),
            reason: "no YEAR/Originals/NAME.png with YEAR/GT/NAME_gt.png".into(),
        });
    }
    Ok(out)
}

/// Runs `ccl eval`.
pub fn eval(args: EvalArgs) -> Result<()> {
    let pairs = pairs(&args.data)?;
    let inputs: Vec<PathBuf> = pairs.iter().flat_map(|(page, truth)| [page.clone(), truth.clone()]).collect();
    super::outputs::check(&[("-o", &args.output)], &inputs)?;
    let (device, how) = open_device(args.device, args.backend)?;
    say!("device: {} {} ({how}); {} DIBCO pages", device.info().id, device.info().name, pairs.len());
    let mut binarizer = device.binarizer()?;
    let settings = settings();
    let mut sums = vec![[0.0f64; 4]; settings.len()];
    let mut rows = String::from("page,setting,f_measure,pseudo_f_measure,psnr,drd\n");
    for (original, truth) in &pairs {
        let (page, _) = io::read_gray(original, ccl::MAX_PIXELS)?;
        let (gt, _) = io::read_gray(truth, ccl::MAX_PIXELS)?;
        let truth_ink: Vec<u8> = gt.values().iter().map(|&p| u8::from(p < 128)).collect();
        let name = original.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        for (i, params) in settings.iter().enumerate() {
            let (ink, _) = binarizer.binarize(&page, params)?;
            let q = quality::evaluate(ink.values(), &truth_ink, page.width(), page.height())
                .map_err(|reason| Error::ImageRead { path: truth.display().to_string(), reason })?;
            // An identical page has an infinite PSNR; the mean uses 100 dB for it.
            let psnr = q.psnr.min(100.0);
            for (s, v) in sums[i].iter_mut().zip([q.f_measure, q.pseudo_f_measure, psnr, q.drd]) {
                *s += v;
            }
            rows.push_str(&format!(
                "{name},{},{:.4},{:.4},{:.4},{:.4}\n",
                params.describe(),
                q.f_measure,
                q.pseudo_f_measure,
                psnr,
                q.drd
            ));
        }
    }
    io::write_atomically(&args.output, |w| std::io::Write::write_all(w, rows.as_bytes()))
        .map_err(|e| Error::FileWrite { path: args.output.display().to_string(), reason: e.to_string() })?;
    say!("| setting | F-measure % | pseudo F-measure % | PSNR dB | DRD |");
    say!("|---|---|---|---|---|");
    let n = pairs.len() as f64;
    for (params, s) in settings.iter().zip(&sums) {
        say!("| {} | {:.2} | {:.2} | {:.2} | {:.2} |", params.describe(), s[0] / n, s[1] / n, s[2] / n, s[3] / n);
    }
    say!("wrote {} (one row per page and setting)", args.output.display());
    Ok(())
}
