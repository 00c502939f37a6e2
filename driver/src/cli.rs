//! What every tool's command line shares: argument parsing with clap's exit
//! conventions, and a stderr stream for diagnostics (coloured on a terminal).

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::ffi::OsString;

/// Parses `args`; on `--help`/`--version` or an error, the exit code to return.
pub fn parse_args(
    cmd: clap::Command,
    args: impl IntoIterator<Item = OsString>,
) -> Result<clap::ArgMatches, i32> {
    cmd.try_get_matches_from(args).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            1
        } else {
            0
        }
    })
}

/// Standard error for diagnostics: colour only on a terminal, never with `NO_COLOR`
/// (termcolor's `Auto` does not check for a terminal).
pub fn stderr_stream() -> StandardStream {
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    StandardStream::stderr(if colour {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    })
}
