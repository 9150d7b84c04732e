//! Metrics and traces at the client edges: a [`ServerRequest`] per JSON-RPC request, started
//! where its method is known and run around the dispatch call, and the `/metrics` page. The
//! recording itself lives in `vmcp-telemetry`; this module only says how an edge's result reads
//! (an error's code and status, a tool result's `isError`).

use std::future::Future;

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, header};
use serde_json::Value;
use vmcp_telemetry::{Outcome, ServerRequest};

use crate::{dispatch::Reply, errors::Failure};

/// How a dispatch result reads for telemetry.
fn outcome(r: &Result<Reply<'_>, Failure>) -> Outcome {
    match r {
        Ok(Reply::Value(v)) if v.get("isError") == Some(&Value::Bool(true)) => Outcome {
            status: 200,
            error: Some("tool_error".into()),
        },
        other => plain(other),
    }
}

/// How a request handled outside the dispatch (initialize, setLevel, subscriptions, discover)
/// reads for telemetry: its error's code and status, if it failed.
pub(crate) fn plain<T>(r: &Result<T, Failure>) -> Outcome {
    match r {
        Ok(_) => Outcome {
            status: 200,
            error: None,
        },
        Err(f) => Outcome {
            status: f.status.as_u16(),
            error: Some(f.error.code.to_string().into()),
        },
    }
}

/// How a whole HTTP answer reads for telemetry (`initialize`, answered as a response).
pub(crate) fn http(r: &Response) -> Outcome {
    Outcome {
        status: r.status().as_u16(),
        error: (!r.status().is_success()).then(|| r.status().as_u16().to_string().into()),
    }
}

/// Runs a dispatch as `request`, recording its span and metrics. (Not an `async fn`, which would
/// hold the dispatch twice.)
pub(crate) fn run<'c>(
    request: ServerRequest,
    dispatch: impl Future<Output = Result<Reply<'c>, Failure>>,
) -> impl Future<Output = Result<Reply<'c>, Failure>> {
    request.run(dispatch, outcome)
}

/// `GET /metrics` (mounted only with `enablePrometheusMetricsPath`): OpenMetrics text when the
/// scrape's `Accept` asks for it, else Prometheus text 0.0.4.
pub(crate) async fn metrics(headers: HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = vmcp_telemetry::Format::negotiate(accept);
    match vmcp_telemetry::metrics_page(format) {
        Some(Ok(page)) => (
            [
                (header::CONTENT_TYPE, format.content_type()),
                (header::VARY, "accept"),
            ],
            page,
        )
            .into_response(),
        Some(Err(e)) => {
            tracing::warn!("/metrics: {e}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
