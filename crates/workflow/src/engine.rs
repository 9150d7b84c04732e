//! Running a workflow: a step starts as soon as every step it depends on has ended (at most
//! [`MAX_PARALLEL_STEPS`] at once), conditions decide whether it runs, its templates are
//! rendered against the context as it is then, and its end updates the context for the steps
//! after it. A failing step fails the workflow (running siblings are dropped, which cancels
//! their backend calls) unless its `onError` says `continue`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value, json};
use vmcp_config::{ElicitAction, ErrorAction};

use crate::compile::{Body, OnError, Step, ToolCall, Workflow};
use crate::{
    Event, MAX_ELICITATION_ANSWER, MAX_ELICITATION_WAIT, MAX_PARALLEL_STEPS, Runner, coerce, output,
};

/// How a step ended.
enum Outcome {
    Completed {
        output: Value,
        content: Option<Map<String, Value>>,
    },
    /// An elicitation answered with `skip_remaining`: completed, and nothing else starts.
    SkipRemaining {
        output: Value,
    },
    Failed(String),
}

/// A running step: its index, how it ended, how many retries it took, how long it ran.
type StepFuture<'a> = Pin<Box<dyn Future<Output = (usize, Outcome, u64, Duration)> + Send + 'a>>;
/// A prepared step, ready to run: how it ends and how many retries it took.
type Running<'a> = Pin<Box<dyn Future<Output = (Outcome, u64)> + Send + 'a>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Running,
    /// An elicitation waiting for the client's next round.
    Asking,
    Ended,
}

/// How one round of a call in rounds ended (2026-07-28 clients, which are asked between
/// requests: multi round-trip requests).
#[derive(Debug)]
pub enum Round {
    /// The workflow ended: its `CallToolResult`.
    Done(Value),
    /// Elicitation steps need the user: ask with `requests` (`inputRequests`, keyed by step
    /// id) and resume with `state` and the answers. The state holds every ended step's
    /// result, so no step runs twice; the caller must protect its integrity.
    NeedsInput {
        /// `inputRequests`: `elicitation/create` per asking step.
        requests: Map<String, Value>,
        /// What the next round resumes from.
        state: Value,
        /// How long the answers may take (the asking steps' timeout, at most 10 minutes).
        expires_in: Duration,
    },
}

/// What a call in rounds resumes from: the state of the round before, and the answers.
#[derive(Debug, Default)]
pub struct Resume {
    /// [`Round::NeedsInput`]'s state, verified by the caller.
    pub state: Value,
    /// `inputResponses`: `ElicitResult`s keyed by step id. Only answers to the questions the
    /// round before asked are used.
    pub answers: Map<String, Value>,
    /// The questions' time ran out before the answers came: each asked step is handled as an
    /// elicitation that timed out (its `onCancel`).
    pub timed_out: bool,
}

impl Resume {
    fn asked(&self, step: &str) -> bool {
        self.state
            .get("asked")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|s| s.as_str() == Some(step)))
    }
}

/// Live (ask the client mid-call) or in rounds (answers come with the next request).
enum Mode<'r> {
    Live,
    Rounds(&'r Resume),
}

/// What a round of `execute` produced.
enum Exec {
    Output(Value),
    Suspended {
        requests: Map<String, Value>,
        state: Value,
        expires_in: Duration,
    },
}

/// A ready step, decided: skipped, started, or (in rounds) waiting for the user.
enum Prepared<'a> {
    Skip,
    Run(Running<'a>),
    Ask { message: String, schema: Value },
}

impl Workflow {
    /// Runs the workflow for one `tools/call` and returns its `CallToolResult`: the output on
    /// success, an `isError` result saying why otherwise (never a protocol error). Elicitation
    /// steps ask the client while the call runs ([`Runner::elicit`]).
    pub async fn call<R: Runner>(&self, runner: &R, arguments: Map<String, Value>) -> Value {
        match self.round(runner, arguments, Mode::Live).await {
            Round::Done(v) => v,
            // Only rounds suspend.
            Round::NeedsInput { .. } => {
                output::failure("the workflow needs input it cannot ask for")
            }
        }
    }

    /// Runs one round of a call whose client is asked between requests: every step that does
    /// not wait on an unanswered elicitation runs, then the round ends with the questions (or
    /// the workflow ends).
    /// `resume` carries the state and answers of the round before.
    pub async fn call_in_rounds<R: Runner>(
        &self,
        runner: &R,
        arguments: Map<String, Value>,
        resume: Option<&Resume>,
    ) -> Round {
        let empty = Resume::default();
        self.round(runner, arguments, Mode::Rounds(resume.unwrap_or(&empty)))
            .await
    }

    async fn round<R: Runner>(
        &self,
        runner: &R,
        arguments: Map<String, Value>,
        mode: Mode<'_>,
    ) -> Round {
        let restored = match &mode {
            Mode::Rounds(r) if !r.state.is_null() => Some(&r.state),
            _ => None,
        };
        let id = restored
            .and_then(|s| s.get("workflow_id"))
            .and_then(Value::as_str)
            .map_or_else(workflow_id, str::to_owned);
        // The time budget counts from the first round: rounds do not restart it.
        let started_ms = restored
            .and_then(|s| s.get("started_ms"))
            .and_then(Value::as_u64)
            .unwrap_or_else(unix_ms);
        let spent = Duration::from_millis(unix_ms().saturating_sub(started_ms));
        let params = Value::Object(self.with_defaults(arguments));
        if restored.is_none() {
            runner.observe(Event::WorkflowStarted {
                workflow: &id,
                name: &self.name,
                timeout: self.timeout,
                params: &params,
            });
        }
        let run = tokio::time::timeout(
            self.timeout.saturating_sub(spent),
            self.execute(runner, &id, params, &mode, restored, started_ms),
        )
        .await;
        let (status, error) = match &run {
            Ok(Ok(Exec::Suspended {
                requests,
                state,
                expires_in,
            })) => {
                return Round::NeedsInput {
                    requests: requests.clone(),
                    state: state.clone(),
                    expires_in: *expires_in,
                };
            }
            Ok(Ok(Exec::Output(_))) => ("completed", None),
            Ok(Err(e)) => ("failed", Some(e.as_str())),
            Err(_) => ("timed_out", Some("workflow timed out")),
        };
        runner.observe(Event::WorkflowEnded {
            workflow: &id,
            name: &self.name,
            status,
            elapsed: Duration::from_millis(unix_ms().saturating_sub(started_ms)),
            steps: self.steps.len(),
            error,
            output: match &run {
                Ok(Ok(Exec::Output(v))) => Some(v),
                _ => None,
            },
        });
        Round::Done(match run {
            Ok(Ok(Exec::Output(out))) => output::success(out),
            Ok(Err(e)) => output::failure(&e),
            Ok(Ok(Exec::Suspended { .. })) | Err(_) => output::failure("workflow timed out"),
        })
    }

    async fn execute<R: Runner>(
        &self,
        runner: &R,
        id: &str,
        params: Value,
        mode: &Mode<'_>,
        restored: Option<&Value>,
        started_ms: u64,
    ) -> Result<Exec, String> {
        let start_time = restored
            .and_then(|s| s.get("start_time"))
            .and_then(Value::as_str)
            .map_or_else(
                || vmcp_proto::time::rfc3339(SystemTime::now()),
                str::to_owned,
            );
        let mut ctx = json!({
            "params": params,
            "steps": {},
            "vars": {},
            "workflow": {
                "id": id,
                "duration_ms": 0,
                "step_count": self.steps.len(),
                "status": "pending",
                "start_time": start_time,
            },
        });
        let n = self.steps.len();
        let mut state = vec![State::Waiting; n];
        let mut ended = 0usize;
        let mut last_completed: Option<usize> = None;
        let mut skip_rest = false;
        if let Some(snap) = restored {
            // Steps that ended in earlier rounds keep their results and do not run again.
            let steps = snap.get("steps").and_then(Value::as_object);
            for (i, step) in self.steps.iter().enumerate() {
                if let Some(entry) = steps.and_then(|m| m.get(&step.id)) {
                    state[i] = State::Ended;
                    ended += 1;
                    set_step(&mut ctx, &step.id, entry.clone());
                }
            }
            let last = snap.get("last_completed").and_then(Value::as_str);
            last_completed = self.steps.iter().position(|s| Some(s.id.as_str()) == last);
            skip_rest = snap.get("skip_rest").and_then(Value::as_bool) == Some(true);
        }
        let mut asking: Vec<(usize, String, Value)> = Vec::new();
        let mut running: FuturesUnordered<StepFuture<'_>> = FuturesUnordered::new();
        'run: loop {
            loop {
                // Start (or settle without running) every step whose dependencies have ended,
                // until nothing changes: a skipped step can make its dependents ready at once.
                let mut changed = true;
                while changed {
                    changed = false;
                    for i in 0..n {
                        if state[i] != State::Waiting
                            || running.len() >= MAX_PARALLEL_STEPS
                            || !self.steps[i].deps.iter().all(|&d| state[d] == State::Ended)
                        {
                            continue;
                        }
                        let step = &self.steps[i];
                        let prepared = if skip_rest {
                            Ok(Prepared::Skip)
                        } else {
                            self.prepare(step, &ctx, runner, mode)
                        };
                        match prepared {
                            Ok(Prepared::Ask { message, schema }) => {
                                // Asked at the end of the round, once running steps have ended.
                                state[i] = State::Asking;
                                asking.push((i, message, schema));
                            }
                            Ok(Prepared::Run(fut)) => {
                                runner.observe(Event::StepStarted {
                                    workflow: id,
                                    step: &step.id,
                                    kind: step.kind_name(),
                                    tool: step.tool(),
                                });
                                set_step(&mut ctx, &step.id, json!({"status": "running"}));
                                state[i] = State::Running;
                                running.push(Box::pin(async move {
                                    let t = Instant::now();
                                    let (outcome, retries) = fut.await;
                                    (i, outcome, retries, t.elapsed())
                                }));
                            }
                            Ok(Prepared::Skip) => {
                                state[i] = State::Ended;
                                ended += 1;
                                let mut entry = json!({"status": "skipped"});
                                if let Some(d) = &step.default_results {
                                    entry["output"] = d.clone();
                                }
                                set_step(&mut ctx, &step.id, entry);
                                let end = Ended {
                                    // Not run: its condition said so, or skip_remaining did.
                                    by_condition: !skip_rest,
                                    ..Ended::new(id, "skipped", ended, Duration::ZERO)
                                };
                                self.ended(runner, step, end);
                                changed = true;
                            }
                            Err(e) => {
                                state[i] = State::Ended;
                                ended += 1;
                                let end = Ended {
                                    error: Some(&e),
                                    ..Ended::new(id, "failed", ended, Duration::ZERO)
                                };
                                self.ended(runner, step, end);
                                self.fail(step, e, &mut ctx)?;
                                changed = true;
                            }
                        }
                    }
                }
                let Some((i, outcome, retries, elapsed)) = running.next().await else {
                    break;
                };
                let step = &self.steps[i];
                state[i] = State::Ended;
                ended += 1;
                match outcome {
                    Outcome::Completed { output, content } => {
                        let mut entry = json!({"status": "completed", "output": output});
                        if let Some(c) = content {
                            entry["content"] = Value::Object(c);
                        }
                        set_step(&mut ctx, &step.id, entry);
                        last_completed = Some(i);
                        let end = Ended {
                            retries,
                            ..Ended::new(id, "completed", ended, elapsed)
                        };
                        self.ended(runner, step, end);
                    }
                    Outcome::SkipRemaining { output } => {
                        set_step(
                            &mut ctx,
                            &step.id,
                            json!({"status": "completed", "output": output}),
                        );
                        last_completed = Some(i);
                        skip_rest = true;
                        self.ended(runner, step, Ended::new(id, "completed", ended, elapsed));
                    }
                    Outcome::Failed(e) => {
                        let end = Ended {
                            retries,
                            error: Some(&e),
                            ..Ended::new(id, "failed", ended, elapsed)
                        };
                        self.ended(runner, step, end);
                        self.fail(step, e, &mut ctx)?;
                    }
                }
            }
            if !asking.is_empty() && skip_rest {
                // skip_remaining came while questions were pending: they are skipped too, with
                // everything after them.
                for (i, _, _) in asking.drain(..) {
                    state[i] = State::Waiting;
                }
                continue 'run;
            }
            if !asking.is_empty() {
                return Ok(self.suspend(&asking, &ctx, last_completed, skip_rest, started_ms));
            }
            break;
        }
        if ended < n {
            let stuck: Vec<&str> = (0..n)
                .filter(|&i| state[i] != State::Ended)
                .map(|i| self.steps[i].id.as_str())
                .collect();
            return Err(format!(
                "steps {stuck:?} never became ready (dependency cycle)"
            ));
        }
        if let Some(w) = ctx.get_mut("workflow") {
            w["status"] = json!("completed");
            w["duration_ms"] = json!(unix_ms().saturating_sub(started_ms));
        }
        match &self.output {
            Some(out) => output::build(out, &ctx, skip_rest),
            None => Ok(last_completed
                .and_then(|i| ctx["steps"][&self.steps[i].id].get("output").cloned())
                .unwrap_or(Value::Null)),
        }
        .map(Exec::Output)
    }

    /// The end of a round that needs the user: what to ask, and what to resume from.
    fn suspend(
        &self,
        asking: &[(usize, String, Value)],
        ctx: &Value,
        last_completed: Option<usize>,
        skip_rest: bool,
        started_ms: u64,
    ) -> Exec {
        let mut requests = Map::new();
        let mut expires_in = MAX_ELICITATION_WAIT;
        for (i, message, schema) in asking {
            let step = &self.steps[*i];
            expires_in = expires_in.min(step.timeout);
            requests.insert(
                step.id.clone(),
                json!({"method": "elicitation/create", "params": {
                    "mode": "form", "message": message, "requestedSchema": schema}}),
            );
        }
        let asked: Vec<&str> = asking
            .iter()
            .map(|(i, _, _)| self.steps[*i].id.as_str())
            .collect();
        let state = json!({
            "workflow_id": ctx["workflow"]["id"],
            "start_time": ctx["workflow"]["start_time"],
            "started_ms": started_ms,
            "steps": ctx["steps"],
            "asked": asked,
            "last_completed": last_completed.map(|i| self.steps[i].id.as_str()),
            "skip_rest": skip_rest,
        });
        Exec::Suspended {
            requests,
            state,
            expires_in,
        }
    }

    fn ended<R: Runner>(&self, runner: &R, step: &Step, end: Ended<'_>) {
        let skipped = end.status == "skipped";
        runner.observe(Event::StepEnded {
            workflow: end.workflow,
            step: &step.id,
            kind: step.kind_name(),
            tool: step.tool(),
            status: end.status,
            done: end.done,
            total: self.steps.len(),
            elapsed: end.elapsed,
            retries: end.retries,
            error: end.error,
            condition: step
                .condition
                .as_ref()
                .filter(|_| skipped && end.by_condition)
                .map(|c| c.source()),
        });
    }

    /// Records a failed step; `Err` (the workflow's failure) unless it continues on error.
    fn fail(&self, step: &Step, error: String, ctx: &mut Value) -> Result<(), String> {
        if step.on_error.action != ErrorAction::Continue {
            return Err(format!("step {:?} failed: {error}", step.id));
        }
        let mut entry = json!({"status": "failed", "error": error});
        if let Some(d) = &step.default_results {
            entry["output"] = d.clone();
        }
        set_step(ctx, &step.id, entry);
        Ok(())
    }

    /// Parameters with the schema's defaults for the ones not given.
    fn with_defaults(&self, mut args: Map<String, Value>) -> Map<String, Value> {
        if let Some(props) = self.parameters.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                if let Some(d) = p.get("default")
                    && !args.contains_key(k)
                {
                    args.insert(k.clone(), d.clone());
                }
            }
        }
        args
    }

    /// Decides a ready step against the context as it is now: `Ok(None)` when its
    /// condition is false, a future that runs it, or why it failed before running.
    fn prepare<'a, R: Runner>(
        &'a self,
        step: &'a Step,
        ctx: &Value,
        runner: &'a R,
        mode: &Mode<'_>,
    ) -> Result<Prepared<'a>, String> {
        if let Some(c) = &step.condition {
            let text = c.render(ctx).map_err(|e| format!("condition: {e}"))?;
            match text.as_str() {
                "true" | "True" | "TRUE" => {}
                "false" | "False" | "FALSE" => return Ok(Prepared::Skip),
                other => {
                    return Err(format!(
                        "condition must render true or false, got {:?}",
                        truncate(other)
                    ));
                }
            }
        }
        Ok(Prepared::Run(match &step.body {
            Body::Tool(call) => {
                let args = render_args(call, ctx, runner)?;
                Box::pin(run_tool(
                    runner,
                    &call.tool,
                    args,
                    step.on_error,
                    step.timeout,
                ))
            }
            Body::Elicit {
                message,
                schema,
                on_decline,
                on_cancel,
            } => {
                let message = message.render(ctx).map_err(|e| format!("message: {e}"))?;
                let handlers = (*on_decline, *on_cancel);
                match mode {
                    Mode::Live => Box::pin(run_elicitation(
                        runner,
                        message,
                        schema.clone(),
                        handlers,
                        step.timeout.min(MAX_ELICITATION_WAIT),
                    )),
                    // An answer counts only for a question the round before asked: a
                    // client cannot pre-answer a gate it was never shown.
                    Mode::Rounds(r) => match r.answers.get(&step.id) {
                        _ if r.timed_out && r.asked(&step.id) => {
                            let outcome = interpret(Err(()), handlers);
                            Box::pin(async move { (outcome, 0) })
                        }
                        Some(answer) if r.asked(&step.id) => {
                            let outcome = interpret(Ok(Ok(answer.clone())), handlers);
                            Box::pin(async move { (outcome, 0) })
                        }
                        _ => {
                            return Ok(Prepared::Ask {
                                message,
                                schema: schema.clone(),
                            });
                        }
                    },
                }
            }
            Body::ForEach {
                collection,
                item_var,
                max_parallel,
                max_iterations,
                inner,
                inner_on_error,
                inner_timeout,
                timeout,
            } => {
                let text = collection
                    .render(ctx)
                    .map_err(|e| format!("collection: {e}"))?;
                let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&text) else {
                    return Err(format!(
                        "collection must resolve to a JSON array, got {:?}",
                        truncate(&text)
                    ));
                };
                if items.len() > *max_iterations {
                    return Err(format!(
                        "collection size {} exceeds maxIterations {max_iterations}",
                        items.len()
                    ));
                }
                let each = run_for_each(
                    runner,
                    inner,
                    item_var,
                    // One copy of the context for all iterations, `.forEach` set per item
                    // as it starts (arguments are rendered then, not all up front).
                    ctx.clone(),
                    items,
                    ForEachLimits {
                        parallel: *max_parallel,
                        on_error: *inner_on_error,
                        timeout: *inner_timeout,
                        keep_going: step.on_error.action == ErrorAction::Continue,
                    },
                );
                match *timeout {
                    None => Box::pin(each),
                    Some(budget) => Box::pin(async move {
                        tokio::time::timeout(budget, each)
                            .await
                            .unwrap_or_else(|_| {
                                let why = format!(
                                    "timed out after {}",
                                    vmcp_config::format_duration(budget)
                                );
                                (Outcome::Failed(why), 0)
                            })
                    }),
                }
            }
        }))
    }
}

/// How a step ended, for its event.
struct Ended<'a> {
    workflow: &'a str,
    status: &'static str,
    done: usize,
    elapsed: Duration,
    retries: u64,
    error: Option<&'a str>,
    by_condition: bool,
}

impl<'a> Ended<'a> {
    fn new(workflow: &'a str, status: &'static str, done: usize, elapsed: Duration) -> Self {
        Self {
            workflow,
            status,
            done,
            elapsed,
            retries: 0,
            error: None,
            by_condition: false,
        }
    }
}

fn set_step(ctx: &mut Value, id: &str, entry: Value) {
    if let Some(Value::Object(steps)) = ctx.get_mut("steps") {
        steps.insert(id.to_owned(), entry);
    }
}

fn render_args<R: Runner>(call: &ToolCall, ctx: &Value, runner: &R) -> Result<Value, String> {
    let args = call
        .args
        .render(ctx)
        .map_err(|e| format!("arguments: {e}"))?;
    Ok(match runner.input_schema(&call.tool) {
        Some(schema) => coerce::to_schema(args, schema),
        None => args,
    })
}

/// One tool call with the step's retries and time budget (retries included); also how many
/// retries it took (counted outside the timed future, which a timeout drops).
async fn run_tool<R: Runner>(
    runner: &R,
    tool: &str,
    mut args: Value,
    on_error: OnError,
    timeout: Duration,
) -> (Outcome, u64) {
    let retried = AtomicU64::new(0);
    let attempts = async {
        let mut delay = on_error.delay;
        loop {
            // The arguments are copied only when a retry may need them again.
            let attempt = if on_error.action == ErrorAction::Retry {
                args.clone()
            } else {
                std::mem::take(&mut args)
            };
            let error = match runner.call_tool(tool, attempt).await {
                Ok(mut r) if r.get("isError").and_then(Value::as_bool) != Some(true) => {
                    let content = coerce::content_map(&r);
                    return Outcome::Completed {
                        output: coerce::step_output(&mut r, &content),
                        content: Some(content),
                    };
                }
                Ok(r) => coerce::error_message(&r),
                Err(e) => e,
            };
            let done = retried.load(Ordering::Relaxed);
            if on_error.action == ErrorAction::Retry
                && done < on_error.retries
                && !runner.cancelled()
            {
                retried.store(done + 1, Ordering::Relaxed);
                tokio::time::sleep(jitter(delay)).await;
                delay = (delay * 2).min(on_error.delay * 60);
                continue;
            }
            return Outcome::Failed(if done > 0 {
                format!("{error} (after {done} retries)")
            } else {
                error
            });
        }
    };
    let outcome = tokio::time::timeout(timeout, attempts)
        .await
        .unwrap_or_else(|_| {
            Outcome::Failed(format!(
                "timed out after {}",
                vmcp_config::format_duration(timeout)
            ))
        });
    (outcome, retried.load(Ordering::Relaxed))
}

/// Up to a quarter more than `d`, so retries of parallel steps do not stay in lockstep.
fn jitter(d: Duration) -> Duration {
    let mut b = [0u8; 2];
    let r = getrandom::fill(&mut b).map_or(0, |()| u16::from_le_bytes(b));
    d + d.mul_f64(f64::from(r) / f64::from(u16::MAX) / 4.0)
}

async fn run_elicitation<R: Runner>(
    runner: &R,
    message: String,
    schema: Value,
    handlers: (Option<ElicitAction>, Option<ElicitAction>),
    wait: Duration,
) -> (Outcome, u64) {
    let answer = tokio::time::timeout(wait, runner.elicit(message, schema))
        .await
        .map_err(|_| ());
    (interpret(answer, handlers), 0)
}

/// What an elicitation's answer (or its absence: `Err(())` is a timeout) makes of the step.
fn interpret(
    answer: Result<Result<Value, String>, ()>,
    (on_decline, on_cancel): (Option<ElicitAction>, Option<ElicitAction>),
) -> Outcome {
    let reason = match answer {
        Err(_) => "timeout",
        Ok(Err(e)) => return Outcome::Failed(format!("elicitation failed: {e}")),
        Ok(Ok(answer)) => match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or(json!({}));
                if serde_json::to_vec(&content).map_or(0, |v| v.len()) > MAX_ELICITATION_ANSWER
                    || depth(&content) > 10
                {
                    return Outcome::Failed(
                        "the elicitation answer is larger than 1 MiB or nested deeper than 10 levels"
                            .into(),
                    );
                }
                return Outcome::Completed {
                    output: json!({"action": "accept", "content": content}),
                    content: None,
                };
            }
            Some("decline") => "decline",
            Some("cancel") => "cancel",
            other => {
                return Outcome::Failed(format!(
                    "the client answered the elicitation with action {other:?}"
                ));
            }
        },
    };
    let handler = if reason == "decline" {
        on_decline
    } else {
        on_cancel
    };
    match handler {
        Some(ElicitAction::Continue) => Outcome::Completed {
            output: json!({"action": reason}),
            content: None,
        },
        Some(ElicitAction::SkipRemaining) => Outcome::SkipRemaining {
            output: json!({"action": reason, "skipped": true}),
        },
        None | Some(ElicitAction::Abort) => Outcome::Failed(
            match reason {
                "decline" => "elicitation request was declined by user",
                "cancel" => "elicitation request was cancelled by user",
                _ => "elicitation request timed out",
            }
            .into(),
        ),
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

struct ForEachLimits {
    parallel: usize,
    on_error: OnError,
    timeout: Duration,
    /// The step continues on error: failed iterations are recorded, not fatal.
    keep_going: bool,
}

async fn run_for_each<R: Runner>(
    runner: &R,
    inner: &ToolCall,
    item_var: &str,
    mut ctx: Value,
    items: Vec<Value>,
    limits: ForEachLimits,
) -> (Outcome, u64) {
    let count = items.len();
    let mut retries = 0u64;
    let mut results: Vec<Option<Outcome>> = (0..count).map(|_| None).collect();
    let mut next = 0usize;
    let mut running = FuturesUnordered::new();
    let mut failure: Option<(usize, String)> = None;
    loop {
        while failure.is_none() && running.len() < limits.parallel.max(1) && next < count {
            let i = next;
            next += 1;
            ctx["forEach"] = json!({ item_var: &items[i], "index": i });
            let args = render_args(inner, &ctx, runner);
            running.push(async move {
                let outcome = match args {
                    Ok(args) => {
                        run_tool(runner, &inner.tool, args, limits.on_error, limits.timeout).await
                    }
                    Err(e) => (Outcome::Failed(e), 0),
                };
                (i, outcome)
            });
        }
        let Some((i, (outcome, r))) = running.next().await else {
            break;
        };
        retries += r;
        if let Outcome::Failed(e) = &outcome
            && !limits.keep_going
        {
            failure = Some((i, e.clone()));
            break;
        }
        results[i] = Some(outcome);
    }
    if let Some((i, e)) = failure {
        return (
            Outcome::Failed(format!("iteration {i} failed: {e}")),
            retries,
        );
    }
    let (mut completed, mut failed) = (0usize, 0usize);
    let iterations: Vec<Value> = items
        .into_iter()
        .zip(results)
        .enumerate()
        .map(|(index, (item, r))| match r {
            Some(Outcome::Completed { output, .. }) | Some(Outcome::SkipRemaining { output }) => {
                completed += 1;
                json!({"index": index, "item": item, "status": "completed", "output": output})
            }
            Some(Outcome::Failed(e)) => {
                failed += 1;
                json!({"index": index, "item": item, "status": "failed", "output": null, "error": e})
            }
            None => json!({"index": index, "item": item, "status": "cancelled", "output": null}),
        })
        .collect();
    let output =
        json!({"count": count, "completed": completed, "failed": failed, "iterations": iterations});
    (
        Outcome::Completed {
            output,
            content: None,
        },
        retries,
    )
}

fn truncate(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_owned();
    }
    format!("{}...", &s[..s.floor_char_boundary(MAX)])
}

/// Milliseconds since the Unix epoch (rounds span requests, so `Instant` cannot measure them).
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A random workflow run id (32 hex digits).
fn workflow_id() -> String {
    format!(
        "{:032x}",
        u128::from_le_bytes(vmcp_proto::unique::unique_bits())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(
            vmcp_proto::time::rfc3339(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00Z"
        );
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_126_400 + 3661);
        assert_eq!(vmcp_proto::time::rfc3339(t), "2026-12-01T13:01:01Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(vmcp_proto::time::rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
