//! Where the pin book is kept: a file beside the config (one gateway, or replicas sharing a
//! volume), or Redis when replicas share `sessionStorage: redis`, so they all agree. Either way
//! a writer takes a lock, reads, changes and writes the whole book, and readers notice a new
//! version by a cheap check (the file's metadata, a revision counter in Redis).

mod file;
mod redis;

pub use file::{Locked, PinFile, Stamp};
pub use redis::RedisPins;

use super::book::{BOOK_VERSION, PinBook};
use super::view::fingerprint;

/// A pin book's home.
#[derive(Clone)]
pub enum PinStore {
    /// A JSON file.
    File(PinFile),
    /// A Redis key shared by replicas.
    Redis(RedisPins),
}

impl PinStore {
    /// Where it is, for logs and `/status`.
    pub fn describe(&self) -> String {
        match self {
            PinStore::File(f) => f.path().display().to_string(),
            PinStore::Redis(r) => format!("redis key {}", r.key()),
        }
    }

    /// A token that changes whenever the book is written (None: nothing written yet).
    ///
    /// # Errors
    /// The store cannot be reached.
    pub async fn version(&self) -> Result<Option<String>, String> {
        match self {
            PinStore::File(f) => Ok(f.stamp().map(|s| format!("{s:?}"))),
            PinStore::Redis(r) => r.version().await,
        }
    }

    /// The book (empty when none was written yet).
    ///
    /// # Errors
    /// The store cannot be read, or holds something that is not a valid pin book.
    pub async fn read(&self) -> Result<PinBook, String> {
        match self {
            PinStore::File(f) => {
                let f = f.clone();
                blocking(move || f.read()).await
            }
            PinStore::Redis(r) => r.read().await,
        }
    }

    /// Reads the book under the store's lock, lets `change` edit it, writes it back; returns
    /// the book written, `change`'s answer and the new version.
    ///
    /// # Errors
    /// The lock cannot be taken, or the book read or written.
    pub async fn update<R: Send + 'static>(
        &self,
        change: impl FnOnce(&mut PinBook) -> R + Send + 'static,
    ) -> Result<(PinBook, R, Option<String>), String> {
        match self {
            PinStore::File(f) => {
                let f = f.clone();
                blocking(move || {
                    let held = f.lock()?;
                    let mut book = held.read()?;
                    let answer = change(&mut book);
                    held.write(&book)?;
                    Ok((book, answer, f.stamp().map(|s| format!("{s:?}"))))
                })
                .await
            }
            PinStore::Redis(r) => r.update(change).await,
        }
    }
}

/// Runs file I/O off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("pin store task failed: {e}"))?
}

/// Parses and checks a stored book; `source` names it in errors.
fn parse(bytes: &[u8], source: &str) -> Result<PinBook, String> {
    let book: PinBook =
        serde_json::from_slice(bytes).map_err(|e| format!("{source} is not a pin file: {e}"))?;
    if book.version > BOOK_VERSION {
        return Err(format!(
            "{source} is version {} of the pin file; this vmcp reads up to {BOOK_VERSION}",
            book.version
        ));
    }
    // Pins are compared by definition; a fingerprint that does not match its definition means
    // the book was edited by hand, and what was approved is no longer certain.
    if let Some((backend, kind, name, _)) = book
        .all_pins()
        .find(|(_, _, _, pin)| fingerprint(&pin.definition) != pin.fingerprint)
    {
        return Err(format!(
            "{source}: the pin of {backend} {} {name} has a fingerprint that does not match its definition (edited by hand?); pin again with `vmcp tools pin`",
            kind.as_str()
        ));
    }
    Ok(book)
}
