//! Resource subscriptions: a client's `resources/subscribe` is forwarded to the backend that owns
//! the URI, once per (connection, URI) however many sessions subscribe; the last unsubscribe
//! forwards the unsubscribe. Updates come back as [`crate::GatewayNotice::ResourceUpdated`].

use vmcp_backend::Origin;

use crate::{
    catalog::Catalog,
    error::CoreError,
    gateway::{Caller, Gateway, SubscriptionKey},
};

fn origin<'a>(caller: &Caller<'a>) -> Origin<'a> {
    Origin {
        session: caller.session,
        era: caller.era,
        caller: Some(caller.identity),
        headers: caller.headers,
    }
}

impl Gateway {
    /// Subscribes `caller` to `uri`.
    ///
    /// # Errors
    /// Unknown resource, denial, or the backend's failure.
    pub async fn subscribe(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<(), CoreError> {
        let (backend, key) = self.subscription_key(caller, catalog, uri)?;
        let first = {
            let mut subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            let n = subs.entry(key.clone()).or_insert(0);
            *n += 1;
            *n == 1
        };
        if first {
            let b = self.backend(&backend)?;
            if let Err(error) = b.watch_resource(origin(caller), uri, true).await {
                self.release(&key);
                return Err(CoreError::Backend { backend, error });
            }
        }
        Ok(())
    }

    /// Drops `caller`'s subscription to `uri`.
    ///
    /// # Errors
    /// Unknown resource or the backend's failure.
    pub async fn unsubscribe(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<(), CoreError> {
        let (backend, key) = self.subscription_key(caller, catalog, uri)?;
        if self.release(&key) {
            let b = self.backend(&backend)?;
            b.watch_resource(origin(caller), uri, false)
                .await
                .map_err(|error| CoreError::Backend { backend, error })?;
        }
        Ok(())
    }

    /// Decrements; true when that was the last subscriber.
    fn release(&self, key: &SubscriptionKey) -> bool {
        let mut subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        match subs.get_mut(key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                subs.remove(key);
                true
            }
            None => false,
        }
    }

    fn subscription_key(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<(String, SubscriptionKey), CoreError> {
        let backend = self.admit_uri(caller.identity, catalog, uri)?;
        let b = self.backend(backend)?;
        // A shared connection is subscribed once for everyone (per revision hop: a backend serving
        // both gets session-based and 2026-07-28 subscriptions over their own hops); a per-session
        // one per session.
        let conn = if b.is_per_session() {
            caller.session.unwrap_or_default().to_string()
        } else {
            String::new()
        };
        Ok((
            backend.to_string(),
            (backend.to_string(), conn, caller.era, uri.to_string()),
        ))
    }
}
