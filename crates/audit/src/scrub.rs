//! Keeping secrets out of audit lines, even with request and response data on: the configured
//! secret values (injected header values, client secrets) and the caller's own token are replaced
//! wherever they appear; anything shaped like a JWT or a `Bearer` credential is replaced; and the
//! values of keys that name credentials (`password`, `token`, `authorization`...) are replaced,
//! in parsed JSON and in text that was cut before it could parse.

use serde_json::Value;
use vmcp_auth::{OutgoingAuth, Secret};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Keys whose values are credentials, compared lowercased with `-` read as `_`.
const SENSITIVE_KEYS: &[&str] = &[
    "authorization",
    "proxy_authorization",
    "cookie",
    "set_cookie",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "subject_token",
    "actor_token",
    "api_key",
    "apikey",
    "x_api_key",
    "private_key",
];

/// Secrets shorter than this are not searched for: replacing every `ab` would make lines
/// unreadable without protecting anything a guess could not find.
const MIN_SECRET_LEN: usize = 4;

/// Knows the secrets of the configuration: the credentials sent to backends.
#[derive(Debug, Clone, Default)]
pub struct Scrubber {
    credentials: Vec<OutgoingAuth>,
}

/// Every secret that could appear in one caller's line.
#[derive(Debug)]
pub struct Redactor {
    secrets: Vec<Secret>,
}

impl Scrubber {
    /// A scrubber for the credentials of every backend.
    pub fn new(credentials: Vec<OutgoingAuth>) -> Self {
        let credentials = credentials
            .into_iter()
            .filter(|c| !matches!(c, OutgoingAuth::None))
            .collect();
        Self { credentials }
    }

    /// The redactor for a line about a caller with `token`: the configured secrets, the caller's
    /// token and the tokens exchanged for it.
    pub fn for_caller(&self, token: Option<&Secret>) -> Redactor {
        let mut secrets: Vec<Secret> = token.cloned().into_iter().collect();
        for c in &self.credentials {
            secrets.extend(c.secrets(token));
        }
        secrets.retain(|s| s.expose().len() >= MIN_SECRET_LEN);
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
        Redactor { secrets }
    }

    /// The longest text that must be seen whole to be recognised (a captured prefix of a body is
    /// this much longer than what is kept, so no secret is cut in half at the end).
    pub fn margin(&self) -> usize {
        self.for_caller(None)
            .secrets
            .iter()
            .map(|s| s.expose().len())
            .max()
            .unwrap_or(0)
            .max(16 * 1024)
    }
}

impl Redactor {
    /// `text` with every secret replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            let v = s.expose();
            if out.contains(v) {
                out = out.replace(v, REDACTED);
            }
        }
        redact_bearer(&redact_jwts(&out))
    }

    /// A request or response body as audit data: parsed JSON with credentials replaced when it is
    /// whole and at most `max` bytes, else its text, scrubbed, cut at `max` bytes.
    pub fn data(&self, body: &[u8], max: usize) -> Value {
        if let Ok(mut v) = serde_json::from_slice::<Value>(body) {
            self.value(&mut v);
            let text = v.to_string();
            if text.len() <= max {
                return v;
            }
            return Value::String(cut(&text, max).to_string());
        }
        let text = redact_keys_in_text(&self.text(&String::from_utf8_lossy(body)));
        Value::String(cut(&text, max).to_string())
    }

    fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.value(i)),
            Value::Object(map) => {
                for (k, item) in map.iter_mut() {
                    if is_sensitive(k) && !matches!(item, Value::Object(_) | Value::Array(_)) {
                        *item = Value::String(REDACTED.into());
                    } else {
                        self.value(item);
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_sensitive(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('-', "_");
    SENSITIVE_KEYS.contains(&k.as_str())
}

/// `text` cut at `max` bytes, on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Replaces every `eyJ…​.…​.…` (a JWS or JWE compact serialisation starts with a base64url JSON
/// header, so with `eyJ`).
fn redact_jwts(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while let Some(off) = text[i..].find("eyJ") {
        let start = i + off;
        let mut j = start;
        let mut dots = 0;
        while j < b.len() && (is_b64url(b[j]) || (b[j] == b'.' && dots < 4)) {
            if b[j] == b'.' {
                dots += 1;
            }
            j += 1;
        }
        let boundary_before = start == 0 || !is_b64url(b[start - 1]);
        if dots >= 2 && boundary_before {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = j;
        }
        i = j.max(start + 3);
    }
    out.push_str(&text[copied..]);
    out
}

/// Replaces the credential after every `Bearer ` / `Basic ` (any case).
fn redact_bearer(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < lower.len() {
        let hit = ["bearer ", "basic "]
            .iter()
            .find(|p| lower[i..].starts_with(**p));
        let Some(prefix) = hit else {
            i += lower[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let value_start = i + prefix.len();
        let mut j = value_start;
        while j < b.len() && (is_b64url(b[j]) || matches!(b[j], b'.' | b'~' | b'+' | b'/' | b'=')) {
            j += 1;
        }
        if j > value_start {
            out.push_str(&text[copied..value_start]);
            out.push_str(REDACTED);
            copied = j;
        }
        i = j.max(value_start);
    }
    out.push_str(&text[copied..]);
    out
}

/// In JSON text that could not be parsed (cut short), replaces the value after every
/// `"<sensitive key>":`.
fn redact_keys_in_text(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = text[i..].find('"') {
        let open = i + off;
        let Some(len) = text[open + 1..].find('"') else {
            break;
        };
        let close = open + 1 + len;
        let key = &text[open + 1..close];
        i = close + 1;
        if !is_sensitive(key) {
            continue;
        }
        let mut j = close + 1;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j >= b.len() || b[j] != b':' {
            continue;
        }
        j += 1;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let (start, end) = if j < b.len() && b[j] == b'"' {
            let mut k = j + 1;
            while k < b.len() && b[k] != b'"' {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            (j + 1, k.min(b.len()))
        } else {
            let mut k = j;
            while k < b.len() && !matches!(b[k], b',' | b'}' | b']') && !b[k].is_ascii_whitespace()
            {
                k += 1;
            }
            (j, k)
        };
        if end > start {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = end.max(i);
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";

    fn scrubber() -> Scrubber {
        let header = |v: &str| OutgoingAuth::Header {
            name: "X-Key".into(),
            value: Secret::new(v),
        };
        Scrubber::new(vec![header("hdr-secret-value"), header("ab")])
    }

    #[test]
    fn configured_secrets_tokens_and_bearer_values_are_replaced() {
        let s = scrubber();
        let token = Secret::new("opaque-caller-token");
        let t = s.for_caller(Some(&token)).text(&format!(
            "x hdr-secret-value y opaque-caller-token z {JWT} Bearer abc.def ab"
        ));
        assert!(!t.contains("hdr-secret-value"));
        assert!(!t.contains("opaque-caller-token"));
        assert!(!t.contains("eyJhbGci"));
        assert!(!t.contains("abc.def"));
        assert!(t.ends_with(" ab"), "{t}");
    }

    #[test]
    fn json_data_has_credential_keys_replaced_at_any_depth() {
        let s = scrubber();
        let body = json!({"params": {"name": "login", "arguments":
            {"user": "bob", "Password": "hunter2", "X-Api-Key": 7, "nested": [{"token": "t"}]}}});
        let v = s.for_caller(None).data(body.to_string().as_bytes(), 4096);
        let args = &v["params"]["arguments"];
        assert_eq!(args["user"], "bob");
        assert_eq!(args["Password"], REDACTED);
        assert_eq!(args["X-Api-Key"], REDACTED);
        assert_eq!(args["nested"][0]["token"], REDACTED);
    }

    #[test]
    fn cut_data_is_text_with_secrets_replaced_before_the_cut() {
        let s = scrubber();
        let long = "x".repeat(100);
        let body = format!(r#"{{"a":"{long}","password":"hunter2","b":"hdr-secret-value"}}"#);
        let v = s.for_caller(None).data(body.as_bytes(), 60);
        let text = v.as_str().expect("cut data is text");
        assert!(text.len() <= 60);
        // Unparsable text (a captured prefix) gets key-based replacement too.
        let prefix = &body[..body.len() - 2];
        let v = s.for_caller(None).data(prefix.as_bytes(), 4096);
        let text = v.as_str().expect("text");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains(r#""password":"[REDACTED]""#), "{text}");
        assert!(!text.contains("hdr-secret"), "{text}");
    }

    #[test]
    fn cutting_respects_character_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("abc", 10), "abc");
    }
}
