//! Gray 32-bit float TIFF pages (as scikit-image, tifffile and ImageJ save float images), which
//! the `image` crate does not decode (it maps float TIFF to RGB and RGBA only): they are read
//! with the `tiff` crate.

use std::io::{Read, Seek};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::{SampleFormat, Tag};

/// A source of TIFF bytes.
pub(super) trait TiffSource: Read + Seek + Send {}

impl<T: Read + Seek + Send> TiffSource for T {}

/// One gray float page, its header read.
pub(super) struct GrayFloatPage {
    decoder: Decoder<Box<dyn TiffSource>>,
    width: u32,
    height: u32,
    max_alloc: Option<u64>,
}

impl GrayFloatPage {
    /// The first page of `source` when it is one gray sample of 32-bit IEEE float per pixel;
    /// `None` for any other TIFF or a file the `tiff` crate cannot open.
    pub(super) fn open(source: Box<dyn TiffSource>) -> Option<Self> {
        // A decoder that panics on a malformed file opens nothing.
        catch_unwind(AssertUnwindSafe(|| Self::open_unguarded(source))).ok().flatten()
    }

    fn open_unguarded(source: Box<dyn TiffSource>) -> Option<Self> {
        let mut decoder = Decoder::new(source).ok()?;
        if decoder.colortype().ok()? != tiff::ColorType::Gray(32) {
            return None;
        }
        let formats = decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).ok()??;
        if formats.is_empty() || formats.iter().any(|&f| SampleFormat::from_u16(f) != Some(SampleFormat::IEEEFP)) {
            return None;
        }
        let (width, height) = decoder.dimensions().ok()?;
        Some(Self { decoder, width, height, max_alloc: None })
    }

    /// Width and height in pixels.
    pub(super) fn dimensions(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Bytes the decoded samples take.
    pub(super) fn total_bytes(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height) * 4
    }

    /// Limits what decoding may allocate to `bytes`.
    pub(super) fn set_max_alloc(&mut self, bytes: u64) {
        self.max_alloc = Some(bytes);
    }

    /// Decodes the samples, row by row.
    pub(super) fn read(mut self) -> Result<Vec<f32>, String> {
        if let Some(bytes) = self.max_alloc {
            let mut limits = Limits::default();
            let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
            limits.decoding_buffer_size = limits.decoding_buffer_size.max(bytes);
            limits.intermediate_buffer_size = limits.intermediate_buffer_size.max(bytes);
            self.decoder = self.decoder.with_limits(limits);
        }
        match self.decoder.read_image().map_err(|e| e.to_string())? {
            DecodingResult::F32(samples) if samples.len() as u64 == self.total_bytes() / 4 => Ok(samples),
            DecodingResult::F32(samples) => Err(format!(
                "the page holds {} samples; its size {}x{} has more",
                samples.len(),
                self.width,
                self.height
            )),
            _ => Err("the float page decoded to samples of another type".into()),
        }
    }
}
