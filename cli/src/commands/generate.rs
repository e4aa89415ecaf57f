//! `ccl generate`: a random binary image as PNG (the papers' density x granularity images).

use std::path::PathBuf;

use ccl::io::write_atomically;
use ccl::{Error, Result};

use super::console::say;

/// The largest width or height of a PNG (2^31 - 1, the PNG specification's limit).
const PNG_MAX_SIDE: u64 = (1 << 31) - 1;

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// Output PNG (foreground 255, background 0).
    #[arg(short, long)]
    output: PathBuf,
    /// Width in pixels, at most 2147483647 (PNG's limit; width x height at most 4294967295).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=PNG_MAX_SIDE))]
    width: u64,
    /// Height in pixels, at most 2147483647 (PNG's limit).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=PNG_MAX_SIDE))]
    height: u64,
    /// Foreground density, percent (0-100).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    density: u32,
    /// Side of the squares each random draw decides (1 = per pixel), 1-65535.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=65535))]
    granularity: u64,
    /// MT19937 seed.
    #[arg(long, default_value_t = 5489)]
    seed: u32,
}

/// Runs `ccl generate` (clap refuses sides a PNG cannot hold): refuses images the host memory cannot
/// (about 2 bytes a pixel: the image and its samples; measured 131 MB for 8000x8000), before
/// any work.
pub fn generate(args: GenerateArgs) -> Result<()> {
    let werr = |reason: String| Error::ImageWrite { path: args.output.display().to_string(), reason };
    if !args.output.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        return Err(werr("generate writes PNG: give a .png output".into()));
    }
    if args.width * args.height > ccl::MAX_PIXELS {
        return Err(Error::TooManyPixels { width: args.width as usize, height: args.height as usize });
    }
    super::outputs::check(&[("-o", &args.output)], &[])?;
    let needed = 2 * args.width * args.height + 4 * args.width;
    if let Some(available) = ccl::io::available_memory().filter(|&a| a < needed) {
        return Err(Error::InsufficientMemory {
            what: format!("generating {}x{}", args.width, args.height),
            needed_bytes: needed,
            available_bytes: available,
        });
    }
    let (w, h) = (args.width as usize, args.height as usize);
    let image = ccl::random_image(w, h, args.density, args.granularity as usize, args.seed)?;
    let pixels: Vec<u8> = image.values().iter().map(|&p| p * 255).collect();
    drop(image);
    write_atomically(&args.output, |out| {
        use image::ImageEncoder;
        image::codecs::png::PngEncoder::new(out)
            .write_image(&pixels, w as u32, h as u32, image::ExtendedColorType::L8)
            .map_err(std::io::Error::other)
    })
    .map_err(|e| werr(e.to_string()))?;
    say!(
        "wrote {} ({}x{}, density {}%, granularity {}, seed {})",
        args.output.display(),
        args.width,
        args.height,
        args.density,
        args.granularity,
        args.seed
    );
    Ok(())
}
