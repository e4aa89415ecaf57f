//! Standard output and error that never panic. A closed pipe (`ccl ... | head -1`) or a full
//! device (`> /dev/full`) stops the printing, not the work: the command still writes its files,
//! then [`finish`] ends quietly on a closed pipe and reports any other failure as an error.

use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// The first error writing standard output met; later lines are not attempted.
static STDOUT_FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Prints a line on standard output (the [`say!`] macro).
pub fn out_line(args: std::fmt::Arguments) {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        *failure = Some(e);
    }
}

/// Prints a line on standard error, ignoring failures (there is nowhere left to report them);
/// the [`note!`] macro.
pub fn err_line(args: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// Flushes standard output. A closed pipe is a quiet end; any other failure is an error naming
/// standard output, reported after the command's files were written.
pub fn finish() -> ccl::Result<()> {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_none() {
        if let Err(e) = std::io::stdout().lock().flush() {
            *failure = Some(e);
        }
    }
    match failure.take() {
        None => Ok(()),
        Some(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Some(e) => Err(ccl::Error::FileWrite { path: "standard output".into(), reason: e.to_string() }),
    }
}

/// `println!` that never panics: see [`out_line`].
macro_rules! say {
    ($($arg:tt)*) => { $crate::commands::console::out_line(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics: see [`err_line`].
macro_rules! note {
    ($($arg:tt)*) => { $crate::commands::console::err_line(format_args!($($arg)*)) };
}

pub(crate) use {note, say};
