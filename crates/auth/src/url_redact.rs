//! URLs in a form safe to show. A backend's or an endpoint's URL can hold a credential in its
//! userinfo (`https://user:pw@…`), its path (`https://actions.example/mcp/sk-…/sse`) or its query
//! (`?api_key=…`, common for SaaS MCP servers), and a URL is printed wherever a request to it fails:
//! errors relayed to clients, `/status`, log lines, audit lines.
//!
//! One rule, [`redact_url`], decides what of a URL may be shown; every place that displays a URL
//! goes through it. [`UrlSecrets`] applies the same rule the other way round: it knows the parts
//! the rule hides and scrubs them out of text the gateway did not write itself (a backend's error
//! page that echoes the request path).
//!
//! The crate that holds [`crate::Secret`] holds this too: every crate that shows a URL (backend,
//! core, server, audit) depends on it, and its own requests (token endpoints, OIDC) need the rule.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use url::Url;

/// What replaces a hidden part.
const REDACTED: &str = "REDACTED";

/// What stands for text that does not parse as a URL (never the text itself).
const UNPARSEABLE: &str = "<unparseable URL>";

/// Longest path segment or query key shown.
const MAX_WORD: usize = 32;
/// Longest run of letters shown between separators.
const MAX_LETTERS: usize = 12;
/// Longest run mixing in digits shown between separators (`v1`, `s3`, `2fa`).
const MAX_WITH_DIGITS: usize = 3;

/// Hidden parts shorter than this are not scrubbed out of other text (replacing every `pw` or
/// `true` would mangle it); [`redact_url`] hides them all the same.
const MIN_SCRUB_LEN: usize = 6;

/// `url` as it may be shown in any error, log line, status field, audit event or label.
///
/// The rule:
/// - the scheme, host and port are kept: they say where a failure happened (a host name is
///   public through DNS anyway);
/// - the userinfo (`user:password@`) is dropped;
/// - each path segment is kept only if it *reads as a word* (below), else it becomes `REDACTED`;
/// - every query value becomes `REDACTED`; a key is kept if it reads as a word, letter case
///   aside (`apiKey=REDACTED`); an item without `=` is judged like a path segment;
/// - the fragment is dropped.
///
/// A segment reads as a word when it is at most 32 characters of lowercase ASCII letters, digits,
/// `-`, `_` and `.`, and each run between those separators is at most 12 letters, or at most 3
/// characters if it has a digit. `mcp`, `sse`, `v1`, `streamable-http` read as words; a token
/// does not, being long, mixing letters with digits or cases, or encoded (`sk-abc123`, a UUID,
/// hex, base64). A secret made only of short lowercase words cannot be told from a path and
/// would show: such a secret belongs in a header (`headers`, `outgoingAuth`), not in a URL.
///
/// Text that does not parse as a URL is shown as `<unparseable URL>`, never as itself.
///
/// ```
/// use vmcp_auth::redact_url;
/// assert_eq!(
///     redact_url("https://me:pw@api.example:8443/mcp/sk-abc123/sse?api_key=XYZ&v=2#top"),
///     "https://api.example:8443/mcp/REDACTED/sse?api_key=REDACTED&v=REDACTED"
/// );
/// assert_eq!(redact_url("not a url"), "<unparseable URL>");
/// ```
pub fn redact_url(url: impl AsRef<str>) -> String {
    match Url::parse(url.as_ref()) {
        Ok(u) => split(&u).shown,
        Err(_) => UNPARSEABLE.to_string(),
    }
}

/// The parts of one URL that [`redact_url`] hides, to scrub out of text about that URL (a
/// backend's error page echoing the request path, say). Parts shorter than 6 characters or that
/// read as words (`?format=json`) are left in such text, which they would only garble.
#[derive(Clone, Default)]
pub struct UrlSecrets {
    /// Longest first, so a secret containing another is replaced whole; each as written in the
    /// URL and, when different, percent-decoded.
    hidden: Vec<String>,
}

impl std::fmt::Debug for UrlSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UrlSecrets({} parts)", self.hidden.len())
    }
}

impl UrlSecrets {
    /// The hidden parts of `url` (none when it does not parse).
    pub fn new(url: impl AsRef<str>) -> Self {
        let Ok(u) = Url::parse(url.as_ref()) else {
            return Self::default();
        };
        let mut hidden = Vec::new();
        for part in split(&u).hidden {
            let decoded = percent_decode_str(&part).decode_utf8_lossy().into_owned();
            if decoded != part {
                hidden.push(decoded);
            }
            hidden.push(part);
        }
        hidden.retain(|p| p.len() >= MIN_SCRUB_LEN && !reads_as_word(p));
        hidden.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        hidden.dedup();
        Self { hidden }
    }

    /// Whether there is nothing to scrub.
    pub fn is_empty(&self) -> bool {
        self.hidden.is_empty()
    }

    /// `text` with every hidden part replaced by `REDACTED`.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for part in &self.hidden {
            if out.contains(part.as_str()) {
                out = Cow::Owned(out.replace(part.as_str(), REDACTED));
            }
        }
        out
    }
}

/// A URL split into what is shown and what is hidden.
struct Split {
    shown: String,
    hidden: Vec<String>,
}

fn split(u: &Url) -> Split {
    let mut hidden = Vec::new();
    if u.cannot_be_a_base() {
        // `mailto:…`, `data:…`: nothing there is an address worth showing.
        hidden.push(u.path().to_string());
        hidden.extend(u.query().map(str::to_string));
        return Split {
            shown: format!("{}:{REDACTED}", u.scheme()),
            hidden,
        };
    }
    let mut shown = format!("{}://{}", u.scheme(), u.host_str().unwrap_or(""));
    if let Some(port) = u.port() {
        shown.push_str(&format!(":{port}"));
    }
    hidden.extend([u.username(), u.password().unwrap_or("")].map(str::to_string));
    for segment in u.path_segments().into_iter().flatten() {
        shown.push('/');
        if segment.is_empty() || reads_as_word(segment) {
            shown.push_str(segment);
        } else {
            shown.push_str(REDACTED);
            hidden.push(segment.to_string());
        }
    }
    if let Some(query) = u.query() {
        shown.push('?');
        for (i, item) in query.split('&').enumerate() {
            if i > 0 {
                shown.push('&');
            }
            match item.split_once('=') {
                Some((key, value)) => {
                    if reads_as_word(&key.to_ascii_lowercase()) {
                        shown.push_str(key);
                    } else {
                        shown.push_str(REDACTED);
                        hidden.push(key.to_string());
                    }
                    shown.push('=');
                    shown.push_str(REDACTED);
                    hidden.push(value.to_string());
                }
                None if item.is_empty() || reads_as_word(item) => shown.push_str(item),
                None => {
                    shown.push_str(REDACTED);
                    hidden.push(item.to_string());
                }
            }
        }
    }
    hidden.extend(u.fragment().map(str::to_string));
    hidden.retain(|h| !h.is_empty());
    Split { shown, hidden }
}

/// Whether `s` reads as a word rather than a token (see [`redact_url`]).
fn reads_as_word(s: &str) -> bool {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    s.len() <= MAX_WORD
        && s.chars().all(allowed)
        && s.split(['-', '_', '.']).all(|run| {
            if run.chars().all(|c| c.is_ascii_lowercase()) {
                run.len() <= MAX_LETTERS
            } else {
                run.len() <= MAX_WITH_DIGITS
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_where_and_drops_credentials() {
        for (url, shown) in [
            ("https://api.example/mcp", "https://api.example/mcp"),
            ("http://127.0.0.1:8080/mcp/", "http://127.0.0.1:8080/mcp/"),
            ("https://[::1]:9/v1/sse", "https://[::1]:9/v1/sse"),
            ("https://user:pw@api.example/mcp", "https://api.example/mcp"),
            ("https://tok3n@api.example/mcp", "https://api.example/mcp"),
            (
                "https://actions.zapier.com/mcp/sk-ak-abc123/sse",
                "https://actions.zapier.com/mcp/REDACTED/sse",
            ),
            (
                "https://h/mcp/3f2a1c9e-7b1d-4c2a-9e3f-0a1b2c3d4e5f",
                "https://h/mcp/REDACTED",
            ),
            ("https://h/s/ZjdiNGI2Nz%3D/sse", "https://h/s/REDACTED/sse"),
            ("https://h/PATHSECRET/mcp", "https://h/REDACTED/mcp"),
            ("https://h/notificationsxx", "https://h/REDACTED"),
            (
                "https://h/streamable-http/github_mcp.v2",
                "https://h/streamable-http/github_mcp.v2",
            ),
            (
                "https://h/mcp?api_key=QS&apiKey=2&debug&sk-abc123&=v",
                "https://h/mcp?api_key=REDACTED&apiKey=REDACTED&debug&REDACTED&=REDACTED",
            ),
            (
                "https://h/mcp?Xq7Rt9Lm2=1",
                "https://h/mcp?REDACTED=REDACTED",
            ),
            ("https://h/mcp#frag-secret", "https://h/mcp"),
            ("mailto:someone@example.com", "mailto:REDACTED"),
            ("", "<unparseable URL>"),
            ("https://user:pw@", "<unparseable URL>"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn takes_a_parsed_url_too() {
        let u = Url::parse("https://u:p@h:1/a/b12345?x=y").unwrap();
        assert_eq!(redact_url(&u), "https://h:1/a/REDACTED?x=REDACTED");
    }

    #[test]
    fn a_random_token_never_reads_as_a_word() {
        // Deterministic pseudo-random tokens of the alphabets keys are made of.
        let alphabets = [
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "0123456789abcdef",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for alphabet in alphabets {
            let chars: Vec<char> = alphabet.chars().collect();
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for _ in 0..2000 {
                // Tokens are longer than a word's longest run of letters.
                let len = 13 + next() % 12;
                let token: String = (0..len)
                    .map(|_| chars[(next() % chars.len() as u64) as usize])
                    .collect();
                assert!(!reads_as_word(&token), "{token}");
            }
        }
    }

    #[test]
    fn scrubs_hidden_parts_raw_and_decoded() {
        let s = UrlSecrets::new(
            "https://user:p%40ssword@h/mcp/PATHSECRET123/sse?api_key=QUERY%20SECRET&v=1",
        );
        let text = "Cannot POST /mcp/PATHSECRET123/sse?api_key=QUERY%20SECRET (QUERY SECRET, \
                    p@ssword, p%40ssword) v=1 /mcp/ user";
        let out = s.scrub(text);
        for secret in ["PATHSECRET123", "QUERY", "p@ssword", "p%40ssword"] {
            assert!(!out.contains(secret), "{out}");
        }
        // Short parts and words (`1`, `user`) are left: the text stays readable.
        assert!(out.contains("v=1 /mcp/ user"), "{out}");
        assert!(!format!("{s:?}").contains("SECRET"));
        assert!(UrlSecrets::new("http://h/mcp").is_empty());
        assert!(UrlSecrets::new("no url").is_empty());
    }
}
