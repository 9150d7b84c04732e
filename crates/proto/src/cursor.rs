//! Self-describing cursors for list pagination. A cursor names the list kind, the key of the last
//! item delivered and how many items were delivered, so the server keeps no state. Lists keep the
//! order their backends give them (not sorted by key), so resuming finds the last item again: at
//! its place when the list did not change, else by its key; when it vanished, at the same count.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// Longest cursor accepted.
pub const MAX_CURSOR: usize = 512;

/// A decoded position: resume after the item with key `last`, the `next`-th item delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The key of the last item delivered.
    pub last: String,
    /// How many items were delivered (the index of the next one).
    pub next: usize,
}

/// Encodes a position in list `kind`. A key too long for [`MAX_CURSOR`] (a long resource URI) is
/// left out and the cursor resumes by count alone: what the gateway mints, it must read back
/// (found by fuzzing: a URI of ~350 bytes made every next page "invalid cursor").
pub fn encode(kind: &str, pos: &Position) -> String {
    let cursor =
        URL_SAFE_NO_PAD.encode(json!({"k": kind, "l": pos.last, "i": pos.next}).to_string());
    if cursor.len() <= MAX_CURSOR {
        return cursor;
    }
    URL_SAFE_NO_PAD.encode(json!({"k": kind, "i": pos.next}).to_string())
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
    // Cursors minted before the count was carried resume by key alone, so they need one; with
    // the count, an empty or left-out key resumes by count (found by fuzzing: an item named "" at
    // the end of a page made its next cursor unreadable).
    let (last, next) = match v.get("i") {
        None => (v.get("l")?.as_str().filter(|l| !l.is_empty())?, 0),
        Some(i) => (
            v.get("l").map_or(Some(""), Value::as_str)?,
            usize::try_from(i.as_u64()?).ok()?,
        ),
    };
    Some(Position {
        last: last.to_string(),
        next,
    })
}

/// One page of `items` starting after `from`, and the position after it when more remain.
pub fn page<'a, T>(
    items: &'a [T],
    key: impl Fn(&T) -> &str,
    from: Option<&Position>,
    size: usize,
) -> (&'a [T], Option<Position>) {
    let start = match from {
        None => 0,
        Some(pos) => {
            let unchanged = pos
                .next
                .checked_sub(1)
                .and_then(|i| items.get(i))
                .is_some_and(|i| key(i) == pos.last);
            if unchanged {
                pos.next
            } else {
                // An empty key is no key (left out of the cursor): resume by count.
                items
                    .iter()
                    .position(|i| !pos.last.is_empty() && key(i) == pos.last)
                    .map_or(pos.next.min(items.len()), |i| i + 1)
            }
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
    (
        page,
        Some(Position {
            last: key(last_item).to_string(),
            next: end,
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
                next: 3,
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
        assert!(decode("tools", &forged(r#"{"k":"tools","l":"x","i":-1}"#)).is_none());
        assert_eq!(
            decode("tools", &forged(r#"{"k":"tools","l":"x"}"#)).map(|p| p.next),
            Some(0),
            "an older cursor resumes by key"
        );
        assert!(decode("tools", &forged(r#"{"k":"tools"}"#)).is_none());
        assert!(decode("tools", &forged("[1]")).is_none());
    }

    /// Found by fuzzing (fuzz/fuzz_targets/cursor.rs): a page ending on an item with an empty
    /// key, or with a key too long to fit in [`MAX_CURSOR`], got a `nextCursor` the gateway then
    /// refused as invalid, so the client could not list the rest.
    #[test]
    fn regression_the_gateway_reads_back_every_cursor_it_mints() {
        let long = "https://files.example/".to_string() + &"a".repeat(600);
        for key in ["", "x", long.as_str()] {
            let items = ["first", key, "last"];
            let (_, next) = page(&items, |s| s, None, 2);
            let minted = encode("resources", &next.unwrap());
            assert!(minted.len() <= MAX_CURSOR, "{key:?}");
            let resumed = decode("resources", &minted).expect("the gateway reads its own cursor");
            assert_eq!(
                page(&items, |s| s, Some(&resumed), 2).0,
                ["last"],
                "{key:?}"
            );
            // A list that changed meanwhile resumes at the same count, not after another item.
            let changed = ["", "first", "last"];
            assert_eq!(page(&changed, |s| s, Some(&resumed), 2).0, ["last"]);
        }
    }

    #[test]
    fn a_changed_list_resumes_after_the_last_item_or_at_the_same_count() {
        let at = |last: &str, next| Position {
            last: last.into(),
            next,
        };
        // Unsorted lists page in their own order.
        let items = ["z", "a", "m", "b"];
        assert_eq!(page(&items, |s| s, Some(&at("a", 2)), 10).0, ["m", "b"]);
        // An item inserted before the position: resume after the last item, found by key.
        let grown = ["new", "z", "a", "m", "b"];
        assert_eq!(page(&grown, |s| s, Some(&at("a", 2)), 10).0, ["m", "b"]);
        // The last item vanished: resume at the same count.
        let shrunk = ["z", "m", "b"];
        assert_eq!(page(&shrunk, |s| s, Some(&at("a", 2)), 10).0, ["b"]);
        // A count past the end gives an empty last page.
        assert!(page(&shrunk, |s| s, Some(&at("q", 9)), 10).0.is_empty());
    }
}
