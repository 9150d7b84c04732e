//! Every instrument vmcp records, created once from the meter. Names are the OpenTelemetry MCP
//! semantic conventions' (`mcp.server.operation.duration`, `mcp.client.operation.duration`),
//! ToolHive's (`toolhive_*`, so its dashboards keep working) and vmcp's own (`vmcp_*`).
//! `docs/metrics.md` lists each with its Prometheus name and labels; a test holds the two equal.

use opentelemetry::metrics::{Counter, Gauge, Histogram, Meter, UpDownCounter};

/// Histogram boundaries for durations in seconds (the semantic conventions' advice for MCP).
pub(crate) const SECONDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The semantic conventions' server operation duration, which `/metrics` may keep with
/// exemplars (`crate::exemplars`).
pub(crate) const SERVER_DURATION: &str = "mcp.server.operation.duration";
pub(crate) const SERVER_DURATION_HELP: &str = "MCP request duration as observed on the receiver from the time it was received until the result or ack is sent.";

/// The instruments.
pub(crate) struct Instruments {
    // Client edge, per JSON-RPC request.
    pub(crate) server_duration: Histogram<f64>,
    pub(crate) requests: Counter<u64>,
    pub(crate) request_duration: Histogram<f64>,
    pub(crate) tool_calls: Counter<u64>,
    pub(crate) active_connections: UpDownCounter<i64>,
    // Backend requests.
    pub(crate) client_duration: Histogram<f64>,
    pub(crate) backend_requests: Counter<u64>,
    pub(crate) backend_errors: Counter<u64>,
    pub(crate) backend_duration: Histogram<f64>,
    pub(crate) backends_discovered: Gauge<u64>,
    // Gateway state and decisions.
    pub(crate) health_transitions: Counter<u64>,
    pub(crate) rate_limit_decisions: Counter<u64>,
    pub(crate) rate_limit_store_errors: Counter<u64>,
    pub(crate) rate_limit_fail_open: Counter<u64>,
    pub(crate) cache_lookups: Counter<u64>,
    pub(crate) catalog_size: Gauge<u64>,
    pub(crate) pin_findings: Counter<u64>,
    pub(crate) pins_pending: Gauge<u64>,
    // Composite tools.
    pub(crate) workflow_executions: Counter<u64>,
    pub(crate) workflow_errors: Counter<u64>,
    pub(crate) workflow_duration: Histogram<f64>,
    // Optimizer.
    pub(crate) find_tool_requests: Counter<u64>,
    pub(crate) find_tool_errors: Counter<u64>,
    pub(crate) find_tool_duration: Histogram<f64>,
    pub(crate) find_tool_results: Histogram<u64>,
    pub(crate) token_savings: Histogram<f64>,
    pub(crate) call_tool_requests: Counter<u64>,
    pub(crate) call_tool_errors: Counter<u64>,
    pub(crate) call_tool_not_found: Counter<u64>,
    pub(crate) call_tool_duration: Histogram<f64>,
}

fn seconds(meter: &Meter, name: &'static str, description: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(SECONDS.to_vec())
        .build()
}

fn counter(meter: &Meter, name: &'static str, description: &'static str) -> Counter<u64> {
    meter
        .u64_counter(name)
        .with_description(description)
        .build()
}

impl Instruments {
    pub(crate) fn new(m: &Meter) -> Self {
        Self {
            server_duration: seconds(m, SERVER_DURATION, SERVER_DURATION_HELP),
            requests: counter(m, "toolhive_mcp_requests", "Total number of MCP requests"),
            request_duration: seconds(
                m,
                "toolhive_mcp_request_duration",
                "Duration of MCP requests in seconds",
            ),
            tool_calls: counter(
                m,
                "toolhive_mcp_tool_calls",
                "Total number of MCP tool calls",
            ),
            active_connections: m
                .i64_up_down_counter("toolhive_mcp_active_connections")
                .with_description("Number of active MCP sessions")
                .build(),
            client_duration: seconds(
                m,
                "mcp.client.operation.duration",
                "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
            ),
            backend_requests: counter(
                m,
                "toolhive_vmcp_backend_requests",
                "Total number of requests per backend",
            ),
            backend_errors: counter(
                m,
                "toolhive_vmcp_backend_errors",
                "Total number of errors per backend",
            ),
            backend_duration: seconds(
                m,
                "toolhive_vmcp_backend_requests_duration",
                "Duration of requests in seconds per backend",
            ),
            backends_discovered: m
                .u64_gauge("toolhive_vmcp_backends_discovered")
                .with_description("Number of backends discovered")
                .build(),
            health_transitions: counter(
                m,
                "vmcp_backend_health_transitions",
                "Backend health state changes, by backend and from/to state",
            ),
            rate_limit_decisions: counter(
                m,
                "toolhive_rate_limit_decisions",
                "Rate limit decisions, by decision and bucket",
            ),
            rate_limit_store_errors: counter(
                m,
                "toolhive_rate_limit_redis_errors",
                "Rate limit checks the shared bucket store (Redis) could not answer",
            ),
            rate_limit_fail_open: counter(
                m,
                "toolhive_rate_limit_fail_open",
                "Requests let through because the shared bucket store could not answer",
            ),
            cache_lookups: counter(
                m,
                "vmcp_cache_lookups",
                "Cache lookups, by cache and result (hit or miss)",
            ),
            catalog_size: m
                .u64_gauge("vmcp_catalog_size")
                .with_description("Capabilities in the aggregated catalog, by kind")
                .build(),
            pin_findings: counter(
                m,
                "vmcp_pin_findings",
                "Definitions seen that differ from their pin, by kind, reason and whether withheld",
            ),
            pins_pending: m
                .u64_gauge("vmcp_pins_pending")
                .with_description("Definitions awaiting approval (withheld when enforcing)")
                .build(),
            workflow_executions: counter(
                m,
                "toolhive_vmcp_workflow_executions",
                "Total number of workflow executions",
            ),
            workflow_errors: counter(
                m,
                "toolhive_vmcp_workflow_errors",
                "Total number of workflow execution errors",
            ),
            workflow_duration: seconds(
                m,
                "toolhive_vmcp_workflow_duration",
                "Duration of workflow executions in seconds",
            ),
            find_tool_requests: counter(
                m,
                "toolhive_vmcp_optimizer_find_tool_requests",
                "Total number of find_tool calls",
            ),
            find_tool_errors: counter(
                m,
                "toolhive_vmcp_optimizer_find_tool_errors",
                "Total number of find_tool errors",
            ),
            find_tool_duration: seconds(
                m,
                "toolhive_vmcp_optimizer_find_tool_duration",
                "Duration of find_tool calls in seconds",
            ),
            find_tool_results: m
                .u64_histogram("toolhive_vmcp_optimizer_find_tool_results")
                .with_unit("{tools}")
                .with_description("Number of tools returned by find_tool")
                .with_boundaries(vec![0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 20.0, 50.0])
                .build(),
            token_savings: m
                .f64_histogram("toolhive_vmcp_optimizer_token_savings_percent")
                .with_unit("%")
                .with_description("Token savings of find_tool against listing every tool")
                .with_boundaries(vec![0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 100.0])
                .build(),
            call_tool_requests: counter(
                m,
                "toolhive_vmcp_optimizer_call_tool_requests",
                "Total number of optimizer call_tool calls",
            ),
            call_tool_errors: counter(
                m,
                "toolhive_vmcp_optimizer_call_tool_errors",
                "Total number of optimizer call_tool errors",
            ),
            call_tool_not_found: counter(
                m,
                "toolhive_vmcp_optimizer_call_tool_not_found",
                "Optimizer call_tool results that were errors (isError)",
            ),
            call_tool_duration: seconds(
                m,
                "toolhive_vmcp_optimizer_call_tool_duration",
                "Duration of optimizer call_tool calls in seconds",
            ),
        }
    }
}
