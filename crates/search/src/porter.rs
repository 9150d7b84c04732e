//! The Porter (1980) stemmer exactly as SQLite FTS5's `porter` tokenizer runs it
//! (`ext/fts5/fts5_tokenize.c`, `fts5PorterCb`), including its small departures from the paper:
//! `logi -> log` and `bli -> ble` in step 2, and "y is a vowel anywhere but first" in `*v*`.
//! FTS5 works on bytes, so non-ASCII bytes simply count as consonants; we do the same.

/// FTS5 leaves tokens shorter than 3 or longer than 64 bytes untouched (`FTS5_PORTER_MAX_TOKEN`).
const MIN_LEN: usize = 3;
const MAX_LEN: usize = 64;

/// Stems one (already lower-cased) token with FTS5's Porter stemmer.
pub fn stem(word: &str) -> String {
    let bytes = word.as_bytes();
    if bytes.len() < MIN_LEN || bytes.len() > MAX_LEN {
        return word.to_owned();
    }
    let mut w = bytes.to_vec();
    step1a(&mut w);
    step1b(&mut w);
    step1c(&mut w);
    apply(&mut w, STEP2);
    apply(&mut w, STEP3);
    apply(&mut w, STEP4);
    step5(&mut w);
    // Only step 1b's "drop a doubled letter" can cut a multi-byte character (two equal UTF-8
    // continuation bytes); SQLite would store the broken bytes, we keep the token whole instead.
    String::from_utf8(w).unwrap_or_else(|_| word.to_owned())
}

/// The condition a rule's stem must meet before its suffix is replaced.
#[derive(Clone, Copy)]
enum Cond {
    /// m > 0
    M0,
    /// m > 1
    M1,
    /// m > 1 and the stem ends in `s` or `t` (step 4's `ion`)
    M1ST,
}

type Rule = (&'static str, &'static str, Cond);

// Within a step FTS5 takes the first listed suffix that matches (with a non-empty stem) and
// stops there even if its condition fails; overlapping suffixes are listed longest first.
const STEP2: &[Rule] = &[
    ("ational", "ate", Cond::M0),
    ("tional", "tion", Cond::M0),
    ("enci", "ence", Cond::M0),
    ("anci", "ance", Cond::M0),
    ("izer", "ize", Cond::M0),
    ("logi", "log", Cond::M0),
    ("bli", "ble", Cond::M0),
    ("alli", "al", Cond::M0),
    ("entli", "ent", Cond::M0),
    ("eli", "e", Cond::M0),
    ("ousli", "ous", Cond::M0),
    ("ization", "ize", Cond::M0),
    ("ation", "ate", Cond::M0),
    ("ator", "ate", Cond::M0),
    ("alism", "al", Cond::M0),
    ("iveness", "ive", Cond::M0),
    ("fulness", "ful", Cond::M0),
    ("ousness", "ous", Cond::M0),
    ("aliti", "al", Cond::M0),
    ("iviti", "ive", Cond::M0),
    ("biliti", "ble", Cond::M0),
];

const STEP3: &[Rule] = &[
    ("ical", "ic", Cond::M0),
    ("ness", "", Cond::M0),
    ("icate", "ic", Cond::M0),
    ("iciti", "ic", Cond::M0),
    ("ful", "", Cond::M0),
    ("ative", "", Cond::M0),
    ("alize", "al", Cond::M0),
];

const STEP4: &[Rule] = &[
    ("al", "", Cond::M1),
    ("ance", "", Cond::M1),
    ("ence", "", Cond::M1),
    ("er", "", Cond::M1),
    ("ic", "", Cond::M1),
    ("able", "", Cond::M1),
    ("ible", "", Cond::M1),
    ("ant", "", Cond::M1),
    ("ement", "", Cond::M1),
    ("ment", "", Cond::M1),
    ("ent", "", Cond::M1),
    ("ion", "", Cond::M1ST),
    ("ou", "", Cond::M1),
    ("ism", "", Cond::M1),
    ("ate", "", Cond::M1),
    ("iti", "", Cond::M1),
    ("ous", "", Cond::M1),
    ("ive", "", Cond::M1),
    ("ize", "", Cond::M1),
];

/// Applies the first rule whose suffix matches; `Some(true)` if it also rewrote the word.
fn apply(w: &mut Vec<u8>, rules: &[Rule]) -> Option<bool> {
    let &(suffix, out, cond) = rules
        .iter()
        .find(|(s, _, _)| w.len() > s.len() && w.ends_with(s.as_bytes()))?;
    let stem_len = w.len() - suffix.len();
    let stem = &w[..stem_len];
    let ok = match cond {
        Cond::M0 => m_gt0(stem),
        Cond::M1 => m_gt1(stem),
        Cond::M1ST => matches!(stem.last(), Some(b's' | b't')) && m_gt1(stem),
    };
    if ok {
        w.truncate(stem_len);
        w.extend_from_slice(out.as_bytes());
    }
    Some(ok)
}

fn step1a(w: &mut Vec<u8>) {
    let n = w.len();
    if (n > 4 && w.ends_with(b"sses")) || (n > 3 && w.ends_with(b"ies")) {
        w.truncate(n - 2);
    } else if w.ends_with(b"s") && !w.ends_with(b"ss") {
        w.truncate(n - 1);
    }
}

fn step1b(w: &mut Vec<u8>) {
    // `eed` is checked first and, when present, excludes the `ed` rule even if m = 0 ("feed").
    if w.len() > 3 && w.ends_with(b"eed") {
        if m_gt0(&w[..w.len() - 3]) {
            w.pop();
        }
        return;
    }
    let cut = [&b"ed"[..], b"ing"]
        .into_iter()
        .find(|s| w.len() > s.len() && w.ends_with(s));
    let Some(suffix) = cut else { return };
    if !has_vowel(&w[..w.len() - suffix.len()]) {
        return;
    }
    w.truncate(w.len() - suffix.len());
    for (from, to) in [(&b"at"[..], &b"ate"[..]), (b"bl", b"ble"), (b"iz", b"ize")] {
        if w.len() > from.len() && w.ends_with(from) {
            w.truncate(w.len() - from.len());
            w.extend_from_slice(to);
            return;
        }
    }
    let n = w.len();
    let last = w[n - 1];
    if n >= 2 && !is_vowel(last, false) && !matches!(last, b'l' | b's' | b'z') && last == w[n - 2] {
        w.pop();
    } else if m_eq1(w) && ends_cvc(w) {
        w.push(b'e');
    }
}

fn step1c(w: &mut [u8]) {
    let n = w.len();
    if w[n - 1] == b'y' && has_vowel(&w[..n - 1]) {
        w[n - 1] = b'i';
    }
}

fn step5(w: &mut Vec<u8>) {
    let n = w.len();
    if w[n - 1] == b'e' {
        let stem = &w[..n - 1];
        if m_gt1(stem) || (m_eq1(stem) && !ends_cvc(stem)) {
            w.pop();
        }
    }
    let n = w.len();
    if n > 1 && w[n - 1] == b'l' && w[n - 2] == b'l' && m_gt1(&w[..n - 1]) {
        w.pop();
    }
}

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// Skips one V…C sequence (FTS5's `fts5PorterGobbleVC`): the index just past the first
/// consonant that follows a vowel, or 0 if there is none. `y` is a vowel after a consonant.
fn gobble_vc(s: &[u8], prev_consonant: bool) -> usize {
    let mut cons = prev_consonant;
    let mut i = 0;
    while i < s.len() {
        cons = !is_vowel(s[i], cons);
        if !cons {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < s.len() {
        cons = !is_vowel(s[i], cons);
        if cons {
            return i + 1;
        }
        i += 1;
    }
    0
}

fn m_gt0(s: &[u8]) -> bool {
    gobble_vc(s, false) != 0
}

fn m_gt1(s: &[u8]) -> bool {
    let n = gobble_vc(s, false);
    n != 0 && gobble_vc(&s[n..], true) != 0
}

fn m_eq1(s: &[u8]) -> bool {
    let n = gobble_vc(s, false);
    n != 0 && gobble_vc(&s[n..], true) == 0
}

/// `*v*`: FTS5 counts `y` as a vowel anywhere except the first letter.
fn has_vowel(s: &[u8]) -> bool {
    s.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

/// `*o`: the stem ends consonant-vowel-consonant and the last consonant is not w, x or y.
fn ends_cvc(s: &[u8]) -> bool {
    if s.len() < 3 || matches!(s[s.len() - 1], b'w' | b'x' | b'y') {
        return false;
    }
    let mut cons = false;
    let mut mask = 0u32;
    for &c in s {
        cons = !is_vowel(c, cons);
        mask = (mask << 1) | u32::from(cons);
    }
    mask & 0b111 == 0b101
}

#[cfg(test)]
mod tests {
    use super::stem;

    /// Examples from Porter's paper ("An algorithm for suffix stripping", 1980).
    const PORTER_EXAMPLES: &[(&str, &str)] = &[
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("ties", "ti"),
        ("caress", "caress"),
        ("cats", "cat"),
        ("feed", "feed"),
        ("agreed", "agre"),
        ("plastered", "plaster"),
        ("bled", "bled"),
        ("motoring", "motor"),
        ("sing", "sing"),
        ("conflated", "conflat"),
        ("troubled", "troubl"),
        ("sized", "size"),
        ("hopping", "hop"),
        ("tanned", "tan"),
        ("falling", "fall"),
        ("hissing", "hiss"),
        ("fizzed", "fizz"),
        ("failing", "fail"),
        ("filing", "file"),
        ("happy", "happi"),
        ("sky", "sky"),
        ("relational", "relat"),
        ("conditional", "condit"),
        ("rational", "ration"),
        ("valenci", "valenc"),
        ("hesitanci", "hesit"),
        ("digitizer", "digit"),
        ("conformabli", "conform"),
        ("radicalli", "radic"),
        ("differentli", "differ"),
        ("vileli", "vile"),
        ("analogousli", "analog"),
        ("vietnamization", "vietnam"),
        ("predication", "predic"),
        ("operator", "oper"),
        ("feudalism", "feudal"),
        ("decisiveness", "decis"),
        ("hopefulness", "hope"),
        ("callousness", "callous"),
        ("formaliti", "formal"),
        ("sensitiviti", "sensit"),
        ("sensibiliti", "sensibl"),
        ("triplicate", "triplic"),
        ("formative", "form"),
        ("formalize", "formal"),
        ("electriciti", "electr"),
        ("electrical", "electr"),
        ("hopeful", "hope"),
        ("goodness", "good"),
        ("revival", "reviv"),
        ("allowance", "allow"),
        ("inference", "infer"),
        ("airliner", "airlin"),
        ("gyroscopic", "gyroscop"),
        ("adjustable", "adjust"),
        ("defensible", "defens"),
        ("irritant", "irrit"),
        ("replacement", "replac"),
        ("adjustment", "adjust"),
        ("dependent", "depend"),
        ("adoption", "adopt"),
        ("homologou", "homolog"),
        ("communism", "commun"),
        ("activate", "activ"),
        ("angulariti", "angular"),
        ("homologous", "homolog"),
        ("effective", "effect"),
        ("bowdlerize", "bowdler"),
        ("probate", "probat"),
        ("rate", "rate"),
        ("cease", "ceas"),
        ("controll", "control"),
        ("roll", "roll"),
    ];

    #[test]
    fn porter_paper_examples() {
        let wrong: Vec<_> = PORTER_EXAMPLES
            .iter()
            .filter(|(w, want)| stem(w) != *want)
            .map(|(w, want)| format!("{w}: got {}, want {want}", stem(w)))
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn fts5_departures_from_the_paper() {
        // Step 2 `logi -> log` (not in the 1980 paper), and `y` after a vowel counts for `*v*`.
        assert_eq!(stem("analogi"), "analog");
        assert_eq!(stem("issues"), "issu");
        assert_eq!(stem("repositories"), "repositori");
    }

    #[test]
    fn short_long_and_odd_tokens_are_safe() {
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("as"), "as");
        assert_eq!(stem(""), "");
        let long = "a".repeat(65) + "ing";
        assert_eq!(stem(&long), long);
        // Tiny stems left by step 1 must not index out of bounds.
        for w in [
            "aed", "aing", "yed", "eed", "ied", "sss", "yyy", "eeing", "ssses",
        ] {
            let _ = stem(w);
        }
        // Non-ASCII bytes are consonants; the ASCII suffix still goes.
        assert_eq!(stem("日本tests"), "日本test");
        assert_eq!(stem("данные"), "данные");
        // U+1000 ends in two equal continuation bytes that step 1b would "undouble"; the
        // token is then kept whole rather than cut into invalid UTF-8.
        assert_eq!(stem("a\u{1000}ed"), "a\u{1000}ed");
    }
}
