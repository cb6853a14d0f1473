//! Where a writer's bytes go until its file is complete.
//!
//! On Linux the bytes go to an unnamed file in the target's directory (`O_TMPFILE`), which gets
//! a name only when the file is complete: a process killed in any way (even `SIGKILL`, or a
//! crash of the machine) leaves nothing behind. Where the system has no unnamed files, the bytes
//! go to a visible `NAME.partial` beside the target, removed when the writer is dropped and
//! replaced by the next writer of the same target. Either way the file is created with mode
//! `0o666` less the process's umask, like any file a user creates.
//!
//! A file already at the target is replaced only when asked to (`replace`): otherwise it is
//! refused when the output is created, and again, atomically, when the output gets its name (a
//! file that appeared meanwhile stays).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A file being written that gets its name only when complete ([`Output::persist`]); dropped
/// before, it leaves nothing behind. Every evtc writer writes through one; writers of other
/// formats (ROOT files) use it for the same guarantee.
#[derive(Debug)]
pub struct Output {
    file: File,
    /// The visible partial file, removed on drop unless given its final name.
    partial: Option<PathBuf>,
}

impl Output {
    /// Starts a file that will become `target`, replacing a file there only if `replace`.
    /// Fails at once if `target` is a directory, its directory cannot be written, or, without
    /// `replace`, something is at `target` already (an error of kind `AlreadyExists`).
    pub fn create(target: &Path, replace: bool) -> io::Result<Output> {
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file name",
            ));
        }
        if !replace && target.symlink_metadata().is_ok() {
            return Err(exists());
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        #[cfg(target_os = "linux")]
        match unnamed(dir) {
            Ok(file) => {
                return Ok(Output {
                    file,
                    partial: None,
                });
            }
            // No unnamed files on this file system (or no /proc to name them through).
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                ) || e.kind() == io::ErrorKind::Unsupported => {}
            Err(e) => return Err(e),
        }
        let partial = partial_path(target);
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
        let file = options.open(&partial)?;
        Ok(Output {
            file,
            partial: Some(partial),
        })
    }

    /// The file, for writing (and reading back what was written).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Gives the written bytes the name `path`: with `replace`, replacing a file already there
    /// in one step, else only if nothing is there (an error of kind `AlreadyExists` otherwise,
    /// the file there untouched).
    pub fn persist(mut self, path: &Path, replace: bool) -> io::Result<()> {
        match self.partial.take() {
            Some(partial) => {
                let named = if replace {
                    std::fs::rename(&partial, path)
                } else {
                    // A second name fails where the target exists; then the partial name goes.
                    std::fs::hard_link(&partial, path)
                        .map_err(|e| match e.kind() {
                            io::ErrorKind::AlreadyExists => exists(),
                            _ => e,
                        })
                        .map(|()| {
                            let _ = std::fs::remove_file(&partial);
                        })
                };
                named.inspect_err(|_| self.partial = Some(partial.clone()))
            }
            #[cfg(target_os = "linux")]
            None => link(&self.file, path, replace),
            #[cfg(not(target_os = "linux"))]
            None => unreachable!("unnamed files exist only on Linux"),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(partial) = &self.partial {
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// The error of a target that exists and may not be replaced.
fn exists() -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        "exists, and is not replaced unless asked to",
    )
}

/// `NAME.partial` beside `target`.
pub(crate) fn partial_path(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// An unnamed file in `dir`.
#[cfg(target_os = "linux")]
fn unnamed(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if !Path::new("/proc/self/fd").is_dir() {
        return Err(io::Error::from(io::ErrorKind::Unsupported));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
}

/// Names the unnamed `file` `path`: directly when nothing is there, else (with `replace`)
/// through a fresh name in the same directory renamed over `path`.
#[cfg(target_os = "linux")]
fn link(file: &File, path: &Path, replace: bool) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;

    let source = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let linkat = |to: &Path| -> io::Result<()> {
        let to = CString::new(to.as_os_str().as_bytes())?;
        // SAFETY: both paths are valid NUL-terminated strings that outlive the call; linkat
        // reads them and touches no other memory.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                source.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    match linkat(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !replace => return Err(exists()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        other => return other,
    }
    for attempt in 0..100u32 {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{}.{attempt}.new", std::process::id()));
        let fresh = PathBuf::from(name);
        match linkat(&fresh) {
            Ok(()) => {
                return std::fs::rename(&fresh, path).inspect_err(|_| {
                    let _ = std::fs::remove_file(&fresh);
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name to replace the existing file through",
    ))
}
