//! `sessionStorage`: the endpoint `address`, `username`, `db` and `tls` name together (see
//! [`SessionStorageConfig::endpoint`]), the TLS files, and ToolHive's `keyPrefix` rule. That the
//! TLS files exist and parse is checked when `serve` starts (this crate reads no files).

use super::absolute_path_problem;
use crate::error::{Issues, KeyPath};
use crate::schema::{SessionProvider, SessionStorageConfig};

pub(super) fn check(s: &SessionStorageConfig, path: &KeyPath, issues: &Issues) {
    let has_address = s.address.as_deref().is_some_and(|a| !a.trim().is_empty());
    if (s.provider == SessionProvider::Redis || has_address)
        && let Err(problems) = s.endpoint()
    {
        for (key, message) in problems {
            issues.push_new(&path.key(key), message);
        }
    }
    if let Some(tls) = &s.tls {
        let tpath = path.key("tls");
        for (key, file) in [
            ("caFile", &tls.ca_file),
            ("certFile", &tls.cert_file),
            ("keyFile", &tls.key_file),
        ] {
            if let Some(f) = file
                && let Some(problem) = absolute_path_problem(std::path::Path::new(f))
            {
                issues.push_new(&tpath.key(key), problem);
            }
        }
        match (&tls.cert_file, &tls.key_file) {
            (Some(_), None) => issues.push_new(
                &tpath.key("keyFile"),
                "is required with certFile (the client certificate's key)",
            ),
            (None, Some(_)) => issues.push_new(
                &tpath.key("certFile"),
                "is required with keyFile (the client certificate)",
            ),
            _ => {}
        }
        if let Some(name) = &tls.server_name
            && (name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '/'))
        {
            issues.push_new(
                &tpath.key("serverName"),
                format!("{name:?} is not a DNS name or an IP address"),
            );
        }
    }
    if let Some(p) = &s.key_prefix
        && !p.ends_with(':')
    {
        issues.push_new(
            &path.key("keyPrefix"),
            format!("{p:?} must end with ':' (ToolHive's rule; e.g. thv:vmcp:session:)"),
        );
    }
}
