//! Serving a forwarded request (tools/call, resources/read, prompts/get, completion/complete) so
//! that what the backend sends while it runs reaches the client: the answer is plain JSON when
//! nothing comes first (the fast path), and switches to an SSE stream carrying the relayed
//! messages and then the answer as soon as the backend sends anything mid-request.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, header};
use serde_json::Value;
use tokio::sync::mpsc;
use vmcp_backend::CallSink;
use vmcp_proto::{jsonrpc, sse};

use crate::{
    dispatch::{self, Ctx},
    errors::Failure,
    relay::{self, Out},
    reply::{self, Format},
    session::Session,
    state::AppState,
};

/// Methods whose backend request may talk back mid-call.
pub(crate) fn is_forwarded(method: &str) -> bool {
    matches!(
        method,
        "tools/call" | "resources/read" | "prompts/get" | "completion/complete"
    )
}

/// Serves one forwarded request with relaying.
pub(crate) async fn serve(
    state: Arc<AppState>,
    session: Arc<Session>,
    id: Value,
    method: String,
    params: Option<Value>,
) -> Response {
    let key = id.to_string();
    let (sink, mut events) = CallSink::channel(256);
    session.begin(key.clone(), sink.clone());
    let work = {
        let (state, session) = (state.clone(), session.clone());
        async move {
            let catalog = session.catalog();
            let ctx = Ctx {
                identity: &session.identity,
                catalog: &catalog,
                session: Some(&session.id),
                page_size: state.options.page_size,
                sink: Some(&sink),
            };
            dispatch::dispatch(&state.gateway, &ctx, &method, params).await
        }
    };
    let mut work = Box::pin(work);
    let first = tokio::select! {
        biased;
        outcome = &mut work => Ok(outcome),
        event = events.recv() => Err(event),
    };
    let first_event = match first {
        Ok(outcome) => {
            session.end(&key);
            return match outcome {
                Ok(result) => reply::result(Format::Json, &id, &result),
                Err(f) => reply::failure(Format::Json, &id, &f),
            };
        }
        Err(event) => event,
    };
    let timeout = state.options.client_request_timeout;
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(async move {
        let out = Out::Stream(tx.clone());
        if let Some(event) = first_event {
            relay::relay(&session, event, &out, timeout);
        }
        let outcome: Result<Value, Failure> = loop {
            tokio::select! {
                outcome = &mut work => break outcome,
                Some(event) = events.recv() => relay::relay(&session, event, &out, timeout),
            }
        };
        // Whatever the backend sent before its answer goes out before the answer.
        while let Ok(event) = events.try_recv() {
            relay::relay(&session, event, &out, timeout);
        }
        session.end(&key);
        let bytes = match &outcome {
            Ok(result) => jsonrpc::response_bytes(&id, result),
            Err(f) => jsonrpc::error_bytes(&id, &f.error),
        };
        let _ = tx.send(Bytes::from(sse::message_event(&bytes, None))).await;
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    let mut resp = Response::new(Body::from_stream(body));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}
