//! The `local` transport: runs the command on this machine with `/bin/sh -c`.

use std::process::Stdio;

use tokio::process::Command;

use super::output::{Kept, exchange};
use super::{ExecOutput, OutputCap, SshOptions, TransportError, bounded};

#[derive(Debug)]
pub struct LocalTransport;

impl LocalTransport {
    pub fn connect(options: &SshOptions) -> LocalSession {
        LocalSession {
            command_timeout: options.command_timeout,
            output_cap: OutputCap::default(),
        }
    }
}

#[derive(Debug)]
pub struct LocalSession {
    pub(super) command_timeout: std::time::Duration,
    pub(super) output_cap: OutputCap,
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
            // Past the cap, `child` and `group` are dropped unreaped: the group is killed.
            let (kept, status) = exchange(
                &mut child,
                stdin,
                Kept::new(self.output_cap),
                "this machine",
                "/bin/sh",
            )
            .await?;
            group.reaped();
            Ok(kept.into_output(status.code().and_then(|c| u32::try_from(c).ok())))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn session() -> LocalSession {
        LocalTransport::connect(&SshOptions {
            command_timeout: Duration::from_secs(60),
            ..SshOptions::default()
        })
    }

    /// A command that prints without end (a hostile or broken node) is ended as its stdout
    /// passes the cap, at once, not at the command timeout, and nothing it printed is kept:
    /// before, every byte was kept until the timeout.
    #[test]
    fn a_stdout_past_the_cap_ends_the_command_at_once_and_fails_it() {
        let pid = std::env::temp_dir().join(format!("dnsfix-cap-{}", crate::util::nonce()));
        crate::testing::runtime().block_on(async {
            let mut local = session();
            for command in [
                "head -c 40000000 /dev/zero".to_owned(),
                // A quiet child beside the flood: only the process group's kill ends it
                // (yes dies of SIGPIPE, the shell of kill_on_drop).
                format!(
                    "echo $$ >{0}; sleep 300 & echo $! >>{0}; while :; do yes; done",
                    pid.display()
                ),
            ] {
                let started = Instant::now();
                let err = match local.exec(&command, b"").await {
                    // Not the bytes themselves: a panic message of 40 MB.
                    Ok(out) => panic!("{command}: all {} bytes kept", out.stdout.len()),
                    Err(e) => e,
                };
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "{command}: {:?}",
                    started.elapsed()
                );
                assert_eq!(err.kind(), "output_too_large", "{command}: {err}");
                assert_eq!(
                    err.to_string(),
                    "the command's output on this machine passed 16 MiB, the most dnsfix reads of one command; nothing of it was used"
                );
            }
            // The shell and what it started are ended with it (its process group).
            let pids = std::fs::read_to_string(&pid).expect("the shell's pid");
            let _ = std::fs::remove_file(&pid);
            // Gone, or a zombie its new parent has not reaped yet.
            let ended = |pid: &str| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                    stat.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with('Z'))
                })
            };
            for pid in pids.lines() {
                let gone = (0..100).any(|_| {
                    std::thread::sleep(Duration::from_millis(20));
                    ended(pid)
                });
                assert!(gone, "{pid} (of {pids:?}) still runs");
            }
            // A session may carry another cap.
            local.output_cap = OutputCap {
                stdout: 10,
                stderr: 10,
            };
            let err = local.exec("echo 0123456789", b"").await.expect_err("11 bytes");
            assert!(err.to_string().contains("passed 10 bytes"), "{err}");
            let out = local.exec("printf 0123456789", b"").await.expect("10 bytes");
            assert_eq!(out.stdout, b"0123456789");
        });
    }

    /// A stderr past its cap is cut, its first part kept with a line saying so: the
    /// command's stdout and exit status are still whole and true.
    #[test]
    fn a_stderr_past_the_cap_is_cut_and_the_command_still_answers() {
        crate::testing::runtime().block_on(async {
            let out = session()
                .exec(
                    "head -c 5000000 /dev/zero | tr '\\0' e >&2; echo answer; exit 3",
                    b"",
                )
                .await
                .expect("answers");
            assert_eq!(out.stdout, b"answer\n");
            assert_eq!(out.exit_status, Some(3));
            let said = "\n[dnsfix kept the first 1 MiB of this stderr and dropped the rest]\n";
            let (kept, line) = out.stderr.split_at(1024 * 1024);
            assert!(kept.iter().all(|&b| b == b'e'));
            assert_eq!(String::from_utf8_lossy(line), said);
        });
    }

    /// The script goes in on stdin while its output comes back: a script that prints much
    /// before it reads the rest of a long stdin does not wait for ever.
    #[test]
    fn stdin_and_output_flow_at_once() {
        crate::testing::runtime().block_on(async {
            let stdin = vec![b'x'; 1024 * 1024];
            let out = session()
                .exec("head -c 1000000 /dev/zero; wc -c", &stdin)
                .await
                .expect("answers");
            assert_eq!(out.stdout.len(), 1_000_000 + "1048576\n".len());
        });
    }
}
