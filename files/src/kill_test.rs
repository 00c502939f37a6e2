//! Test support: kills a tool with SIGKILL at random points while it writes
//! a file, and checks that the file is then the old one or the complete new
//! one, never a part. Used by the tools' `kill_during_write` tests; the
//! tool runs with `IPU_TEST_WRITE_DELAY_US` so that kills land mid-write.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The test hook's pause after each chunk written, in microseconds.
pub const WRITE_DELAY_US: u64 = 2000;

/// What the trials saw: how many ended with the old file, the new one, and
/// how many kills left a temporary behind (landed mid-write).
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    pub old: usize,
    pub new: usize,
    pub mid_write: usize,
}

/// One writing command to test: the command, and each file it writes with
/// the old content put in place before each trial.
pub struct Writer<'a> {
    pub name: &'a str,
    pub command: &'a dyn Fn() -> Command,
    pub targets: &'a [(PathBuf, Vec<u8>)],
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn temporaries(target: &Path) -> Vec<PathBuf> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = format!(
        ".{}.ipu-tmp-",
        target.file_name().unwrap_or_default().to_string_lossy()
    );
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

fn run(w: &Writer<'_>) -> Command {
    let mut c = (w.command)();
    c.env("IPU_TEST_WRITE_DELAY_US", WRITE_DELAY_US.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn put_old(w: &Writer<'_>) -> Result<(), String> {
    for (t, old) in w.targets {
        std::fs::write(t, old).map_err(|e| format!("{}: {}: {e}", w.name, t.display()))?;
    }
    Ok(())
}

/// Runs `w` once to completion (the new contents and the run time), then
/// `trials` times killed after a delay drawn (seeded) over that run time;
/// after each, every target must equal its old or its new content.
pub fn kill_during_write(w: &Writer<'_>, trials: usize, seed: u64) -> Result<Outcome, String> {
    put_old(w)?;
    let start = Instant::now();
    let status = run(w).status().map_err(|e| format!("{}: {e}", w.name))?;
    let took = start.elapsed();
    if !status.success() {
        return Err(format!(
            "{}: the uninterrupted run failed ({status})",
            w.name
        ));
    }
    let mut new = Vec::new();
    for (t, old) in w.targets {
        let n = std::fs::read(t).map_err(|e| format!("{}: {}: {e}", w.name, t.display()))?;
        if n == *old {
            return Err(format!(
                "{}: the run did not change {}",
                w.name,
                t.display()
            ));
        }
        new.push(n);
    }
    let mut rng = Rng(seed);
    let mut outcome = Outcome::default();
    // A little past the measured time, so some kills come after the end.
    let span = took.as_micros() as u64 * 11 / 10 + 1;
    for trial in 0..trials {
        put_old(w)?;
        let mut child = run(w).spawn().map_err(|e| format!("{}: {e}", w.name))?;
        std::thread::sleep(Duration::from_micros(rng.next() % span));
        let _ = child.kill();
        let _ = child.wait();
        for ((t, old), new) in w.targets.iter().zip(&new) {
            let got = std::fs::read(t).map_err(|e| format!("{}: {e}", w.name))?;
            if got == *old {
                outcome.old += 1;
            } else if got == *new {
                outcome.new += 1;
            } else {
                return Err(format!(
                    "{}: trial {trial}: after SIGKILL {} has {} bytes, neither the old ({}) nor the new ({}) file",
                    w.name,
                    t.display(),
                    got.len(),
                    old.len(),
                    new.len()
                ));
            }
            let left = temporaries(t);
            if !left.is_empty() {
                outcome.mid_write += 1;
            }
            for tmp in left {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
    Ok(outcome)
}
