//! Validation rules for `backends[]`.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{error_at, errors, ok};
use vmcp_config::{BackendKind, Isolation, Transport};

#[test]
fn stdio_backend_with_all_fields() {
    let c = ok("backends:
  - name: fs.local_1
    transport: stdio
    command: npx
    args: [-y, server, 3]
    env: {A: b, N: 1}
    cwd: /tmp
    isolation: perSession
    metadata: {team: x}
");
    let b = &c.backends[0];
    assert_eq!(b.transport, Transport::Stdio);
    assert_eq!(b.args, ["-y", "server", "3"]);
    assert_eq!(b.env["N"], "1");
    assert_eq!(b.isolation, Isolation::PerSession);
    assert_eq!(b.metadata["team"], "x");
}

#[test]
fn name_must_match_pattern_and_be_unique() {
    error_at(
        "backends:\n  - name: -bad\n    command: x\n",
        "backends[0].name",
        "not a valid backend name",
    );
    error_at(
        "backends:\n  - name: has space\n    command: x\n",
        "backends[0].name",
        "not a valid backend name",
    );
    let e = error_at(
        "backends:\n  - name: a\n    command: x\n  - name: a\n    command: y\n",
        "backends[1].name",
        "duplicate backend name",
    );
    assert_eq!(e.line, Some(4));
    error_at(
        "backends:\n  - command: x\n",
        "backends[0].name",
        "is required",
    );
}

#[test]
fn http_transports_need_an_http_url() {
    error_at(
        "backends:\n  - name: a\n    transport: sse\n",
        "backends[0].url",
        "is required for sse backends",
    );
    error_at(
        "backends:\n  - name: a\n    url: localhost:8080\n",
        "backends[0].url",
        "must be an http:// or https:// URL",
    );
    error_at(
        "backends:\n  - name: a\n    url: \"https://\"\n",
        "backends[0].url",
        "must be an http",
    );
    let c = ok("backends:\n  - name: a\n    url: http://127.0.0.1:9/sse\n    transport: sse\n");
    assert_eq!(c.backends[0].transport, Transport::Sse);
}

#[test]
fn stdio_needs_command_and_no_url() {
    error_at(
        "backends:\n  - name: a\n    transport: stdio\n",
        "backends[0].command",
        "is required for stdio",
    );
    error_at(
        "backends:\n  - name: a\n    transport: stdio\n    command: x\n    url: http://a\n",
        "backends[0].url",
        "must be absent for stdio",
    );
    error_at(
        "backends:\n  - name: a\n    command: \" \"\n",
        "backends[0].command",
        "must not be empty",
    );
}

#[test]
fn fields_of_the_other_transport_are_rejected() {
    let yaml = "backends:
  - name: a
    url: http://a
    args: [x]
    env: {A: b}
    cwd: /tmp
  - name: b
    command: x
    headers: {X-A: b}
";
    for path in ["backends[0].args", "backends[0].env", "backends[0].cwd"] {
        error_at(yaml, path, "only applies to stdio backends");
    }
    error_at(yaml, "backends[1].headers", "only applies to http backends");
}

#[test]
fn bad_transport_and_isolation_values() {
    let yaml =
        "backends:\n  - name: a\n    url: http://a\n    transport: http\n    isolation: session\n";
    error_at(
        yaml,
        "backends[0].transport",
        "must be one of: streamable-http, sse, stdio",
    );
    error_at(
        yaml,
        "backends[0].isolation",
        "must be one of: shared, perSession",
    );
}

#[test]
fn headers_must_be_valid_and_unrestricted_without_echoing_values() {
    let yaml = "backends:
  - name: a
    url: http://a
    headers:
      Host: evil
      Mcp-Session-Id: x
      \"Bad Name\": x
      X-Ok: \"line\\r\\nsecretvalue\"
";
    error_at(yaml, "backends[0].headers.Host", "restricted header");
    error_at(
        yaml,
        "backends[0].headers.Mcp-Session-Id",
        "restricted header",
    );
    error_at(yaml, "backends[0].headers.Bad Name", "invalid header name");
    let e = error_at(yaml, "backends[0].headers.X-Ok", "control characters");
    assert!(!e.message.contains("secretvalue"));
}

#[test]
fn type_entry_and_ca_bundle_rules() {
    let c = ok(
        "backends:\n  - name: a\n    url: https://a\n    type: entry\n    caBundlePath: /etc/ca.crt\n",
    );
    assert_eq!(c.backends[0].kind, BackendKind::Entry);
    error_at(
        "backends:\n  - name: a\n    url: https://a\n    caBundlePath: /etc/ca.crt\n",
        "backends[0].caBundlePath",
        "only valid when type is entry",
    );
    error_at(
        "backends:\n  - name: a\n    url: https://a\n    type: entry\n    caBundlePath: ca.crt\n",
        "backends[0].caBundlePath",
        "absolute",
    );
    error_at(
        "backends:\n  - name: a\n    url: https://a\n    type: entry\n    caBundlePath: /etc/../ca\n",
        "backends[0].caBundlePath",
        "invalid path",
    );
    error_at(
        "backends:\n  - name: a\n    url: https://a\n    type: remote\n",
        "backends[0].type",
        "must be one of",
    );
    error_at(
        "backends:\n  - name: a\n    command: x\n    type: entry\n",
        "backends[0].type",
        "needs an http",
    );
}

#[test]
fn backends_must_be_a_list_of_mappings() {
    let errs = errors("backends:\n  name: a\n");
    assert_eq!(errs[0].path, "backends");
    assert!(errs[0].message.contains("expected a list"));
    error_at(
        "backends:\n  - just-a-string\n",
        "backends[0]",
        "expected a mapping",
    );
}
