//! The command line, and the settings a run resolves it to: explicit flags win over `--quick`,
//! which wins over the defaults (which finish in under two minutes).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Benchmarks the vmcp gateway against direct calls to the same fixture backend.
#[derive(Debug, Parser)]
#[command(name = "vmcp-bench", version, about)]
pub(crate) struct Cli {
    /// Measured time of each load run (after the warm-up), e.g. 4s, 500ms, 1m.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) duration: Option<Duration>,
    /// Warm-up before each load run; its requests are not counted.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) warmup: Option<Duration>,
    /// Concurrency levels (one keep-alive connection and one session per worker)
    /// [default: 1,8,32; the composite scenario 1,8].
    #[arg(long, value_delimiter = ',')]
    pub(crate) concurrency: Option<Vec<usize>>,
    /// Scenarios to run, by number or name (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) scenarios: Option<Vec<Scenario>>,
    /// Where to write the JSON results.
    #[arg(long, default_value = "bench-results/latest.json")]
    pub(crate) out: PathBuf,
    /// A few seconds in total: for CI, so the harness cannot rot. Not for numbers.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Do not run `cargo build --release -p vmcp -p vmcp-testkit` first.
    #[arg(long)]
    pub(crate) no_build: bool,
    /// Directory holding the `vmcp` and `vmcp-fixture` binaries [default: TARGET/release].
    #[arg(long)]
    pub(crate) bin_dir: Option<PathBuf>,
    /// Runs of each tools/call load (scenarios 1, 2 and 6), interleaved; tables show medians.
    #[arg(long, default_value_t = 1)]
    pub(crate) repeat: usize,
    /// Idle Legacy sessions opened by the memory scenario.
    #[arg(long)]
    pub(crate) sessions: Option<usize>,
    /// Length of each of the memory scenario's identical load runs.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) soak: Option<Duration>,
    /// Identical load runs of the memory scenario (at least 2); a leak grows RSS with every run,
    /// allocator warm-up only in the first ones.
    #[arg(long, default_value_t = 2)]
    pub(crate) load_runs: usize,
    /// Gateway restarts measured for cold session creation.
    #[arg(long)]
    pub(crate) cold_runs: Option<usize>,
    /// A YAML file appended to every gateway config (top-level keys, e.g. an `audit` block), to
    /// measure what a feature costs against the same run without it. `{scratch}` in it becomes
    /// the run's scratch directory, `{otlp}` the address of an OTLP sink the harness starts.
    /// Under --oidc its `incomingAuth.authz` is merged into the generated `incomingAuth`.
    #[arg(long)]
    pub(crate) config_extra: Option<PathBuf>,
    /// Clients authenticate: the harness serves an OpenID provider on loopback, mints one
    /// long-lived token, gives every gateway `incomingAuth` type oidc trusting it, and sends the
    /// token on every request to a gateway (never to a backend directly).
    #[arg(long)]
    pub(crate) oidc: bool,
    /// Gateways keep sessions (and rate-limit buckets) in a redis-server the harness starts
    /// (`sessionStorage: redis`); skipped with a message when redis-server is not installed.
    #[arg(long)]
    pub(crate) redis: bool,
    /// Warm session creations (and tools/list walks) measured.
    #[arg(long)]
    pub(crate) iterations: Option<usize>,
}

/// The scenarios of the benchmark (numbered as in docs/benchmarks.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scenario {
    /// 1: tools/call of a trivial tool over a Legacy session, HTTP backend.
    #[value(alias = "1")]
    Call,
    /// 2: the same over the Modern edge and over a stdio backend.
    #[value(alias = "2")]
    Stdio,
    /// 3: initialize + tools/list with 10 backends of 100 tools, cold and warm.
    #[value(alias = "3")]
    Session,
    /// 4: tools/list paging through 5,000 aggregated tools.
    #[value(alias = "4")]
    Paging,
    /// 5: gateway RSS idle, with idle sessions, and across identical load runs.
    #[value(alias = "5")]
    Memory,
    /// 6: a 5-step composite tool against its 5 steps called directly and through the gateway.
    #[value(alias = "6")]
    Composite,
    /// 7: tools/call with telemetry off, metrics on, traces sampled at 10%.
    #[value(alias = "7")]
    Telemetry,
    /// 8: HAProxy in front of 1 and 3 replicas sharing sessions in Redis, against the direct path.
    #[value(alias = "8")]
    Scale,
}

/// What one run does, resolved from [`Cli`].
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) duration: Duration,
    pub(crate) warmup: Duration,
    pub(crate) concurrency: Vec<usize>,
    /// The composite scenario's levels: `--concurrency` if given, else 1 and 8.
    pub(crate) composite_concurrency: Vec<usize>,
    pub(crate) scenarios: Vec<Scenario>,
    pub(crate) repeat: usize,
    pub(crate) sessions: usize,
    pub(crate) soak: Duration,
    pub(crate) load_runs: usize,
    pub(crate) cold_runs: usize,
    pub(crate) iterations: usize,
    pub(crate) quick: bool,
}

impl Cli {
    /// The settings of this run.
    pub(crate) fn settings(&self) -> Settings {
        let q = self.quick;
        let pick = |quick: Duration, full: Duration| if q { quick } else { full };
        Settings {
            duration: self
                .duration
                .unwrap_or(pick(Duration::from_millis(500), Duration::from_secs(3))),
            warmup: self
                .warmup
                .unwrap_or(pick(Duration::from_millis(200), Duration::from_secs(1))),
            concurrency: self
                .concurrency
                .clone()
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| if q { vec![1, 8] } else { vec![1, 8, 32] }),
            composite_concurrency: self
                .concurrency
                .clone()
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| vec![1, 8]),
            scenarios: self.scenarios.clone().unwrap_or_else(|| {
                vec![
                    Scenario::Call,
                    Scenario::Stdio,
                    Scenario::Session,
                    Scenario::Paging,
                    Scenario::Memory,
                    Scenario::Composite,
                    Scenario::Telemetry,
                    Scenario::Scale,
                ]
            }),
            repeat: self.repeat.max(1),
            sessions: self.sessions.unwrap_or(if q { 100 } else { 1000 }),
            soak: self
                .soak
                .unwrap_or(pick(Duration::from_secs(1), Duration::from_secs(10))),
            load_runs: self.load_runs.max(2),
            cold_runs: self.cold_runs.unwrap_or(if q { 1 } else { 5 }).max(1),
            iterations: self.iterations.unwrap_or(if q { 10 } else { 200 }).max(1),
            quick: q,
        }
    }
}

/// `500ms`, `4s`, `1.5s`, `2m`, or a bare number of seconds.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: {s:?} (try 500ms, 4s or 1m)"))?;
    Duration::try_from_secs_f64(value * scale).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("4s"), Ok(Duration::from_secs(4)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn quick_shrinks_defaults_but_explicit_flags_win() {
        let cli = Cli::parse_from(["vmcp-bench", "--quick", "--concurrency", "4"]);
        let s = cli.settings();
        assert_eq!(s.concurrency, vec![4]);
        assert_eq!(s.composite_concurrency, vec![4]);
        assert_eq!(s.duration, Duration::from_millis(500));
        let s = Cli::parse_from(["vmcp-bench", "--scenarios", "1,paging,6"]).settings();
        assert_eq!(
            s.scenarios,
            vec![Scenario::Call, Scenario::Paging, Scenario::Composite]
        );
        assert_eq!(s.concurrency, vec![1, 8, 32]);
        assert_eq!(s.composite_concurrency, vec![1, 8]);
    }

    #[test]
    fn production_flags_parse() {
        let cli = Cli::parse_from(["vmcp-bench", "--oidc", "--redis"]);
        assert!(cli.oidc && cli.redis);
        let cli = Cli::parse_from(["vmcp-bench"]);
        assert!(!cli.oidc && !cli.redis);
    }
}
