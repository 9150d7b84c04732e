//! Pagination cursors (`vmcp_proto::cursor`): a client's cursor is decoded and a page is cut
//! from it; a cursor the gateway mints must decode to the position it was minted from.
//!
//! Input: the first line is a client's cursor; the other lines are the keys of a list (sorted
//! and de-duplicated by key kind here, as every list the gateway pages is kept in one order).
//! Invariants: `decode` never panics and what it accepts re-encodes to the same position (less a
//! key too long for a cursor); paging
//! any list from the start with the gateway's own cursors delivers every item exactly once, in
//! order; a page cut from a client's cursor is part of the list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcp_proto::cursor;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let client_cursor = lines.next().unwrap_or_default();
    let mut items: Vec<&str> = lines.collect();
    items.sort_unstable();
    let size = items.len() % 7 + 1;

    // Whatever a client sends.
    if let Some(pos) = cursor::decode("tools", client_cursor) {
        let again = cursor::encode("tools", &pos);
        assert!(again.len() <= cursor::MAX_CURSOR);
        let decoded = cursor::decode("tools", &again).expect("a re-encoded cursor decodes");
        // A key too long for a cursor is left out: the position then resumes by count.
        assert_eq!(decoded.next, pos.next);
        assert!(decoded.last == pos.last || decoded.last.is_empty());
        assert_eq!(
            cursor::decode("prompts", &again),
            None,
            "minted for another list"
        );
        let (page, _) = cursor::page(&items, |s| s, Some(&pos), size);
        assert!(page.len() <= size.max(1));
        assert!(page.iter().all(|p| items.contains(p)));
    }

    // Paging the whole list with the cursors the gateway mints.
    let mut seen: Vec<&str> = Vec::new();
    let mut pos = None;
    for _ in 0..=items.len() {
        let (page, next) = cursor::page(&items, |s| s, pos.as_ref(), size);
        seen.extend_from_slice(page);
        let Some(next) = next else { break };
        let minted = cursor::encode("tools", &next);
        let decoded = cursor::decode("tools", &minted);
        assert!(
            decoded.as_ref().is_some_and(|d| d.next == next.next),
            "the gateway cannot read its own cursor {minted:?}"
        );
        pos = decoded;
    }
    assert_eq!(seen, items, "paging lost or repeated items");
});
