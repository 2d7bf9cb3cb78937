//! Sets or removes one kubelet flag in a MicroK8s arguments file
//! (`/var/snap/microk8s/<revision>/args/kubelet`), read as kubelite reads it (see
//! [`crate::facts::microk8s`]): a flag per line, `--flag=value` or `--flag value`.
//!
//! Rules where there was a choice:
//! - a flag is edited only where it has its line to itself (`--flag=value` or
//!   `--flag value`); one that shares a line with other words is refused with its line;
//! - setting rewrites the line of the last occurrence as `--flag=value` (the line's ending
//!   kept; always that spelling, `-`-separated, which MicroK8s's own greps and seds look
//!   for) and removes the lines of the earlier ones, so exactly one occurrence is left
//!   (MicroK8s's own readers take the first, the kubelet the last);
//! - a missing flag is appended as a line of its own (MicroK8s puts its own at line 1;
//!   where it goes does not matter to kubelite);
//! - comments are never touched, even one that mentions the flag;
//! - values kubelite would change (quotes, which it removes; spaces, at which it splits;
//!   `$`, which it expands) and backslashes and control characters are refused.
//!
//! The result is proven with the facts parser: its flags must equal the old ones with the
//! target's occurrences gone and (when setting) one with exactly the new value.

use crate::facts::kubelet_flags::{Flag, normalize_name, parse_args};
use crate::facts::microk8s::{self, ArgsLine};

use super::{Edit, line_ending};

#[derive(Debug, thiserror::Error)]
pub enum ArgsEditError {
    #[error("use `{flag}` as a flag name: only letters, digits, `-` and `_`")]
    InvalidFlag { flag: String },
    #[error("write {value:?} as the value of --{flag}: {reason}")]
    InvalidValue {
        flag: String,
        value: String,
        reason: &'static str,
    },
    #[error(
        "edit --{flag} at line {line}: it is not on a line of its own (other words share the line, or its value is on the next); edit this by hand"
    )]
    SharedLine { flag: String, line: usize },
    #[error("prove the edit of --{flag}: {reason}")]
    Verify { flag: String, reason: String },
}

/// Sets `--flag=value`.
pub fn set_flag(text: &str, flag: &str, value: &str) -> Result<Edit, ArgsEditError> {
    let name = check_flag(flag)?;
    check_value(flag, value)?;
    edit(text, &name, Some(value))
}

/// Removes every occurrence of `--flag`.
pub fn remove_flag(text: &str, flag: &str) -> Result<Edit, ArgsEditError> {
    let name = check_flag(flag)?;
    edit(text, &name, None)
}

fn check_flag(flag: &str) -> Result<String, ArgsEditError> {
    let bare = flag.trim_start_matches('-');
    if bare.is_empty()
        || !bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ArgsEditError::InvalidFlag {
            flag: flag.to_owned(),
        });
    }
    Ok(normalize_name(bare))
}

/// Why `value` cannot be written as a flag's value in an arguments file, if it cannot.
pub(crate) fn check_value(flag: &str, value: &str) -> Result<(), ArgsEditError> {
    let reason = if value.is_empty() {
        Some("it is empty")
    } else if value.contains(['"', '\'']) {
        Some("kubelite removes every quote from the file")
    } else if value.contains('$') {
        Some("kubelite expands `$` as a variable")
    } else if value.contains('\\') {
        Some("backslashes are not written")
    } else if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("kubelite splits words at spaces and lines at newlines")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ArgsEditError::InvalidValue {
            flag: flag.to_owned(),
            value: value.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The flags of one line alone, when the line holds exactly one flag named `name`.
fn own_line(line: &ArgsLine, name: &str) -> Option<Flag> {
    let words: Vec<(String, usize)> = line
        .words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| (w.clone(), line.number))
        .collect();
    let count = words.len();
    let mut flags = parse_args(words);
    let flag = flags.pop()?;
    let whole = match &flag.value {
        Some(_) => count == 1 || count == 2,
        None => count == 1,
    };
    (flags.is_empty() && flag.name == name && whole).then_some(flag)
}

fn edit(text: &str, name: &str, value: Option<&str>) -> Result<Edit, ArgsEditError> {
    let old_flags = microk8s::flags(text, "");
    // The flag's lines, by the whole-file parse: each must read the same on its own (a
    // value on the next line would be left behind as a stray word).
    let lines = microk8s::lines(text);
    let mut at: Vec<usize> = Vec::new();
    for flag in old_flags.iter().filter(|f| f.name == name) {
        match own_line(&lines[flag.line - 1], name) {
            Some(alone) if alone.value == flag.value && !at.contains(&flag.line) => {
                at.push(flag.line);
            }
            _ => {
                return Err(ArgsEditError::SharedLine {
                    flag: name.to_owned(),
                    line: flag.line,
                });
            }
        }
    }
    let mut pieces: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    if let (Some(value), Some(&last)) = (value, at.last()) {
        let piece = &pieces[last - 1];
        let body = piece.trim_end_matches(['\r', '\n']);
        let ending = &piece[body.len()..];
        pieces[last - 1] = format!("--{name}={value}{ending}");
    }
    let drop: Vec<usize> = match value {
        Some(_) => at
            .iter()
            .copied()
            .take(at.len().saturating_sub(1))
            .collect(),
        None => at.clone(),
    };
    for number in drop.iter().rev() {
        pieces.remove(number - 1);
    }
    let mut out: String = pieces.concat();
    if let (Some(value), true) = (value, at.is_empty()) {
        let ending = line_ending(text);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(ending);
        }
        out.push_str(&format!("--{name}={value}{ending}"));
    }
    prove(&old_flags, &out, name, value)?;
    Ok(Edit::between(text, out))
}

fn prove(old: &[Flag], text: &str, name: &str, value: Option<&str>) -> Result<(), ArgsEditError> {
    let fail = |reason: String| ArgsEditError::Verify {
        flag: name.to_owned(),
        reason,
    };
    let others = |flags: &[Flag]| -> Vec<(String, Option<String>)> {
        flags
            .iter()
            .filter(|f| f.name != name)
            .map(|f| (f.name.clone(), f.value.clone()))
            .collect()
    };
    let new = microk8s::flags(text, "");
    if others(old) != others(&new) {
        return Err(fail("other flags would change".into()));
    }
    let target: Vec<Option<&str>> = new
        .iter()
        .filter(|f| f.name == name)
        .map(|f| f.value.as_deref())
        .collect();
    let want: Vec<Option<&str>> = value.map(Some).into_iter().collect();
    if target != want {
        return Err(fail(format!("the file would read {target:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// microk8s-resources/default-args/kubelet (canonical/microk8s d099c907), the first
    /// lines, with the line the wrapper inserts at line 1 (utils.sh refresh_opt_in_local_config).
    const ARGS: &str = "--resolv-conf=/run/systemd/resolve/resolv.conf\n\
        --kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n\
        --cert-dir=${SNAP_DATA}/certs\n\
        --eviction-hard=\"memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi\"\n\
        --cluster-domain=cluster.local\n\
        --cluster-dns=10.152.183.10\n";

    #[test]
    fn setting_rewrites_the_flags_own_line_and_nothing_else() {
        let edit = set_flag(ARGS, "resolv-conf", "/etc/dnsfix/resolv.conf").expect("editable");
        assert_eq!(
            edit.text,
            ARGS.replace(
                "--resolv-conf=/run/systemd/resolve/resolv.conf",
                "--resolv-conf=/etc/dnsfix/resolv.conf"
            )
        );
        assert_eq!(edit.lines, Some(1..=1));
        let again =
            set_flag(&edit.text, "--resolv-conf", "/etc/dnsfix/resolv.conf").expect("editable");
        assert!(!again.changed);
    }

    #[test]
    fn a_missing_flag_is_appended_and_earlier_duplicates_go() {
        let without = ARGS.replacen("--resolv-conf=/run/systemd/resolve/resolv.conf\n", "", 1);
        let text = format!("# --resolv-conf=/old\n{}", without.trim_end());
        let edit = set_flag(&text, "resolv-conf", "/r").expect("editable");
        assert_eq!(edit.text, format!("{text}\n--resolv-conf=/r\n"));
        let dup = "--resolv-conf /a\r\n--x=1\r\n\"--resolv_conf=/b\"\r\n";
        let edit = set_flag(dup, "resolv-conf", "/c").expect("editable");
        assert_eq!(edit.text, "--x=1\r\n--resolv-conf=/c\r\n");
        let edit = remove_flag(dup, "resolv-conf").expect("editable");
        assert_eq!(edit.text, "--x=1\r\n");
    }

    #[test]
    fn what_cannot_be_edited_exactly_is_refused() {
        let shared = "--x=1 --resolv-conf=/a\n";
        let err = set_flag(shared, "resolv-conf", "/b")
            .expect_err("refused")
            .to_string();
        assert!(err.contains("line 1") && err.contains("by hand"), "{err}");
        let split = "--resolv-conf\n/a\n";
        assert!(set_flag(split, "resolv-conf", "/b").is_err());
        for bad in ["/a b", "/a\"b", "$SNAP/r", "/a\\b", "", "/a\nb"] {
            assert!(set_flag(ARGS, "resolv-conf", bad).is_err(), "{bad:?}");
        }
        assert!(set_flag(ARGS, "resolv conf", "/a").is_err());
    }
}
