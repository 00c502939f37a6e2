//! What every tool's command line shares: argument parsing with clap's exit
//! conventions, and a stderr stream for diagnostics (coloured on a terminal).

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::ffi::OsString;
use std::io::Write;

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

/// Writes an output file through the one atomic writer ([`ipu_files`]): the
/// old file stays whole unless the new one is complete.
pub fn write_output(
    path: impl AsRef<std::path::Path>,
    bytes: impl AsRef<[u8]>,
) -> Result<(), String> {
    let path = path.as_ref();
    ipu_files::write_atomic(path, bytes)
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

/// A tool's streamed output (`-o`): standard output for `-`, else a
/// temporary beside the file that [`Output::commit`] renames over it. A
/// run that fails drops it uncommitted, which leaves the old file as it was.
pub enum Output {
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
    File(ipu_files::AtomicFile),
}

impl Output {
    /// Opens `path` (`-`: standard output).
    pub fn open(path: &str) -> Result<Output, String> {
        if path == "-" {
            return Ok(Output::Stdout(std::io::BufWriter::new(
                std::io::stdout().lock(),
            )));
        }
        ipu_files::AtomicFile::create(path)
            .map(Output::File)
            .map_err(|e| format!("cannot open output '{path}': {e}"))
    }

    /// Finishes the output: flushes standard output, or puts the file in place.
    pub fn commit(self) -> std::io::Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush(),
            Output::File(f) => f.commit(),
        }
    }
}

impl std::io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::File(f) => f.flush(),
        }
    }
}
