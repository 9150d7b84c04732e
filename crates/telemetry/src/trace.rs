//! Per-request instrumentation: the server side of a client's JSON-RPC request and the client side
//! of a backend request, each a span (when tracing) and its metrics (when metering), plus W3C
//! trace-context propagation (HTTP `traceparent`/`tracestate`, and `params._meta`, which the
//! OpenTelemetry MCP conventions use so context survives transports without headers).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, ready};
use std::time::Instant;

use futures_util::future::Either;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{
    FutureExt as _, Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _,
};
use opentelemetry::{Context, KeyValue, StringValue, Value as OtelValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::Value;

use crate::{Global, global};

/// How a server request ended, for its metrics and span.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The HTTP status the request was answered with.
    pub status: u16,
    /// `error.type`: the JSON-RPC error code as text, or `tool_error` for a tool result with
    /// `isError`; `None` on success.
    pub error: Option<Cow<'static, str>>,
}

/// The parent context a request's HTTP headers carry (`traceparent`, `tracestate`); `None` when
/// tracing is off or they carry none.
#[must_use]
pub fn remote_parent(headers: &http::HeaderMap) -> Option<Context> {
    global()?.tracer.as_ref()?;
    headers.get("traceparent")?;
    let cx = TraceContextPropagator::new().extract(&opentelemetry_http::HeaderExtractor(headers));
    cx.span().span_context().is_valid().then_some(cx)
}

/// Runs `fut` with `parent` as the current context (if any), so spans started inside are its
/// children.
pub fn within<F: Future>(parent: Option<Context>, fut: F) -> impl Future<Output = F::Output> {
    match parent {
        Some(cx) => Either::Left(fut.with_context(cx)),
        None => Either::Right(fut),
    }
}

/// `_meta` of a request's params, read as a carrier.
struct MetaExtractor<'a>(&'a serde_json::Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// The parent in `params._meta.traceparent`, if valid.
fn meta_parent(params: Option<&Value>) -> Option<Context> {
    let meta = params?.get("_meta")?.as_object()?;
    meta.get("traceparent")?;
    let cx = TraceContextPropagator::new().extract(&MetaExtractor(meta));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The MCP methods, so a method's name is a static string (no allocation per request).
const KNOWN_METHODS: [&str; 16] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "initialize",
    "ping",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "notifications/initialized",
];

/// `method` as a static string when it is one of MCP's, else owned.
fn method_name(method: &str) -> Cow<'static, str> {
    match KNOWN_METHODS.iter().find(|m| **m == method) {
        Some(m) => Cow::Borrowed(*m),
        None => Cow::Owned(method.to_owned()),
    }
}

/// A shared string attribute value: cloned by reference count, not by copy.
fn shared(s: &str) -> StringValue {
    StringValue::from(Arc::<str>::from(s))
}

/// What a request names: the tool, prompt or resource.
fn target(method: &str, params: Option<&Value>) -> Option<StringValue> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        _ => return None,
    };
    params?.get(key)?.as_str().map(shared)
}

/// One client request being served: started where the method is known, finished by
/// [`ServerRequest::run`]. Free when telemetry is off.
pub struct ServerRequest(Option<Box<ServerInner>>);

struct ServerInner {
    g: &'static Global,
    started: Instant,
    method: StringValue,
    target: Option<StringValue>,
    protocol_version: Option<StringValue>,
    /// The context holding the server span, when tracing.
    cx: Option<Context>,
}

impl ServerRequest {
    /// Starts serving `method`: the span's parent is `params._meta.traceparent` when present,
    /// else the current context (the HTTP headers', see [`within`]). `protocol_version` is the
    /// MCP revision the client speaks, `session` its `Mcp-Session-Id`.
    #[must_use]
    pub fn start(
        method: &str,
        params: Option<&Value>,
        id: Option<&Value>,
        session: Option<&str>,
        protocol_version: Option<&str>,
    ) -> Self {
        let Some(g) = global() else {
            return Self(None);
        };
        let method_v = StringValue::from(method_name(method));
        let target = target(method, params);
        let protocol_version = protocol_version.map(shared);
        let cx = g.tracer.as_ref().map(|tracer| {
            let parent = meta_parent(params).unwrap_or_else(Context::current);
            let mut span = tracer
                .span_builder(method_name(method))
                .with_kind(SpanKind::Server)
                .start_with_context(tracer, &parent);
            // Names and attributes only for spans that are recorded (most are not when sampling).
            if span.is_recording() {
                if let Some(t) = &target {
                    span.update_name(format!("{method} {}", t.as_str()));
                }
                span.set_attributes(server_attributes(
                    g,
                    &method_v,
                    target.as_ref(),
                    id,
                    session,
                    protocol_version.as_ref(),
                ));
            }
            parent.with_span(span)
        });
        Self(Some(Box::new(ServerInner {
            g,
            started: Instant::now(),
            method: method_v,
            target,
            protocol_version,
            cx,
        })))
    }

    /// Runs `fut` (the request's work) inside the server span, then records the request as
    /// `outcome` describes its result.
    ///
    /// A hand-written future rather than an `async fn`: an `async fn` keeps `fut` both as its
    /// argument and as the future it awaits, doubling the size of every request's state machine
    /// (and of each copy made as it is boxed and spawned).
    pub fn run<F: Future, O: FnOnce(&F::Output) -> Outcome>(self, fut: F, outcome: O) -> Run<F, O> {
        Run {
            fut,
            finish: self.0.map(|inner| (inner, outcome)),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`ServerRequest::run`].
    #[must_use = "futures do nothing unless polled"]
    pub struct Run<F, O> {
        #[pin]
        fut: F,
        finish: Option<(Box<ServerInner>, O)>,
    }
}

impl<F: Future, O: FnOnce(&F::Output) -> Outcome> Future for Run<F, O> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<F::Output> {
        let this = self.project();
        let traced = this
            .finish
            .as_ref()
            .and_then(|(inner, _)| inner.cx.as_ref());
        let _attached = traced.map(|cx| cx.clone().attach());
        let out = ready!(this.fut.poll(task));
        if let Some((inner, outcome)) = this.finish.take() {
            inner.finish(&outcome(&out));
        }
        Poll::Ready(out)
    }
}

/// A recorded server span's attributes (ToolHive's, from the MCP conventions).
fn server_attributes(
    g: &Global,
    method: &StringValue,
    target: Option<&StringValue>,
    id: Option<&Value>,
    session: Option<&str>,
    protocol_version: Option<&StringValue>,
) -> Vec<KeyValue> {
    let mut attrs = vec![
        KeyValue::new("mcp.method.name", method.clone()),
        KeyValue::new("rpc.system.name", "jsonrpc"),
        KeyValue::new("network.transport", "tcp"),
        KeyValue::new("network.protocol.name", "http"),
    ];
    if let Some(id) = id {
        let id = match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        attrs.push(KeyValue::new("jsonrpc.request.id", id));
    }
    if let Some(s) = session {
        attrs.push(KeyValue::new("mcp.session.id", s.to_owned()));
    }
    if let Some(v) = protocol_version {
        attrs.push(KeyValue::new("mcp.protocol.version", v.clone()));
    }
    let is_call = method.as_str() == "tools/call";
    if let Some(t) = target {
        let key = match method.as_str() {
            "tools/call" => "gen_ai.tool.name",
            "prompts/get" => "gen_ai.prompt.name",
            _ => "mcp.resource.uri",
        };
        attrs.push(KeyValue::new(key, t.clone()));
        if is_call {
            attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            if g.legacy_attributes {
                attrs.push(KeyValue::new("mcp.tool.name", t.clone()));
            }
        }
    }
    if g.legacy_attributes {
        attrs.push(KeyValue::new("mcp.method", method.clone()));
    }
    attrs.extend(g.env_attributes.iter().cloned());
    attrs
}

impl ServerInner {
    /// The semconv series' labels as `/metrics` names them, sorted by key as the SDK's are.
    fn semconv_labels(&self, o: &Outcome) -> crate::exemplars::Labels {
        let mut labels = Vec::with_capacity(5);
        if let Some(e) = &o.error {
            labels.push(("error_type", e.clone()));
        }
        if let (Some(t), true) = (&self.target, self.method.as_str() == "tools/call") {
            labels.push(("gen_ai_tool_name", Cow::Owned(t.as_str().to_owned())));
        }
        labels.push(("mcp_method_name", method_name(self.method.as_str())));
        if let Some(v) = &self.protocol_version {
            labels.push(("mcp_protocol_version", Cow::Owned(v.as_str().to_owned())));
        }
        labels.push(("network_transport", Cow::Borrowed("tcp")));
        labels
    }

    fn finish(self, o: &Outcome) {
        let elapsed = self.started.elapsed().as_secs_f64();
        if let Some(m) = &self.g.metrics {
            let mut semconv = Vec::with_capacity(5);
            semconv.push(KeyValue::new("mcp.method.name", self.method.clone()));
            semconv.push(KeyValue::new("network.transport", "tcp"));
            if let Some(v) = &self.protocol_version {
                semconv.push(KeyValue::new("mcp.protocol.version", v.clone()));
            }
            if let (Some(t), true) = (&self.target, self.method.as_str() == "tools/call") {
                semconv.push(KeyValue::new("gen_ai.tool.name", t.clone()));
            }
            if let Some(e) = &o.error {
                semconv.push(KeyValue::new("error.type", e.clone()));
            }
            if self.g.sdk_server_durations {
                m.server_duration.record(elapsed, &semconv);
            }
            if let Some(d) = &self.g.server_durations {
                let span = self.cx.as_ref().map(|cx| cx.span().span_context().clone());
                d.observe(self.semconv_labels(o), elapsed, span.as_ref());
            }
            let resource_id = self.target.clone().unwrap_or_else(|| StringValue::from(""));
            let toolhive = [
                KeyValue::new("method", "POST"),
                KeyValue::new("status_code", status_text(o.status)),
                KeyValue::new(
                    "status",
                    if o.error.is_some() {
                        "error"
                    } else {
                        "success"
                    },
                ),
                KeyValue::new("mcp_method", self.method.clone()),
                KeyValue::new("mcp_resource_id", resource_id),
                KeyValue::new("server", self.g.server_name.clone()),
                KeyValue::new("transport", "streamable-http"),
            ];
            m.requests.add(1, &toolhive);
            m.request_duration.record(elapsed, &toolhive);
            if let (Some(t), true) = (&self.target, self.method.as_str() == "tools/call") {
                m.tool_calls.add(
                    1,
                    &[
                        KeyValue::new("server", self.g.server_name.clone()),
                        KeyValue::new("tool", t.clone()),
                    ],
                );
            }
        }
        if let Some(cx) = self.cx {
            let span = cx.span();
            if let Some(e) = &o.error {
                span.set_attribute(KeyValue::new("error.type", e.clone()));
                span.set_status(Status::error(e.clone()));
            }
            span.end();
        }
    }
}

/// An HTTP status as a label value (no allocation for the usual ones).
fn status_text(status: u16) -> OtelValue {
    let s: &'static str = match status {
        200 => "200",
        202 => "202",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        429 => "429",
        500 => "500",
        503 => "503",
        other => return OtelValue::from(other.to_string()),
    };
    OtelValue::from(s)
}

/// The `action` label of ToolHive's backend metrics.
fn action(method: &str) -> &'static str {
    match method {
        "tools/call" => "call_tool",
        "resources/read" => "read_resource",
        "prompts/get" => "get_prompt",
        "completion/complete" => "complete",
        "tools/list"
        | "resources/list"
        | "resources/templates/list"
        | "prompts/list"
        | "server/discover" => "list_capabilities",
        "initialize" => "initialize",
        _ => "other",
    }
}

/// One request to a backend: a client span (child of the current context) and the backend
/// metrics. Free when telemetry is off.
pub struct BackendCall(Option<Box<ClientInner>>);

struct ClientInner {
    g: &'static Global,
    started: Instant,
    attrs: Vec<KeyValue>,
    method: StringValue,
    tool: Option<StringValue>,
    network: &'static str,
    cx: Option<Context>,
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl BackendCall {
    /// Starts a request of `method` to `backend` (reached over `transport`, its config name).
    #[must_use]
    pub fn start(
        backend: &str,
        transport: &'static str,
        method: &str,
        params: Option<&Value>,
    ) -> Self {
        let Some(g) = global() else {
            return Self(None);
        };
        let method_v = StringValue::from(method_name(method));
        let tool = (method == "tools/call")
            .then(|| target(method, params))
            .flatten();
        let network = if transport == "stdio" { "pipe" } else { "tcp" };
        let backend_v = shared(backend);
        let attrs = || {
            let mut attrs = vec![
                KeyValue::new("target.workload_id", backend_v.clone()),
                KeyValue::new("target.workload_name", backend_v.clone()),
                KeyValue::new("target.transport_type", transport),
                KeyValue::new("action", action(method)),
                KeyValue::new("mcp.method.name", method_v.clone()),
            ];
            if let Some(t) = &tool {
                attrs.push(KeyValue::new("gen_ai.tool.name", t.clone()));
            }
            attrs
        };
        let (mut cx, mut traceparent, mut tracestate) = (None, None, None);
        if let Some(tracer) = &g.tracer {
            let parent = Context::current();
            let mut span = tracer
                .span_builder(method_name(method))
                .with_kind(SpanKind::Client)
                .start_with_context(tracer, &parent);
            if span.is_recording() {
                if let Some(t) = target(method, params).filter(|_| method != "resources/read") {
                    span.update_name(format!("{method} {}", t.as_str()));
                }
                let mut span_attrs = attrs();
                span_attrs.push(KeyValue::new("network.transport", network));
                span_attrs.push(KeyValue::new("rpc.system.name", "jsonrpc"));
                span.set_attributes(span_attrs);
            }
            let sc = span.span_context().clone();
            traceparent = Some(format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            ));
            let state = sc.trace_state().header();
            tracestate = (!state.is_empty()).then_some(state);
            cx = Some(parent.with_span(span));
        }
        let attrs = if g.metrics.is_some() {
            attrs()
        } else {
            Vec::new()
        };
        Self(Some(Box::new(ClientInner {
            g,
            started: Instant::now(),
            attrs,
            method: method_v,
            tool,
            network,
            cx,
            traceparent,
            tracestate,
        })))
    }

    /// The W3C `traceparent` naming this call's span, to send to the backend; `None` when not
    /// tracing.
    #[must_use]
    pub fn traceparent(&self) -> Option<&str> {
        self.0.as_ref()?.traceparent.as_deref()
    }

    /// The W3C `tracestate` to send with [`BackendCall::traceparent`], if not empty.
    #[must_use]
    pub fn tracestate(&self) -> Option<&str> {
        self.0.as_ref()?.tracestate.as_deref()
    }

    /// Records the call; `error` is its `error.type` (`None` on success).
    pub fn finish(self, error: Option<Cow<'static, str>>) {
        let Some(inner) = self.0 else { return };
        let elapsed = inner.started.elapsed().as_secs_f64();
        if let Some(m) = &inner.g.metrics {
            let mut attrs = inner.attrs;
            m.backend_requests.add(1, &attrs);
            m.backend_duration.record(elapsed, &attrs);
            let mut semconv = vec![
                KeyValue::new("mcp.method.name", inner.method),
                KeyValue::new("network.transport", inner.network),
            ];
            if let Some(t) = inner.tool {
                semconv.push(KeyValue::new("gen_ai.tool.name", t));
            }
            if let Some(e) = &error {
                let e = KeyValue::new("error.type", e.clone());
                semconv.push(e.clone());
                attrs.push(e);
                m.backend_errors.add(1, &attrs);
            }
            m.client_duration.record(elapsed, &semconv);
        }
        if let Some(cx) = inner.cx {
            let span = cx.span();
            if let Some(e) = error {
                span.set_attribute(KeyValue::new("error.type", e.clone()));
                span.set_status(Status::error(e));
            }
            span.end();
        }
    }
}

/// `params` with `_meta.traceparent` (and `tracestate`) set, as the OpenTelemetry MCP conventions
/// propagate context in-band; other `_meta` keys are kept.
#[must_use]
pub fn with_trace_meta(
    params: Option<&Value>,
    traceparent: &str,
    tracestate: Option<&str>,
) -> Value {
    let mut p = match params {
        Some(Value::Object(o)) => Value::Object(o.clone()),
        _ => Value::Object(serde_json::Map::new()),
    };
    if let Some(obj) = p.as_object_mut() {
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(serde_json::Map::new());
        }
        if let Some(m) = meta.as_object_mut() {
            m.insert("traceparent".into(), Value::String(traceparent.to_owned()));
            match tracestate {
                Some(s) => {
                    m.insert("tracestate".into(), Value::String(s.to_owned()));
                }
                None => {
                    m.remove("tracestate");
                }
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every request's work is wrapped in `run`: it must not hold that work twice.
    #[test]
    fn run_holds_its_future_once() {
        let work = async {
            let state = [1u8; 4096];
            std::future::ready(()).await;
            state[0]
        };
        let alone = std::mem::size_of_val(&work);
        let wrapped = ServerRequest(None).run(work, |_| Outcome::default());
        assert!(alone >= 4096);
        assert!(std::mem::size_of_val(&wrapped) < alone + 64);
    }

    #[test]
    fn trace_meta_keeps_other_keys() {
        let p = json!({"name": "t", "_meta": {"progressToken": 3, "tracestate": "old=1"}});
        let out = with_trace_meta(
            Some(&p),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            None,
        );
        assert_eq!(
            out,
            json!({"name": "t", "_meta": {"progressToken": 3,
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}})
        );
        assert_eq!(
            with_trace_meta(None, "x", Some("a=b")),
            json!({"_meta": {"traceparent": "x", "tracestate": "a=b"}})
        );
    }

    #[test]
    fn meta_parent_reads_traceparent() {
        let p = json!({"_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}});
        let cx = meta_parent(Some(&p)).expect("valid parent");
        assert_eq!(
            cx.span().span_context().trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert!(meta_parent(Some(&json!({"_meta": {"traceparent": "garbage"}}))).is_none());
    }

    #[test]
    fn off_is_free() {
        let r = ServerRequest::start("tools/call", None, None, None, None);
        assert!(r.0.is_none());
        let c = BackendCall::start("b", "stdio", "tools/call", None);
        assert!(c.traceparent().is_none());
        c.finish(None);
    }
}
