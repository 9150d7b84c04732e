//! The human-readable form of `/status`: an HTML page rendered from the same JSON value the
//! endpoint serves, for a client (a browser) whose `Accept` prefers `text/html`.
//!
//! It owns the content negotiation and the rendering, not the status itself (see `ops.rs`), and
//! reads the value loosely: any field may be absent or null (shown as "—"), so fields added to
//! the status later appear without a change here. Every string is escaped: backend names come
//! from the config and errors from backends. No JavaScript; the page refreshes itself.

use std::fmt::Write as _;

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, header};
use serde_json::Value;

/// What the page's headers allow: inline styles and nothing else (no scripts, images, frames).
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

/// Shown for a field that is absent or null.
const ABSENT: &str = "—";

/// Whether `headers` ask for HTML over JSON: `text/html` must be acceptable with a strictly
/// higher quality than `application/json`, each judged by its most specific matching range
/// (RFC 9110 §12.5.1). A browser's `text/html,…,*/*;q=0.8` gets HTML; `application/json`,
/// `*/*`, curl's default and no `Accept` at all keep JSON.
pub(crate) fn wants_html(headers: &HeaderMap) -> bool {
    let ranges: Vec<(String, f32)> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(media_range)
        .collect();
    quality(&ranges, "text", "html") > quality(&ranges, "application", "json")
}

/// One `Accept` element as a lowercase `type/subtype` and its quality (1 unless `q=` says
/// otherwise; an unreadable `q` counts as 0).
fn media_range(element: &str) -> Option<(String, f32)> {
    let mut parts = element.split(';');
    let range = parts.next()?.trim().to_ascii_lowercase();
    if !range.contains('/') {
        return None;
    }
    let mut q = 1.0;
    for param in parts {
        if let Some((k, v)) = param.split_once('=')
            && k.trim().eq_ignore_ascii_case("q")
        {
            q = v.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0);
        }
    }
    Some((range, q))
}

/// The quality `ranges` give `kind/sub`: that of the most specific range matching it (exact,
/// then `kind/*`, then `*/*`), 0 when none matches.
fn quality(ranges: &[(String, f32)], kind: &str, sub: &str) -> f32 {
    let exact = format!("{kind}/{sub}");
    let any_sub = format!("{kind}/*");
    [exact.as_str(), any_sub.as_str(), "*/*"]
        .iter()
        .find_map(|want| {
            ranges
                .iter()
                .filter(|(r, _)| r == want)
                .map(|(_, q)| *q)
                .reduce(f32::max)
        })
        .unwrap_or(0.0)
}

/// The page for `status` with its headers: HTML, never cached, and a policy that forbids
/// everything but inline styles.
pub(crate) fn response(status: &Value) -> Response {
    let mut response = render(status).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The HTML page for the `/status` value `status`.
pub(crate) fn render(status: &Value) -> String {
    let title = escape(&format!(
        "{} {}",
        plain(status.get("name")),
        plain(status.get("version"))
    ));
    let backends = status
        .get("backends")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut page = String::with_capacity(4096);
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"refresh\" content=\"10\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · status</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>{title}</h1>\n{summary}\n",
        summary = summary(status, backends),
    );
    page.push_str(&table(backends));
    if let Some(pinning) = status.get("toolPinning") {
        page.push_str(&pins(pinning));
    }
    page.push_str(
        "<p class=\"foot\">Refreshes every 10 s. The same status as JSON: \
         <code>curl /status</code>.</p>\n</body>\n</html>\n",
    );
    page
}

/// The line under the title: readiness, sessions, backends healthy of total, tools, audit.
fn summary(status: &Value, backends: &[Value]) -> String {
    let ready = match status.get("ready").and_then(Value::as_bool) {
        Some(true) => "<span class=\"badge healthy\">Ready</span>",
        Some(false) => "<span class=\"badge unhealthy\">Not ready</span>",
        None => "<span class=\"badge unknown\">Readiness unknown</span>",
    };
    let healthy = backends
        .iter()
        .filter(|b| b.get("health").and_then(Value::as_str) == Some("healthy"))
        .count();
    let tools: Option<u64> = backends
        .iter()
        .filter_map(|b| b.get("toolCount").and_then(Value::as_u64))
        .reduce(|a, b| a + b);
    let sessions = status.get("sessions");
    let mut line = format!(
        "<p class=\"summary\">{ready} · <b>{}</b> {} · <b>{healthy}/{}</b> backends healthy \
         · <b>{}</b> {}",
        text(sessions),
        plural(sessions.and_then(Value::as_u64), "session"),
        backends.len(),
        tools.map_or(ABSENT.to_string(), |t| t.to_string()),
        plural(tools, "tool"),
    );
    if let Some(audit) = status.get("audit") {
        let state = match audit.get("healthy").and_then(Value::as_bool) {
            Some(true) => "ok",
            Some(false) => "failing",
            None => ABSENT,
        };
        let _ = write!(line, " · audit <b>{state}</b>");
    }
    line.push_str("</p>");
    line
}

/// `noun`, with an "s" unless `count` is one.
fn plural(count: Option<u64>, noun: &str) -> String {
    if count == Some(1) {
        noun.into()
    } else {
        format!("{noun}s")
    }
}

/// The backends table; one row per backend.
fn table(backends: &[Value]) -> String {
    if backends.is_empty() {
        return "<p>No backends configured.</p>\n".into();
    }
    let mut out = String::from(
        "<table>\n<thead><tr><th>Backend</th><th>Transport</th><th>Health</th><th>Tools</th>\
         <th>Revision</th><th>Conns</th><th>Failures</th><th>Circuit</th>\
         <th>Last check</th><th>Last transition</th><th>Last error</th></tr></thead>\n<tbody>\n",
    );
    for b in backends {
        let health = b.get("health").and_then(Value::as_str);
        // Only known states pick a badge class; anything else is shown neutral.
        let class = ["healthy", "degraded", "unhealthy", "unauthenticated"]
            .into_iter()
            .find(|known| health == Some(*known))
            .unwrap_or("unknown");
        // Every revision it serves, when that is more than the one in use.
        let revisions = match b.get("mcpRevisions").and_then(Value::as_array) {
            Some(all) if all.len() > 1 => {
                let each: Vec<String> = all.iter().map(|r| text(Some(r))).collect();
                format!("<br><small>serves<br>{}</small>", each.join("<br>"))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td>{}</td>\
             <td><span class=\"badge {class}\">{}</span></td><td class=\"num\">{}</td>\
             <td class=\"rev\">{}{revisions}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>\
             <td class=\"time\">{}</td><td class=\"time\">{}</td><td class=\"error\">{}</td></tr>",
            text(b.get("name")),
            text(b.get("transport")),
            text(b.get("health")),
            text(b.get("toolCount")),
            text(b.get("mcpRevision")),
            text(b.get("connections")),
            text(b.get("consecutiveFailures")),
            text(b.get("circuitState")),
            time(b.get("lastCheck")),
            time(b.get("lastTransition")),
            text(b.get("lastError")),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// Definitions awaiting approval (`toolPinning`), each with what changed.
fn pins(pinning: &Value) -> String {
    let enforce = pinning.get("mode").and_then(Value::as_str) == Some("enforce");
    let pending = pinning
        .get("pending")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut out = format!(
        "<h2>Definition pins</h2>\n<p>Mode <b>{}</b>, pins in <code>{}</code>: ",
        text(pinning.get("mode")),
        text(pinning.get("store"))
    );
    if pending.is_empty() {
        out.push_str("every definition served matches its pin.</p>\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{} {} {}. Review with <code>vmcp tools diff</code>, accept with \
         <code>vmcp tools approve</code>.</p>",
        pending.len(),
        plural(Some(pending.len() as u64), "definition"),
        if enforce {
            "withheld until approved"
        } else {
            "changed (still served: mode warn)"
        }
    );
    out.push_str(
        "<table class=\"pins\">\n<thead><tr><th>Backend</th><th>Kind</th><th>Name</th>\
                  <th>Why</th><th>Since</th><th>What changed</th></tr></thead>\n<tbody>\n",
    );
    for p in pending {
        let lines: Vec<String> = p
            .get("diff")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|l| escape(l.as_str().unwrap_or_default()))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td>{}</td><td class=\"name\">{}</td><td>{}</td>\
             <td class=\"time\">{}</td><td><pre>{}</pre></td></tr>",
            text(p.get("backend")),
            text(p.get("kind")),
            text(p.get("name")),
            text(p.get("reason")),
            time(p.get("firstSeen")),
            lines.join("\n"),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// `value` as escaped text: "—" when absent, null or empty; lists joined with commas; objects
/// as compact JSON.
fn text(value: Option<&Value>) -> String {
    escape(&plain(value))
}

/// An RFC 3339 timestamp as escaped text, the date above the time so the column stays narrow.
fn time(value: Option<&Value>) -> String {
    let shown = text(value);
    match shown.split_once('T') {
        Some((date, clock)) => format!("{date}<br>{clock}"),
        None => shown,
    }
}

/// `value` as plain (unescaped) text, as [`text`] describes.
fn plain(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => ABSENT.into(),
        Some(Value::String(s)) if s.is_empty() => ABSENT.into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        Some(Value::Array(items)) if items.is_empty() => ABSENT.into(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => other.to_string(),
    }
}

/// `s` safe in HTML text and in quoted attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Large type and high-contrast badges: read at a glance, and by OCR in CI.
const STYLE: &str = "\
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:20px;margin:24px;color:#111;background:#fff}\
h1{font-size:32px;margin:0 0 12px}\
.summary{font-size:22px;margin:0 0 20px}\
table{border-collapse:collapse;width:100%;font-size:18px}\
th,td{border-bottom:1px solid #ccc;padding:6px 8px;text-align:left;vertical-align:top}\
th{background:#f0f0f0;font-size:16px}\
td.num{text-align:right}\
td.name{font-weight:bold}\
td.time,td.error{font-size:16px}\
td.rev,td.time{white-space:nowrap}\
td.error{min-width:220px;overflow-wrap:break-word;color:#7a0000}\
.badge{display:inline-block;padding:2px 10px;border-radius:6px;font-weight:bold}\
.healthy{background:#c9f2cf;color:#0b4d17}\
.degraded{background:#ffe6a8;color:#5c3d00}\
.unhealthy{background:#ffd0d0;color:#7a0000}\
.unauthenticated{background:#e4d6ff;color:#3d1a78}\
.unknown{background:#e4e4e4;color:#333}\
.foot{margin-top:20px;font-size:16px;color:#555}\
h2{font-size:24px;margin:24px 0 8px}\
table.pins pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-size:15px}";

#[cfg(test)]
mod tests;
