//! The outputs of a command: all checked before any work ([`check`]), and never left half
//! written when the command is interrupted ([`remove_temporaries_on_signals`]).

use std::path::{Path, PathBuf};

use ccl::{io, Result};

use super::console::note;

/// Checks every output of a command, each `(option, path)`, against each other and against
/// `inputs` ([`io::check_targets`]), then removes the temporary files a killed ccl run left in
/// their folders ([`io::remove_stale_temporaries`]), saying so.
pub fn check(outputs: &[(&str, &Path)], inputs: &[PathBuf]) -> Result<()> {
    io::check_targets(outputs, inputs)?;
    let mut folders: Vec<PathBuf> = Vec::new();
    for (_, path) in outputs {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    for folder in folders {
        sweep(&folder);
    }
    Ok(())
}

/// Removes the temporary files (and folders) a killed ccl run left in `folder`
/// ([`io::remove_stale_temporaries`]), saying so.
pub fn sweep(folder: &Path) {
    let removed = io::remove_stale_temporaries(folder);
    if let Some(first) = removed.first() {
        let n = removed.len();
        note!(
            "note: removed {n} unfinished temporary file{} that an interrupted ccl run left in {} ({}{})",
            if n == 1 { "" } else { "s" },
            folder.display(),
            first.file_name().unwrap_or_default().to_string_lossy(),
            if n > 1 { ", ..." } else { "" }
        );
    }
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary files of the outputs being written
/// ([`io::remove_live_temporaries`]; outputs already written stay whole) and ends the process by
/// that signal, as if unhandled: a shell reports status 128 + N (130 for SIGINT, 143 for
/// SIGTERM).
pub fn remove_temporaries_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let removed = io::remove_live_temporaries();
            let name = match signal {
                SIGINT => "SIGINT",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            match removed {
                0 => note!("\nccl: stopped by {name}"),
                1 => note!("\nccl: stopped by {name}; removed the unfinished output file"),
                n => note!("\nccl: stopped by {name}; removed {n} unfinished output files"),
            }
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}
