//! The gateway's core, shared by every client edge: capability discovery across backends,
//! conflict resolution and filtering into one [`Catalog`], routing calls back to the owning backend,
//! and the admission seam every list and call passes through.
//!
//! Identity is an explicit argument everywhere; nothing here knows about HTTP, sessions on the wire,
//! or protocol eras.

mod admission;
mod catalog;
mod changes;
mod composite;
mod conflict;
mod discover;
mod error;
mod gateway;
mod health;
mod optimizer;
pub mod pins;
mod policy;
mod prompts;
mod rate_limit;
mod reconfigure;
mod request_state;
/// Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`, off in every normal build).
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    pub use crate::request_state::fuzzing::*;
}
pub use request_state::install_keys as install_request_state_keys;
mod subscriptions;
mod uri_template;
mod views;

pub use admission::{Action, AllowAll, Authorizer, Decision, Identity, Kind, Target};
pub use catalog::{Catalog, Route};
pub use changes::GatewayNotice;
pub use composite::{Composites, WorkflowObserver};
pub use discover::BackendCapabilities;
pub use error::CoreError;
pub use gateway::{Caller, Gateway, GatewayOptions};
pub use health::HealthChecks;
pub use optimizer::{OptimizerSettings, Ranking, SemanticSettings, ToolSearch};
pub use policy::{AggregationPolicy, PartialFailureMode, Strategy, ToolOverride, WorkloadPolicy};
pub use rate_limit::{
    ANONYMOUS, BucketKey, BucketStore, Draw, Limit, MAX_BUCKETS, MemoryStore, RateLimiter,
    RateLimits, RedisStore, StoreError, ToolLimits, Verdict,
};
pub use reconfigure::Reconfigured;
pub use uri_template::UriTemplate;
