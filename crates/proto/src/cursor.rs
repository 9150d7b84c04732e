//! Self-describing keyset cursors for list pagination. A cursor names the list kind, the last key
//! delivered and how many items sharing that key were already sent, so the server keeps no state
//! and a duplicate key on a page boundary is never skipped. Items must be sorted by key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// Longest cursor accepted.
pub const MAX_CURSOR: usize = 512;

/// A decoded position: resume after `delivered` items with key `last`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The last key delivered.
    pub last: String,
    /// How many items with that key were delivered.
    pub delivered: usize,
}

/// Encodes a position in list `kind`.
pub fn encode(kind: &str, pos: &Position) -> String {
    let mut v = json!({"k": kind, "l": pos.last});
    if pos.delivered > 0 {
        v["d"] = json!(pos.delivered);
    }
    URL_SAFE_NO_PAD.encode(v.to_string())
}

/// Decodes a cursor minted for list `kind`; `None` when it is malformed, oversized or foreign.
pub fn decode(kind: &str, cursor: &str) -> Option<Position> {
    if cursor.len() > MAX_CURSOR {
        return None;
    }
    let raw = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let v: Value = serde_json::from_slice(&raw).ok()?;
    if v.get("k")?.as_str()? != kind {
        return None;
    }
    let last = v.get("l")?.as_str().filter(|l| !l.is_empty())?.to_string();
    let delivered = match v.get("d") {
        None => 0,
        Some(d) => usize::try_from(d.as_u64()?).ok()?,
    };
    Some(Position { last, delivered })
}

/// One page of `items` (sorted by `key`) starting at `from`, and the position after it when more
/// remain.
pub fn page<'a, T>(
    items: &'a [T],
    key: impl Fn(&T) -> &str,
    from: Option<&Position>,
    size: usize,
) -> (&'a [T], Option<Position>) {
    let start = match from {
        None => 0,
        Some(pos) => {
            let first = items.partition_point(|i| key(i) < pos.last.as_str());
            let equal = items[first..]
                .iter()
                .take_while(|i| key(i) == pos.last)
                .count();
            first + pos.delivered.min(equal)
        }
    };
    let end = (start + size.max(1)).min(items.len());
    let page = &items[start..end];
    if end >= items.len() {
        return (page, None);
    }
    let Some(last_item) = page.last() else {
        return (page, None);
    };
    let last = key(last_item);
    let delivered = items[..end]
        .iter()
        .rev()
        .take_while(|i| key(i) == last)
        .count();
    (
        page,
        Some(Position {
            last: last.to_string(),
            delivered,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_everything_once_even_across_duplicate_keys() {
        let items = ["a", "b", "b", "b", "c", "d", "d", "e"];
        for size in 1..=9 {
            let mut seen = Vec::new();
            let mut pos: Option<Position> = None;
            loop {
                let (page, next) = page(&items, |s| s, pos.as_ref(), size);
                seen.extend_from_slice(page);
                match next {
                    Some(p) => {
                        let c = encode("tools", &p);
                        pos = Some(decode("tools", &c).unwrap());
                    }
                    None => break,
                }
            }
            assert_eq!(seen, items, "page size {size}");
        }
    }

    #[test]
    fn invalid_cursors_are_rejected() {
        let good = encode(
            "tools",
            &Position {
                last: "x".into(),
                delivered: 0,
            },
        );
        assert!(decode("tools", &good).is_some());
        assert!(
            decode("prompts", &good).is_none(),
            "minted for another list"
        );
        assert!(decode("tools", "%%%").is_none());
        assert!(decode("tools", &"A".repeat(MAX_CURSOR + 1)).is_none());
        let forged = |j: &str| URL_SAFE_NO_PAD.encode(j);
        assert!(decode("tools", &forged(r#"{"k":"tools","l":""}"#)).is_none());
        assert!(decode("tools", &forged(r#"{"k":"tools","l":"x","d":-1}"#)).is_none());
        assert!(decode("tools", &forged(r#"{"k":"tools"}"#)).is_none());
        assert!(decode("tools", &forged("[1]")).is_none());
    }

    #[test]
    fn vanished_key_resumes_at_the_next_one() {
        let items = ["a", "c"];
        let (page, _) = page(
            &items,
            |s| s,
            Some(&Position {
                last: "b".into(),
                delivered: 1,
            }),
            10,
        );
        assert_eq!(page, ["c"]);
    }
}
