//! A secret value (a token, a client secret, an injected header value) that never shows itself in
//! logs, errors or panics: `Debug` and `Display` print a placeholder; only [`Secret::expose`]
//! gives the value, at the one place that must send it.

use std::fmt;
use std::sync::Arc;

/// A string that redacts itself. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Self(value.into())
    }

    /// The value, for the request that carries it. Never log what this returns.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_its_value() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s}"), "<redacted>");
        assert!(!format!("{s:?}").contains("hunter2"));
        assert!(!format!("{:?}", Some(s.clone())).contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }
}
