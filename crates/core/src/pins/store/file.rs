//! The pin file (the default store): one JSON document, written whole to a temporary file and renamed into place
//! (a reader never sees half of it), under an advisory lock on `<file>.lock` held by whoever
//! reads-modifies-writes it (a gateway recording what it saw, `vmcp tools approve`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::pins::book::PinBook;

/// Largest pin file read (a 5,000-tool catalog with long descriptions is a few MB).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// What identifies one written version of the file, to notice another writer's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

/// A pin file.
#[derive(Debug, Clone)]
pub struct PinFile {
    path: PathBuf,
}

/// An exclusive hold on the pin file; released on drop.
pub struct Locked<'a> {
    file: &'a PinFile,
    _lock: File,
}

impl PinFile {
    /// The pin file at `path` (it need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its current version, or None when it does not exist.
    pub fn stamp(&self) -> Option<Stamp> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some(Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&meta),
        })
    }

    /// Reads the book (empty when the file does not exist).
    ///
    /// # Errors
    /// The file cannot be read, is too large, is not a pin book, or is of a newer version.
    pub fn read(&self) -> Result<PinBook, String> {
        let path = self.path.display();
        let bytes = match File::open(&self.path) {
            Ok(f) => {
                let len = f.metadata().map_err(|e| format!("{path}: {e}"))?.len();
                if len > MAX_BYTES {
                    return Err(format!("{path}: {len} bytes, more than {MAX_BYTES}"));
                }
                std::fs::read(&self.path).map_err(|e| format!("{path}: {e}"))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PinBook::default()),
            Err(e) => return Err(format!("{path}: {e}")),
        };
        super::parse(&bytes, &path.to_string())
    }

    /// Takes the exclusive lock (blocking until other holders release it).
    ///
    /// # Errors
    /// The lock file cannot be created.
    pub fn lock(&self) -> Result<Locked<'_>, String> {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&name)
            .map_err(|e| format!("{}: {e}", Path::new(&name).display()))?;
        lock.lock()
            .map_err(|e| format!("{}: cannot lock: {e}", Path::new(&name).display()))?;
        Ok(Locked {
            file: self,
            _lock: lock,
        })
    }
}

impl Locked<'_> {
    /// Reads the book under the lock.
    ///
    /// # Errors
    /// As [`PinFile::read`].
    pub fn read(&self) -> Result<PinBook, String> {
        self.file.read()
    }

    /// Replaces the file with `book`, atomically.
    ///
    /// # Errors
    /// The temporary file cannot be written or renamed into place.
    pub fn write(&self, book: &PinBook) -> Result<(), String> {
        let path = &self.file.path;
        let mut tmp_name = path.as_os_str().to_owned();
        tmp_name.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp_name);
        let text = serde_json::to_vec_pretty(book).map_err(|e| e.to_string())?;
        let written = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(&text)?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        written.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: cannot write: {e}", path.display())
        })
    }
}
