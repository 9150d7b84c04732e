//! Go's string escapers: `strconv.Quote`/`QuoteRune`/`Unquote`, and the template built-ins
//! `html`, `js` and `urlquery`.
//!
//! Go decides what to escape with `unicode.IsPrint`, which needs the Unicode category tables.
//! [`is_print`] approximates it without them: controls, non-ASCII spaces, line/paragraph
//! separators, the format characters, private-use and non-characters are unprintable;
//! unassigned code points count as printable (Go would escape them).

/// Approximation of Go's `unicode.IsPrint` (letters, marks, numbers, punctuation, symbols and
/// the ASCII space).
pub(crate) fn is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    if c.is_control() {
        return false;
    }
    let unprintable = matches!(u,
        // Space separators other than U+0020, line and paragraph separators.
        0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000
        // Format characters (Cf).
        | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
        // Private use.
        | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD
        // Non-characters.
        | 0xFDD0..=0xFDEF);
    !unprintable && (u & 0xFFFE) != 0xFFFE
}

const LOWER_HEX: &[u8; 16] = b"0123456789abcdef";

fn push_escaped_rune(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if (ascii_only && c.is_ascii() && is_print(c)) || (!ascii_only && is_print(c)) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => {
            let b = c as u32 as usize;
            out.push_str("\\x");
            out.push(LOWER_HEX[b >> 4] as char);
            out.push(LOWER_HEX[b & 0xF] as char);
        }
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// `strconv.Quote` (or `QuoteToASCII` when `ascii_only`).
pub(crate) fn quote_with(s: &str, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped_rune(&mut out, c, '"', ascii_only);
    }
    out.push('"');
    out
}

/// `strconv.Quote`.
pub(crate) fn quote(s: &str) -> String {
    quote_with(s, false)
}

/// `strconv.QuoteRune` (or `QuoteRuneToASCII`).
pub(crate) fn quote_rune(c: char, ascii_only: bool) -> String {
    let mut out = String::from("'");
    push_escaped_rune(&mut out, c, '\'', ascii_only);
    out.push('\'');
    out
}

/// `strconv.CanBackquote`: no control characters but tab, no backquote, no BOM.
pub(crate) fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c == '\t' || !(c < ' ' || c == '\u{7f}' || c == '`' || c == '\u{FEFF}'))
}

/// `strconv.Unquote` for a lexed `"…"` or `` `…` `` literal. Byte escapes (`\xff`, `\377`) that
/// do not form UTF-8 become U+FFFD: Rust strings cannot hold invalid UTF-8 as Go's can.
pub(crate) fn unquote(lit: &str) -> Result<String, String> {
    if let Some(raw) = lit.strip_prefix('`').and_then(|s| s.strip_suffix('`')) {
        // Go drops carriage returns from raw strings.
        return Ok(raw.replace('\r', ""));
    }
    let inner = lit
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or_else(|| "invalid syntax".to_string())?;
    let mut bytes = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while !rest.is_empty() {
        let (piece, tail) = unquote_char(rest, '"')?;
        match piece {
            Piece::Char(c) => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            Piece::Byte(b) => bytes.push(b),
        }
        rest = tail;
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

pub(crate) enum Piece {
    Char(char),
    Byte(u8),
}

/// `strconv.UnquoteChar`: decodes the first character or escape of `s` inside a literal
/// delimited by `quote`, returning it and the rest.
pub(crate) fn unquote_char(s: &str, quote: char) -> Result<(Piece, &str), String> {
    let syntax = || "invalid syntax".to_string();
    let mut chars = s.chars();
    let c = chars.next().ok_or_else(syntax)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(syntax());
    }
    if c != '\\' {
        return Ok((Piece::Char(c), chars.as_str()));
    }
    let e = chars.next().ok_or_else(syntax)?;
    let rest = chars.as_str();
    let simple = match e {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '\'' | '"' if e == quote => Some(e),
        _ => None,
    };
    if let Some(c) = simple {
        return Ok((Piece::Char(c), rest));
    }
    match e {
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let digits = rest.get(..n).ok_or_else(syntax)?;
            if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(syntax());
            }
            let v = u32::from_str_radix(digits, 16).map_err(|_| syntax())?;
            let tail = &rest[n..];
            if e == 'x' {
                // A single byte; in a string literal it need not be valid UTF-8 on its own.
                return Ok((byte_or_char(v, quote), tail));
            }
            let c = char::from_u32(v).ok_or_else(syntax)?;
            Ok((Piece::Char(c), tail))
        }
        '0'..='7' => {
            let digits = s.get(1..4).ok_or_else(syntax)?;
            if !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(syntax());
            }
            let v = u32::from_str_radix(digits, 8).map_err(|_| syntax())?;
            if v > 255 {
                return Err(syntax());
            }
            Ok((byte_or_char(v, quote), &s[4..]))
        }
        _ => Err(syntax()),
    }
}

fn byte_or_char(v: u32, quote: char) -> Piece {
    match (quote, u8::try_from(v)) {
        // In a character literal a byte escape is the rune of that value.
        ('\'', _) | (_, Err(_)) => Piece::Char(char::from_u32(v).unwrap_or('\u{FFFD}')),
        (_, Ok(b)) => Piece::Byte(b),
    }
}

/// `template.HTMLEscapeString`.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// `template.JSEscapeString`.
pub(crate) fn js_escape(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => {
                let b = c as usize;
                out.push_str("\\u00");
                out.push(HEX[b >> 4] as char);
                out.push(HEX[b & 0xF] as char);
            }
            c if c.is_ascii() || is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// `url.QueryEscape`: unreserved bytes stay, space becomes `+`, everything else `%XX`.
pub(crate) fn url_query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests;
