//! The writer against real files: mode 0600, lines appended whole, a device that refuses writes
//! reported in the status, and `onWriteFailure` deciding whether requests wait or are refused.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use vmcp_audit::{AuditSettings, Auditor, Destination, HttpEvent};

fn temp_file(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("vmcp-audit-{name}-{}-{nanos}", std::process::id()))
}

fn call(status: u16) -> HttpEvent {
    HttpEvent {
        http_method: "POST".into(),
        endpoint: "/mcp".into(),
        method: Some("tools/call".into()),
        target: Some("alpha_echo".into()),
        status,
        ..HttpEvent::default()
    }
}

#[tokio::test]
async fn lines_are_appended_to_a_file_only_its_owner_can_read() {
    let path = temp_file("append");
    let settings = AuditSettings {
        destination: Destination::File(path.clone()),
        ..AuditSettings::default()
    };
    let auditor = Auditor::start(settings).expect("opens");
    for status in [200, 403] {
        let slot = auditor.reserve().await.expect("slot");
        auditor.emit(slot, &call(status));
    }
    assert!(auditor.flush(Duration::from_secs(5)).await);
    let text = std::fs::read_to_string(&path).expect("written");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["outcome"], "success");
    assert_eq!(lines[1]["outcome"], "denied");
    assert_eq!(lines[0]["type"], "mcp_tool_call");
    // ToolHive's key order: time, level, msg first.
    assert!(text.starts_with(r#"{"time":"#), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert_eq!(auditor.status()["written"], 2);
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn filtered_types_are_not_written() {
    let path = temp_file("filter");
    let settings = AuditSettings {
        destination: Destination::File(path.clone()),
        event_types: vec!["mcp_tool_call".into(), "mcp_tools_list".into()],
        exclude_event_types: vec!["mcp_tools_list".into()],
        ..AuditSettings::default()
    };
    let auditor = Auditor::start(settings).expect("opens");
    let mut list = call(200);
    list.method = Some("tools/list".into());
    let mut ping = call(200);
    ping.method = Some("ping".into());
    for e in [call(200), list, ping] {
        let slot = auditor.reserve().await.expect("slot");
        auditor.emit(slot, &e);
    }
    assert!(auditor.flush(Duration::from_secs(5)).await);
    let text = std::fs::read_to_string(&path).expect("written");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("mcp_tool_call"));
    let _ = std::fs::remove_file(path);
}

/// `/dev/full` accepts the open and refuses every write (ENOSPC), like a full disk.
#[cfg(target_os = "linux")]
async fn failing(fail_closed: bool) -> std::sync::Arc<Auditor> {
    let settings = AuditSettings {
        destination: Destination::File("/dev/full".into()),
        fail_closed,
        write_timeout: Duration::from_millis(50),
        ..AuditSettings::default()
    };
    let auditor = Auditor::start(settings).expect("opens");
    let slot = auditor.reserve().await.expect("healthy at first");
    auditor.emit(slot, &call(200));
    for _ in 0..200 {
        if auditor.status()["healthy"] == false {
            return auditor;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("a failing write was never reported: {}", auditor.status());
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_log_that_cannot_be_written_shows_in_status_and_fails_closed_when_asked() {
    let closed = failing(true).await;
    let status = closed.status();
    assert!(status["writeFailures"].as_u64() >= Some(1), "{status}");
    assert!(
        status["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("space")),
        "{status}"
    );
    let refused = closed.reserve().await.expect_err("closed refuses");
    assert!(refused.0.contains("space"), "{refused:?}");
    assert_eq!(closed.status()["pending"], 1);

    let open = failing(false).await;
    assert!(open.reserve().await.is_ok(), "open keeps serving");
}
