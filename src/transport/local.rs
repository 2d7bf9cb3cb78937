//! The `local` transport: runs the command on this machine with `/bin/sh -c`.

use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::{ExecOutput, SshOptions, TransportError, bounded};

#[derive(Debug)]
pub struct LocalTransport;

impl LocalTransport {
    pub fn connect(options: &SshOptions) -> LocalSession {
        LocalSession {
            command_timeout: options.command_timeout,
        }
    }
}

#[derive(Debug)]
pub struct LocalSession {
    pub(super) command_timeout: std::time::Duration,
}

impl LocalSession {
    pub async fn exec(
        &mut self,
        command: &str,
        stdin: &[u8],
    ) -> Result<ExecOutput, TransportError> {
        bounded(self.command_timeout, "this machine", async {
            let mut sh = Command::new("/bin/sh");
            sh.arg("-c")
                .arg(command)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                // Out of the terminal's Ctrl-C, as the ssh of the openssh transport; so
                // listed, to be ended on every way dnsfix ends (super::children).
                .process_group(0)
                .kill_on_drop(true);
            let (mut child, group) =
                super::children::spawn(move || sh.spawn(), tokio::process::Child::id)
                    .map_err(|e| TransportError::Other(format!("cannot run /bin/sh: {e}")))?;
            if let Some(mut input) = child.stdin.take() {
                // A script that exits early closes its stdin; that is not an error here.
                let _ = input.write_all(stdin).await;
            }
            let out = child
                .wait_with_output()
                .await
                .map_err(|e| TransportError::Other(format!("waiting for /bin/sh: {e}")))?;
            group.reaped();
            Ok(ExecOutput {
                stdout: out.stdout,
                stderr: out.stderr,
                exit_status: out.status.code().and_then(|c| u32::try_from(c).ok()),
            })
        })
        .await
    }
}
