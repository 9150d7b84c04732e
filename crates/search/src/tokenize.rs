//! FTS5's `unicode61` tokenizer (default options, `remove_diacritics=1`) feeding the Porter
//! stemmer, i.e. what `tokenize='porter'` does to both indexed text and query phrases.

use crate::porter::stem;

/// Splits `text` into FTS5 tokens: runs of letters/digits, case-folded, diacritics removed,
/// then stemmed.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if is_token_char(c) {
            fold_into(c, &mut cur);
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// `issueKey` → "issue Key" (the tokenizer already splits `issue_key` at the underscore).
pub fn split_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    // A run made only of combining marks folds to nothing; FTS5 emits no token for it either.
    if !cur.is_empty() {
        out.push(stem(cur));
        cur.clear();
    }
}

/// unicode61's default token characters are the categories L*, N* and Co; combining
/// diacritics stay inside the token so that removing them joins "e\u{301}" into "e".
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || is_private_use(c) || is_combining_diacritic(c)
}

fn is_private_use(c: char) -> bool {
    matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{FFFFD}' | '\u{100000}'..='\u{10FFFD}')
}

fn is_combining_diacritic(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036F}')
}

/// Lower-cases `c` and strips its diacritic, appending the result.
fn fold_into(c: char, out: &mut String) {
    for lc in c.to_lowercase() {
        if is_combining_diacritic(lc) {
            continue;
        }
        out.push(base_letter(lc).unwrap_or(lc));
    }
}

// Base letters for the lower-case precomposed Latin-1 Supplement (U+00C0..U+00FF) and Latin
// Extended-A (U+0100..U+017F) characters; '-' marks letters without a canonical decomposition
// (æ, ø, ð, þ, ß, đ, ħ, ı, ł, œ, ŧ, …), which SQLite's remove_diacritic also leaves alone.
const LATIN1: &[u8; 64] = b"aaaaaa-ceeeeiiii-nooooo--uuuuy--aaaaaa-ceeeeiiii-nooooo--uuuuy-y";
const LATIN_EXT_A: &[u8; 128] = b"aaaaaaccccccccdd--eeeeeeeeeegggggggghh--iiiiiiiii---jjkk-llllll----nnnnnn---oooooo--rrrrrrsssssssstttt--uuuuuuuuuuuuwwyyyzzzzzz-";

fn base_letter(c: char) -> Option<char> {
    let cp = c as usize;
    let b = match cp {
        0xC0..=0xFF => LATIN1[cp - 0xC0],
        0x100..=0x17F => LATIN_EXT_A[cp - 0x100],
        _ => return None,
    };
    (b != b'-').then_some(b as char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_split_tokens() {
        assert_eq!(tokens("create_issue"), ["creat", "issu"]);
        assert_eq!(tokens("github.create-issue"), ["github", "creat", "issu"]);
        assert_eq!(
            tokens("  read,write;  (list)/x "),
            ["read", "write", "list", "x"]
        );
        assert_eq!(tokens("v2 API_v3"), ["v2", "api", "v3"]);
        assert!(tokens("--- ... !!!").is_empty());
        assert!(tokens("").is_empty());
    }

    #[test]
    fn case_folding_and_stemming() {
        assert_eq!(tokens("Creating ISSUES"), ["creat", "issu"]);
        assert_eq!(tokens("Repositories"), ["repositori"]);
    }

    #[test]
    fn diacritics_are_removed() {
        assert_eq!(tokens("Café crème"), ["cafe", "creme"]);
        // ß has no decomposition; the stemmer then sees "straße" as bytes and drops the final e.
        assert_eq!(tokens("MÜNCHEN Straße"), ["munchen", "straß"]);
        assert_eq!(tokens("niño Ångström"), ["nino", "angstrom"]);
        assert_eq!(tokens("Łódź żółć"), ["łodz", "zołc"]);
        assert_eq!(tokens("Čeština"), ["cestina"]);
        // Decomposed input: the combining acute stays in the token and is then dropped.
        assert_eq!(tokens("cafe\u{301}s"), ["cafe"]);
    }

    #[test]
    fn non_latin_scripts_are_tokens() {
        assert_eq!(tokens("данные-сервер"), ["данные", "сервер"]);
        assert_eq!(tokens("東京 weather"), ["東京", "weather"]);
        // Emoji are not letters: they separate.
        assert_eq!(tokens("fast🚀tool"), ["fast", "tool"]);
    }

    #[test]
    fn tables_line_up_with_code_points() {
        assert_eq!(base_letter('é'), Some('e'));
        assert_eq!(base_letter('ÿ'), Some('y'));
        assert_eq!(base_letter('ø'), None);
        assert_eq!(base_letter('ā'), Some('a'));
        assert_eq!(base_letter('ď'), Some('d'));
        assert_eq!(base_letter('đ'), None);
        assert_eq!(base_letter('ĳ'), None);
        assert_eq!(base_letter('ķ'), Some('k'));
        assert_eq!(base_letter('ł'), None);
        assert_eq!(base_letter('ň'), Some('n'));
        assert_eq!(base_letter('œ'), None);
        assert_eq!(base_letter('ş'), Some('s'));
        assert_eq!(base_letter('ŧ'), None);
        assert_eq!(base_letter('ű'), Some('u'));
        assert_eq!(base_letter('ŵ'), Some('w'));
        assert_eq!(base_letter('ž'), Some('z'));
        assert_eq!(base_letter('ſ'), None);
    }
}
