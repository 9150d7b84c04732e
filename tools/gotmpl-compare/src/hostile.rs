//! Part 2: hostile inputs. Each (input, engine) runs in a child process (this binary's `one`
//! mode, under `ulimit -v` 4 GiB) that parses and renders on a 2 MiB-stack thread, tokio's default
//! for worker threads. The parent gives up after 2 s (`HOSTILE_TIMEOUT_SECS` to change). A stack
//! overflow or failed allocation aborts the child, not the harness.
use std::{
    fmt::Write as _,
    fs,
    io::{Read, Write},
    os::unix::process::ExitStatusExt,
    path::Path,
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::shim::Engine;

fn timeout() -> Duration {
    let secs = std::env::var("HOSTILE_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok());
    Duration::from_secs(secs.unwrap_or(2))
}
const STACK: usize = 2 * 1024 * 1024;

/// The fuzz target's input: the template, then optionally a NUL byte and the JSON data.
fn split(input: &[u8]) -> (&[u8], Value) {
    match input.iter().position(|b| *b == 0) {
        Some(i) => (
            &input[..i],
            serde_json::from_slice(&input[i + 1..]).unwrap_or(Value::Null),
        ),
        None => (input, default_data()),
    }
}

/// fuzz/fuzz_targets/template.rs's default data.
fn default_data() -> Value {
    json!({
        "params": {"env": "prod", "count": 3, "ratio": 0.5, "tags": ["a", "b"], "loud": true,
            "nested": {"k": null, "list": [1, {"x": "y"}]}},
        "steps": {"fetch": {"status": "completed", "output": {"text": "hi", "items": [1, 2, 3]}},
            "ask": {"action": "accept", "content": {"ok": true}}},
        "workflow": {"id": "wf-1", "step_count": 2}
    })
}

/// Child mode: one input on stdin; prints `ok <bytes>`, `err <message>` or `panic <message>`.
pub fn one(engine: Engine) {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).expect("stdin");
    std::panic::set_hook(Box::new(|_| {}));
    let line = thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let (src, data) = split(&input);
            let Ok(src) = std::str::from_utf8(src) else {
                return "err template is not UTF-8".to_owned();
            };
            let r = std::panic::catch_unwind(|| match engine {
                Engine::Ours => vmcp_template::Template::parse(src)
                    .map_err(|e| format!("parse: {e}"))
                    .and_then(|t| t.render(&data).map_err(|e| e.to_string())),
                Engine::Gotmpl => crate::gt::parse(src)
                    .map_err(|e| format!("parse: {e}"))
                    .and_then(|t| {
                        t.execute_to_string(&crate::gt::to_value(&data))
                            .map_err(|e| e.to_string())
                    }),
            });
            match r {
                Ok(Ok(out)) => format!("ok {}", out.len()),
                Ok(Err(e)) => format!("err {}", e.chars().take(120).collect::<String>()),
                Err(p) => {
                    let m = p
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    format!("panic {m}")
                }
            }
        })
        .expect("spawn")
        .join()
        .unwrap_or_else(|_| "panic (thread)".into());
    println!("{}", line.replace('\n', "\\n"));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Ok,
    Error,
    Panic,
    StackOverflow,
    OutOfMemory,
    Hang,
    Crash,
}

struct Run {
    kind: Kind,
    detail: String,
    ms: u128,
}

fn run_child(engine: Engine, input: &[u8]) -> Run {
    let exe = std::env::current_exe().expect("current_exe");
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -v 4194304 && exec \"$0\" one \"$1\""])
        .arg(exe)
        .arg(format!("{engine:?}").to_lowercase())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let limit = timeout();
    let start = Instant::now();
    let _ = child.stdin.take().expect("stdin").write_all(input);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(2));
    };
    let ms = start.elapsed().as_millis();
    let mut out = String::new();
    let mut err = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    let out = out.trim().to_owned();
    let (kind, detail) = match status {
        None => (Kind::Hang, format!("killed after {} s", limit.as_secs())),
        Some(s) if s.success() => match out.split_once(' ').unwrap_or((&out, "")) {
            ("ok", n) => (Kind::Ok, format!("{n} bytes")),
            ("err", m) => (Kind::Error, m.to_owned()),
            (_, m) => (Kind::Panic, m.to_owned()),
        },
        Some(_) if err.contains("overflowed its stack") => (Kind::StackOverflow, String::new()),
        Some(_) if err.contains("memory allocation") => (
            Kind::OutOfMemory,
            err.lines().next().unwrap_or("").to_owned(),
        ),
        Some(s) => (
            Kind::Crash,
            format!(
                "{s:?} signal {:?}: {}",
                s.signal(),
                err.lines().last().unwrap_or("")
            ),
        ),
    };
    Run { kind, detail, ms }
}

/// Hand-made inputs: deep nesting, recursion, and the quadratic or exponential growth that a
/// config author (or a fuzzer) can write.
fn hand_made() -> Vec<(String, Vec<u8>)> {
    let nested = |open: &str, mid: &str, close: &str, n: usize| {
        format!("{}{mid}{}", open.repeat(n), close.repeat(n)).into_bytes()
    };
    let mut fanout = String::from(r#"{{define "a0"}}xxxxxxxxxx{{end}}"#);
    for i in 1..=30 {
        let p = i - 1;
        let _ = write!(
            fanout,
            r#"{{{{define "a{i}"}}}}{{{{template "a{p}"}}}}{{{{template "a{p}"}}}}{{{{end}}}}"#
        );
    }
    fanout.push_str(r#"{{template "a30"}}"#);
    let mut chain = String::new();
    for i in 0..10_000 {
        let _ = write!(
            chain,
            r#"{{{{define "t{i}"}}}}{{{{template "t{}"}}}}{{{{end}}}}"#,
            i + 1
        );
    }
    chain.push_str(r#"{{define "t10000"}}end{{end}}{{template "t0"}}"#);
    vec![
        (
            "if nested 1,000".into(),
            nested("{{if true}}", "x", "{{end}}", 1_000),
        ),
        (
            "if nested 10,000".into(),
            nested("{{if true}}", "x", "{{end}}", 10_000),
        ),
        (
            "if nested 100,000".into(),
            nested("{{if true}}", "x", "{{end}}", 100_000),
        ),
        (
            "with nested 10,000".into(),
            nested("{{with .}}", "x", "{{end}}", 10_000),
        ),
        (
            "range nested 10,000".into(),
            nested("{{range 1}}", "x", "{{end}}", 10_000),
        ),
        ("else-if chain 10,000".into(), {
            let mut s = "{{if false}}".to_owned();
            s.push_str(&"{{else if false}}".repeat(10_000));
            s.push_str("x{{end}}");
            s.into_bytes()
        }),
        (
            "parens nested 10,000".into(),
            format!("{{{{{}1{}}}}}", "(".repeat(10_000), ")".repeat(10_000)).into_bytes(),
        ),
        (
            "pipeline of 10,000 print".into(),
            format!("{{{{1{}}}}}", " | print".repeat(10_000)).into_bytes(),
        ),
        (
            "template recursion".into(),
            br#"{{define "t"}}{{template "t" .}}{{end}}{{template "t" .}}"#.to_vec(),
        ),
        ("template chain 10,000 deep".into(), chain.into_bytes()),
        (
            "template fan-out 2^30 x 10 bytes".into(),
            fanout.into_bytes(),
        ),
        (
            "printf %.884444f".into(),
            br#"{{printf "%.884444f" 1.0}}"#.to_vec(),
        ),
        (
            "printf %999999999d".into(),
            br#"{{printf "%999999999d" 1}}"#.to_vec(),
        ),
        (
            "printf %*d 1e9".into(),
            br#"{{printf "%*d" 1000000000 1}}"#.to_vec(),
        ),
        (
            "range 1e9 empty".into(),
            b"{{range 1000000000}}{{end}}".to_vec(),
        ),
        (
            "range 1e5 x range 1e5, 10 bytes each".into(),
            b"{{range 100000}}{{range 100000}}xxxxxxxxxx{{end}}{{end}}".to_vec(),
        ),
        (
            "string doubling x64".into(),
            br#"{{$x := "xxxxxxxxxx"}}{{range 64}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}"#
                .to_vec(),
        ),
        (
            "append one byte x200,000 (quadratic)".into(),
            br#"{{$x := "x"}}{{range 200000}}{{$x = print $x "x"}}{{end}}{{len $x}}"#.to_vec(),
        ),
        (
            "index 1e20".into(),
            b"{{index .params.tags 99999999999999999999}}".to_vec(),
        ),
        (
            "100,000 variables".into(),
            "{{$x := 1}}".repeat(100_000).into_bytes(),
        ),
    ]
}

fn corpus(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .filter_map(|e| {
                    let name = format!("{}/{}", dir.display(), e.file_name().to_string_lossy());
                    fs::read(e.path()).ok().map(|b| (name, b))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn run(dirs: &[String]) -> String {
    let mut sets = Vec::new();
    for d in dirs {
        sets.push((d.clone(), corpus(Path::new(d))));
    }
    sets.push(("hand-made".into(), hand_made()));
    let mut out = String::new();
    for (set, inputs) in &sets {
        let _ = writeln!(out, "== {set}: {} inputs", inputs.len());
        let mut counts = [Engine::Ours, Engine::Gotmpl].map(|e| (e, [0usize; 7]));
        let mut notable = Vec::new();
        for (name, input) in inputs {
            let runs = [Engine::Ours, Engine::Gotmpl].map(|e| run_child(e, input));
            for (i, r) in runs.iter().enumerate() {
                counts[i].1[r.kind as usize] += 1;
            }
            if set == "hand-made" || runs.iter().any(|r| r.kind > Kind::Error || r.ms > 500) {
                notable.push(format!(
                    "  {name}\n      ours:   {:?} {} ms {}\n      gotmpl: {:?} {} ms {}",
                    runs[0].kind,
                    runs[0].ms,
                    runs[0].detail,
                    runs[1].kind,
                    runs[1].ms,
                    runs[1].detail
                ));
            }
        }
        for (e, c) in counts {
            let _ = writeln!(
                out,
                "  {e:?}: ok {} error {} panic {} stack-overflow {} out-of-memory {} hang {} crash {}",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6]
            );
        }
        for n in notable {
            let _ = writeln!(out, "{n}");
        }
    }
    out
}
