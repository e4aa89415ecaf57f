//! Volumes as multi-page TIFF: one page per slice, in file order. Each page is decoded and
//! binarized exactly as a 2D input ([`super::read_image`]): the `image` crate's TIFF decoder
//! reads it through a view of the file whose header points at that page.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use image::ImageFormat;

use super::gray_float::GrayFloatPage;
use super::input::{read_decoded, Decoder};
use super::{Frames, ReadOptions};
use crate::{BinaryImage, Error, LabelImage, Result, Shape};

/// One page of a TIFF: where its directory is, and its size.
struct Page {
    ifd: u64,
    width: u32,
    height: u32,
}

/// The number of pages (images) in a TIFF file. A file that is not a TIFF, or whose chain of
/// pages is broken or loops, is an [`Error::FileRead`].
pub fn tiff_pages(path: &Path) -> Result<usize> {
    Ok(pages(path)?.len())
}

/// Reads a TIFF as a binary volume: page `z` is slice `z` (a single page gives depth 1). Every
/// page is binarized as a 2D input is ([`super::read_binary`]: `options.binarize` applies per
/// page, and a threshold is checked against each page's sample range). Pages of different sizes
/// are an [`Error::FileRead`] naming the page and both sizes; more than `options.max_pixels`
/// voxels in all an [`Error::VolumeTooLarge`], before any page is decoded; a page that cannot be
/// decoded is an [`Error::ImageRead`] naming the page.
pub fn read_volume_tiff(path: &Path, options: &ReadOptions) -> Result<BinaryImage> {
    let pages = pages(path)?;
    let (width, height) = (pages[0].width, pages[0].height);
    if let Some((i, page)) = pages.iter().enumerate().find(|(_, p)| (p.width, p.height) != (width, height)) {
        return Err(Error::FileRead {
            path: path.display().to_string(),
            reason: format!(
                "page {} is {}x{} but page 1 is {width}x{height}; the pages of a volume all have one size",
                i + 1,
                page.width,
                page.height
            ),
        });
    }
    let shape = Shape { width: width as usize, height: height as usize, depth: pages.len() };
    super::input::check_volume_extent(path, shape, options.max_pixels)?;
    let options = ReadOptions { max_pixels: crate::MAX_PIXELS, ..*options }; // (the slices: checked above)
    let mut voxels = Vec::with_capacity(shape.len());
    for (i, page) in pages.iter().enumerate() {
        let on_page = |e: Error| match e {
            Error::ImageRead { path, reason } => Error::ImageRead { path, reason: format!("page {}: {reason}", i + 1) },
            other => other,
        };
        let decoder = open_page(path, page.ifd).map_err(on_page)?;
        let decoded =
            read_decoded(path, decoder, Some(ImageFormat::Tiff), Frames::Single, &options).map_err(on_page)?;
        voxels.extend_from_slice(decoded.image.values());
    }
    BinaryImage::volume(shape.width, shape.height, shape.depth, voxels)
}

/// Writes labels as a multi-page TIFF, one page of 32-bit unsigned gray per slice (z = 0
/// first), so that readers such as tifffile or ImageJ see a (D, H, W) uint32 stack; BigTIFF
/// beyond 4 GB. Written atomically (see [`super::write_atomically`]).
pub fn write_volume_tiff(path: &Path, labels: &LabelImage) -> Result<()> {
    use tiff::encoder::{colortype::Gray32, TiffEncoder, TiffKind};
    fn pages<W: Write + Seek, K: TiffKind>(mut encoder: TiffEncoder<W, K>, labels: &LabelImage) -> std::io::Result<()> {
        let s = labels.shape();
        let slice = s.width * s.height;
        for z in 0..s.depth {
            encoder
                .write_image::<Gray32>(s.width as u32, s.height as u32, &labels.values()[z * slice..(z + 1) * slice])
                .map_err(std::io::Error::other)?;
        }
        Ok(())
    }
    // Classic TIFF addresses 4 GB; larger label volumes need BigTIFF.
    let big = labels.values().len() as u64 * 4 > (u32::MAX as u64) - (1 << 20);
    super::write_atomically(path, |w| {
        if big {
            pages(TiffEncoder::new_big(w).map_err(std::io::Error::other)?, labels)
        } else {
            pages(TiffEncoder::new(w).map_err(std::io::Error::other)?, labels)
        }
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}

/// Walks the chain of pages with the `tiff` crate (which refuses a chain that loops).
fn pages(path: &Path) -> Result<Vec<Page>> {
    let fail = |reason: String| Error::FileRead { path: path.display().to_string(), reason };
    let file = File::open(path).map_err(|e| fail(e.to_string()))?;
    // A decoder that panics on a malformed file is an unreadable file, not a crash.
    catch_unwind(AssertUnwindSafe(|| {
        let mut decoder =
            tiff::decoder::Decoder::new(BufReader::new(file)).map_err(|e| fail(format!("not a readable TIFF: {e}")))?;
        let mut pages = Vec::new();
        loop {
            let (width, height) = decoder.dimensions().map_err(|e| fail(e.to_string()))?;
            let ifd =
                decoder.ifd_pointer().ok_or_else(|| fail(format!("page {} has no directory", pages.len() + 1)))?;
            pages.push(Page { ifd: ifd.0, width, height });
            if !decoder.more_images() {
                return Ok(pages);
            }
            decoder.next_image().map_err(|e| fail(format!("page {}: {e}", pages.len() + 1)))?;
        }
    }))
    .map_err(|_| fail("the TIFF decoder failed on malformed data".into()))?
}

/// The `image` crate's decoder of the page whose directory is at `ifd`.
fn open_page(path: &Path, ifd: u64) -> Result<Decoder> {
    let err = |reason: String| Error::ImageRead { path: path.display().to_string(), reason };
    let view = PageView::open(path, ifd).map_err(|e| err(e.to_string()))?;
    let decoder = catch_unwind(AssertUnwindSafe(|| image::codecs::tiff::TiffDecoder::new(view)))
        .map_err(|_| err("the decoder failed on a malformed header".into()))?;
    match decoder {
        Ok(d) => Ok(Decoder::Image(Box::new(d))),
        // The image crate decodes float TIFF as RGB(A) only: a gray float page is read apart.
        Err(e) => PageView::open(path, ifd)
            .ok()
            .and_then(|view| GrayFloatPage::open(Box::new(view)))
            .map(|page| Decoder::GrayFloat(Box::new(page)))
            .ok_or_else(|| err(e.to_string())),
    }
}

/// A TIFF file read with the first-page offset of its header replaced by another page's, so
/// that a decoder of the first page reads that page. Every other byte is the file's.
struct PageView {
    file: BufReader<File>,
    /// The header with the offset replaced: 8 bytes (classic TIFF) or 16 (BigTIFF).
    header: [u8; 16],
    header_len: usize,
    /// The position in the file, which `file` is always at.
    pos: u64,
}

impl PageView {
    fn open(path: &Path, ifd: u64) -> std::io::Result<Self> {
        let mut file = BufReader::new(File::open(path)?);
        let mut header = [0u8; 16];
        file.read_exact(&mut header[..8])?;
        let little = header[..2] == *b"II";
        let magic = if little {
            u16::from_le_bytes([header[2], header[3]])
        } else {
            u16::from_be_bytes([header[2], header[3]])
        };
        let header_len = if magic == 43 {
            file.read_exact(&mut header[8..])?;
            header[8..].copy_from_slice(&if little { ifd.to_le_bytes() } else { ifd.to_be_bytes() });
            16
        } else {
            let ifd = u32::try_from(ifd).map_err(std::io::Error::other)?;
            header[4..8].copy_from_slice(&if little { ifd.to_le_bytes() } else { ifd.to_be_bytes() });
            8
        };
        file.seek(SeekFrom::Start(0))?;
        Ok(Self { file, header, header_len, pos: 0 })
    }

    /// Where the position is inside the header, if it is.
    fn in_header(&self) -> Option<usize> {
        usize::try_from(self.pos).ok().filter(|&p| p < self.header_len)
    }
}

impl Read for PageView {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.in_header().is_none() {
            let n = self.file.read(buf)?;
            self.pos += n as u64;
            return Ok(n);
        }
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PageView {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let at = self.in_header();
        let real = self.file.fill_buf()?;
        Ok(match at {
            Some(p) => &self.header[p..p + real.len().min(self.header_len - p)],
            None => real,
        })
    }

    fn consume(&mut self, amount: usize) {
        self.file.consume(amount);
        self.pos += amount as u64;
    }
}

impl Seek for PageView {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}
