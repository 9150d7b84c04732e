//! A `subscriptions/listen` stream held open on a 2026-07-28 backend: how list changes and resource
//! updates reach the gateway from a backend that has no GET stream or resources/subscribe. The
//! filter is what the backend announces (list changes) plus the URIs clients subscribed to; a
//! change of filter reopens the stream.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use vmcp_proto::{Message, revision, sse};

use crate::{
    client::Headers,
    error::describe,
    inbound::{Channel, Inbound},
    modern::modern_body,
};

#[derive(Default)]
struct Filter {
    list_changes: Map<String, Value>,
    resources: BTreeSet<String>,
}

impl Filter {
    fn is_empty(&self) -> bool {
        self.list_changes.is_empty() && self.resources.is_empty()
    }

    fn to_params(&self) -> Value {
        let mut notifications = self.list_changes.clone();
        if !self.resources.is_empty() {
            notifications.insert("resourceSubscriptions".into(), json!(self.resources));
        }
        json!({ "notifications": notifications })
    }
}

struct Target {
    backend: String,
    client: crate::HttpClient,
    url: Url,
    headers: Headers,
    inbound: Arc<Inbound>,
}

/// The listen stream of one backend connection.
pub(crate) struct Listener {
    target: Arc<Target>,
    filter: Arc<Mutex<Filter>>,
    changed: watch::Sender<u64>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(t) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.abort();
        }
    }
}

impl Listener {
    pub(crate) fn new(
        backend: &str,
        client: crate::HttpClient,
        url: Url,
        headers: Headers,
        inbound: Arc<Inbound>,
    ) -> Self {
        Self {
            target: Arc::new(Target {
                backend: backend.to_string(),
                client,
                url,
                headers,
                inbound,
            }),
            filter: Arc::new(Mutex::new(Filter::default())),
            changed: watch::channel(0).0,
            task: Mutex::new(None),
        }
    }

    /// Asks for the list changes the backend's capabilities announce.
    pub(crate) fn list_changes(&self, capabilities: &Value) {
        let mut flags = Map::new();
        for (cap, key) in [
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ] {
            if capabilities
                .get(cap)
                .and_then(|c| c.get("listChanged"))
                .and_then(Value::as_bool)
                == Some(true)
            {
                flags.insert(key.into(), json!(true));
            }
        }
        self.update(|f| f.list_changes = flags);
    }

    /// Adds or removes a resource URI.
    pub(crate) fn resource(&self, uri: &str, on: bool) {
        self.update(|f| {
            if on {
                f.resources.insert(uri.to_string());
            } else {
                f.resources.remove(uri);
            }
        });
    }

    fn update(&self, change: impl FnOnce(&mut Filter)) {
        let empty = {
            let mut f = self.filter.lock().unwrap_or_else(|p| p.into_inner());
            change(&mut f);
            f.is_empty()
        };
        self.changed.send_modify(|g| *g += 1);
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if !empty && task.as_ref().is_none_or(|t| t.is_finished()) {
            *task = Some(tokio::spawn(run(
                self.target.clone(),
                self.filter.clone(),
                self.changed.subscribe(),
            )));
        }
    }
}

/// Keeps the stream open with the current filter, reopening it when the filter changes and, with
/// backoff, when it breaks.
async fn run(target: Arc<Target>, filter: Arc<Mutex<Filter>>, mut changed: watch::Receiver<u64>) {
    let mut backoff = Duration::from_millis(500);
    let mut id: i64 = -1;
    loop {
        changed.borrow_and_update();
        let params = {
            let f = filter.lock().unwrap_or_else(|p| p.into_inner());
            if f.is_empty() {
                None
            } else {
                Some(f.to_params())
            }
        };
        let Some(params) = params else {
            if changed.changed().await.is_err() {
                return;
            }
            continue;
        };
        let body = modern_body(id, "subscriptions/listen", Some(&params), None);
        id -= 1;
        let sent = target
            .client
            .post(target.url.clone())
            .headers(target.headers.to_map())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(crate::client::VERSION_HEADER, revision::MODERN)
            .header(crate::client::METHOD_HEADER, "subscriptions/listen")
            .body(body)
            .send()
            .await;
        let mut refiltered = false;
        match sent {
            Ok(mut resp) if resp.status().is_success() => {
                backoff = Duration::from_millis(500);
                let mut parser = sse::Parser::default();
                loop {
                    let chunk = tokio::select! {
                        c = resp.chunk() => c,
                        r = changed.changed() => {
                            if r.is_err() { return }
                            refiltered = true;
                            break;
                        }
                    };
                    let Ok(Some(chunk)) = chunk else { break };
                    let Ok(events) = parser.try_feed(&chunk) else {
                        break;
                    };
                    for ev in events {
                        if let Ok(msg @ Message::Notification { .. }) =
                            Message::parse(ev.data.as_bytes())
                        {
                            let _ = target.inbound.handle(msg, Channel::Standalone);
                        }
                    }
                }
            }
            Ok(resp) if resp.status() == reqwest::StatusCode::NOT_FOUND => {
                tracing::debug!(backend = %target.backend, "backend does not serve subscriptions/listen");
                return;
            }
            Ok(resp) => {
                tracing::debug!(backend = %target.backend, status = %resp.status(), "subscriptions/listen refused")
            }
            Err(e) => {
                tracing::debug!(backend = %target.backend, error = %describe(&e), "subscriptions/listen failed")
            }
        }
        if !refiltered {
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                r = changed.changed() => if r.is_err() { return },
            }
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }
}
