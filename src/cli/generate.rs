//! `ccl generate`: a random binary image as PNG (the papers' density x granularity images).

use std::path::PathBuf;

use ccl::io::write_atomically;
use ccl::{Error, Result};

use super::console::say;

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// Output PNG (foreground 255, background 0).
    #[arg(short, long)]
    output: PathBuf,
    /// Width in pixels (width x height at most 4294967295).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=ccl::MAX_PIXELS))]
    width: u64,
    /// Height in pixels.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=ccl::MAX_PIXELS))]
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

/// Runs `ccl generate`.
pub fn generate(args: GenerateArgs) -> Result<()> {
    let werr = |reason: String| Error::ImageWrite { path: args.output.display().to_string(), reason };
    if !args.output.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
        return Err(werr("generate writes PNG: give a .png output".into()));
    }
    let (w, h) = (args.width as usize, args.height as usize);
    let image = ccl::random_image(w, h, args.density, args.granularity as usize, args.seed)?;
    let pixels: Vec<u8> = image.pixels().iter().map(|&p| p * 255).collect();
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
