//! Faults under load: 16 keep-alive clients call tools through the gateway while a scenario
//! injects one fault (a backend killed, hung, lying or its process killed; the IdP unreachable; a
//! slow token endpoint; Redis down under two replicas; a replica killed). Per fault, it counts
//! and asserts: no answer delivered to the wrong request, no wrong id, nothing hung past the
//! gateway's timeout plus a margin, no session lost that Redis holds, every error naming the
//! failing part (never "unknown tool"), and a good answer after the fault (the recovery time).
//!
//! `VMCP_CHAOS_SECS` sets each scenario's length (default 6 s; `tools/chaos.sh` runs the long
//! version), and `VMCP_CHAOS_REPORT=path` appends one JSON line per scenario; each also prints
//! its markdown row on stderr (`--nocapture` shows it). docs/reliability.md has the tables.
//! The Redis scenarios skip with a note when redis-server is not installed, except under CI.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod common;

#[path = "chaos/mod.rs"]
mod chaos;
