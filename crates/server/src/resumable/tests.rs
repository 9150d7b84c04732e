use super::*;

fn limits() -> Limits {
    Limits {
        keepalive: Duration::from_secs(60),
        ..Limits::default()
    }
}

fn text(b: &Bytes) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The events a reader gets until its connection ends (none may be waiting).
async fn drain(mut reader: Reader) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(b) = reader.next(Some(Duration::from_secs(60))).await {
        out.push(text(&b));
    }
    out
}

fn id_of(event: &str) -> &str {
    event
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap_or_default()
}

#[tokio::test]
async fn a_stream_opens_with_a_priming_event_and_numbers_every_event() {
    let streams = Streams::default();
    let s = streams.open("r1.", limits(), true);
    assert!(s.id().starts_with("r1.") && !s.id().contains(':'));
    s.push_message(br#"{"a":1}"#);
    s.finish_with(br#"{"b":2}"#);
    let events = drain(s.attach(None).unwrap()).await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        events[0],
        format!("id: {}:0\nretry: 1000\ndata: \n\n", s.id())
    );
    assert_eq!(id_of(&events[1]), format!("{}:1", s.id()));
    assert!(events[2].contains(r#"data: {"b":2}"#));
    assert_eq!(id_of(&events[2]), format!("{}:2", s.id()));
}

#[tokio::test]
async fn a_resume_continues_right_after_the_last_event_seen_and_replaces_the_old_connection() {
    let streams = Streams::default();
    let s = streams.open("", limits(), true);
    for n in 1..=3 {
        s.push_message(format!("{{\"n\":{n}}}").as_bytes());
    }
    let mut first = s.attach(None).unwrap();
    let primed = first.next(Some(Duration::from_secs(60))).await.unwrap();
    let seen = first.next(Some(Duration::from_secs(60))).await.unwrap();
    assert!(text(&seen).contains(r#"{"n":1}"#));
    let (found, seq) = streams.find(id_of(&text(&seen))).unwrap();
    assert!(Arc::ptr_eq(&found, &s) && seq == 1);
    let second = s.attach(Some(seq)).unwrap();
    // The old connection ends without the events the new one now carries.
    assert_eq!(first.next(Some(Duration::from_secs(60))).await, None);
    assert!(s.is_attached());
    s.finish_with(br#"{"n":4}"#);
    let rest = drain(second).await;
    let numbers: Vec<_> = rest.iter().map(|e| id_of(e).to_owned()).collect();
    let expect: Vec<_> = (2..=4).map(|n| format!("{}:{n}", s.id())).collect();
    assert_eq!(numbers, expect, "nothing lost, nothing twice");
    assert!(text(&primed).starts_with("id: "));
    assert!(!s.is_attached(), "the reader is gone");
}

#[tokio::test]
async fn a_pause_ends_the_connection_and_what_follows_waits_for_the_resume() {
    let streams = Streams::default();
    let s = streams.open("", limits(), true);
    let reader = s.attach(None).unwrap();
    s.pause(Duration::from_millis(250));
    s.push_message(br#"{"later":true}"#);
    let before = drain(reader).await;
    assert_eq!(before.len(), 2, "priming, then the pause: {before:?}");
    assert!(before[1].contains("retry: 250\n") && before[1].ends_with("data: \n\n"));
    s.finish_with(br#"{"answer":1}"#);
    let (found, seq) = streams.find(id_of(&before[1])).unwrap();
    let after = drain(found.attach(Some(seq)).unwrap()).await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[0].contains("later") && after[1].contains("answer"));
}

#[tokio::test]
async fn an_unprimed_stream_starts_with_its_first_message() {
    let s = Streams::default().open("", limits(), false);
    s.finish_with(b"{}");
    let events = drain(s.attach(None).unwrap()).await;
    assert_eq!(events.len(), 1);
    assert_eq!(id_of(&events[0]), format!("{}:0", s.id()));
}

#[tokio::test]
async fn a_waiting_connection_gets_keepalive_comments() {
    let s = Streams::default().open("", limits(), true);
    let mut reader = s.attach(None).unwrap();
    reader.next(Some(Duration::from_millis(10))).await.unwrap();
    let idle = reader.next(Some(Duration::from_millis(10))).await.unwrap();
    assert_eq!(&idle[..], KEEPALIVE);
}

#[test]
fn the_buffer_is_bounded_and_a_resume_from_before_it_is_refused() {
    let small = Limits {
        events: 4,
        ..limits()
    };
    let streams = Streams::default();
    let s = streams.open("", small, true);
    for n in 0..10 {
        s.push_message(format!("{{\"n\":{n}}}").as_bytes());
    }
    // Events 0..=10 were numbered; 7..=10 are kept, so a client that saw 6 can resume.
    assert!(s.attach(Some(6)).is_ok());
    assert_eq!(s.attach(Some(5)).err(), Some(Refused::Lost));
    assert_eq!(s.attach(Some(11)).err(), Some(Refused::Unknown));
    assert!(
        s.attach(Some(10)).is_ok(),
        "saw everything: nothing to replay"
    );
    let bytes = Limits {
        bytes: 64,
        ..limits()
    };
    let b = streams.open("", bytes, true);
    b.push_message(&[b'1'; 200]);
    assert!(
        b.lock().events.len() == 1,
        "the newest event is always kept"
    );
}

#[test]
fn ids_of_other_streams_or_no_stream_are_unknown() {
    let streams = Streams::default();
    let s = streams.open("", limits(), true);
    let other = Streams::default().open("", limits(), true);
    for bad in [
        String::new(),
        "nocolon".into(),
        format!("{}:", s.id()),
        format!("{}:-1", s.id()),
        format!("{}:1x", s.id()),
        format!(":{}", 0),
        format!("{}:0", other.id()),
        format!("{}:99999999999999999999999", s.id()),
    ] {
        assert_eq!(streams.find(&bad).err(), Some(Refused::Unknown), "{bad}");
    }
    assert!(streams.find(&format!("{}:0", s.id())).is_ok());
}

#[test]
fn a_session_keeps_a_bounded_number_of_streams_finished_ones_going_first() {
    let few = Limits {
        streams: 3,
        ..limits()
    };
    let streams = Streams::default();
    let live = streams.open("", few, true);
    let done = streams.open("", few, true);
    done.finish();
    let third = streams.open("", few, true);
    let fourth = streams.open("", few, true);
    assert!(streams.find(&format!("{}:0", done.id())).is_err());
    for kept in [&live, &third, &fourth] {
        assert!(streams.find(&format!("{}:0", kept.id())).is_ok());
    }
    let fifth = streams.open("", few, true);
    assert!(
        streams.find(&format!("{}:0", live.id())).is_err(),
        "then the oldest"
    );
    assert!(streams.find(&format!("{}:0", fifth.id())).is_ok());
}

#[test]
fn a_finished_stream_is_resumable_for_its_retention_only() {
    let brief = Limits {
        retention: Duration::from_millis(20),
        ..limits()
    };
    let streams = Streams::default();
    let s = streams.open("", brief, true);
    s.finish();
    assert!(streams.find(&format!("{}:0", s.id())).is_ok());
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(
        streams.find(&format!("{}:0", s.id())).err(),
        Some(Refused::Unknown)
    );
    streams.prune();
    assert!(streams.lock().by_id.is_empty());
}

#[tokio::test]
async fn a_new_get_stream_replaces_the_old_one() {
    let streams = Streams::default();
    let old = streams.open_standalone("", limits(), true);
    let reader = old.attach(None).unwrap();
    let new = streams.open_standalone("", limits(), true);
    assert_eq!(
        drain(reader).await.len(),
        1,
        "the old one ends after its priming"
    );
    assert!(streams.find(&format!("{}:0", old.id())).is_err());
    assert!(Arc::ptr_eq(&streams.standalone().unwrap(), &new));
    streams.close_all();
    assert!(streams.standalone().is_none());
    assert!(
        !new.push_message(b"{}"),
        "a closed stream takes nothing more"
    );
}

#[tokio::test]
async fn a_stream_is_outstanding_while_written_and_until_a_connection_read_its_end() {
    let streams = Streams::default();
    let s = streams.open("r1.", limits(), true);
    let first = s.attach(None).unwrap();
    assert!(streams.outstanding(), "a running call");
    // The client's connection is cut after the priming event; the call then answers.
    drop(first);
    s.finish_with(br#"{"id":1}"#);
    assert!(streams.outstanding(), "an answer nobody read");
    let later = Instant::now() + Duration::from_secs(60);
    assert!(!s.outstanding(later), "given up after a few retry hints");
    // The client resumes and reads to the end: nothing is left to wait for.
    let events = drain(s.attach(Some(0)).unwrap()).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(!streams.outstanding());
    // A stream whose reader saw everything before it finished is not waited for either.
    let g = streams.open("r1.", limits(), true);
    let mut reader = g.attach(None).unwrap();
    assert!(reader.try_next().is_some_and(|e| e.is_some()));
    g.finish();
    assert!(!g.outstanding(Instant::now()));
}
