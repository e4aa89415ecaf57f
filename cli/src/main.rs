//! The `ccl` command line: list devices, label images, benchmark, generate test images.
//!
//! Exit status: 0 on success (also when standard output was closed early, e.g. by `| head`),
//! 2 on invalid arguments (clap's usage errors, and every value found invalid later: a
//! parameter out of range, a threshold outside the input's range, a connectivity the input or
//! algorithm does not take), 1 on any other error; errors are printed on standard error as
//! `error: ...`. SIGINT, SIGTERM and SIGHUP remove the unfinished outputs' temporary files, then
//! end the process by that signal (a shell's status 130, 143, 129).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;

use commands::console::{note, say};

#[derive(Parser)]
#[command(name = "ccl", version, about = "GPU connected-components labeling on OpenCL and CUDA")]
struct Cli {
    /// Do not wait for each output to reach the disk before renaming it into place: outputs
    /// still appear whole to other programs, but a power loss may leave recent ones empty.
    /// Faster on folders of large outputs (see docs/guarantees.md).
    #[arg(long, global = true)]
    no_sync: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every device (CUDA, OpenCL, CPU reference) with the identifier to pass to --device.
    Devices,
    /// Label the connected components of an image.
    Label(commands::label::LabelArgs),
    /// Binarize a gray page on a device (Nick, Sauvola, Niblack, Wolf, Otsu): ink 0, background 255.
    Binarize(commands::binarize::BinarizeArgs),
    /// Binarization quality on the DIBCO pages (F-measure, pseudo F-measure, PSNR, DRD).
    Eval(commands::eval::EvalArgs),
    /// Benchmark algorithms and backends (tables, results.csv, plots).
    #[command(subcommand)]
    Bench(commands::bench::BenchCommand),
    /// Write a random binary image (MT19937, the papers' density x granularity images) as PNG.
    Generate(commands::generate::GenerateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    ccl::io::set_synced_writes(!cli.no_sync);
    commands::outputs::remove_temporaries_on_signals();
    let result = match cli.command {
        Command::Devices => devices(),
        Command::Label(args) => commands::label::label(args),
        Command::Binarize(args) => commands::binarize::binarize(args),
        Command::Eval(args) => commands::eval::eval(args),
        Command::Generate(args) => commands::generate::generate(args),
        Command::Bench(command) => commands::bench::bench(command),
    };
    match result.and_then(|()| commands::console::finish()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = commands::console::finish();
            note!("error: {e}");
            exit_status(&e)
        }
    }
}

/// 2 for an error about the values of the command line (as clap's usage errors), 1 otherwise.
fn exit_status(e: &ccl::Error) -> ExitCode {
    use ccl::Error as E;
    match e {
        E::InvalidParameter { .. } | E::ConnectivityDimensions { .. } | E::UnsupportedConnectivity { .. } => {
            ExitCode::from(2)
        }
        _ => ExitCode::FAILURE,
    }
}

fn devices() -> ccl::Result<()> {
    let found = ccl::discover();
    for d in &found.devices {
        say!("{d}");
    }
    for (backend, reason) in &found.unavailable {
        say!("# {backend}: {reason}");
    }
    Ok(())
}
