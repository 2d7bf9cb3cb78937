//! `ansible_ssh_common_args` and `ansible_ssh_extra_args`: split into ssh's arguments the way
//! Ansible's ssh plugin does (`_split_ssh_args`: Python's `shlex.split`, each piece
//! stripped, empty ones dropped), and checked so that they only add options: dnsfix puts
//! them before `--` and the destination, so a word that is not an option (ssh would take
//! it for the destination) or an option that takes over what dnsfix runs (the control
//! socket, the log, the command) is refused rather than passed on.

/// ssh's options that take a value (`ssh.c`'s getopt string).
const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// Options that would take over the connection dnsfix manages: its control socket and
/// master (`-S`, `-M`, `-O`), its log (`-E`), what runs (`-N`, `-W`, `-s`, `-f`, `-G`,
/// `-Q`, `-V`).
const REFUSED: &str = "SMOENWsfGQV";

/// `text` split as Python's `shlex.split` (POSIX mode, no comments) splits it: quotes
/// group, `\` escapes outside quotes and before `"` or `\` inside double quotes.
pub(crate) fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\\' => {
                let next = chars
                    .next()
                    .ok_or("it ends with a `\\` that escapes nothing")?;
                word.get_or_insert_default().push(next);
            }
            '\'' => {
                let w = word.get_or_insert_default();
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("a `'` is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_default();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("a `\"` is not closed".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("a `\"` is not closed".into()),
                    }
                }
            }
            c => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    Ok(words
        .into_iter()
        .map(|w| w.trim().to_owned())
        .filter(|w| !w.is_empty())
        .collect())
}

/// Refuses what is not an option dnsfix can pass on (see the module's comment).
pub(crate) fn check(args: &[String]) -> Result<(), String> {
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
                if flags[i + flag.len_utf8()..].is_empty() && args.next().is_none() {
                    return Err(format!("`-{flag}` wants a value and has none"));
                }
                break;
            }
        }
    }
    Ok(())
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
    }
}
