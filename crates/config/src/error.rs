//! Configuration errors: the public [`ConfigError`]/[`ConfigErrors`] pair, and the
//! crate-internal key path and issue collector that every loading stage writes to.
//!
//! Loading never stops at the first problem: each stage pushes issues (a key path and
//! a message) into one [`Issues`] list, and `lib.rs` turns them into [`ConfigErrors`]
//! with line numbers at the end.

use std::cell::RefCell;
use std::fmt;

/// One problem found in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(path, *line, message))]
pub struct ConfigError {
    /// Key path of the offending value, e.g. `backends[1].url`; empty for the whole document.
    pub path: String,
    /// 1-based line in the YAML text, when it could be located.
    pub line: Option<usize>,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

fn render(path: &str, line: Option<usize>, message: &str) -> String {
    let path = if path.is_empty() { "<document>" } else { path };
    match line {
        Some(n) => format!("{path} (line {n}): {message}"),
        None => format!("{path}: {message}"),
    }
}

/// Every problem found while loading a configuration, sorted by line.
///
/// `Display` prints one problem per line: `path (line N): message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// A single error that has no key path or line (I/O, malformed JSON input, ...).
    pub fn single(message: impl Into<String>) -> Self {
        Self(vec![ConfigError {
            path: String::new(),
            line: None,
            message: message.into(),
        }])
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// A path from the document root to a value, e.g. `backends[1].url`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyPath(pub(crate) Vec<Seg>);

impl KeyPath {
    /// The document root.
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// This path extended by a mapping key.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(key.to_owned()));
        Self(segs)
    }

    /// This path extended by a sequence index.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(index));
        Self(segs)
    }

    /// Whether `self` equals `other` or lies inside it.
    fn within(&self, other: &KeyPath) -> bool {
        self.0.starts_with(&other.0)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// One problem before line numbers are attached.
#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub(crate) path: KeyPath,
    pub(crate) message: String,
}

/// The shared list that every stage appends to.
///
/// Interior mutability lets the decoder hand `&Issues` to nested readers freely.
#[derive(Debug, Default)]
pub(crate) struct Issues(RefCell<Vec<Issue>>);

impl Issues {
    /// Records a problem at `path`.
    pub(crate) fn push(&self, path: &KeyPath, message: impl Into<String>) {
        self.0.borrow_mut().push(Issue {
            path: path.clone(),
            message: message.into(),
        });
    }

    /// Records a problem unless one was already recorded at `path` or above it, so
    /// that a value that failed to decode is not reported again as "missing".
    pub(crate) fn push_new(&self, path: &KeyPath, message: impl Into<String>) {
        let covered = self.0.borrow().iter().any(|i| path.within(&i.path));
        if !covered {
            self.push(path, message);
        }
    }

    /// Whether a problem was recorded at `path` or below it.
    pub(crate) fn has_at(&self, path: &KeyPath) -> bool {
        self.0.borrow().iter().any(|i| i.path.within(path))
    }

    /// Whether nothing has been recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// The recorded problems, in the order they were found.
    pub(crate) fn into_vec(self) -> Vec<Issue> {
        self.0.into_inner()
    }
}
