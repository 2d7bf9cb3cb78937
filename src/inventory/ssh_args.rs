//! `ansible_ssh_common_args` and `ansible_ssh_extra_args`: split into ssh's arguments the way
//! Ansible's ssh plugin does (`_split_ssh_args`: Python's `shlex.split`, each piece
//! stripped, empty ones dropped), and checked so that they only add options: dnsfix puts
//! them before `--` and the destination, so a word that is not an option (ssh would take
//! it for the destination) or an option that takes over what dnsfix runs (the control
//! socket, the log, the command) is refused rather than passed on.

/// ssh's options that take a value (`ssh.c`'s getopt string).
const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Options that would take over the connection dnsfix manages: its control socket and
/// master (`-S`, `-M`, `-O`), its log and what it reads from it (`-E`, `-v`, `-q`), what
/// runs and how (`-N`, `-W`, `-s`, `-f`, `-G`, `-Q`, `-V`; `-n` reads no script from
/// stdin, `-t` gives it a terminal that echoes it and rewrites the framed output).
const REFUSED: &str = "SMOENWsfGQVvqnt";

/// The `-o` options that would do the same and that dnsfix does not set itself before the
/// inventory's (ssh keeps the first value of each, so Kubespray's own `ansible.cfg`
/// `-o ControlMaster=auto -o ControlPersist=30m` changes nothing and passes).
const REFUSED_OPTIONS: &[&str] = &[
    "forkafterauthentication",
    "remotecommand",
    "sessiontype",
    "stdinnull",
];

/// `text` split as Ansible splits it: Python's `shlex.split` (POSIX mode, no comments),
/// each word stripped, empty ones dropped.
pub(crate) fn split(text: &str) -> Result<Vec<String>, String> {
    Ok(super::shlex::split(text, false)?
        .into_iter()
        .map(|w| w.trim().to_owned())
        .filter(|w| !w.is_empty())
        .collect())
}

/// Refuses what is not an option dnsfix can pass on (see the module's comment).
pub(crate) fn check(args: &[String]) -> Result<(), String> {
    check_words(args, false)
}

/// [`check`] for `ansible_ssh_args`, which Ansible's ssh plugin puts before its own
/// `-o Port=` and `-o User=` (ssh.py `_build_command`), so a user or port there wins over
/// `ansible_port` and `ansible_user` (ssh keeps the first value): dnsfix, which puts them
/// first, would reach another account or port than Ansible does. Refused, naming what to set.
pub(crate) fn check_first(args: &[String]) -> Result<(), String> {
    check_words(args, true)
}

fn check_words(args: &[String], first: bool) -> Result<(), String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty() && *f != "-") else {
            return Err(format!(
                "`{arg}` is not an option: ssh would read it as the host to connect to"
            ));
        };
        for (i, flag) in flags.char_indices() {
            if REFUSED.contains(flag) {
                return Err(format!(
                    "`-{flag}` would take over the connection dnsfix manages (its control socket, log or command); remove it"
                ));
            }
            if WITH_VALUE.contains(flag) {
                // The rest of this word is the value (`-oProxyJump=x`), else the next word.
                let rest = &flags[i + flag.len_utf8()..];
                let value = if rest.is_empty() {
                    args.next()
                        .ok_or_else(|| format!("`-{flag}` wants a value and has none"))?
                } else {
                    rest
                };
                if first && (flag == 'l' || flag == 'p') {
                    return Err(format!(
                        "`-{flag}` here comes before Ansible's own user and port, so it wins over ansible_user and ansible_port for Ansible but not for dnsfix; set ansible_user or ansible_port instead"
                    ));
                }
                if flag == 'o' {
                    check_option(value, first)?;
                }
                break;
            }
        }
    }
    Ok(())
}

/// An `-o` option (`Key=Value` or `Key Value`, the key in any case) that is not one of
/// [`REFUSED_OPTIONS`].
fn check_option(option: &str, first: bool) -> Result<(), String> {
    // As ssh's readconf reads the line (misc.c strdelim): double quotes dropped, blanks and
    // one `=` before the keyword skipped.
    let line: String = option.chars().filter(|&c| c != '"').collect();
    const BLANKS: [char; 4] = [' ', '\t', '\r', '\n'];
    let line = line.trim_start_matches(BLANKS);
    let line = line.strip_prefix('=').unwrap_or(line);
    let key = line
        .trim_start_matches(BLANKS)
        .split(['=', ' ', '\t', '\r', '\n'])
        .next()
        .unwrap_or_default();
    if first && ["user", "port"].contains(&key.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "`-o {key}` here comes before Ansible's own user and port, so it wins over ansible_user and ansible_port for Ansible but not for dnsfix; set ansible_user or ansible_port instead"
        ));
    }
    if REFUSED_OPTIONS.contains(&key.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "`-o {key}` would take over the connection dnsfix manages (its control socket, log or command); remove it"
        ));
    }
    Ok(())
}

/// What OpenSSH 9.6 refuses in a host name given on the command line, besides whitespace
/// and control characters (refused before): characters the shell gives meaning to, which
/// an older ssh puts into a ProxyCommand's `%h` as they are (CVE-2023-51385;
/// openssh-portable@0ef0f5a83 readconf.c ssh_valid_hostname). `-` first is not among
/// them: dnsfix puts the address after `--`.
pub fn shell_in_host(host: &str) -> Option<String> {
    host.chars()
        .find(|c| "'`\"$\\;&<>|(){},".contains(*c))
        .map(|c| format!("{c:?}"))
}

/// [`shell_in_host`] for a user name (`%r`, `%u`): as ssh_valid_ruser, a `$` is a user's
/// (`HOST$`), and so is a `\` but the last (`DOMAIN\user`); a `-` first is not.
pub fn shell_in_user(user: &str) -> Option<String> {
    if let Some(c) = user.chars().find(|c| "'`\";&<>|(){}".contains(*c)) {
        return Some(format!("{c:?}"));
    }
    if user.starts_with('-') {
        return Some("a '-' at its start".to_owned());
    }
    user.ends_with('\\').then(|| "a '\\' at its end".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn splits_as_pythons_shlex() {
        // Kubespray's bastion default, rendered.
        assert_eq!(
            words(
                " -o ProxyCommand='ssh -o UserKnownHostsFile=/dev/null -W %h:%p -p 22 ops@192.0.2.1  ' "
            ),
            [
                "-o",
                "ProxyCommand=ssh -o UserKnownHostsFile=/dev/null -W %h:%p -p 22 ops@192.0.2.1"
            ]
        );
        assert_eq!(
            words(r#"-o "ProxyJump=a b" -o X=\"q\" "\$\"\\" '' -J\ x"#),
            ["-o", "ProxyJump=a b", "-o", "X=\"q\"", "\\$\"\\", "-J x"]
        );
        assert!(words("  ").is_empty());
        assert!(split("-o 'x").is_err());
        assert!(split("-o \"x").is_err());
        assert!(split("-o x\\").is_err());
    }

    #[test]
    fn only_options_that_leave_the_connection_to_dnsfix_pass() {
        let ok = |text: &str| check(&words(text));
        assert!(ok("-o ProxyJump=ops@bastion -J x -oPort=2 -4 -C -i key").is_ok());
        assert!(ok("-Cp 2222").is_ok());
        assert!(ok("-o ProxyJump=x node2").is_err(), "a destination");
        assert!(ok("-S /tmp/ctl").is_err());
        assert!(ok("-CM").is_err());
        assert!(ok("-W h:1").is_err());
        assert!(ok("-o").is_err());
        assert!(ok("--").is_err());
        // What would take the script's stdin, add a terminal, or change the log dnsfix reads.
        for refused in [
            "-n",
            "-tt",
            "-v",
            "-q",
            "-o StdinNull=yes",
            "-oSessionType=none",
            "-o 'ForkAfterAuthentication yes'",
            "-o RemoteCommand=id",
            // Spellings ssh's config reader takes the same.
            "-o '\"StdinNull\" yes'",
            "-o 'Stdin\"Null\" yes'",
            "-o '=StdinNull yes'",
            "-o ' sessiontype=none'",
            "'-o\nStdinNull=yes'",
            "'-o\r\nSessionType=none'",
        ] {
            assert!(ok(refused).is_err(), "{refused}");
        }
        assert!(ok("-o ServerAliveInterval=15 -o Compression=yes").is_ok());
        // Kubespray's ansible.cfg ssh_args: what they set dnsfix has set first.
        assert!(
            ok("-o ControlMaster=auto -o ControlPersist=30m -o ConnectionAttempts=100 -o UserKnownHostsFile=/dev/null")
                .is_ok()
        );
    }
}
