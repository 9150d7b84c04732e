//! Resource subscriptions: a client's `resources/subscribe` is forwarded to the backend that owns
//! the URI (or, for a URI no backend lists, to the first backend supporting subscriptions that
//! accepts it), once per (connection, URI) however many sessions subscribe; the last unsubscribe
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
    /// Subscribes `caller` to `uri`. A URI no backend lists or matches by a template (servers
    /// serve URIs they do not list) is offered to the backends that support subscriptions, in
    /// sorted order, until one accepts.
    ///
    /// # Errors
    /// Unknown resource, denial, or the backend's failure.
    pub async fn subscribe(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<(), CoreError> {
        let owners = self.owners(caller, catalog, uri)?;
        let mut refused = None;
        for backend in owners {
            let key = self.subscription_key(caller, &backend, uri)?;
            let first = {
                let mut subs = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
                let n = subs.entry(key.clone()).or_insert(0);
                *n += 1;
                *n == 1
            };
            if !first {
                return Ok(());
            }
            let b = self.backend(&backend)?;
            match b.watch_resource(origin(caller), uri, true).await {
                Ok(()) => return Ok(()),
                Err(error) => {
                    self.release(&key);
                    refused = Some(CoreError::Backend { backend, error });
                }
            }
        }
        Err(refused.unwrap_or_else(|| CoreError::UnknownResource(uri.to_string())))
    }

    /// Drops `caller`'s subscription to `uri` (with whichever backend accepted it).
    ///
    /// # Errors
    /// Unknown resource or the backend's failure.
    pub async fn unsubscribe(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<(), CoreError> {
        let owners = self.owners(caller, catalog, uri)?;
        for backend in owners {
            let key = self.subscription_key(caller, &backend, uri)?;
            let held = self
                .subscriptions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains_key(&key);
            if !held {
                continue;
            }
            if self.release(&key) {
                let b = self.backend(&backend)?;
                b.watch_resource(origin(caller), uri, false)
                    .await
                    .map_err(|error| CoreError::Backend { backend, error })?;
            }
            return Ok(());
        }
        // Nothing to drop: unsubscribing from what one never subscribed to is not an error.
        Ok(())
    }

    /// The backends that may hold a subscription to `uri`: the one serving it, else (a URI nobody
    /// lists) every backend supporting subscriptions that the caller may read it from.
    fn owners(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        uri: &str,
    ) -> Result<Vec<String>, CoreError> {
        if catalog.resource_backend(uri).is_some() {
            return Ok(vec![
                self.admit_uri(caller.identity, catalog, uri)?.to_owned(),
            ]);
        }
        let owners: Vec<String> = catalog
            .subscribers()
            .iter()
            .filter(|b| self.admit_uri_on(caller.identity, uri, b))
            .cloned()
            .collect();
        if owners.is_empty() {
            // Refused as any unknown URI is (the same denial when an authorizer is configured).
            self.admit_uri(caller.identity, catalog, uri)?;
        }
        Ok(owners)
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
        backend: &str,
        uri: &str,
    ) -> Result<SubscriptionKey, CoreError> {
        let b = self.backend(backend)?;
        // A shared connection is subscribed once for everyone (per revision hop: a backend serving
        // both gets session-based and 2026-07-28 subscriptions over their own hops); a per-session
        // one per session.
        let conn = if b.is_per_session() {
            caller.session.unwrap_or_default().to_string()
        } else {
            String::new()
        };
        Ok((backend.to_string(), conn, caller.era, uri.to_string()))
    }
}
