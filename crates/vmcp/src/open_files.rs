//! The open-file limit. Every client connection, open GET stream, backend connection and stdio
//! pipe is a file descriptor, and the usual soft limit (1024 under systemd and in many shells)
//! runs out at a few hundred streaming clients with "Too many open files". The hard limit is the
//! operator's ceiling; the soft one is only a default, so serve raises it to the hard one at
//! startup (as Go programs and nginx's `worker_rlimit_nofile` do).

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// What [`raise`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Raised {
    /// The soft limit went from the first number to the second.
    To(u64, u64),
    /// Already at the hard limit (or unlimited).
    Already(u64),
    /// The kernel refused; the limit stays at this.
    Refused(u64, String),
}

/// Raises the soft open-file limit to the hard one.
pub(crate) fn raise() -> Raised {
    let limit = getrlimit(Resource::Nofile);
    let soft = match (limit.current, limit.maximum) {
        (None, _) => return Raised::Already(u64::MAX),
        (Some(soft), Some(hard)) if soft >= hard => return Raised::Already(soft),
        (Some(soft), _) => soft,
    };
    let wanted = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, wanted) {
        Ok(()) => Raised::To(soft, limit.maximum.unwrap_or(u64::MAX)),
        Err(e) => Raised::Refused(soft, e.to_string()),
    }
}

/// Logs what [`raise`] did, once at startup.
pub(crate) fn raise_and_log() {
    match raise() {
        Raised::To(from, to) => {
            tracing::info!(from, to, "raised the open-file limit to the hard limit")
        }
        Raised::Already(n) => {
            tracing::debug!(limit = n, "open-file limit already at the hard limit")
        }
        Raised::Refused(n, reason) => {
            tracing::warn!(limit = n, %reason, "cannot raise the open-file limit; each client connection and stream holds one")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After a raise the soft limit equals the hard one, and a second raise changes nothing.
    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let hard = getrlimit(Resource::Nofile).maximum;
        // Lower the soft limit first (always allowed), so the raise has something to do.
        if let Some(h) = hard {
            let low = h.min(512);
            setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(low),
                    maximum: hard,
                },
            )
            .unwrap();
            if low < h {
                assert_eq!(raise(), Raised::To(low, h));
            }
        }
        assert_eq!(getrlimit(Resource::Nofile).current, hard);
        assert!(matches!(raise(), Raised::Already(_)));
    }
}
