//! How much of a command's output a session keeps: [`OutputCap`], enforced by every
//! backend while the bytes come in, so that a node or a control plane that answers without
//! end (hostile, or broken: a loop printing, a file that keeps growing) cannot grow
//! dnsfix's memory without bound, one such host per fork. This module reads nothing
//! itself but a local child's pipes: the backends hand it what they read.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::{ExecOutput, TransportError};

const MIB: usize = 1024 * 1024;

/// The most a session keeps of one command's stdout and of its stderr.
///
/// Stdout past its cap ends the command (the channel closed, the child's process group
/// killed) and fails it with [`TransportError::OutputTooLarge`]: stdout is the answer
/// (framed facts, a script's records, kubectl's JSON), and a cut answer must never pass for
/// a whole one. Stderr past its cap is cut instead, its first part kept with a line saying
/// so, the rest read and dropped: stderr is only ever shown or searched for sudo's and
/// kubectl's own words, which come first, and a command that succeeded with a noisy stderr
/// (kubectl's warnings, a shell tracing) still has a whole stdout and a true exit status.
/// The command timeout still bounds how long such a command may talk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCap {
    pub stdout: usize,
    pub stderr: usize,
}

impl OutputCap {
    /// A node's commands: the gather (the largest answer), the apply and rollback scripts,
    /// verify's probes. The gather reads each file up to `facts::raw::FILE_CAP` (1 MiB)
    /// and no more; the only ones that come near it are the kernel's tables it reads
    /// (`/proc/net/udp` and `udp6` on a node with thousands of sockets, `/proc/locks`) and
    /// a process's cmdline: some 4 MiB in all. Everything else it reads (resolver, kubelet,
    /// sysctl.d, modprobe.d, CNI and firewalld files, the playbooks' extra paths) is some
    /// KiB a file, a few hundred KiB a node (14 KB on a plain Debian machine). The apply
    /// and rollback scripts print a record per step and at most 2000 bytes of a unit's
    /// journal per handler (common.sh). 16 MiB is four times the most a node sends, and 50
    /// forks (the default) hold 800 MiB at worst (the kept bytes never grow past the cap:
    /// `keep_within`).
    pub const NODE: OutputCap = OutputCap {
        stdout: 16 * MIB,
        stderr: MIB,
    };

    /// kubectl's answers (`cluster::Kubectl`), one session per run or a few at once (apply
    /// looks at most 4 nodes at once): the DNS pods of the whole cluster, NodeLocal
    /// DNSCache's one per node, printed whole as indented JSON (a pod some 8-16 KiB). At
    /// Kubernetes' largest supported cluster, 5,000 nodes (kubernetes/website
    /// content/en/docs/setup/best-practices/cluster-large.md), that is under 90 MiB, and
    /// beside it the DNS ConfigMaps (at most 1 MiB each: content/en/docs/concepts/
    /// configuration/configmap.md), the nodes as a table (some 100 bytes a node), the DNS
    /// Services and at most 50 previous logs of 20 lines. 256 MiB is well above that.
    pub const KUBECTL: OutputCap = OutputCap {
        stdout: 256 * MIB,
        stderr: MIB,
    };
}

impl Default for OutputCap {
    fn default() -> Self {
        OutputCap::NODE
    }
}

/// `bytes` as a message says it: "16 MiB", or a number of bytes.
pub fn size(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Appends `data` (which fits: `buf.len() + data.len() <= cap`) to `buf`, its capacity
/// grown by doubling but never past `cap`: a Vec's own doubling would hold up to twice the
/// cap, at a size the node chooses by the chunks it sends.
fn keep_within(buf: &mut Vec<u8>, data: &[u8], cap: usize) {
    let needed = buf.len() + data.len();
    if needed > buf.capacity() {
        let grown = buf
            .capacity()
            .saturating_mul(2)
            .max(needed)
            .min(cap.max(needed));
        buf.reserve_exact(grown - buf.len());
    }
    buf.extend_from_slice(data);
}

/// What a command printed so far, within its [`OutputCap`].
#[derive(Debug)]
pub(crate) struct Kept {
    cap: OutputCap,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    stderr_cut: bool,
}

impl Kept {
    pub(crate) fn new(cap: OutputCap) -> Kept {
        Kept {
            cap,
            stdout: Vec::new(),
            stderr: Vec::new(),
            stderr_cut: false,
        }
    }

    /// Keeps `data` of stdout; false once stdout passed its cap (nothing more is kept).
    #[must_use]
    pub(crate) fn stdout(&mut self, data: &[u8]) -> bool {
        if data.len() > self.cap.stdout.saturating_sub(self.stdout.len()) {
            self.stdout = Vec::new();
            return false;
        }
        keep_within(&mut self.stdout, data, self.cap.stdout);
        true
    }

    /// Keeps `data` of stderr up to its cap; the rest is dropped.
    pub(crate) fn stderr(&mut self, data: &[u8]) {
        let room = self.cap.stderr.saturating_sub(self.stderr.len());
        if data.len() > room {
            self.stderr_cut = true;
        }
        keep_within(
            &mut self.stderr,
            &data[..data.len().min(room)],
            self.cap.stderr,
        );
    }

    /// The error for a stdout that passed its cap on `address`.
    pub(crate) fn too_large(&self, address: &str) -> TransportError {
        TransportError::OutputTooLarge {
            address: address.to_owned(),
            cap: size(self.cap.stdout),
        }
    }

    pub(crate) fn into_output(mut self, exit_status: Option<u32>) -> ExecOutput {
        if self.stderr_cut {
            self.stderr.extend_from_slice(
                format!(
                    "\n[dnsfix kept the first {} of this stderr and dropped the rest]\n",
                    size(self.cap.stderr)
                )
                .as_bytes(),
            );
        }
        ExecOutput {
            stdout: self.stdout,
            stderr: self.stderr,
            exit_status,
        }
    }
}

/// Feeds `stdin` to a local `child` (`what`, for messages) while reading its output within
/// `kept`'s cap, then waits for it. An `Err` as soon as stdout passes its cap: the caller
/// then drops the child unreaped, which kills its process group (`children::Group`).
pub(crate) async fn exchange(
    child: &mut tokio::process::Child,
    stdin: &[u8],
    kept: Kept,
    address: &str,
    what: &str,
) -> Result<(Kept, std::process::ExitStatus), TransportError> {
    use tokio::io::AsyncWriteExt;
    let input = child.stdin.take();
    let writing = async move {
        if let Some(mut input) = input {
            // A script that exits early closes its stdin; that is not an error here.
            let _ = input.write_all(stdin).await;
            let _ = input.shutdown().await;
        }
    };
    let reading = read_pipes(child.stdout.take(), child.stderr.take(), kept, address);
    tokio::pin!(reading);
    let kept = tokio::select! {
        biased;
        // The output ended, or passed its cap, before the child took all of its stdin.
        kept = &mut reading => kept,
        () = writing => reading.await,
    }?;
    let status = child
        .wait()
        .await
        .map_err(|e| TransportError::Other(format!("waiting for {what}: {e}")))?;
    Ok((kept, status))
}

/// Reads a local child's `stdout` and `stderr` to their ends, side by side (a child that
/// fills one pipe while nothing reads it would wait for ever), within `kept`'s cap; an
/// `Err` as soon as stdout passes it.
async fn read_pipes(
    stdout: Option<impl AsyncRead + Unpin>,
    stderr: Option<impl AsyncRead + Unpin>,
    mut kept: Kept,
    address: &str,
) -> Result<Kept, TransportError> {
    let failed = |e: std::io::Error| TransportError::Other(format!("reading the output: {e}"));
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let (mut stdout, mut stderr) = (stdout, stderr);
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            read = async { Some(stdout.as_mut()?.read(&mut out_buf).await) }, if stdout.is_some() => {
                match read {
                    Some(Ok(0)) | None => stdout = None,
                    Some(Ok(n)) if !kept.stdout(&out_buf[..n]) => return Err(kept.too_large(address)),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(failed(e)),
                }
            }
            read = async { Some(stderr.as_mut()?.read(&mut err_buf).await) }, if stderr.is_some() => {
                match read {
                    Some(Ok(0)) | None => stderr = None,
                    Some(Ok(n)) => kept.stderr(&err_buf[..n]),
                    Some(Err(e)) => return Err(failed(e)),
                }
            }
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept bytes' buffer never grows past the cap, whatever chunks the node sends:
    /// a first chunk of 32767 bytes and then 32 KiB ones, up to one byte short of the cap,
    /// held 32 MiB under a 16 MiB cap by the Vec's own doubling.
    #[test]
    fn the_kept_bytes_never_take_more_memory_than_the_cap() {
        let cap = OutputCap::NODE;
        let mut kept = Kept::new(cap);
        assert!(kept.stdout(&[0; 32767]));
        while kept.stdout.len() + 32768 < cap.stdout {
            assert!(kept.stdout(&[0; 32768]));
        }
        assert!(kept.stdout(&vec![0; cap.stdout - 1 - kept.stdout.len()]));
        assert_eq!(kept.stdout.len(), cap.stdout - 1);
        assert!(
            kept.stdout.capacity() <= cap.stdout,
            "{} bytes held",
            kept.stdout.capacity()
        );
        for _ in 0..100 {
            kept.stderr(&[0; 4095]);
        }
        kept.stderr(&[0; MIB]);
        assert!(
            kept.stderr.capacity() <= cap.stderr,
            "{}",
            kept.stderr.capacity()
        );
    }

    #[test]
    fn stdout_past_its_cap_keeps_nothing_and_stderr_is_cut_with_a_word() {
        let mut kept = Kept::new(OutputCap {
            stdout: 4,
            stderr: 3,
        });
        assert!(kept.stdout(b"abcd"));
        kept.stderr(b"xy");
        kept.stderr(b"zzzz");
        let output = kept.into_output(Some(0));
        assert_eq!(output.stdout, b"abcd");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "xyz\n[dnsfix kept the first 3 bytes of this stderr and dropped the rest]\n"
        );
        let mut kept = Kept::new(OutputCap::NODE);
        assert!(kept.stdout(&[b'a'; 10]));
        assert!(!kept.stdout(&vec![b'a'; 16 * MIB]));
        assert!(kept.stdout.is_empty());
        assert_eq!(
            kept.too_large("root@10.0.0.5:22").to_string(),
            "the command's output on root@10.0.0.5:22 passed 16 MiB, the most dnsfix reads of one command; nothing of it was used"
        );
    }
}
