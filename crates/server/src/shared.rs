//! Sessions shared by replicas through Redis (`sessionStorage: {provider: redis}`): the record
//! that lets any replica serve a 2025-11-25 session, and the bus replicas talk over.
//!
//! A record is ToolHive's layout: key `<keyPrefix><Mcp-Session-Id>`, value a JSON object of
//! strings, created with `SET NX EX`, read with `GETEX` (sliding TTL), updated with `SET XX EX`,
//! deleted on `DELETE`. It holds what a replica needs to rebuild the session: the identity
//! binding, the negotiated version, the client's capabilities, its log level and subscriptions,
//! and the backends it spans. Live connections are never stored: each replica keeps its own pool
//! of backend connections, so upstream connections grow with replicas, not with sessions.
//!
//! The bus is one pub/sub channel. Replicas publish there when a session ends, when its state
//! changes, when a client's answer to a server-to-client request reaches a replica other than the
//! one waiting for it, and to resume an SSE stream another replica holds (see `remote_resume`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use vmcp_core::Identity;
use vmcp_proto::ErrorObject;
use vmcp_redis::{Client, Message, RedisError, Subscription};

use crate::remote_resume::RemoteStreams;
use crate::session::{LOG_LEVELS, Session};

/// ToolHive's default key prefix.
pub const DEFAULT_KEY_PREFIX: &str = "thv:vmcp:session:";

const BINDING: &str = "vmcp.identity.binding";
const BACKENDS: &str = "vmcp.backend.ids";
const VERSION: &str = "vmcp.protocol.version";
const CAPABILITIES: &str = "vmcp.client.capabilities";
const LOG_LEVEL: &str = "vmcp.log.level";
const SUBSCRIPTIONS: &str = "vmcp.resource.subscriptions";

/// A stored session: ToolHive's string-to-string metadata object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Record(BTreeMap<String, String>);

impl Record {
    /// The record of `session` as it is now.
    pub(crate) fn of(session: &Session) -> Self {
        let mut m = BTreeMap::new();
        m.insert(BINDING.into(), binding(&session.identity));
        let catalog = session.catalog();
        let mut backends: Vec<&str> = catalog
            .tools()
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .filter_map(|name| catalog.tool(name))
            .map(|route| route.backend.as_str())
            .collect();
        backends.sort_unstable();
        backends.dedup();
        m.insert(BACKENDS.into(), backends.join(","));
        m.insert(VERSION.into(), session.protocol_version.into());
        m.insert(CAPABILITIES.into(), session.client_capabilities.to_string());
        m.insert(LOG_LEVEL.into(), LOG_LEVELS[session.log_level()].into());
        m.insert(
            SUBSCRIPTIONS.into(),
            Value::from(session.subscriptions()).to_string(),
        );
        Self(m)
    }

    fn parse(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok().map(Self)
    }

    fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.0).unwrap_or_default()
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Whether `identity` is the caller the session is bound to.
    pub(crate) fn belongs_to(&self, identity: &Identity) -> bool {
        self.get(BINDING) == Some(binding(identity).as_str())
    }

    /// The negotiated revision, if it is one this build speaks.
    pub(crate) fn version(&self) -> Option<&'static str> {
        let v = self.get(VERSION)?;
        vmcp_proto::revision::LEGACY_VERSIONS
            .iter()
            .copied()
            .find(|known| *known == v)
    }

    /// The client's declared capabilities.
    pub(crate) fn capabilities(&self) -> Value {
        self.get(CAPABILITIES)
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_else(|| json!({}))
    }

    /// The client's log level.
    pub(crate) fn log_level(&self) -> Option<&str> {
        self.get(LOG_LEVEL)
    }

    /// Whether the client subscribed to anything (without parsing the list).
    pub(crate) fn has_subscriptions(&self) -> bool {
        self.get(SUBSCRIPTIONS).is_some_and(|s| s.trim() != "[]")
    }

    /// The URIs the client subscribed to.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.get(SUBSCRIPTIONS)
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }
}

/// ToolHive's binding of a session to its caller, hashed: the record then holds no plaintext
/// subject (ToolHive stores `<iss>\0<sub>` as is).
fn binding(identity: &Identity) -> String {
    match identity.binding() {
        Some((iss, sub)) => {
            let digest =
                ring::digest::digest(&ring::digest::SHA256, format!("{iss}\0{sub}").as_bytes());
            let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
            format!("sha256:{hex}")
        }
        None => "unauthenticated".into(),
    }
}

/// What one replica tells the others.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BusMessage {
    /// The session ended (DELETE): drop local copies and close their streams.
    Ended { session: String },
    /// The session's record changed (log level, subscriptions): re-read it.
    Changed { session: String },
    /// A client's answer to request `id`, for the replica whose id the request id carries.
    Answer {
        session: String,
        to: String,
        id: Value,
        outcome: Result<Value, ErrorObject>,
    },
    /// A client resumes, on replica `from`, a stream of `session` that replica `to` holds: `to`
    /// sends the events after `last_event_id` for connection `conn`.
    Resume {
        session: String,
        to: String,
        from: String,
        last_event_id: String,
        conn: String,
    },
    /// Events of a resumed stream for connection `conn` on replica `to` (the first, perhaps
    /// empty, says the resume was accepted); `end`: none follows.
    Frames {
        to: String,
        conn: String,
        frames: Vec<String>,
        end: bool,
    },
    /// The stream's replica refused the resume (`lost`: events after the id were dropped; else
    /// it has no such stream of that session).
    Refused {
        to: String,
        conn: String,
        lost: bool,
    },
    /// The client of connection `conn` went away: replica `to` stops sending its events.
    Release { to: String, conn: String },
}

/// The Redis side of shared sessions.
pub struct SharedSessions {
    client: Arc<Client>,
    prefix: String,
    ttl_secs: String,
    replica: String,
    channel: String,
    subscription: Subscription,
    /// SSE streams resumed across replicas over the bus.
    pub(crate) streams: RemoteStreams,
    /// How many `Ended`/`Changed` messages this replica has acted on: a read of the store that
    /// overlapped one of them may be stale, so it vouches for nothing.
    heard: std::sync::atomic::AtomicU64,
}

impl SharedSessions {
    /// Sessions in Redis under `key_prefix` (ToolHive's default when None), expiring after
    /// `ttl` without a request; starts listening on the bus. Returns the bus's messages, which
    /// the edge acts on.
    pub fn start(
        client: Arc<Client>,
        key_prefix: Option<&str>,
        ttl: Duration,
    ) -> (Self, mpsc::Receiver<Message>) {
        let prefix = key_prefix.unwrap_or(DEFAULT_KEY_PREFIX).to_owned();
        let channel = format!("{prefix}bus");
        let (tx, rx) = mpsc::channel(1024);
        let subscription = Subscription::start(client.config().clone(), vec![channel.clone()], tx);
        let mut id = [0u8; 4];
        let _ = getrandom::fill(&mut id);
        let shared = Self {
            client,
            ttl_secs: ttl.as_secs().max(1).to_string(),
            prefix,
            replica: id.iter().map(|b| format!("{b:02x}")).collect(),
            channel,
            subscription,
            streams: RemoteStreams::default(),
            heard: std::sync::atomic::AtomicU64::new(0),
        };
        (shared, rx)
    }

    /// This replica's id (random per process).
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Whether Redis is reachable and the bus subscribed, as far as the last calls know.
    pub fn is_up(&self) -> bool {
        self.client.is_up() && self.subscription.is_up()
    }

    /// The bus's generation while it is live (see [`vmcp_redis::Subscription::generation`]):
    /// unchanged means no `Ended` or `Changed` message can have been missed since.
    pub(crate) fn bus_generation(&self) -> Option<u64> {
        self.subscription.generation()
    }

    /// How many session ends and changes this replica has heard of (see `heard`).
    pub(crate) fn heard(&self) -> u64 {
        self.heard.load(std::sync::atomic::Ordering::Acquire)
    }

    /// A session end or change is about to be acted on.
    pub(crate) fn hear(&self) {
        self.heard.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    /// Stores a new session's record.
    pub(crate) async fn create(&self, id: &str, record: &Record) -> Result<(), RedisError> {
        let (key, value) = (self.key(id), record.to_json());
        let args: [&[u8]; 6] = [
            b"SET",
            key.as_bytes(),
            &value,
            b"NX",
            b"EX",
            self.ttl_secs.as_bytes(),
        ];
        match self.client.call(&args).await? {
            vmcp_redis::Value::Nil => Err(RedisError::Refused("session id already taken".into())),
            _ => Ok(()),
        }
    }

    /// The record of session `id`, sliding its TTL; None when it ended or expired.
    pub(crate) async fn load(&self, id: &str) -> Result<Option<Record>, RedisError> {
        let key = self.key(id);
        let args: [&[u8]; 4] = [b"GETEX", key.as_bytes(), b"EX", self.ttl_secs.as_bytes()];
        self.read(self.client.call(&args).await?)
    }

    /// The record of session `id`, without touching its TTL.
    pub(crate) async fn peek(&self, id: &str) -> Result<Option<Record>, RedisError> {
        let key = self.key(id);
        self.read(self.client.call(&[b"GET", key.as_bytes()]).await?)
    }

    fn read(&self, value: vmcp_redis::Value) -> Result<Option<Record>, RedisError> {
        match value {
            vmcp_redis::Value::Nil => Ok(None),
            vmcp_redis::Value::Data(d) => Record::parse(&d)
                .map(Some)
                .ok_or_else(|| RedisError::Refused("a session record is not a JSON object".into())),
            other => Err(RedisError::Refused(format!(
                "unexpected reply to a session read: {other:?}"
            ))),
        }
    }

    /// Replaces the record of a live session and tells the other replicas; false when the
    /// session no longer exists.
    pub(crate) async fn save(&self, id: &str, record: &Record) -> Result<bool, RedisError> {
        let (key, value) = (self.key(id), record.to_json());
        let note = self.encode(&BusMessage::Changed {
            session: id.to_owned(),
        });
        let set: [&[u8]; 6] = [
            b"SET",
            key.as_bytes(),
            &value,
            b"XX",
            b"EX",
            self.ttl_secs.as_bytes(),
        ];
        let publish: [&[u8]; 3] = [b"PUBLISH", self.channel.as_bytes(), &note];
        let replies = self.client.pipeline(&[&set, &publish]).await?;
        match replies.first() {
            Some(vmcp_redis::Value::Error(e)) => Err(RedisError::Refused(e.clone())),
            Some(vmcp_redis::Value::Nil) => Ok(false),
            _ => Ok(true),
        }
    }

    /// Deletes session `id` and tells the other replicas; false when it did not exist.
    pub(crate) async fn remove(&self, id: &str) -> Result<bool, RedisError> {
        let key = self.key(id);
        let note = self.encode(&BusMessage::Ended {
            session: id.to_owned(),
        });
        let publish: [&[u8]; 3] = [b"PUBLISH", self.channel.as_bytes(), &note];
        let replies = self
            .client
            .pipeline(&[&[b"DEL", key.as_bytes()], &publish])
            .await?;
        match replies.first() {
            Some(vmcp_redis::Value::Int(n)) => Ok(*n > 0),
            Some(vmcp_redis::Value::Error(e)) => Err(RedisError::Refused(e.clone())),
            other => Err(RedisError::Refused(format!("DEL answered {other:?}"))),
        }
    }

    /// Which of `ids` still exist (one round trip).
    pub(crate) async fn exist(&self, ids: &[String]) -> Result<Vec<bool>, RedisError> {
        let keys: Vec<String> = ids.iter().map(|id| self.key(id)).collect();
        let commands: Vec<[&[u8]; 2]> = keys
            .iter()
            .map(|k| [&b"EXISTS"[..], k.as_bytes()])
            .collect();
        let refs: Vec<&[&[u8]]> = commands.iter().map(|c| &c[..]).collect();
        let replies = self.client.pipeline(&refs).await?;
        Ok(replies
            .iter()
            .map(|r| matches!(r, vmcp_redis::Value::Int(n) if *n > 0))
            .collect())
    }

    /// The replica a server-to-client request id belongs to, when it is another replica's.
    pub(crate) fn owner_elsewhere(&self, request_id: &Value) -> Option<String> {
        let rest = request_id.as_str()?.strip_prefix("vmcp-")?;
        let (replica, n) = rest.split_once('-')?;
        (replica != self.replica && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| replica.to_owned())
    }

    /// Publishes `message` on the bus.
    pub(crate) async fn publish(&self, message: &BusMessage) -> Result<(), RedisError> {
        let payload = self.encode(message);
        self.client
            .call(&[b"PUBLISH", self.channel.as_bytes(), &payload])
            .await
            .map(|_| ())
    }

    fn encode(&self, message: &BusMessage) -> Vec<u8> {
        let from = &self.replica;
        let v = match message {
            BusMessage::Ended { session } => json!({"t": "ended", "s": session, "from": from}),
            BusMessage::Changed { session } => json!({"t": "changed", "s": session, "from": from}),
            BusMessage::Answer {
                session,
                to,
                id,
                outcome,
            } => {
                let mut v = json!({"t": "answer", "s": session, "to": to, "id": id, "from": from});
                match outcome {
                    Ok(result) => v["result"] = result.clone(),
                    Err(error) => v["error"] = json!(error),
                }
                v
            }
            BusMessage::Resume {
                session,
                to,
                last_event_id,
                conn,
                ..
            } => {
                json!({"t": "resume", "s": session, "to": to, "last": last_event_id, "conn": conn, "from": from})
            }
            BusMessage::Frames {
                to,
                conn,
                frames,
                end,
            } => {
                json!({"t": "frames", "to": to, "conn": conn, "frames": frames, "end": end, "from": from})
            }
            BusMessage::Refused { to, conn, lost } => {
                json!({"t": "refused", "to": to, "conn": conn, "lost": lost, "from": from})
            }
            BusMessage::Release { to, conn } => {
                json!({"t": "release", "to": to, "conn": conn, "from": from})
            }
        };
        serde_json::to_vec(&v).unwrap_or_default()
    }

    /// A bus message meant for this replica (None: malformed, or sent by this replica, or
    /// addressed to another replica).
    pub(crate) fn decode(&self, payload: &[u8]) -> Option<BusMessage> {
        let v: Value = serde_json::from_slice(payload).ok()?;
        if v.get("from").and_then(Value::as_str) == Some(self.replica.as_str()) {
            return None;
        }
        let kind = v.get("t")?.as_str()?;
        let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        if kind != "ended" && kind != "changed" && text("to").as_deref() != Some(&self.replica) {
            return None;
        }
        let to = self.replica.clone();
        match kind {
            "frames" => {
                let frames = v.get("frames")?.as_array()?;
                return Some(BusMessage::Frames {
                    to,
                    conn: text("conn")?,
                    frames: frames
                        .iter()
                        .map(|f| f.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?,
                    end: v.get("end")?.as_bool()?,
                });
            }
            "refused" => {
                return Some(BusMessage::Refused {
                    to,
                    conn: text("conn")?,
                    lost: v.get("lost")?.as_bool()?,
                });
            }
            "release" => {
                return Some(BusMessage::Release {
                    to,
                    conn: text("conn")?,
                });
            }
            _ => {}
        }
        let session = text("s")?;
        match kind {
            "ended" => Some(BusMessage::Ended { session }),
            "changed" => Some(BusMessage::Changed { session }),
            "resume" => Some(BusMessage::Resume {
                session,
                to,
                from: text("from")?,
                last_event_id: text("last")?,
                conn: text("conn")?,
            }),
            "answer" => {
                let outcome = match (v.get("result"), v.get("error")) {
                    (Some(r), _) => Ok(r.clone()),
                    (None, Some(e)) => Err(serde_json::from_value(e.clone()).ok()?),
                    (None, None) => return None,
                };
                Some(BusMessage::Answer {
                    session,
                    to,
                    id: v.get("id")?.clone(),
                    outcome,
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bus() -> SharedSessions {
        let client = Arc::new(Client::new(vmcp_redis::Config {
            address: "127.0.0.1:1".into(),
            db: 0,
            username: None,
            password: None,
            tls: None,
            timeout: Duration::from_millis(10),
        }));
        SharedSessions::start(client, None, Duration::from_secs(60)).0
    }

    #[tokio::test]
    async fn bus_messages_round_trip_between_replicas_and_skip_their_sender() {
        let (a, b) = (bus(), bus());
        assert_ne!(a.replica(), b.replica());
        let answer = BusMessage::Answer {
            session: "s1".into(),
            to: b.replica().into(),
            id: json!(format!("vmcp-{}-7", b.replica())),
            outcome: Err(ErrorObject::new(-1, "declined")),
        };
        let wire = a.encode(&answer);
        assert_eq!(b.decode(&wire), Some(answer.clone()));
        assert_eq!(a.decode(&wire), None, "a replica ignores its own messages");
        let third = bus();
        assert_eq!(third.decode(&wire), None, "an answer for another replica");
        let ended = a.encode(&BusMessage::Ended {
            session: "s2".into(),
        });
        assert_eq!(
            b.decode(&ended),
            Some(BusMessage::Ended {
                session: "s2".into()
            })
        );
        for junk in [&b"not json"[..], b"{}", br#"{"t":"nope","s":"x"}"#] {
            assert_eq!(b.decode(junk), None);
        }
    }

    #[tokio::test]
    async fn stream_resumes_travel_between_two_replicas_only() {
        let (a, b, c) = (bus(), bus(), bus());
        let ask = BusMessage::Resume {
            session: "s1".into(),
            to: b.replica().into(),
            from: a.replica().into(),
            last_event_id: format!("{}.x:3", b.replica()),
            conn: "c1".into(),
        };
        let wire = a.encode(&ask);
        assert_eq!(b.decode(&wire), Some(ask));
        assert_eq!(c.decode(&wire), None, "addressed to b");
        let frames = BusMessage::Frames {
            to: a.replica().into(),
            conn: "c1".into(),
            frames: vec!["id: x:4\ndata: {}\n\n".into()],
            end: true,
        };
        assert_eq!(a.decode(&b.encode(&frames)), Some(frames.clone()));
        assert_eq!(c.decode(&b.encode(&frames)), None);
        for other in [
            BusMessage::Refused {
                to: a.replica().into(),
                conn: "c1".into(),
                lost: true,
            },
            BusMessage::Release {
                to: a.replica().into(),
                conn: "c1".into(),
            },
        ] {
            assert_eq!(a.decode(&b.encode(&other)), Some(other));
        }
        let junk = format!(
            r#"{{"t":"frames","to":"{}","conn":"c","frames":[1],"end":true}}"#,
            a.replica()
        );
        assert_eq!(a.decode(junk.as_bytes()), None, "frames are strings");
    }

    #[tokio::test]
    async fn request_ids_name_the_replica_that_waits() {
        let (a, b) = (bus(), bus());
        let theirs = json!(format!("vmcp-{}-12", b.replica()));
        assert_eq!(a.owner_elsewhere(&theirs), Some(b.replica().to_owned()));
        assert_eq!(b.owner_elsewhere(&theirs), None, "its own");
        for other in [
            json!("vmcp-3"),
            json!(5),
            json!("vmcp-ab-x"),
            json!("client-1"),
        ] {
            assert_eq!(a.owner_elsewhere(&other), None, "{other}");
        }
    }

    #[test]
    fn records_bind_a_hashed_identity_and_parse_defensively() {
        let mut alice = Identity::anonymous();
        alice.issuer = Some("https://idp".into());
        alice.subject = Some("alice".into());
        let b = binding(&alice);
        assert!(b.starts_with("sha256:") && !b.contains("alice"), "{b}");
        assert_eq!(binding(&Identity::anonymous()), "unauthenticated");
        let mut m = BTreeMap::new();
        m.insert(BINDING.to_owned(), b);
        m.insert(VERSION.to_owned(), "2025-06-18".to_owned());
        m.insert(CAPABILITIES.to_owned(), "not json".to_owned());
        let r = Record(m);
        assert!(r.belongs_to(&alice));
        assert!(!r.belongs_to(&Identity::anonymous()));
        assert_eq!(r.version(), Some("2025-06-18"));
        assert_eq!(r.capabilities(), json!({}));
        assert!(r.subscriptions().is_empty());
        let unknown = Record(BTreeMap::from([(
            VERSION.to_owned(),
            "1999-01-01".to_owned(),
        )]));
        assert_eq!(unknown.version(), None);
        assert!(Record::parse(b"[1,2]").is_none());
    }
}
