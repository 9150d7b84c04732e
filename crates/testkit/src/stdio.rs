//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Each line is handled on its own task so a `sleep` does not hold up other requests; one
//! writer task owns stdout so lines never interleave. Logs go to stderr only.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::FixtureOptions;
use crate::protocol::{Fixture, Outcome, crash};

/// What the `garbage` tool writes instead of an answer.
const GARBAGE_LINE: &str = "this is not json";

/// How long answers still in flight may take to be written once stdin has closed.
const DRAIN_ON_EOF: Duration = Duration::from_millis(200);

/// Serves `opts` on stdin/stdout until stdin closes.
///
/// # Errors
///
/// If reading stdin fails.
pub(crate) async fn serve_stdio(opts: &FixtureOptions) -> io::Result<()> {
    let fixture = Arc::new(Fixture::new(opts, false));
    let (lines_out, mut to_write) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(mut line) = to_write.recv().await {
            line.push('\n');
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.flush().await
            };
            if let Err(err) = written.await {
                eprintln!("vmcp-fixture: writing stdout: {err}");
                return;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let fixture = Arc::clone(&fixture);
        let lines_out = lines_out.clone();
        tokio::spawn(async move {
            let line_out = match fixture.handle_bytes(line.as_bytes()).await {
                Outcome::Accepted => return,
                Outcome::Reply(response) | Outcome::ReplyThenForgetSessions(response) => {
                    response.to_string()
                }
                Outcome::ReplyThenLater(response, after, note) => {
                    let later = lines_out.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(after).await;
                        let _ = later.send(note.to_string());
                    });
                    response.to_string()
                }
                Outcome::Garbage => GARBAGE_LINE.to_owned(),
                Outcome::Crash => crash(),
            };
            // Fails only once stdout is gone; then nobody is listening anyway.
            let _ = lines_out.send(line_out);
        });
    }
    // stdin closed: give answers already being computed a moment to go out, not a `sleep`.
    drop(lines_out);
    let _ = tokio::time::timeout(DRAIN_ON_EOF, writer).await;
    Ok(())
}
