//! Writing label images (`.npy`, `.png`, `.tiff`) and other outputs safely: each file is written
//! to a temporary file beside the target, flushed to disk, then renamed over the target. A
//! failure at any point (a full disk, a killed process) leaves the previous file, if any,
//! untouched and no partial file behind; two writers of one path leave one complete file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use npyz::WriterBuilder;

use super::targets::parent_dir;
use crate::{Error, LabelImage, Result};

/// Output formats, chosen by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelFormat {
    /// NumPy `.npy`: `<u4`, shape (H, W), C order.
    Npy,
    /// PNG, labels colorized, background black.
    Png,
    /// TIFF, 32-bit gray labels (BigTIFF beyond 4 GB).
    Tiff,
}

impl LabelFormat {
    /// The format for a path's extension.
    pub fn from_path(path: &Path) -> Result<Self> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "npy" => Ok(LabelFormat::Npy),
            "png" => Ok(LabelFormat::Png),
            "tif" | "tiff" => Ok(LabelFormat::Tiff),
            _ => Err(Error::ImageWrite {
                path: path.display().to_string(),
                reason: format!("unknown output extension '{ext}' (use .npy, .png or .tiff)"),
            }),
        }
    }

    /// Whether volume labels can be written in this format ([`super::write_volume`]): `.npy`
    /// and multi-page TIFF can, a colorized PNG cannot.
    pub fn holds_volumes(self) -> bool {
        self != LabelFormat::Png
    }

    /// Extra host memory per pixel the writer needs beyond the labels (the colorized image of
    /// a PNG and its compressed stream: a 64 Mpx PNG output took 4 bytes a pixel more than .npy).
    pub fn extra_bytes_per_pixel(self) -> u64 {
        match self {
            LabelFormat::Png => 4,
            LabelFormat::Npy | LabelFormat::Tiff => 0,
        }
    }
}

/// Checks an output path before any work is done: a known extension, and the checks of
/// [`super::check_targets`] against `input` (the input file, or a folder and its files).
/// Returns the format.
pub fn check_output(output: &Path, input: Option<&Path>) -> Result<LabelFormat> {
    let format = LabelFormat::from_path(output)?;
    let inputs = input.map(super::input_files).unwrap_or_default();
    super::check_targets(&[("-o", output)], &inputs)?;
    Ok(format)
}

/// Whether [`write_atomically`] syncs each file before renaming it; see [`set_synced_writes`].
static SYNCED_WRITES: AtomicBool = AtomicBool::new(true);

/// Turns the sync of every output before its rename off (or back on), for the whole process;
/// on by default. Without it outputs still appear whole or not at all to every other process
/// (the rename is atomic), but after a power loss or an operating-system crash a file written
/// shortly before may be empty or short: the price of not waiting for the disk, which on a
/// folder of large outputs is most of the wall time. The command line's `--no-sync`.
pub fn set_synced_writes(synced: bool) {
    SYNCED_WRITES.store(synced, Ordering::Relaxed);
}

/// Whether outputs are synced before their rename ([`set_synced_writes`]).
pub fn synced_writes() -> bool {
    SYNCED_WRITES.load(Ordering::Relaxed)
}

/// Writes `path` through `write`, atomically: into a temporary file in the same folder
/// (`.NAME.ccl-tmp-PID-XXXXXX`, see [`super::remove_stale_temporaries`]), then flushed, synced
/// (unless [`set_synced_writes`] turned that off) and renamed over `path`. On any error the temporary file is removed and an existing `path` is
/// left as it was. An existing pipe (a FIFO, or a link to one) is written straight into instead:
/// [`super::check_targets`] allows one only for formats written front to back.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&mut File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if super::targets::is_pipe(path) {
        let mut pipe = std::fs::OpenOptions::new().write(true).open(path)?;
        let mut writer = BufWriter::with_capacity(1 << 20, &mut pipe);
        write(&mut writer)?;
        return writer.flush();
    }
    let mut temp = super::temp::Temp::new(path, parent_dir(path))?;
    {
        let mut writer = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
        write(&mut writer)?;
        writer.flush()?;
    }
    if synced_writes() {
        temp.as_file_mut().sync_all()?;
    }
    temp.persist(path)
}

/// Writes labels in the format given by the path's extension, atomically (see
/// [`write_atomically`]).
pub fn write_labels(path: &Path, labels: &LabelImage) -> Result<()> {
    let format = LabelFormat::from_path(path)?;
    let err = |reason: String| Error::ImageWrite { path: path.display().to_string(), reason };
    write_atomically(path, |w| match format {
        LabelFormat::Npy => write_npy(w, labels),
        LabelFormat::Png => write_png(w, labels),
        LabelFormat::Tiff => write_tiff(w, labels),
    })
    .map_err(|e| err(e.to_string()))
}

/// Writes a `.npy` of uint32 labels of `shape` (C order), atomically (see
/// [`write_atomically`]), its values coming from `fill` a piece at a time, in order: `fill`
/// calls the sink it is given with each piece (e.g. through
/// [`crate::Labeler::download_pieces`]), so labels are written as they arrive from the device
/// and never held whole on the host. An error of `fill` (or values short of or past the shape's
/// count) leaves no file and an existing `path` as it was.
pub fn write_labels_npy_from(
    path: &Path,
    shape: &[u64],
    fill: impl FnOnce(&mut dyn FnMut(&[u32]) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let err = |reason: String| Error::ImageWrite { path: path.display().to_string(), reason };
    let expected: u64 = shape.iter().product();
    // The first error of `fill` or of its sink, returned as it was (the writer sees only that
    // the values stopped).
    let mut failure = None;
    let written = write_atomically(path, |w| {
        npy_u32(w, shape, &[])?;
        let mut count = 0u64;
        let filled = fill(&mut |values| {
            count += values.len() as u64;
            if count > expected {
                return Err(err(format!("more than the {expected} labels of its shape")));
            }
            write_u32_le(w, values).map_err(|e| err(e.to_string()))
        });
        let filled = filled.and_then(|()| match count == expected {
            true => Ok(()),
            false => Err(err(format!("{count} labels of the {expected} of its shape"))),
        });
        filled.map_err(|e| {
            let reason = e.to_string();
            failure = Some(e);
            std::io::Error::other(reason)
        })
    });
    match failure {
        Some(e) => Err(e),
        None => written.map_err(|e| err(e.to_string())),
    }
}

/// Writes a binarization as the DIBCO convention has it, ink 0 and background 255: an 8-bit
/// gray .png or .tiff, or a .npy of uint8 (H, W); atomically (see [`write_atomically`]).
pub fn write_binary(path: &Path, ink: &crate::BinaryImage) -> Result<()> {
    let format = LabelFormat::from_path(path)?;
    let err = |reason: String| Error::ImageWrite { path: path.display().to_string(), reason };
    let pixels: Vec<u8> = ink.values().iter().map(|&p| if p != 0 { 0 } else { 255 }).collect();
    let (width, height) = (ink.width() as u32, ink.height() as u32);
    write_atomically(path, |w| match format {
        LabelFormat::Npy => npy_u8(w, (width as usize, height as usize), pixels.iter().copied()),
        LabelFormat::Png => {
            use image::ImageEncoder;
            image::codecs::png::PngEncoder::new(w)
                .write_image(&pixels, width, height, image::ExtendedColorType::L8)
                .map_err(std::io::Error::other)
        }
        LabelFormat::Tiff => {
            use tiff::encoder::{colortype::Gray8, TiffEncoder};
            TiffEncoder::new(w)
                .and_then(|mut e| e.write_image::<Gray8>(width, height, &pixels))
                .map_err(std::io::Error::other)
        }
    })
    .map_err(|e| err(e.to_string()))
}

/// Writes `values` (row-major, `width` x `height`) as a `.npy` of uint8 with shape (H, W),
/// atomically (see [`write_atomically`]).
pub fn write_npy_u8(path: &Path, (width, height): (usize, usize), values: impl IntoIterator<Item = u8>) -> Result<()> {
    write_atomically(path, |w| npy_u8(w, (width, height), values))
        .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}

fn npy_u8(
    w: &mut impl Write,
    (width, height): (usize, usize),
    values: impl IntoIterator<Item = u8>,
) -> std::io::Result<()> {
    let mut writer =
        npyz::WriteOptions::<u8>::new().default_dtype().shape(&[height as u64, width as u64]).writer(w).begin_nd()?;
    writer.extend(values)?;
    writer.finish()
}

fn write_npy(w: &mut impl Write, labels: &LabelImage) -> std::io::Result<()> {
    npy_u32(w, &[labels.height() as u64, labels.width() as u64], labels.values())
}

/// Writes `values` as a `.npy` of uint32 (`<u4`) with `shape` (C order): npyz writes the
/// header, the values go out in bulk (npyz's item-by-item writer takes 4x as long on 16 MiB).
pub(super) fn npy_u32(w: &mut impl Write, shape: &[u64], values: &[u32]) -> std::io::Result<()> {
    let dtype = npyz::DType::Plain("<u4".parse().expect("a valid type string"));
    npyz::WriteOptions::new_header_only().dtype(dtype).shape(shape).writer(&mut *w).write_header_only()?;
    write_u32_le(w, values)
}

/// Writes `values` as little-endian bytes.
fn write_u32_le(w: &mut impl Write, values: &[u32]) -> std::io::Result<()> {
    if cfg!(target_endian = "little") {
        return w.write_all(bytemuck::cast_slice(values));
    }
    for chunk in values.chunks(1 << 16) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
        w.write_all(&bytes)?;
    }
    Ok(())
}

fn write_png(w: &mut impl Write, labels: &LabelImage) -> std::io::Result<()> {
    use image::ImageEncoder;
    let rgb = colorize(labels);
    image::codecs::png::PngEncoder::new(w)
        .write_image(rgb.as_raw(), rgb.width(), rgb.height(), image::ExtendedColorType::Rgb8)
        .map_err(std::io::Error::other)
}

fn write_tiff<W: Write + std::io::Seek>(w: &mut W, labels: &LabelImage) -> std::io::Result<()> {
    use tiff::encoder::{colortype::Gray32, TiffEncoder};
    let (width, height) = (labels.width() as u32, labels.height() as u32);
    // Classic TIFF addresses 4 GB; larger label images need BigTIFF.
    let big = labels.values().len() as u64 * 4 > (u32::MAX as u64) - (1 << 20);
    let result = if big {
        TiffEncoder::new_big(w).and_then(|mut e| e.write_image::<Gray32>(width, height, labels.values()))
    } else {
        TiffEncoder::new(w).and_then(|mut e| e.write_image::<Gray32>(width, height, labels.values()))
    };
    result.map_err(std::io::Error::other)
}

/// Colorizes labels: each label gets a stable bright color from a hash, background is black.
pub fn colorize(labels: &LabelImage) -> image::RgbImage {
    image::RgbImage::from_fn(labels.width() as u32, labels.height() as u32, |x, y| {
        let l = labels.get(x as usize, y as usize);
        if l == 0 {
            return image::Rgb([0, 0, 0]);
        }
        // Fibonacci hashing spreads consecutive labels over distant hues.
        let h = l.wrapping_mul(0x9E37_79B9);
        let [a, b, c, _] = h.to_le_bytes();
        image::Rgb([64 | a, 64 | b, 64 | c])
    })
}

/// Writes component statistics as CSV, one row per component in label order, under a header
/// naming the columns in OpenCV's order (`connectedComponentsWithStats`: left, top, width,
/// height, area, then the centroid): `label,left,top,width,height,area,cx,cy` for an image,
/// `label,left,top,front,width,height,depth,area,cx,cy,cz` for a volume. Centroids are printed
/// with the digits that round-trip their f64 value. Written atomically.
pub fn write_stats_csv(path: &Path, stats: &crate::ComponentStats, volume: bool) -> Result<()> {
    write_atomically(path, |w| {
        if volume {
            writeln!(w, "label,left,top,front,width,height,depth,area,cx,cy,cz")?;
        } else {
            writeln!(w, "label,left,top,width,height,area,cx,cy")?;
        }
        for (k, c) in stats.components.iter().enumerate() {
            let [cx, cy, cz] = c.centroid();
            if volume {
                let (l, t, f, wd, h, d, a) = (c.left, c.top, c.front, c.width, c.height, c.depth, c.area);
                writeln!(w, "{},{l},{t},{f},{wd},{h},{d},{a},{cx},{cy},{cz}", k + 1)?;
            } else {
                writeln!(w, "{},{},{},{},{},{},{cx},{cy}", k + 1, c.left, c.top, c.width, c.height, c.area)?;
            }
        }
        Ok(())
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}

/// Writes region properties ([`crate::RegionTable`]) as CSV: a header of scikit-image's column
/// names, then one row per region; integer columns as integers, the others in Rust's shortest
/// exact form (`NaN` where scikit-image has NaN). Written atomically, as the labels are.
pub fn write_region_table_csv(path: &Path, table: &crate::RegionTable) -> Result<()> {
    write_atomically(path, |w| {
        let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        writeln!(w, "{}", names.join(","))?;
        for row in 0..table.rows() {
            let cells: Vec<String> = table
                .columns
                .iter()
                .map(|c| if c.integer { format!("{}", c.values[row] as i64) } else { format!("{}", c.values[row]) })
                .collect();
            writeln!(w, "{}", cells.join(","))?;
        }
        Ok(())
    })
    .map_err(|e| Error::FileWrite { path: path.display().to_string(), reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(name).tempdir().expect("scratch folder")
    }

    #[test]
    fn labels_written_in_pieces_are_the_file_written_whole() {
        let dir = scratch("npy-pieces");
        let (width, height) = (37, 23);
        let values: Vec<u32> = (0..(width * height) as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
        let labels = LabelImage::new(crate::Shape::image(width, height), values.clone()).expect("labels");
        let (whole, pieces) = (dir.path().join("whole.npy"), dir.path().join("pieces.npy"));
        write_labels(&whole, &labels).expect("whole");
        let shape = [height as u64, width as u64];
        write_labels_npy_from(&pieces, &shape, |sink| values.chunks(100).try_for_each(sink)).expect("pieces");
        assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&pieces).unwrap());
    }

    #[test]
    fn a_failed_or_short_fill_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("npy-pieces-fail");
        let path = dir.path().join("labels.npy");
        std::fs::write(&path, b"old").unwrap();
        let shape = [4, 5];
        let values = [7u32; 20];
        let own = || Error::InvalidParameter { name: "fill".into(), reason: "stopped".into() };
        let fails = [
            write_labels_npy_from(&path, &shape, |sink| sink(&values[..8]).and_then(|()| Err(own()))),
            write_labels_npy_from(&path, &shape, |sink| sink(&values[..19])),
            write_labels_npy_from(&path, &shape, |sink| sink(&values).and_then(|()| sink(&values[..1]))),
        ];
        assert!(matches!(&fails[0], Err(Error::InvalidParameter { name, .. }) if name == "fill"), "{:?}", fails[0]);
        for (i, failed) in fails[1..].iter().enumerate() {
            assert!(
                matches!(failed, Err(Error::ImageWrite { reason, .. }) if reason.contains("20")),
                "{i}: {failed:?}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "a temporary file was left");
    }
}
