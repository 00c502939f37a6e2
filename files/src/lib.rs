//! The one way the tools write an output file: into a temporary file in the
//! target's own folder, flushed and fsynced, then renamed over the target.
//! A rename within a folder is atomic, so a reader (or a later run) sees the
//! old file or the complete new one, never a part: a failed command, a full
//! disk or a signal mid-write leaves the old file as it was. On an error, or
//! when an [`AtomicFile`] is dropped without [`AtomicFile::commit`], the
//! temporary is removed; only a process killed outright (SIGKILL) can leave
//! one behind, named `.<target>.ipu-tmp-<pid>-<n>` so it is never mistaken
//! for output.
//!
//! A target that exists and is not a regular file (`/dev/null`, a FIFO, a
//! terminal) cannot be replaced by a rename; it is written in place.
//!
//! Test hook: `IPU_TEST_WRITE_DELAY_US=N` sleeps N microseconds after each
//! chunk written to a temporary, so a test can kill a tool mid-write
//! (`driver/tests/kill_during_write.rs`). It is for tests only.

pub mod kill_test;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The chunk [`write_atomic`] writes at a time (so the test delay has
/// somewhere to land on small files too).
const CHUNK: usize = 4096;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: the old file, or the complete new one.
pub fn write_atomic(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    for c in bytes.as_ref().chunks(CHUNK) {
        f.write_all(c)?;
    }
    f.commit()
}

/// An output file being written: a temporary beside the target, renamed over
/// it by [`commit`](AtomicFile::commit); removed when dropped uncommitted.
pub struct AtomicFile {
    target: PathBuf,
    /// The temporary (None: the target is written in place, see the module docs).
    tmp: Option<PathBuf>,
    file: Option<io::BufWriter<File>>,
    delay: Option<Duration>,
}

impl AtomicFile {
    /// Opens a temporary for `path` in `path`'s folder (which must exist).
    pub fn create(path: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let target = path.as_ref().to_path_buf();
        let delay = std::env::var("IPU_TEST_WRITE_DELAY_US")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_micros);
        if let Ok(meta) = std::fs::metadata(&target) {
            if meta.is_dir() {
                return Err(io::Error::other("it is a directory"));
            }
            if !meta.is_file() {
                let file = std::fs::OpenOptions::new().write(true).open(&target)?;
                return Ok(AtomicFile {
                    target,
                    tmp: None,
                    file: Some(io::BufWriter::new(file)),
                    delay,
                });
            }
        }
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::other("the output path names no file"))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".ipu-tmp-{}-{n}", std::process::id()));
            let tmp = dir.join(tmp_name);
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(file) => {
                    return Ok(AtomicFile {
                        target,
                        tmp: Some(tmp),
                        file: Some(io::BufWriter::with_capacity(64 << 10, file)),
                        delay,
                    })
                }
                // A leftover of a killed run with the same pid: take the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The file this will replace.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, fsyncs and renames the temporary over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("output already closed"))?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        let Some(tmp) = self.tmp.take() else {
            return Ok(());
        };
        let done = file
            .sync_all()
            .and_then(|()| std::fs::rename(&tmp, &self.target));
        drop(file);
        if let Err(e) = done {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // The rename itself survives a crash once the folder is synced too.
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let f = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("output already closed"))?;
        let n = f.write(buf)?;
        if let Some(d) = self.delay {
            // Test hook: the bytes reach the temporary before the pause.
            f.flush()?;
            std::thread::sleep(d);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file.take();
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ipu-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_the_target_and_leaves_no_temporary() {
        let d = scratch("replace");
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        write_atomic(&p, vec![7u8; 10_000]).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), vec![7u8; 10_000]);
        assert_eq!(entries(&d), ["out.txt"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn an_uncommitted_file_keeps_the_old_target() {
        let d = scratch("drop");
        let p = d.join("out.txt");
        std::fs::write(&p, b"old").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"new, but the work failed").unwrap();
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(&d), ["out.txt"]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_missing_folder_or_a_directory_target_is_an_error() {
        let d = scratch("errors");
        assert!(write_atomic(d.join("no/such/dir/f"), b"x").is_err());
        assert!(write_atomic(&d, b"x").is_err());
        assert!(entries(&d).is_empty());
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_device_is_written_in_place() {
        write_atomic("/dev/null", b"discarded").unwrap();
        assert!(Path::new("/dev/null").exists());
    }
}
