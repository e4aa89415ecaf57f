//! What a binarization computes: the method, its parameters, and (for the local methods) which
//! kernel computes the window sums.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// A thresholding method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Nick (Khurshid et al. 2009): T = m + k sqrt(...), see [`NickFormula`]; k in [-0.2, -0.1].
    Nick,
    /// Niblack (1986): T = m + k s.
    Niblack,
    /// Sauvola and Pietikäinen (2000): T = m (1 + k (s / R - 1)).
    Sauvola,
    /// Wolf and Jolion (2003): T = m - k (1 - s / R) (m - M), with M the page's darkest gray and
    /// R the largest window deviation of the page.
    Wolf,
    /// Otsu (1979): one global threshold maximising the between-class variance.
    Otsu,
}

impl Method {
    /// Every method, in the order the command line lists them.
    pub const ALL: [Method; 5] = [Method::Nick, Method::Sauvola, Method::Niblack, Method::Wolf, Method::Otsu];

    /// The lowercase name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Method::Nick => "nick",
            Method::Niblack => "niblack",
            Method::Sauvola => "sauvola",
            Method::Wolf => "wolf",
            Method::Otsu => "otsu",
        }
    }

    /// Whether the threshold depends on a window around each pixel.
    pub fn is_local(self) -> bool {
        self != Method::Otsu
    }

    /// The usual window and k of the method: Nick 45 and -0.1 (the seed paper's range of k),
    /// Niblack 15 and -0.2 (Trier and Taxt), Sauvola 15 and 0.5 with R = 128 (Sauvola and
    /// Pietikäinen), Wolf 15 and 0.5 (Wolf and Jolion).
    pub fn defaults(self) -> Params {
        let (window, k) = match self {
            Method::Nick => (45, -0.1),
            Method::Niblack => (15, -0.2),
            Method::Sauvola | Method::Wolf => (15, 0.5),
            Method::Otsu => (1, 0.0),
        };
        Params { method: self, window, k, r: 128.0, formula: NickFormula::Paper, kernel: KernelKind::Fast }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        by_name(s, &Method::ALL, "method")
    }
}

/// The three Nick thresholds in circulation (S1, S2: sums of p and p^2 over the window, NP its
/// pixel count, m = S1 / NP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NickFormula {
    /// The seed paper's Eq. 1 (and Khurshid et al.'s text): T = m + k sqrt((S2 - m^2) / NP),
    /// window clipped at the border.
    Paper,
    /// T = m + k sqrt(S2 / NP) (= m + k sqrt(variance + m^2)), as Doxa and most libraries
    /// compute it, window clipped at the border.
    Doxa,
    /// OpenCV ximgproc's `niBlackThreshold(..., BINARIZATION_NICK)`: T = m + k sqrt(2 S2 / NP -
    /// m^2) rounded to an integer (half to even), with OpenCV's replicated border (NP = W^2);
    /// odd windows of 3 or more only, as OpenCV requires.
    OpenCv,
}

impl NickFormula {
    /// Every formula.
    pub const ALL: [NickFormula; 3] = [NickFormula::Paper, NickFormula::Doxa, NickFormula::OpenCv];

    /// The lowercase name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            NickFormula::Paper => "paper",
            NickFormula::Doxa => "doxa",
            NickFormula::OpenCv => "opencv",
        }
    }
}

impl fmt::Display for NickFormula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NickFormula {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        by_name(s, &NickFormula::ALL, "formula")
    }
}

/// The kernel that computes the window sums of a local method. All four give the same result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// The paper's Algorithm 2: every window pixel from global memory; O(W^2) per pixel.
    Global,
    /// The paper's Algorithm 3: the group's tile from local memory, the rest from global memory.
    GlobalShared,
    /// The paper's Algorithm 4, for any window: every window pixel from local memory.
    Shared,
    /// Running sums: O(1) per pixel whatever the window (the default).
    Fast,
}

impl KernelKind {
    /// Every kernel, the paper's three first.
    pub const ALL: [KernelKind; 4] =
        [KernelKind::Global, KernelKind::GlobalShared, KernelKind::Shared, KernelKind::Fast];

    /// The lowercase name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Global => "global",
            KernelKind::GlobalShared => "global-shared",
            KernelKind::Shared => "shared",
            KernelKind::Fast => "fast",
        }
    }

    /// The kernel's function name in `kernels/binarize.kernel`.
    pub(crate) fn function(self) -> &'static str {
        match self {
            KernelKind::Global => "threshold_global_only",
            KernelKind::GlobalShared => "threshold_global_shared",
            KernelKind::Shared => "threshold_shared",
            KernelKind::Fast => "threshold_fast",
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KernelKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        by_name(s, &KernelKind::ALL, "kernel")
    }
}

/// The largest window: the fast kernel holds a group's columns widened by the window (at most
/// 2048) in registers.
pub const MAX_WINDOW: u32 = 2048;

/// A binarization: the method and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The method.
    pub method: Method,
    /// Side of the square window, in pixels (local methods).
    pub window: u32,
    /// The method's k.
    pub k: f64,
    /// Sauvola's dynamic range of the deviation, R (128 for 8-bit pages).
    pub r: f64,
    /// Nick's threshold formula.
    pub formula: NickFormula,
    /// The kernel computing the window sums on a GPU (the CPU reference computes the same).
    pub kernel: KernelKind,
}

/// Whether the window is clipped at the border or the border replicated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Border {
    /// Outside pixels are not in the window; NP counts the ones inside.
    Clip,
    /// Outside pixels repeat the nearest edge pixel; NP = W^2.
    Replicate,
}

impl Params {
    /// The method's usual parameters ([`Method::defaults`]).
    pub fn new(method: Method) -> Self {
        method.defaults()
    }

    /// Checks the parameters, naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        if !self.method.is_local() {
            return Ok(());
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(Error::InvalidParameter {
                name: "window".into(),
                reason: format!("{} is outside 1..={MAX_WINDOW}", self.window),
            });
        }
        if self.border() == Border::Replicate && (self.window < 3 || self.window.is_multiple_of(2)) {
            return Err(Error::InvalidParameter {
                name: "window".into(),
                reason: format!(
                    "the opencv formula needs an odd window of 3 or more, as OpenCV does ({})",
                    self.window
                ),
            });
        }
        if !self.k.is_finite() {
            return Err(Error::InvalidParameter {
                name: "k".into(),
                reason: format!("{} is not a finite number", self.k),
            });
        }
        if self.method == Method::Sauvola && !(self.r.is_finite() && self.r > 0.0) {
            return Err(Error::InvalidParameter {
                name: "r".into(),
                reason: format!("{} is not a positive number", self.r),
            });
        }
        Ok(())
    }

    /// The border rule: replicated for Nick's OpenCV formula, clipped otherwise.
    pub(crate) fn border(&self) -> Border {
        if self.method == Method::Nick && self.formula == NickFormula::OpenCv {
            Border::Replicate
        } else {
            Border::Clip
        }
    }

    /// Whether the window sums of p^2 may pass 2^32 (255^2 W^2 >= 2^32 from W = 258 on).
    pub(crate) fn wide_sums(&self) -> bool {
        self.window > 257
    }

    /// A short description, e.g. `nick window=45 k=-0.1 formula=paper`.
    pub fn describe(&self) -> String {
        match self.method {
            Method::Otsu => "otsu".into(),
            Method::Nick => format!("nick window={} k={} formula={}", self.window, self.k, self.formula),
            Method::Sauvola => format!("sauvola window={} k={} r={}", self.window, self.k, self.r),
            m => format!("{m} window={} k={}", self.window, self.k),
        }
    }
}

/// The item of `all` whose name (its `Display`) is `s`, ignoring case; else an error naming
/// `what` and the choices.
fn by_name<T: Copy + fmt::Display>(s: &str, all: &[T], what: &str) -> Result<T> {
    all.iter().copied().find(|m| m.to_string().eq_ignore_ascii_case(s)).ok_or_else(|| {
        let choices = all.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", ");
        Error::InvalidParameter { name: what.into(), reason: format!("'{s}' is not one of {choices}") }
    })
}
