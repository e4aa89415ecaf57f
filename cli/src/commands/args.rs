//! Value parsers shared by the subcommands: every numeric option is range-checked here or by
//! clap's ranged parsers, with a message naming the valid range.

use ccl::binarize::{Method, Params};
use ccl::{Algorithm, Connectivity, Error};
use clap::ValueEnum;

/// `--algo` help, from the registry: every algorithm's name.
pub fn algorithm_help() -> String {
    format!("Algorithm (any case, - or _): {} [default: {}]", Algorithm::names(), default_algorithms())
}

/// The default algorithms, e.g. "TUF for images and 6-connected volumes, KE for 18-connected
/// volumes, BKE for 26-connected volumes": the connectivities that share a default, named together.
fn default_algorithms() -> String {
    let place = |c: Connectivity| match c {
        Connectivity::Four | Connectivity::Eight => "images".to_string(),
        other => format!("{}-connected volumes", other.neighbours()),
    };
    let mut groups: Vec<(Algorithm, Vec<String>)> = Vec::new();
    for c in [Connectivity::Eight, Connectivity::Six, Connectivity::Eighteen, Connectivity::TwentySix] {
        let algorithm = Algorithm::default_for(c);
        match groups.iter_mut().find(|(a, _)| *a == algorithm) {
            Some((_, places)) => places.push(place(c)),
            None => groups.push((algorithm, vec![place(c)])),
        }
    }
    let named: Vec<String> =
        groups.iter().map(|(a, places)| format!("{} for {}", a.name(), places.join(" and "))).collect();
    named.join(", ")
}

/// `--algo` long help, from the registry: every algorithm with its summary and connectivities.
pub fn algorithm_long_help() -> String {
    let mut text = format!("Algorithm (any case, - or _ alike; default: {}):", default_algorithms());
    for a in Algorithm::ALL {
        let c: Vec<String> = a.connectivities().iter().map(|c| c.neighbours().to_string()).collect();
        text.push_str(&format!("\n  {:<7} {} [{}-connectivity]", a.name(), a.info().summary, c.join("/")));
    }
    text
}

/// Largest side of a square benchmark image whose pixels fit 32-bit labels.
pub const MAX_SQUARE_SIDE: usize = 65535;

/// `--threshold`: any finite number (negative too, for float images; checked against the
/// input's own range once it is read: 0-255 for 8-bit, 0-65535 for 16-bit).
pub fn threshold(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() => Ok(t),
        _ => Err(format!(
            "'{s}' is not a threshold: give a finite number in the input's sample range \
             (0-255 for 8-bit images, 0-65535 for 16-bit, any for float)"
        )),
    }
}

/// One name of `--properties`: a scikit-image region property.
pub fn property(s: &str) -> Result<ccl::Property, String> {
    ccl::Property::parse(s).map_err(|e| e.to_string())
}

/// One value of `--spacing`: a positive finite number.
pub fn spacing(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a spacing: give positive numbers, one per axis, rows first, e.g. 0.5,0.5")),
    }
}

/// `--connectivity` of images (4 or 8) or volumes (6, 18 or 26).
pub fn any_connectivity(s: &str) -> Result<Connectivity, String> {
    s.trim()
        .parse()
        .ok()
        .and_then(Connectivity::from_neighbours)
        .ok_or_else(|| format!("'{s}': connectivity is 4 or 8 (images), 6, 18 or 26 (volumes)"))
}

/// An image size `WxH` (or `N` for a square): both sides >= 1, at most 2^32 - 1 pixels.
pub fn size(s: &str) -> Result<(usize, usize), String> {
    let (w, h) = s.split_once(['x', 'X']).unwrap_or((s, s));
    let side = |v: &str| v.trim().parse::<usize>().ok().filter(|&n| n >= 1);
    let (Some(w), Some(h)) = (side(w), side(h)) else {
        return Err(format!("'{s}' is not WxH with sides of at least 1 pixel"));
    };
    if (w as u128) * (h as u128) > u128::from(ccl::MAX_PIXELS) {
        return Err(format!("'{s}' has more than {} pixels, the limit of 32-bit labels", ccl::MAX_PIXELS));
    }
    Ok((w, h))
}

/// The extent of generated inputs: `WxH` (or `N`) an image, `WxHxD` a volume; every side at
/// least 1, at most 2^32 - 1 elements.
pub fn extent(s: &str) -> Result<ccl_cli::benchmark::Extent, String> {
    let parts: Vec<&str> = s.split(['x', 'X']).collect();
    let sides: Option<Vec<usize>> = parts.iter().map(|v| v.trim().parse::<usize>().ok().filter(|&n| n >= 1)).collect();
    let bad = || format!("'{s}' is not WxH (an image) or WxHxD (a volume) with sides of at least 1");
    let sides = sides.ok_or_else(bad)?;
    if sides.iter().map(|&n| n as u128).product::<u128>() > u128::from(ccl::MAX_PIXELS) {
        return Err(format!("'{s}' has more than {} elements, the limit of 32-bit labels", ccl::MAX_PIXELS));
    }
    match sides[..] {
        [n] => Ok(ccl_cli::benchmark::Extent::Image(n, n)),
        [w, h] => Ok(ccl_cli::benchmark::Extent::Image(w, h)),
        [w, h, d] => Ok(ccl_cli::benchmark::Extent::Volume(w, h, d)),
        _ => Err(bad()),
    }
}

/// A list of Hilbert curve orders.
#[derive(Clone, Debug)]
pub struct Orders(pub Vec<u32>);

/// Hilbert curve orders: `FROM:TO` or a comma list, each 1 to [`ccl::MAX_HILBERT_ORDER`].
pub fn orders(s: &str) -> Result<Orders, String> {
    let max = ccl::MAX_HILBERT_ORDER;
    let bad = || format!("'{s}' is not FROM:TO or a comma list of Hilbert curve orders (1 to {max})");
    let parse = |v: &str| v.trim().parse::<u32>().ok().filter(|o| (1..=max).contains(o)).ok_or_else(bad);
    let values: Vec<u32> = match s.split_once(':') {
        Some((from, to)) => (parse(from)?..=parse(to)?).collect(),
        None => s.split(',').map(parse).collect::<Result<_, _>>()?,
    };
    if values.is_empty() {
        return Err(bad());
    }
    Ok(Orders(values))
}

/// One side of a square image: 1 to 65535.
pub fn square_side(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_SQUARE_SIDE).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a side length from 1 to {MAX_SQUARE_SIDE}")),
    }
}

/// A list of densities, percent.
#[derive(Clone, Debug)]
pub struct Densities(pub Vec<u32>);

/// A list of densities in percent: `FROM:TO:STEP` (STEP >= 1, FROM <= TO) or a comma list,
/// every value 0 to 100, at least one value.
pub fn densities(s: &str) -> Result<Densities, String> {
    let bad = || format!("'{s}' is not FROM:TO:STEP (FROM <= TO, STEP >= 1) or a comma list of percentages");
    let values: Vec<u32> = if let Some((from, rest)) = s.split_once(':') {
        let (to, step) = rest.split_once(':').unwrap_or((rest, "1"));
        let parse = |v: &str| v.trim().parse::<u32>().map_err(|_| bad());
        let (from, to, step) = (parse(from)?, parse(to)?, parse(step)?);
        if step == 0 || from > to {
            return Err(bad());
        }
        (from..=to).step_by(step as usize).collect()
    } else {
        s.split(',').map(|v| v.trim().parse().map_err(|_| bad())).collect::<Result<_, _>>()?
    };
    if values.is_empty() {
        return Err(bad());
    }
    if let Some(v) = values.iter().find(|&&v| v > 100) {
        return Err(format!("'{s}': densities are percentages, 0 to 100 ({v} is not)"));
    }
    Ok(Densities(values))
}

/// A value of a type that parses itself (the binarization method, formula and kernel kind).
pub fn parse<T: std::str::FromStr<Err = Error>>(s: &str) -> std::result::Result<T, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

/// `--binarize METHOD[:window=W,k=K,r=R,formula=F,kernel=K]`, e.g. `nick:window=45,k=-0.1`.
pub fn binarize_spec(s: &str) -> std::result::Result<Params, String> {
    let (method, rest) = s.split_once(':').unwrap_or((s, ""));
    let mut params = parse::<Method>(method)?.defaults();
    for pair in rest.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| format!("'{pair}' is not KEY=VALUE"))?;
        let number = |v: &str| v.parse::<f64>().map_err(|_| format!("{key}: '{v}' is not a number"));
        match key {
            "window" => {
                params.window = value.parse().map_err(|_| format!("window: '{value}' is not a whole number"))?
            }
            "k" => params.k = number(value)?,
            "r" => params.r = number(value)?,
            "formula" => params.formula = parse(value)?,
            "kernel" => params.kernel = parse(value)?,
            _ => return Err(format!("unknown key '{key}' (window, k, r, formula, kernel)")),
        }
    }
    params.validate().map_err(|e| e.to_string())?;
    Ok(params)
}

/// The file format of a folder mode's outputs (`--format`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum FolderFormat {
    Npy,
    Png,
    Tiff,
}

impl FolderFormat {
    pub(super) fn extension(self) -> &'static str {
        match self {
            FolderFormat::Npy => "npy",
            FolderFormat::Png => "png",
            FolderFormat::Tiff => "tiff",
        }
    }
}
