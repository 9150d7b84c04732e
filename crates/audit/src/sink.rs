//! The writer: a thread that appends queued lines to the audit file (or standard output), so a
//! slow or full disk never stalls a serving thread. It drains the queue on a short tick instead of
//! being woken per line: a wake-up per request cost the serving threads more than the line itself. A failed write is retried (the lines are
//! kept) with a growing pause, reported once in the log when it starts and when it ends, and
//! shown in `/status`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::{self, OwnedPermit, Sender, error::TryRecvError};

use crate::Destination;

/// Lines written together at most (bytes).
const BATCH: usize = 256 * 1024;
/// How often the writer drains the queue: lines reach the file at most this late.
const TICK: Duration = Duration::from_millis(20);
/// Pauses between retries of a failed write.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
struct State {
    sent: AtomicU64,
    written: AtomicU64,
    dropped: AtomicU64,
    refused: AtomicU64,
    write_failures: AtomicU64,
    failing: AtomicBool,
    last_error: Mutex<Option<String>>,
}

/// The queue and the writer thread's state.
#[derive(Debug)]
pub(crate) struct Sink {
    tx: Sender<Vec<u8>>,
    state: Arc<State>,
    destination: String,
}

enum Out {
    Stdout(io::Stdout),
    File(PathBuf, Option<File>),
}

impl Out {
    fn open(path: &PathBuf) -> io::Result<File> {
        let mut o = OpenOptions::new();
        o.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        o.open(path)
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Out::Stdout(s) => {
                let mut lock = s.lock();
                lock.write_all(bytes)?;
                lock.flush()
            }
            Out::File(path, file) => {
                if file.is_none() {
                    *file = Some(Self::open(path)?);
                }
                let result = file.as_mut().map_or(Ok(()), |f| f.write_all(bytes));
                if result.is_err() {
                    // Reopened on the next try: the file may have been rotated or remounted.
                    *file = None;
                }
                result
            }
        }
    }
}

impl Sink {
    pub(crate) fn start(destination: &Destination, capacity: usize) -> io::Result<Self> {
        let (out, name) = match destination {
            Destination::Stdout => (Out::Stdout(io::stdout()), "stdout".to_string()),
            Destination::File(path) => {
                let file = Out::open(path)?;
                warn_if_readable(path, &file);
                (
                    Out::File(path.clone(), Some(file)),
                    path.display().to_string(),
                )
            }
        };
        let (tx, rx) = mpsc::channel(capacity);
        let state = Arc::new(State::default());
        let writer_state = state.clone();
        std::thread::Builder::new()
            .name("vmcp-audit".into())
            .spawn(move || write_loop(rx, out, &writer_state))?;
        Ok(Self {
            tx,
            state,
            destination: name,
        })
    }

    pub(crate) fn try_reserve(&self) -> Option<OwnedPermit<Vec<u8>>> {
        self.tx.clone().try_reserve_owned().ok()
    }

    pub(crate) async fn reserve(&self, within: Duration) -> Option<OwnedPermit<Vec<u8>>> {
        tokio::time::timeout(within, self.tx.clone().reserve_owned())
            .await
            .ok()?
            .ok()
    }

    pub(crate) fn send(&self, permit: OwnedPermit<Vec<u8>>, line: Vec<u8>) {
        self.state.sent.fetch_add(1, Ordering::Relaxed);
        permit.send(line);
    }

    /// The error the writer is stuck on, if it is.
    pub(crate) fn failing(&self) -> Option<String> {
        if !self.state.failing.load(Ordering::Acquire) {
            return None;
        }
        let last = self.state.last_error.lock().ok()?.clone();
        Some(last.unwrap_or_else(|| "the audit log cannot be written".into()))
    }

    pub(crate) fn count_dropped(&self) {
        let n = self.state.dropped.fetch_add(1, Ordering::Relaxed);
        if n.is_power_of_two() {
            tracing::error!(
                dropped = n + 1,
                "audit queue full: audit lines are being dropped (audit.onWriteFailure: open)"
            );
        }
    }

    pub(crate) fn count_refused(&self) {
        self.state.refused.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn status(&self, fail_closed: bool) -> Value {
        let s = &self.state;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let sent = get(&s.sent);
        let written = get(&s.written);
        json!({
            "destination": self.destination,
            "healthy": !s.failing.load(Ordering::Acquire),
            "onWriteFailure": if fail_closed { "closed" } else { "open" },
            "written": written,
            "pending": sent.saturating_sub(written),
            "dropped": get(&s.dropped),
            "refusedRequests": get(&s.refused),
            "writeFailures": get(&s.write_failures),
            "lastError": s.last_error.lock().ok().and_then(|e| e.clone()),
        })
    }

    pub(crate) async fn flush(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let s = &self.state;
            if s.written.load(Ordering::Acquire) >= s.sent.load(Ordering::Acquire) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

fn write_loop(mut rx: mpsc::Receiver<Vec<u8>>, mut out: Out, state: &State) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut open = true;
    while open {
        std::thread::sleep(TICK);
        loop {
            batch.clear();
            let mut lines = 0u64;
            while batch.len() < BATCH {
                match rx.try_recv() {
                    Ok(l) => {
                        batch.extend_from_slice(&l);
                        lines += 1;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            if lines == 0 {
                break;
            }
            write_until_done(&mut out, &batch, state);
            state.written.fetch_add(lines, Ordering::Release);
        }
    }
}

/// Writes `batch`, retrying until it is written: lines are never given up once queued.
fn write_until_done(out: &mut Out, batch: &[u8], state: &State) {
    let mut pause = RETRY_FIRST;
    let mut partial = false;
    loop {
        // After a failed write part of a line may be on disk: end it so the next line parses.
        let result = if partial {
            out.write(b"\n").and_then(|()| out.write(batch))
        } else {
            out.write(batch)
        };
        match result {
            Ok(()) => {
                if state.failing.swap(false, Ordering::AcqRel) {
                    tracing::warn!("audit log writable again");
                }
                return;
            }
            Err(e) => {
                partial = true;
                state.write_failures.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut last) = state.last_error.lock() {
                    *last = Some(e.to_string());
                }
                if !state.failing.swap(true, Ordering::AcqRel) {
                    tracing::error!(error = %e, "cannot write the audit log; retrying");
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(RETRY_MAX);
            }
        }
    }
}

/// An existing audit file others can read is reported: ToolHive's 0600 applies only when it
/// creates the file, and so does ours, but an operator should know.
fn warn_if_readable(path: &std::path::Path, file: &File) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = file.metadata()
            && meta.is_file()
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(
                path = %path.display(),
                mode = format!("{:o}", meta.permissions().mode() & 0o777),
                "the audit log is readable by other users; chmod 600 it"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, file);
}
