//! A lean MCP Streamable HTTP client for load generation: one hyper HTTP/1.1 keep-alive
//! connection with `TCP_NODELAY`, and an MCP client on top of it: a Legacy session
//! (`initialize`, `Mcp-Session-Id`) or a stateless Modern (2026-07-28) client, which carries
//! its version and capabilities on every request instead.

use anyhow::{Context, bail};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The revision this client speaks on the Legacy edge.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";
/// The stateless revision of the Modern edge.
const MODERN_VERSION: &str = "2026-07-28";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// Modern requests mirror their method and target in headers.
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// What MCP clients send: they must accept both answers.
const ACCEPT: &str = "application/json, text/event-stream";

/// One HTTP/1.1 keep-alive connection.
pub(crate) struct HttpConn {
    sender: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    path: String,
    /// `Bearer <token>` on every request, when this connection goes to a gateway under `--oidc`.
    authorization: Option<HeaderValue>,
}

/// An HTTP answer, body read in full.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) session: Option<HeaderValue>,
    pub(crate) body: Bytes,
}

impl HttpConn {
    /// Connects to `url` (`http://host:port/path`); requests go to its path unless told otherwise,
    /// and carry the bearer token when `url` is a gateway's under `--oidc` ([`crate::bearer`]).
    ///
    /// # Errors
    /// When the TCP connection or the HTTP handshake fails.
    pub(crate) async fn connect(url: &str) -> anyhow::Result<HttpConn> {
        let authorization = crate::bearer::for_authority(authority_of(url)?);
        HttpConn::connect_with(url, authorization).await
    }

    /// Connects to `url`; every request carries `authorization`, if any.
    ///
    /// # Errors
    /// When the TCP connection or the HTTP handshake fails.
    pub(crate) async fn connect_with(
        url: &str,
        authorization: Option<HeaderValue>,
    ) -> anyhow::Result<HttpConn> {
        let authority = authority_of(url)?;
        let path = &url["http://".len() + authority.len()..];
        let stream = TcpStream::connect(authority)
            .await
            .with_context(|| format!("connecting to {authority}"))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(HttpConn {
            sender,
            host: HeaderValue::from_str(authority)?,
            path: if path.is_empty() { "/" } else { path }.to_owned(),
            authorization,
        })
    }

    /// The request head every request of this connection starts with.
    fn request(&self, method: Method, path: Option<&str>) -> http::request::Builder {
        let req = Request::builder()
            .method(method)
            .uri(path.unwrap_or(&self.path))
            .header(header::HOST, &self.host);
        match &self.authorization {
            Some(value) => req.header(header::AUTHORIZATION, value),
            None => req,
        }
    }

    /// Sends one request to `path` (default: the connection's) and reads the whole answer.
    ///
    /// # Errors
    /// When the connection fails.
    pub(crate) async fn send(
        &mut self,
        method: Method,
        path: Option<&str>,
        headers: &[(&'static str, &HeaderValue)],
        body: Bytes,
    ) -> anyhow::Result<Reply> {
        let mut req = self.request(method, path);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req.body(Full::new(body))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status();
        let session = resp.headers().get(SESSION_HEADER).cloned();
        let body = resp.into_body().collect().await?.to_bytes();
        Ok(Reply {
            status,
            session,
            body,
        })
    }
}

/// Which client edge of the gateway a session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    /// Streamable HTTP 2025-11-25 with `Mcp-Session-Id`.
    Legacy,
    /// The stateless 2026-07-28 revision.
    Modern,
}

impl Edge {
    /// Its name in tables.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Edge::Legacy => "legacy",
            Edge::Modern => "modern",
        }
    }

    /// Opens a client at `url`: a Legacy session, or a Modern connection (nothing to open).
    ///
    /// # Errors
    /// When the connection or the handshake fails.
    pub(crate) async fn open(self, url: &str) -> anyhow::Result<McpSession> {
        match self {
            Edge::Legacy => McpSession::legacy(url).await,
            Edge::Modern => McpSession::modern(url).await,
        }
    }

    /// What a request's `params._meta` must carry on this edge.
    pub(crate) fn request_meta(self) -> Option<serde_json::Value> {
        match self {
            Edge::Legacy => None,
            Edge::Modern => Some(serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                "io.modelcontextprotocol/clientInfo": {"name": "vmcp-bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            })),
        }
    }

    /// Per-request headers mirroring the body on this edge (`name`: the tool, if any).
    pub(crate) fn request_headers(
        self,
        method: &str,
        name: Option<&str>,
    ) -> anyhow::Result<Vec<(&'static str, HeaderValue)>> {
        let mut headers = Vec::new();
        if self == Edge::Modern {
            headers.push((METHOD_HEADER, HeaderValue::from_str(method)?));
            if let Some(name) = name {
                // Plain visible-ASCII names go as they are; others would need `=?base64?..?=`.
                headers.push((NAME_HEADER, HeaderValue::from_str(name)?));
            }
        }
        Ok(headers)
    }
}

/// An MCP session over one connection.
pub(crate) struct McpSession {
    conn: HttpConn,
    headers: Vec<(&'static str, HeaderValue)>,
}

impl McpSession {
    /// `initialize` then `notifications/initialized` on a new connection to `url`.
    ///
    /// # Errors
    /// When connecting fails or the server refuses the handshake.
    pub(crate) async fn legacy(url: &str) -> anyhow::Result<McpSession> {
        let conn = HttpConn::connect(url).await?;
        McpSession::legacy_on(conn).await
    }

    /// A Modern client on a new connection to `url`: no handshake, no session.
    ///
    /// # Errors
    /// When connecting fails.
    pub(crate) async fn modern(url: &str) -> anyhow::Result<McpSession> {
        Ok(McpSession {
            conn: HttpConn::connect(url).await?,
            headers: vec![
                (
                    header::CONTENT_TYPE.as_str(),
                    HeaderValue::from_static("application/json"),
                ),
                (header::ACCEPT.as_str(), HeaderValue::from_static(ACCEPT)),
                (VERSION_HEADER, HeaderValue::from_static(MODERN_VERSION)),
            ],
        })
    }

    /// The Legacy handshake on an existing connection.
    ///
    /// # Errors
    /// When the server refuses the handshake.
    pub(crate) async fn legacy_on(conn: HttpConn) -> anyhow::Result<McpSession> {
        let mut s = McpSession {
            conn,
            headers: vec![
                (
                    header::CONTENT_TYPE.as_str(),
                    HeaderValue::from_static("application/json"),
                ),
                (header::ACCEPT.as_str(), HeaderValue::from_static(ACCEPT)),
            ],
        };
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY_VERSION}","capabilities":{{}},"clientInfo":{{"name":"vmcp-bench","version":"1"}}}}}}"#
        );
        let reply = s.post(Bytes::from(init)).await?;
        if reply.status != StatusCode::OK {
            bail!("initialize: HTTP {} {}", reply.status, text(&reply.body));
        }
        let session = reply.session.context("initialize: no Mcp-Session-Id")?;
        s.headers.push((SESSION_HEADER, session));
        s.headers
            .push((VERSION_HEADER, HeaderValue::from_static(LEGACY_VERSION)));
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let reply = s.post(Bytes::from_static(note.as_bytes())).await?;
        if !reply.status.is_success() {
            bail!("notifications/initialized: HTTP {}", reply.status);
        }
        Ok(s)
    }

    /// POSTs one JSON-RPC message with the session's headers.
    ///
    /// # Errors
    /// When the connection fails.
    pub(crate) async fn post(&mut self, body: Bytes) -> anyhow::Result<Reply> {
        self.post_with(body, &[]).await
    }

    /// POSTs one JSON-RPC message with the session's headers plus `extra`.
    ///
    /// # Errors
    /// When the connection fails.
    pub(crate) async fn post_with(
        &mut self,
        body: Bytes,
        extra: &[(&'static str, HeaderValue)],
    ) -> anyhow::Result<Reply> {
        let headers: Vec<_> = self
            .headers
            .iter()
            .chain(extra)
            .map(|(k, v)| (*k, v))
            .collect();
        self.conn.send(Method::POST, None, &headers, body).await
    }

    /// POSTs a request with `extra` headers and returns its JSON answer (the data of a one-event
    /// SSE answer).
    ///
    /// # Errors
    /// When the connection fails or the answer is not HTTP 200.
    pub(crate) async fn request_with(
        &mut self,
        body: Bytes,
        extra: &[(&'static str, HeaderValue)],
    ) -> anyhow::Result<Bytes> {
        let reply = self.post_with(body, extra).await?;
        if reply.status != StatusCode::OK {
            bail!("HTTP {}: {}", reply.status, text(&reply.body));
        }
        Ok(json_payload(reply.body))
    }

    /// The Legacy session id, if this is a Legacy session.
    pub(crate) fn session_id(&self) -> Option<HeaderValue> {
        self.headers
            .iter()
            .find(|(k, _)| *k == SESSION_HEADER)
            .map(|(_, v)| v.clone())
    }

    /// An open Legacy session `id`, continued on `conn` (any connection to any replica).
    pub(crate) fn resume(conn: HttpConn, id: HeaderValue) -> McpSession {
        McpSession {
            conn,
            headers: vec![
                (
                    header::CONTENT_TYPE.as_str(),
                    HeaderValue::from_static("application/json"),
                ),
                (header::ACCEPT.as_str(), HeaderValue::from_static(ACCEPT)),
                (SESSION_HEADER, id),
                (VERSION_HEADER, HeaderValue::from_static(LEGACY_VERSION)),
            ],
        }
    }

    /// Opens the session's GET stream (Legacy) and keeps it open: the answer's head is read, its
    /// body never is. The connection carries nothing else while the stream lives.
    ///
    /// # Errors
    /// When the connection fails or the server does not open a stream (HTTP 200, SSE).
    pub(crate) async fn open_get_stream(&mut self) -> anyhow::Result<OpenStream> {
        let mut req = self
            .conn
            .request(Method::GET, None)
            .header(header::ACCEPT, "text/event-stream");
        for (name, value) in self.headers.iter().filter(|(k, _)| *k != header::ACCEPT) {
            req = req.header(*name, value);
        }
        self.conn.sender.ready().await?;
        let resp = self
            .conn
            .sender
            .send_request(req.body(Full::new(Bytes::new()))?)
            .await?;
        let is_sse = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if resp.status() != StatusCode::OK || !is_sse {
            bail!("GET stream: HTTP {} (not an SSE stream)", resp.status());
        }
        Ok(OpenStream { _response: resp })
    }

    /// Gives back the connection, leaving the session open (idle) on the server.
    pub(crate) fn detach(self) -> HttpConn {
        self.conn
    }

    /// Ends the session (DELETE, Legacy only), giving back the connection.
    pub(crate) async fn close(mut self) -> HttpConn {
        if !self.headers.iter().any(|(k, _)| *k == SESSION_HEADER) {
            return self.conn;
        }
        let headers: Vec<_> = self.headers.iter().map(|(k, v)| (*k, v)).collect();
        let _ = self
            .conn
            .send(Method::DELETE, None, &headers, Bytes::new())
            .await;
        self.conn
    }
}

/// An open GET stream: closed when dropped.
pub(crate) struct OpenStream {
    _response: hyper::Response<hyper::body::Incoming>,
}

/// `host:port` of `url` (`http://host:port/path`).
fn authority_of(url: &str) -> anyhow::Result<&str> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http URL: {url}"))?;
    Ok(&rest[..rest.find('/').unwrap_or(rest.len())])
}

/// The JSON of an answer: the body itself, or the `data:` of a one-event SSE stream.
fn json_payload(body: Bytes) -> Bytes {
    if body.first() == Some(&b'{') {
        return body;
    }
    let text = String::from_utf8_lossy(&body);
    let data: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
        .collect();
    Bytes::from(data)
}

/// A short printable excerpt of a body, for error messages.
pub(crate) fn text(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned()
}

/// GETs `path` on `authority` on a fresh connection; true on HTTP 200.
pub(crate) async fn get_ok(authority: &str, path: &str) -> bool {
    let Ok(mut conn) = HttpConn::connect(&format!("http://{authority}{path}")).await else {
        return false;
    };
    conn.send(Method::GET, None, &[], Bytes::new())
        .await
        .is_ok_and(|r| r.status == StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_of_json_and_sse_answers() {
        let json = Bytes::from_static(br#"{"id":1}"#);
        assert_eq!(json_payload(json.clone()), json);
        let sse = Bytes::from_static(b"event: message\ndata: {\"id\":1}\n\n");
        assert_eq!(json_payload(sse), json);
    }
}
