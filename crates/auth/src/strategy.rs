//! Reads one `outgoingAuth` strategy (as written in the config) into an [`OutgoingAuth`], with
//! ToolHive's rules: `headerValueEnv` and `clientSecretEnv` are read from the environment and must
//! be set and non-empty; a header name and value must be valid HTTP.

use serde_json::Value;

use crate::fetch::FetchPolicy;
use crate::outgoing::{ExchangeSettings, OutgoingAuth, TokenExchange, subject_token_type};
use crate::secret::Secret;

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// The strategy of `kind` with body `raw` (the whole strategy mapping); `env` reads environment
/// variables; token endpoints are fetched under `fetch`.
///
/// # Errors
/// A message naming the key that is wrong (never a secret value).
pub fn outgoing_auth(
    kind: &str,
    raw: &Value,
    env: &dyn Fn(&str) -> Option<String>,
    fetch: FetchPolicy,
) -> Result<OutgoingAuth, String> {
    let from_env = |key: &str, var: &str| {
        env(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{key}: environment variable {var} is not set"))
    };
    match kind {
        "unauthenticated" => Ok(OutgoingAuth::None),
        "header_injection" => {
            let body = raw.get("headerInjection").unwrap_or(&Value::Null);
            let name = text(body, "headerName").ok_or("headerInjection.headerName is required")?;
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(format!(
                    "headerInjection.headerName {name:?} is not an HTTP header name"
                ));
            }
            let value = match (text(body, "headerValue"), text(body, "headerValueEnv")) {
                (Some(v), None) => v.to_string(),
                (None, Some(var)) => from_env("headerInjection.headerValueEnv", var)?,
                _ => {
                    return Err(
                        "headerInjection: exactly one of headerValue or headerValueEnv is required"
                            .into(),
                    );
                }
            };
            if http::HeaderValue::from_str(&value).is_err() {
                return Err(format!(
                    "headerInjection: the value for {name} is not a valid HTTP header value"
                ));
            }
            Ok(OutgoingAuth::Header {
                name: name.to_string(),
                value: Secret::new(value),
            })
        }
        "token_exchange" => {
            let body = raw.get("tokenExchange").unwrap_or(&Value::Null);
            let token_url = text(body, "tokenUrl").ok_or("tokenExchange.tokenUrl is required")?;
            if text(body, "subjectProviderName").is_some() {
                return Err("tokenExchange.subjectProviderName needs ToolHive's embedded authorization server, which vmcp does not have".into());
            }
            let client_id = text(body, "clientId").map(str::to_string);
            let client_secret = match (text(body, "clientSecret"), text(body, "clientSecretEnv")) {
                (Some(_), Some(_)) => {
                    return Err(
                        "tokenExchange: only one of clientSecret or clientSecretEnv may be set"
                            .into(),
                    );
                }
                (Some(s), None) => Some(s.to_string()),
                (None, Some(var)) => Some(from_env("tokenExchange.clientSecretEnv", var)?),
                (None, None) => None,
            };
            if client_secret.is_some() && client_id.is_none() {
                return Err("tokenExchange: a client secret needs clientId".into());
            }
            let scopes = body
                .get("scopes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let settings = ExchangeSettings {
                token_url: token_url.to_string(),
                client_id,
                client_secret: client_secret.map(Secret::new),
                audience: text(body, "audience").map(str::to_string),
                scopes,
                subject_token_type: subject_token_type(text(body, "subjectTokenType"))
                    .map_err(|e| format!("tokenExchange.{e}"))?,
                fetch,
            };
            let exchange =
                TokenExchange::new(settings).map_err(|e| format!("tokenExchange: {e}"))?;
            Ok(OutgoingAuth::TokenExchange(std::sync::Arc::new(exchange)))
        }
        other => Err(format!("strategy {other} is not supported yet")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "GH_TOKEN" => Some("ghp_secret".into()),
            "EMPTY" => Some(String::new()),
            "X_SECRET" => Some("xs".into()),
            _ => None,
        }
    }

    fn lax() -> FetchPolicy {
        FetchPolicy {
            allow_http: true,
            allow_private: true,
            ..FetchPolicy::default()
        }
    }

    #[test]
    fn header_injection_reads_the_value_or_its_variable() {
        let raw = json!({"type": "header_injection", "headerInjection": {"headerName": "Authorization", "headerValueEnv": "GH_TOKEN"}});
        match outgoing_auth("header_injection", &raw, &env, lax()).unwrap() {
            OutgoingAuth::Header { name, value } => {
                assert_eq!(name, "Authorization");
                assert_eq!(value.expose(), "ghp_secret");
            }
            other => panic!("{other:?}"),
        }
        for (body, why) in [
            (
                json!({"headerName": "X", "headerValueEnv": "MISSING"}),
                "MISSING is not set",
            ),
            (
                json!({"headerName": "X", "headerValueEnv": "EMPTY"}),
                "EMPTY is not set",
            ),
            (json!({"headerName": "X"}), "exactly one"),
            (
                json!({"headerName": "X", "headerValue": "a", "headerValueEnv": "GH_TOKEN"}),
                "exactly one",
            ),
            (
                json!({"headerName": "bad name", "headerValue": "a"}),
                "not an HTTP header name",
            ),
            (
                json!({"headerName": "X", "headerValue": "line\nbreak"}),
                "not a valid HTTP header value",
            ),
            (json!({"headerValue": "a"}), "headerName is required"),
        ] {
            let raw = json!({"headerInjection": body});
            let e = outgoing_auth("header_injection", &raw, &env, lax()).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
            assert!(!e.contains("ghp_secret"), "{e}");
        }
    }

    #[test]
    fn token_exchange_rules() {
        let ok = json!({"tokenExchange": {"tokenUrl": "http://127.0.0.1:1/token", "clientId": "gw", "clientSecretEnv": "X_SECRET", "audience": "api", "scopes": ["a"], "subjectTokenType": "jwt"}});
        assert!(
            outgoing_auth("token_exchange", &ok, &env, lax())
                .unwrap()
                .per_caller()
        );
        for (body, why) in [
            (json!({}), "tokenUrl is required"),
            (
                json!({"tokenUrl": "http://127.0.0.1:1/t", "clientSecret": "s"}),
                "needs clientId",
            ),
            (
                json!({"tokenUrl": "http://127.0.0.1:1/t", "clientId": "c", "clientSecret": "s", "clientSecretEnv": "X_SECRET"}),
                "only one",
            ),
            (
                json!({"tokenUrl": "http://127.0.0.1:1/t", "subjectTokenType": "saml"}),
                "subjectTokenType",
            ),
            (
                json!({"tokenUrl": "http://127.0.0.1:1/t", "subjectProviderName": "github"}),
                "embedded authorization server",
            ),
        ] {
            let raw = json!({"tokenExchange": body});
            let e = outgoing_auth("token_exchange", &raw, &env, lax()).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
        // The fetch policy applies to the token URL.
        let e = outgoing_auth("token_exchange", &ok, &env, FetchPolicy::default()).unwrap_err();
        assert!(e.contains("insecureAllowHttp"), "{e}");
    }
}
