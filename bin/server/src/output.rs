//! Writing to standard output without `println!`, which panics when stdout is closed or a pipe
//! whose reader went away. The server only informs there (what it prints is also in the data
//! directory or the log), so a failed write is logged once and otherwise ignored.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static WARNED: AtomicBool = AtomicBool::new(false);

/// Writes one line to standard output; a failure is logged (once), never a panic.
pub fn say(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let result = out
        .write_fmt(line)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(err) = result {
        if !WARNED.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %err, "cannot write to standard output; carrying on without it");
        }
    }
}

/// Writes `text` to standard output for a command whose output is its result (a zuliprc):
/// failing to write is that command's failure.
pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// `say!("...", args)`: [`say`] with `format_args!`.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::output::say(format_args!($($arg)*))
    };
}
