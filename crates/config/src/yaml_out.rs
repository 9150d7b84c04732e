//! `to_yaml`: writes a [`Config`] back as YAML that `load_str` reads into the same
//! value. Sections equal to their defaults are left out, so the output stays short;
//! every `$` is written as `$$` so no string turns into an env reference on reload.

use std::collections::BTreeMap;
use std::time::Duration;

use yaml_serde::{Mapping, Value};

use crate::duration::format_duration;
use crate::reader::Choice;
use crate::schema::{
    AggregationConfig, BackendAuthStrategy, BackendConfig, BackendKind, BucketConfig, Config,
    Isolation, OperationalConfig, OutgoingAuthConfig, RateLimitConfig, RawSection, ServerConfig,
    ToolOverride,
};

/// A mapping under construction.
#[derive(Default)]
struct Out(Mapping);

impl Out {
    fn put(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.0.insert(Value::from(key), value.into());
        self
    }

    fn put_if(&mut self, cond: bool, key: &str, value: impl FnOnce() -> Value) -> &mut Self {
        if cond {
            self.put(key, value());
        }
        self
    }

    fn done(&mut self) -> Value {
        Value::Mapping(std::mem::take(&mut self.0))
    }
}

fn dur(d: Duration) -> Value {
    Value::from(format_duration(d))
}

fn num(n: impl Into<u64>) -> Value {
    Value::from(n.into())
}

fn raw(r: &RawSection) -> Value {
    yaml_serde::to_value(&r.0).unwrap_or(Value::Null)
}

fn strings(v: &[String]) -> Value {
    Value::from(v.to_vec())
}

fn string_map(m: &BTreeMap<String, String>) -> Value {
    let mut out = Out::default();
    for (k, v) in m {
        out.put(k, v.as_str());
    }
    out.done()
}

/// The YAML value of a whole configuration.
pub(crate) fn to_value(c: &Config) -> Value {
    let d = Config::default();
    let mut out = Out::default();
    out.put("name", c.name.as_str());
    if let Some(g) = &c.group_ref {
        out.put("groupRef", g.as_str());
    }
    out.put_if(!c.backends.is_empty(), "backends", || {
        c.backends.iter().map(backend).collect()
    });
    out.put_if(c.incoming_auth != d.incoming_auth, "incomingAuth", || {
        let a = &c.incoming_auth;
        let mut m = Out::default();
        m.put("type", a.kind.as_str());
        if let Some(o) = &a.oidc {
            m.put("oidc", raw(&o.raw));
        }
        if let Some(z) = &a.authz {
            m.put("authz", raw(&z.raw));
        }
        m.done()
    });
    out.put_if(c.outgoing_auth != d.outgoing_auth, "outgoingAuth", || {
        outgoing(&c.outgoing_auth)
    });
    out.put_if(c.aggregation != d.aggregation, "aggregation", || {
        aggregation(&c.aggregation)
    });
    out.put_if(!c.composite_tools.is_empty(), "compositeTools", || {
        c.composite_tools.iter().map(|t| raw(&t.raw)).collect()
    });
    out.put_if(
        !c.composite_tool_refs.is_empty(),
        "compositeToolRefs",
        || {
            c.composite_tool_refs
                .iter()
                .map(|r| Out::default().put("name", r.name.as_str()).done())
                .collect()
        },
    );
    out.put_if(c.operational != d.operational, "operational", || {
        operational(&c.operational)
    });
    out.put_if(!c.metadata.is_empty(), "metadata", || {
        string_map(&c.metadata)
    });
    if let Some(t) = &c.telemetry {
        out.put("telemetry", raw(&t.raw));
    }
    if let Some(m) = &c.code_mode {
        out.put("codeMode", raw(&m.raw));
    }
    if let Some(p) = &c.tool_pinning {
        out.put("toolPinning", raw(&p.raw));
    }
    if let Some(a) = &c.audit {
        out.put("audit", raw(&a.raw));
    }
    if let Some(o) = &c.optimizer {
        out.put("optimizer", raw(&o.raw));
    }
    if let Some(r) = &c.rate_limiting {
        out.put("rateLimiting", rate_limiting(r));
    }
    if let Some(s) = &c.session_storage {
        let mut m = Out::default();
        m.put("provider", s.provider.name());
        if let Some(a) = &s.address {
            m.put("address", a.as_str());
        }
        m.put_if(s.db != 0, "db", || num(s.db));
        if let Some(p) = &s.key_prefix {
            m.put("keyPrefix", p.as_str());
        }
        if let Some(u) = &s.username {
            m.put("username", u.as_str());
        }
        if let Some(t) = &s.tls {
            let mut tls = Out::default();
            for (key, value) in [
                ("caFile", &t.ca_file),
                ("certFile", &t.cert_file),
                ("keyFile", &t.key_file),
                ("serverName", &t.server_name),
            ] {
                if let Some(v) = value {
                    tls.put(key, v.as_str());
                }
            }
            m.put("tls", tls.done());
        }
        out.put("sessionStorage", m.done());
    }
    out.put_if(
        !c.passthrough_headers.is_empty(),
        "passthroughHeaders",
        || strings(&c.passthrough_headers),
    );
    out.put_if(c.server != d.server, "server", || server(&c.server));
    let mut value = out.done();
    crate::env::escape_tree(&mut value);
    value
}

fn backend(b: &BackendConfig) -> Value {
    let mut m = Out::default();
    m.put("name", b.name.as_str());
    if let Some(u) = &b.url {
        m.put("url", u.as_str());
    }
    m.put("transport", b.transport.as_str());
    m.put_if(b.kind != BackendKind::Workload, "type", || {
        b.kind.name().into()
    });
    if let Some(p) = &b.ca_bundle_path {
        m.put("caBundlePath", p.to_string_lossy().as_ref());
    }
    if let Some(cmd) = &b.command {
        m.put("command", cmd.as_str());
    }
    m.put_if(!b.args.is_empty(), "args", || strings(&b.args));
    m.put_if(!b.env.is_empty(), "env", || string_map(&b.env));
    if let Some(cwd) = &b.cwd {
        m.put("cwd", cwd.to_string_lossy().as_ref());
    }
    m.put_if(b.isolation != Isolation::Shared, "isolation", || {
        b.isolation.name().into()
    });
    m.put_if(!b.headers.is_empty(), "headers", || string_map(&b.headers));
    m.put_if(!b.metadata.is_empty(), "metadata", || {
        string_map(&b.metadata)
    });
    m.done()
}

fn outgoing(o: &OutgoingAuthConfig) -> Value {
    let strategy = |s: &BackendAuthStrategy| raw(&s.raw);
    let mut m = Out::default();
    m.put("source", o.source.name());
    if let Some(s) = &o.default {
        m.put("default", strategy(s));
    }
    m.put_if(!o.backends.is_empty(), "backends", || {
        let mut b = Out::default();
        for (name, s) in &o.backends {
            b.put(name, strategy(s));
        }
        b.done()
    });
    m.done()
}

fn aggregation(a: &AggregationConfig) -> Value {
    let crc = &a.conflict_resolution_config;
    let mut c = Out::default();
    c.put("prefixFormat", crc.prefix_format.as_str());
    c.put_if(!crc.priority_order.is_empty(), "priorityOrder", || {
        strings(&crc.priority_order)
    });
    let mut m = Out::default();
    m.put("conflictResolution", a.conflict_resolution.name());
    m.put("conflictResolutionConfig", c.done());
    m.put_if(!a.tools.is_empty(), "tools", || {
        a.tools
            .iter()
            .map(|t| {
                let mut w = Out::default();
                w.put("workload", t.workload.as_str());
                if let Some(r) = &t.tool_config_ref {
                    w.put(
                        "toolConfigRef",
                        Out::default().put("name", r.name.as_str()).done(),
                    );
                }
                w.put_if(!t.filter.is_empty(), "filter", || strings(&t.filter));
                w.put_if(!t.overrides.is_empty(), "overrides", || {
                    let mut o = Out::default();
                    for (name, ov) in &t.overrides {
                        o.put(name, tool_override(ov));
                    }
                    o.done()
                });
                w.put_if(t.exclude_all, "excludeAll", || true.into());
                w.done()
            })
            .collect()
    });
    m.put_if(a.exclude_all_tools, "excludeAllTools", || true.into());
    m.put("defaultToolVisibility", a.default_tool_visibility.name());
    m.done()
}

fn tool_override(o: &ToolOverride) -> Value {
    let mut m = Out::default();
    if let Some(n) = &o.name {
        m.put("name", n.as_str());
    }
    if let Some(d) = &o.description {
        m.put("description", d.as_str());
    }
    if let Some(a) = &o.annotations {
        let mut an = Out::default();
        if let Some(t) = &a.title {
            an.put("title", t.as_str());
        }
        let hints = [
            ("readOnlyHint", a.read_only_hint),
            ("destructiveHint", a.destructive_hint),
            ("idempotentHint", a.idempotent_hint),
            ("openWorldHint", a.open_world_hint),
        ];
        for (key, hint) in hints {
            if let Some(h) = hint {
                an.put(key, h);
            }
        }
        m.put("annotations", an.done());
    }
    m.done()
}

fn operational(o: &OperationalConfig) -> Value {
    let t = &o.timeouts;
    let mut per = Out::default();
    for (name, d) in &t.per_workload {
        per.put(name, dur(*d));
    }
    let mut timeouts = Out::default();
    timeouts.put("default", dur(t.default));
    timeouts.put_if(!t.per_workload.is_empty(), "perWorkload", || per.done());

    let f = &o.failure_handling;
    let cb = &f.circuit_breaker;
    let mut circuit = Out::default();
    circuit
        .put("enabled", cb.enabled)
        .put("failureThreshold", num(cb.failure_threshold))
        .put("timeout", dur(cb.timeout));
    let mut fh = Out::default();
    fh.put("healthCheckInterval", dur(f.health_check_interval))
        .put("unhealthyThreshold", num(f.unhealthy_threshold))
        .put("healthCheckTimeout", dur(f.health_check_timeout))
        .put("statusReportingInterval", dur(f.status_reporting_interval))
        .put("partialFailureMode", f.partial_failure_mode.name())
        .put("circuitBreaker", circuit.done());

    let d = OperationalConfig::default();
    let mut m = Out::default();
    m.put_if(o.log_level != d.log_level, "logLevel", || {
        o.log_level.as_str().into()
    })
    .put_if(o.timeouts != d.timeouts, "timeouts", || timeouts.done())
    .put_if(
        o.failure_handling != d.failure_handling,
        "failureHandling",
        || fh.done(),
    );
    m.done()
}

fn server(s: &ServerConfig) -> Value {
    let d = ServerConfig::default();
    let mut m = Out::default();
    m.put_if(s.host != d.host, "host", || s.host.as_str().into())
        .put_if(s.port != d.port, "port", || num(s.port))
        .put_if(s.session_ttl != d.session_ttl, "sessionTtl", || {
            dur(s.session_ttl)
        })
        .put_if(s.max_sessions != d.max_sessions, "maxSessions", || {
            num(s.max_sessions as u64)
        })
        .put_if(
            s.max_sessions_per_identity != d.max_sessions_per_identity,
            "maxSessionsPerIdentity",
            || num(s.max_sessions_per_identity as u64),
        )
        .put_if(s.max_body_bytes != d.max_body_bytes, "maxBodyBytes", || {
            num(s.max_body_bytes as u64)
        })
        .put_if(!s.allowed_origins.is_empty(), "allowedOrigins", || {
            strings(&s.allowed_origins)
        })
        .put_if(!s.allowed_hosts.is_empty(), "allowedHosts", || {
            strings(&s.allowed_hosts)
        })
        .put_if(
            s.max_per_session_processes != d.max_per_session_processes,
            "maxPerSessionProcesses",
            || num(s.max_per_session_processes as u64),
        )
        .put_if(
            s.per_session_idle_timeout != d.per_session_idle_timeout,
            "perSessionIdleTimeout",
            || dur(s.per_session_idle_timeout),
        )
        .put_if(
            s.discovery_timeout != d.discovery_timeout,
            "discoveryTimeout",
            || dur(s.discovery_timeout),
        )
        .put_if(
            s.client_request_timeout != d.client_request_timeout,
            "clientRequestTimeout",
            || dur(s.client_request_timeout),
        )
        .put_if(
            s.worker_threads != d.worker_threads,
            "workerThreads",
            || num(s.worker_threads as u64),
        )
        .put_if(
            s.request_header_timeout != d.request_header_timeout,
            "requestHeaderTimeout",
            || dur(s.request_header_timeout),
        )
        .put_if(
            s.request_body_timeout != d.request_body_timeout,
            "requestBodyTimeout",
            || dur(s.request_body_timeout),
        )
        .put_if(
            s.idle_connection_timeout != d.idle_connection_timeout,
            "idleConnectionTimeout",
            || dur(s.idle_connection_timeout),
        )
        .put_if(s.sse_keep_alive != d.sse_keep_alive, "sseKeepAlive", || {
            dur(s.sse_keep_alive)
        })
        .put_if(
            s.shutdown_drain != d.shutdown_drain,
            "shutdownDrain",
            || dur(s.shutdown_drain),
        )
        .put_if(
            s.allow_anonymous_on_network,
            "allowAnonymousOnNetwork",
            || Value::Bool(true),
        )
        .put_if(s.status_access.is_some(), "statusAccess", || {
            s.status_access.map_or("", |a| a.as_str()).into()
        });
    m.done()
}

/// `rateLimiting`, with `refillPeriod` in the nested `{duration: ...}` form: the one both vmcp
/// and ToolHive's strict loader read.
fn rate_limiting(r: &RateLimitConfig) -> Value {
    let bucket = |b: &BucketConfig| {
        let mut period = Out::default();
        period.put("duration", dur(b.refill_period));
        Out::default()
            .put("maxTokens", num(b.max_tokens))
            .put("refillPeriod", period.done())
            .done()
    };
    let mut m = Out::default();
    if let Some(b) = &r.shared {
        m.put("shared", bucket(b));
    }
    if let Some(b) = &r.per_user {
        m.put("perUser", bucket(b));
    }
    m.put_if(!r.tools.is_empty(), "tools", || {
        r.tools
            .iter()
            .map(|t| {
                let mut e = Out::default();
                e.put("name", t.name.as_str());
                if let Some(b) = &t.shared {
                    e.put("shared", bucket(b));
                }
                if let Some(b) = &t.per_user {
                    e.put("perUser", bucket(b));
                }
                e.done()
            })
            .collect()
    });
    m.put_if(r.fail_closed, "failClosed", || Value::Bool(true));
    m.done()
}
