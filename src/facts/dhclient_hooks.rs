//! dhclient-script's enter hooks and Red Hat's `PEERDNS`, as the script reads them: pure
//! parsers, no I/O. They say what the hooks do to `make_resolv_conf`, the function
//! dhclient-script calls to write /etc/resolv.conf at a lease; which hooks it sources, and
//! in what order, is the rules' (`diagnose::rules::dhclient_script`).
//!
//! Sources: dhclient-script(8) HOOKS (isc-projects/dhcp @572032cb client/dhclient-script.8:
//! "To override the default behaviour, redefine this function in the enter hook script");
//! Debian's isc-dhcp-client 4.4.3-P1-2 debian/dhclient-script.linux (as mirrored in
//! pexip/os-isc-dhcp @29a44578): `run_hook` sources a file with `. $script` where
//! `[ -f $script ]`, `run_hookdir` sources each name `run-parts --list` prints, and the
//! script sources /etc/dhcp/dhclient-enter-hooks, then /etc/dhcp/dhclient-enter-hooks.d,
//! before its `case "$reason"` calls `make_resolv_conf` (BOUND, RENEW, REBIND, REBOOT,
//! TIMEOUT, BOUND6, RENEW6, REBIND6); Debian's debianutils run-parts.c (as mirrored in
//! deepin-community/debianutils @a3c26bf4): `--list` prints, in `alphasort` order, every
//! name matching `^[a-zA-Z0-9_-]+$` that `stat`s as a regular file it may read, whatever its
//! mode. Red Hat's dhclient-script (Fedora rpms/dhcp, as mirrored in VersatusHPC/rpms-dhcp
//! @986801e1): `make_resolv_conf` starts `[ "${PEERDNS}" = "no" ] && return`, and PEERDNS
//! comes from /etc/sysconfig/network, /etc/sysconfig/networking/network and then the
//! interface's ifcfg file, each sourced in that order (fedora-sysv/initscripts @9d622839
//! network-scripts/network-functions `need_config`, `source_config`).
//!
//! The hooks are shell, read here as the shell reads them as far as it matters: comments,
//! quotes, `$( )` and backquotes, and the compound commands (`if`, `case`, loops, `{ }`,
//! `( )`) a definition may sit in. A body sh refuses (`{ }` with nothing in it, which
//! dash and bash both reject) is told apart: dash then ends dhclient-script at the hook,
//! bash leaves the function as it was.

/// What a hook does to `make_resolv_conf` at one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It defines it to do nothing: every command of its body is `:` or `true` (with
    /// literal words) or `return` (with a number or none).
    Nothing,
    /// It defines it to hand the lease's servers to resolvconf(8) (a body that runs
    /// `resolvconf`, as the resolvconf package's own enter hook does).
    Resolvconf,
    /// It defines it to do something else: what it writes is not known.
    Other,
    /// `make_resolv_conf() { }`: an empty body, which sh refuses.
    Empty,
    /// It names the function otherwise (a call, `unset -f`, bash's `function NAME`).
    Mention,
    /// It defines it to hand the lease's servers to systemd-resolved: a body that runs
    /// `resolvectl dns` or `systemd-resolve --set-dns`, or names
    /// /run/systemd/resolved.conf.d and writes with a redirection, as Ubuntu's systemd 245
    /// hook does (`statedir="/run/systemd/resolved.conf.d"`, then `cat <<EOF >$statedir/…`).
    Resolved,
}

/// One place a hook defines or names `make_resolv_conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The 1-based line of the name.
    pub line: usize,
    /// Inside a compound command (`if`, `case`, a loop, another function, `{ }`, `( )`)
    /// other than a systemd-resolved guard's `then` commands: whether it runs at all
    /// depends on more than the file.
    pub nested: bool,
    /// In the `then` commands of an `if` whose condition ends in the command `systemctl
    /// is-enabled systemd-resolved` (options such as `-q` and redirections after it, `&&`
    /// before it; no `!`, `||`, pipe or command after it), as Ubuntu's stock hook has it: it
    /// runs where that service is enabled. Not in its `else` or `elif` branches.
    pub resolved_guard: bool,
    pub kind: Kind,
}

/// What one hook file does to `make_resolv_conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// Every place it defines or names the function, in file order.
    pub definitions: Vec<Definition>,
    /// Every place outside a `make_resolv_conf` body that hands the lease's servers to
    /// systemd-resolved, in file order (what an exit hook does).
    pub hand_overs: Vec<HandOver>,
    /// The file ends inside a compound command, a quote or a `$( )`: sh refuses it.
    pub unbalanced: bool,
    /// It nests compound commands deeper than [`MAX_DEPTH`]: not read further (no hook
    /// does; a file that does is not one to guess about).
    pub too_deep: bool,
}

/// How deep compound commands may nest in a hook dnsfix reads.
pub const MAX_DEPTH: usize = 64;

/// A name `run-parts --list` prints (run-parts.c `classicalre`, `^[a-zA-Z0-9_-]+$`): a name
/// with a dot (`nodnsupdate.sh`) or any other character is passed over, so never sourced.
pub fn run_parts_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The function dhclient-script calls to write /etc/resolv.conf.
const NAME: &str = "make_resolv_conf";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A word, whether any of it was quoted (a quoted word is no reserved word), its line.
    Word(String, bool, usize),
    /// An operator (`;`, `&&`, `(`, `)`, `;;`, `|`, ...) or a newline (`\n`).
    Op(&'static str, usize),
}

/// The operators, longest first.
const OPS: [&str; 13] = [
    ";;", "&&", "||", ">>", "<<", ";", "&", "|", "(", ")", "<", ">", "\n",
];

/// The tokens of `text`, and whether it ended inside a quote or a `$( )`. A here-document's
/// lines (after `<<WORD` or `<<-WORD`, from the next line to the one that is WORD, tabs
/// before it taken away for `<<-`) are text, no tokens: the newline before them stands for
/// them.
fn tokens(text: &str) -> (Vec<Tok>, bool) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut open) = (0, 1, false);
    // The here-documents whose lines start at the next newline: delimiter, `<<-`.
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    // Where the last operator ended: `<<-` is a `-` right after `<<`, not `<< -WORD`.
    let mut op_end = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && chars.get(i + 1) == Some(&'\n') {
            line += 1;
            i += 2;
        } else if c == ' ' || c == '\t' || c == '\r' {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if let Some(op) = OPS.iter().find(|op| starts(&chars[i..], op)) {
            out.push(Tok::Op(op, line));
            i += op.len();
            op_end = i;
            if *op == "\n" {
                line += 1;
                for (delimiter, tabs) in std::mem::take(&mut heredocs) {
                    (i, line) = skip_heredoc(&chars, i, line, &delimiter, tabs);
                }
            }
        } else {
            let start = line;
            let attached = op_end == i;
            let (word, quoted, next, lines, cut) = word(&chars, i);
            open |= cut;
            line += lines;
            i = next;
            if matches!(out.last(), Some(Tok::Op("<<", _))) {
                heredocs.push(match word.strip_prefix('-').filter(|_| attached) {
                    Some(rest) => (rest.to_owned(), true),
                    None => (word.clone(), false),
                });
            }
            out.push(Tok::Word(word, quoted, start));
        }
    }
    (out, open)
}

/// Past the here-document whose lines start at `chars[i]` (line `line`): where the line
/// after its delimiter line starts, and that line's number; the end of the text where no
/// line is the delimiter (sh takes the rest as the document).
fn skip_heredoc(
    chars: &[char],
    mut i: usize,
    mut line: usize,
    delimiter: &str,
    tabs: bool,
) -> (usize, usize) {
    while i < chars.len() {
        let end = chars[i..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(chars.len(), |k| i + k);
        let mut text = &chars[i..end];
        if tabs {
            while let ['\t', rest @ ..] = text {
                text = rest;
            }
        }
        let is_end = text.iter().copied().eq(delimiter.chars());
        i = (end + 1).min(chars.len());
        line += 1;
        if is_end {
            break;
        }
    }
    (i, line)
}

fn starts(chars: &[char], op: &str) -> bool {
    op.chars()
        .enumerate()
        .all(|(k, c)| chars.get(k) == Some(&c))
}

/// The word at `chars[i]`: its text (quotes taken away, a `$( )` or backquoted part kept
/// as written), whether any of it was quoted, where it ends, the newlines in it, and
/// whether the text ended inside it.
fn word(chars: &[char], mut i: usize) -> (String, bool, usize, usize, bool) {
    let (mut out, mut quoted, mut lines) = (String::new(), false, 0);
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' || c == '\r' || OPS.iter().any(|op| starts(&chars[i..], op)) {
            break;
        }
        let close = match c {
            '\'' => Some('\''),
            '"' => Some('"'),
            '`' => Some('`'),
            '$' if chars.get(i + 1) == Some(&'(') => Some(')'),
            '\\' => {
                out.extend(chars.get(i + 1));
                quoted = true;
                i += 2;
                continue;
            }
            _ => None,
        };
        let Some(close) = close else {
            out.push(c);
            i += 1;
            continue;
        };
        quoted |= c != '$';
        let keep = c == '`' || c == '$';
        if keep {
            out.push(c);
        }
        i += if c == '$' { 2 } else { 1 };
        if c == '$' {
            out.push('(');
        }
        let mut depth = 1;
        loop {
            let Some(&q) = chars.get(i) else {
                return (out, quoted, i, lines, true);
            };
            i += 1;
            lines += usize::from(q == '\n');
            if q == '\\' && close != '\'' {
                if let Some(&e) = chars.get(i) {
                    lines += usize::from(e == '\n');
                    out.push(e);
                    i += 1;
                }
                continue;
            }
            if close == ')' && q == '(' {
                depth += 1;
            } else if q == close {
                depth -= 1;
                if depth == 0 {
                    if keep {
                        out.push(q);
                    }
                    break;
                }
            }
            out.push(q);
        }
    }
    (out, quoted, i, lines, false)
}

/// A compound command still open where a token stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// A loop's `while`/`until`/`for` … `done`, `{` … `}`, `(` … `)`.
    Closes(&'static str),
    /// `if` … `fi`: where in it the token stands.
    If(Branch),
    /// `case` … `esac`: at a pattern (`true`) or in an item's commands.
    Case(bool),
    /// The body of the definition `definitions[.0]`, opened at token `.1`.
    Body(usize, usize),
}

/// Where in an `if` a token stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Branch {
    /// In the condition (of `if`, or of an `elif`: `elif` conditions are never a guard),
    /// reading it for a systemd-resolved guard.
    Condition(Guard),
    /// In the commands after `then`: whether the condition was a systemd-resolved guard.
    Then(bool),
    /// After `else`, or in an `elif`'s commands.
    Else,
}

/// How far a condition has spelled `systemctl [-q] is-enabled [-q] systemd-resolved` (the
/// stock hooks' guard, whose exit status is systemctl(1)'s is-enabled table's), as the last
/// command of the condition: `&&` and `|` before it, redirections after it, nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Guard {
    /// 0: nothing yet; 1: `systemctl` starting a command; 2: `is-enabled`; 3:
    /// `systemd-resolved`; 4: that command ended (`;` or a newline): only `then` may come.
    step: u8,
    /// The last token was a redirection operator (`>`, `<`, `>>`): an `&` is part of it.
    redirecting: bool,
    /// A `!`, an `||`, a pipe, `&&` or another command after it, or an `elif`: whatever it
    /// spells, it is no guard.
    spoilt: bool,
}

impl Guard {
    /// The next word of the condition; `start`: it starts a command.
    fn word(&mut self, w: &str, start: bool) {
        let redirected = std::mem::take(&mut self.redirecting);
        self.step = match (self.step, w) {
            (4, _) => {
                self.spoilt = true;
                4
            }
            (3, _) if redirected || !start => 3,
            (3, _) => {
                self.spoilt = true;
                3
            }
            (_, "!") => {
                self.spoilt = true;
                self.step
            }
            (_, "systemctl") if start => 1,
            (1 | 2, w) if w.starts_with('-') => self.step,
            (1, "is-enabled") => 2,
            (2, "systemd-resolved" | "systemd-resolved.service") => 3,
            _ => 0,
        };
    }

    /// The next operator of the condition.
    fn op(&mut self, op: &str) {
        let redirected = std::mem::take(&mut self.redirecting);
        match (self.step, op) {
            (_, "||") => self.spoilt = true,
            (_, ">" | "<" | ">>") => self.redirecting = true,
            // `2>&1`: the `1` after it is the redirection's too.
            (3, "&") if redirected => self.redirecting = true,
            (3 | 4, ";" | "\n") => self.step = 4,
            (3 | 4, _) => self.spoilt = true,
            _ => {}
        }
    }

    fn holds(self) -> bool {
        self.step >= 3 && !self.spoilt
    }
}

/// One place a hook hands the lease's servers to systemd-resolved: `resolvectl dns`,
/// `systemd-resolve --set-dns`, or a redirection into /run/systemd/resolved.conf.d (or a
/// variable assigned that directory before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOver {
    /// Its 1-based line.
    pub line: usize,
    /// In the `then` commands of an `if` guarded by `systemctl is-enabled systemd-resolved`.
    pub resolved_guard: bool,
    /// Inside a compound command other than such a guard or a `case` (another `if`
    /// branch, a loop, a function, `{ }`, `( )`): whether it runs is not known.
    pub nested: bool,
}

/// What `text`, a hook dhclient-script sources, does to `make_resolv_conf`.
pub fn hook(text: &str) -> Hook {
    let (toks, cut) = tokens(text);
    let mut definitions: Vec<Definition> = Vec::new();
    let mut hand_overs: Vec<HandOver> = Vec::new();
    // The variables assigned the drop-in directory (`statedir=/run/systemd/resolved.conf.d`).
    let mut drop_in_vars: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    // At the start of a command (where a reserved word or a definition can stand).
    let mut start = true;
    let mut i = 0;
    while i < toks.len() {
        if stack.len() > MAX_DEPTH {
            return Hook {
                definitions,
                hand_overs,
                unbalanced: false,
                too_deep: true,
            };
        }
        let at_pattern = matches!(stack.last(), Some(Frame::Case(true)));
        if let Some(Frame::If(Branch::Condition(guard))) = stack.last_mut() {
            match &toks[i] {
                Tok::Word(w, false, _) if start && w == "then" => {}
                Tok::Word(w, _, _) => guard.word(w, start),
                Tok::Op(op, _) => guard.op(op),
            }
        }
        if !at_pattern && !definitions_cover(&stack) {
            if let Some(name) = drop_in_variable(&toks[i], start) {
                drop_in_vars.insert(name);
            }
            if let Some(line) = hand_over(&toks, i, start, &drop_in_vars) {
                hand_overs.push(HandOver {
                    line,
                    resolved_guard: resolved_guard(&stack),
                    nested: stack.iter().any(|f| {
                        !matches!(f, Frame::Case(_)) && *f != Frame::If(Branch::Then(true))
                    }),
                });
            }
        }
        match &toks[i] {
            Tok::Op(op, _) if at_pattern => {
                if *op == ")" {
                    stack.pop();
                    stack.push(Frame::Case(false));
                    start = true;
                }
            }
            Tok::Word(w, false, _) if at_pattern && w == "esac" => {
                stack.pop();
                start = false;
            }
            Tok::Word(..) if at_pattern => start = false,
            Tok::Op(op, _) => {
                start = true;
                match *op {
                    "(" => stack.push(Frame::Closes(")")),
                    ")" => close(&mut stack, ")", &toks, i, &mut definitions),
                    ";;" => {
                        if let Some(Frame::Case(p)) = stack.last_mut() {
                            *p = true;
                        }
                    }
                    "<<" | ">>" | "<" | ">" => start = false,
                    _ => {}
                }
            }
            Tok::Word(w, quoted, line) => {
                let line = *line;
                if start && !quoted {
                    if let Some(next) = definition(&toks, i) {
                        definitions.push(Definition {
                            line,
                            nested: nested(&stack),
                            resolved_guard: resolved_guard(&stack),
                            kind: Kind::Other,
                        });
                        match &toks[next] {
                            Tok::Word(b, false, _) if b == "{" => {
                                stack.push(Frame::Body(definitions.len() - 1, next));
                            }
                            // Any other compound command: not judged.
                            _ => {}
                        }
                        i = next + 1;
                        start = true;
                        continue;
                    }
                    start = keyword(w, &mut stack, &toks, i, &mut definitions);
                } else {
                    start = false;
                }
                if !quoted && w == NAME && !definitions_cover(&stack) {
                    definitions.push(Definition {
                        line,
                        nested: nested(&stack),
                        resolved_guard: resolved_guard(&stack),
                        kind: Kind::Mention,
                    });
                }
            }
        }
        i += 1;
    }
    Hook {
        definitions,
        hand_overs,
        unbalanced: cut || !stack.is_empty(),
        too_deep: false,
    }
}

/// In the `then` commands of an `if` guarded by `systemctl is-enabled systemd-resolved`.
fn resolved_guard(stack: &[Frame]) -> bool {
    stack.contains(&Frame::If(Branch::Then(true)))
}

/// Inside a compound command other than such a guard's `then` commands.
fn nested(stack: &[Frame]) -> bool {
    stack.iter().any(|f| *f != Frame::If(Branch::Then(true)))
}

/// The runtime drop-in directory Ubuntu's systemd 245 hook writes a lease's servers to.
const RESOLVED_DROP_INS: &str = "/run/systemd/resolved.conf.d";

/// The program a command word runs, without its directory.
fn program(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// Where `toks[i]` hands the lease's servers to systemd-resolved, its line: a command
/// `resolvectl dns …` or `systemd-resolve … --set-dns=…` (`start`: `toks[i]` is where a
/// command starts; the words up to the command's end are looked at), or a redirection
/// into /run/systemd/resolved.conf.d, named or by one of `vars`.
fn hand_over(
    toks: &[Tok],
    i: usize,
    start: bool,
    vars: &std::collections::HashSet<String>,
) -> Option<usize> {
    match (&toks[i], toks.get(i + 1)) {
        (Tok::Op(">" | ">>", line), Some(Tok::Word(target, _, _)))
            if into_drop_ins(target, vars) =>
        {
            Some(*line)
        }
        (Tok::Word(w, false, line), Some(Tok::Word(sub, _, _)))
            if start && program(w) == "resolvectl" && sub == "dns" =>
        {
            Some(*line)
        }
        (Tok::Word(w, false, line), _) if start && program(w) == "systemd-resolve" => toks[i + 1..]
            .iter()
            .map_while(|t| match t {
                Tok::Word(a, _, _) => Some(a),
                Tok::Op(..) => None,
            })
            .any(|a| a.starts_with("--set-dns"))
            .then_some(*line),
        _ => None,
    }
}

/// A redirection target in /run/systemd/resolved.conf.d, named or by one of `vars`
/// (`$statedir/…`, `${statedir}/…`): one look-up of the variable it starts with.
fn into_drop_ins(target: &str, vars: &std::collections::HashSet<String>) -> bool {
    if target.starts_with(RESOLVED_DROP_INS) {
        return true;
    }
    let Some(rest) = target.strip_prefix('$') else {
        return false;
    };
    let (name, after) = match rest.strip_prefix('{') {
        Some(braced) => match braced.split_once('}') {
            Some((name, after)) => (name, after),
            None => return false,
        },
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    after.starts_with('/') && vars.contains(name)
}

/// The variable `tok` assigns the drop-in directory, where it is such an assignment at the
/// start of a command (`statedir="/run/systemd/resolved.conf.d"`).
fn drop_in_variable(tok: &Tok, start: bool) -> Option<String> {
    let Tok::Word(w, _, _) = tok else {
        return None;
    };
    let (name, value) = w.split_once('=')?;
    let named = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    (start && named && value.trim_end_matches('/') == RESOLVED_DROP_INS).then(|| name.to_owned())
}

/// Inside a definition's body: a name there is the body's business (a call of another
/// make_resolv_conf inside it is judged with the body).
fn definitions_cover(stack: &[Frame]) -> bool {
    stack.iter().any(|f| matches!(f, Frame::Body(..)))
}

/// Where `toks[i]` starts the definition `make_resolv_conf ( )`, the token its body starts
/// at (newlines skipped).
fn definition(toks: &[Tok], i: usize) -> Option<usize> {
    let Tok::Word(w, false, _) = &toks[i] else {
        return None;
    };
    let shape = w == NAME
        && matches!(toks.get(i + 1), Some(Tok::Op("(", _)))
        && matches!(toks.get(i + 2), Some(Tok::Op(")", _)));
    if !shape {
        return None;
    }
    (i + 3..toks.len()).find(|&k| !matches!(toks[k], Tok::Op("\n", _)))
}

/// A word at the start of a command: a reserved word opens or closes a compound command.
/// Whether the next word starts a command too.
fn keyword(
    w: &str,
    stack: &mut Vec<Frame>,
    toks: &[Tok],
    i: usize,
    definitions: &mut [Definition],
) -> bool {
    match w {
        "if" => stack.push(Frame::If(Branch::Condition(Guard::default()))),
        "while" | "until" | "for" => stack.push(Frame::Closes("done")),
        "{" => stack.push(Frame::Closes("}")),
        "case" => {
            // `case WORD in`: the patterns start after `in`.
            let patterns = matches!(toks.get(i + 2), Some(Tok::Word(x, _, _)) if x == "in");
            stack.push(Frame::Case(patterns));
            return false;
        }
        "fi" | "done" | "}" => close(stack, w_static(w), toks, i, definitions),
        "esac" => {
            if matches!(stack.last(), Some(Frame::Case(_))) {
                stack.pop();
            }
        }
        "then" | "else" | "elif" => {
            if let Some(Frame::If(branch)) = stack.last_mut() {
                *branch = match (w, *branch) {
                    ("then", Branch::Condition(guard)) => Branch::Then(guard.holds()),
                    ("then", _) => Branch::Else,
                    ("elif", _) => Branch::Condition(Guard {
                        spoilt: true,
                        ..Guard::default()
                    }),
                    _ => Branch::Else,
                };
            }
        }
        "do" | "!" => {}
        _ => return false,
    }
    true
}

fn w_static(w: &str) -> &'static str {
    match w {
        "fi" => "fi",
        "done" => "done",
        _ => "}",
    }
}

/// Closes the innermost frame `end` closes; a definition's body is judged as it closes.
fn close(
    stack: &mut Vec<Frame>,
    end: &'static str,
    toks: &[Tok],
    at: usize,
    definitions: &mut [Definition],
) {
    match stack.last() {
        Some(Frame::Closes(e)) if *e == end => {
            stack.pop();
        }
        Some(Frame::If(_)) if end == "fi" => {
            stack.pop();
        }
        Some(Frame::Body(d, from)) if end == "}" => {
            let (d, from) = (*d, *from);
            stack.pop();
            definitions[d].kind = body(&toks[from + 1..at]);
        }
        _ => {}
    }
}

/// What a `{ }` body of these tokens does.
fn body(toks: &[Tok]) -> Kind {
    let mut commands: Vec<Vec<&str>> = vec![Vec::new()];
    for t in toks {
        match t {
            Tok::Word(w, _, _) => {
                if let Some(c) = commands.last_mut() {
                    c.push(w.as_str());
                }
            }
            Tok::Op(";" | "\n", _) => commands.push(Vec::new()),
            Tok::Op(..) => {
                if let Some(c) = commands.last_mut() {
                    c.push("|");
                }
            }
        }
    }
    commands.retain(|c| !c.is_empty());
    let resolvconf = toks.iter().any(
        |t| matches!(t, Tok::Word(w, _, _) if w == "resolvconf" || w.ends_with("/resolvconf")),
    );
    // A hand-over as a command would have it; or the drop-in directory named (in a
    // variable, as Ubuntu's `statedir=`) and something written by a redirection.
    let commands_hand_over = commands.iter().any(|c| match c.as_slice() {
        [w, "dns", ..] => program(w) == "resolvectl",
        [w, rest @ ..] => {
            program(w) == "systemd-resolve" && rest.iter().any(|a| a.starts_with("--set-dns"))
        }
        _ => false,
    });
    // The body's own assignments of the directory, then its redirections into it.
    let mut vars = std::collections::HashSet::new();
    let mut start = true;
    let mut writes_drop_ins = false;
    for (k, t) in toks.iter().enumerate() {
        vars.extend(drop_in_variable(t, start));
        writes_drop_ins |= matches!(t, Tok::Op(">" | ">>", _))
            && matches!(toks.get(k + 1), Some(Tok::Word(target, _, _)) if into_drop_ins(target, &vars));
        start = matches!(t, Tok::Op(";" | "\n" | "&&" | "||" | "|" | "&", _))
            || matches!(t, Tok::Word(w, false, _) if ["then", "else", "do", "{"].contains(&w.as_str()));
    }
    if commands.is_empty() {
        Kind::Empty
    } else if commands.iter().all(|c| nothing(c)) {
        Kind::Nothing
    } else if resolvconf {
        Kind::Resolvconf
    } else if commands_hand_over || writes_drop_ins {
        Kind::Resolved
    } else {
        Kind::Other
    }
}

/// A command that does nothing: `:` or `true` with literal words, `return` with a number
/// or none (dhclient-script ignores what make_resolv_conf returns).
fn nothing(command: &[&str]) -> bool {
    let literal = |w: &&str| !w.contains(['$', '`', '|']);
    match command {
        [":" | "true", rest @ ..] => rest.iter().all(literal),
        ["return"] => true,
        ["return", n] => !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        _ => false,
    }
}

/// What a sourced sysconfig file (an ifcfg file, /etc/sysconfig/network) sets `PEERDNS`
/// to: the last assignment at the start of a line (`export ` before it too), its line and
/// its value unquoted; `None` for the value where it is not a plain word (an expansion, a
/// command substitution), which only the shell can tell.
pub fn peerdns(text: &str) -> Option<(usize, Option<String>)> {
    let mut last = None;
    for (n, raw) in text.lines().enumerate() {
        let l = raw.trim_start();
        let l = l.strip_prefix("export ").map_or(l, str::trim_start);
        let Some(v) = l.strip_prefix("PEERDNS=") else {
            continue;
        };
        let v = v.trim_end();
        let v = match v.find(" #").or_else(|| v.find("\t#")) {
            Some(k) => v[..k].trim_end(),
            None => v,
        };
        let value = unquote(v);
        last = Some((n + 1, value));
    }
    last
}

/// A shell word without expansions: its text with one pair of quotes taken away.
fn unquote(v: &str) -> Option<String> {
    let inner = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
    match inner {
        Some(s) if !s.contains(['"', '\'', '$', '`', '\\']) => Some(s.to_owned()),
        Some(_) => None,
        None if v.contains(['"', '\'', '$', '`', '\\', ' ', '\t', ';', '&', '|']) => None,
        None => Some(v.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(line: usize, nested: bool, kind: Kind) -> Definition {
        Definition {
            line,
            nested,
            resolved_guard: false,
            kind,
        }
    }

    /// The hook Debian and Ubuntu users write, as published (kradalby/kradalby.no
    /// content/notes/network/dhclient-not-overwrite-resolv.md, "Hook to prevent dhclient to
    /// update resolv.conf": /etc/dhcp3/dhclient-enter-hooks.d/nodnsupdate), and the
    /// one-liners dnsfix itself suggests: a function that does nothing.
    #[test]
    fn the_usual_nodnsupdate_hook_defines_a_function_that_does_nothing() {
        let blog = "#!/bin/sh\nmake_resolv_conf(){\n    :\n}\n";
        assert_eq!(hook(blog).definitions, [def(2, false, Kind::Nothing)]);
        for text in [
            "make_resolv_conf() { :; }\n",
            "make_resolv_conf () { true; }\n",
            "make_resolv_conf()\n{\n  return 0\n}\n",
            "make_resolv_conf() { return; } # keep ours\n",
            "make_resolv_conf() {\n\t# nothing: the file is ours\n\t: \"leave it\"\n}\n",
        ] {
            let parsed = hook(text);
            assert_eq!(parsed.definitions.len(), 1, "{text}");
            assert_eq!(parsed.definitions[0].kind, Kind::Nothing, "{text}");
            assert!(!parsed.unbalanced, "{text}");
        }
    }

    /// A body that does something, an empty one (sh refuses it), one in a condition, and
    /// a name that is no definition.
    #[test]
    fn other_bodies_conditions_and_mentions_are_told_apart() {
        let writes = "make_resolv_conf() {\n  echo nameserver 192.0.2.53 > /etc/resolv.conf\n}\n";
        assert_eq!(hook(writes).definitions, [def(1, false, Kind::Other)]);
        assert_eq!(
            hook("make_resolv_conf() { }\n").definitions,
            [def(1, false, Kind::Empty)]
        );
        assert_eq!(
            hook("make_resolv_conf() {\n  # nothing\n}\n").definitions,
            [def(1, false, Kind::Empty)]
        );
        let guarded = "if [ \"$interface\" = eth1 ]; then\n  make_resolv_conf() { :; }\nfi\n";
        assert_eq!(hook(guarded).definitions, [def(2, true, Kind::Nothing)]);
        assert_eq!(
            hook("unset -f make_resolv_conf\n").definitions,
            [def(1, false, Kind::Mention)]
        );
        // Comments and quoted text name nothing; `true $(...)` runs a command.
        assert_eq!(
            hook("# make_resolv_conf() { :; }\necho 'make_resolv_conf() { :; }'\n").definitions,
            []
        );
        assert_eq!(
            hook("make_resolv_conf() { true $(rm -f /etc/resolv.conf); }\n").definitions,
            [def(1, false, Kind::Other)]
        );
        // Removing a drop-in of systemd-resolved's hands it nothing.
        assert_eq!(
            hook("make_resolv_conf() {\n  rm -f /run/systemd/resolved.conf.d/x 2>/dev/null\n}\n")
                .definitions,
            [def(1, false, Kind::Other)]
        );
        assert!(hook("make_resolv_conf() { :;\n").unbalanced);
        assert!(hook("echo 'open\n").unbalanced);
    }

    /// The resolvconf package's own enter hook (Debian resolvconf 1.91+nmu1, as mirrored in
    /// pexip/os-resolvconf @593d7f18 etc/dhcp/dhclient-enter-hooks.d/resolvconf, verbatim in
    /// the Debian ifupdown fixture): inside `if [ -x /sbin/resolvconf ]`, a do-nothing
    /// definition and then, in a `case` by reason, ones that hand the lease's servers to
    /// resolvconf.
    #[test]
    fn resolvconf_s_hook_hands_the_servers_to_resolvconf() {
        let text = include_str!(
            "../../tests/fixtures/rules/_upstream/resolvconf-debian-ifupdown/root/etc/dhcp/dhclient-enter-hooks.d/resolvconf"
        );
        let parsed = hook(text);
        assert!(!parsed.unbalanced);
        assert_eq!(
            parsed.definitions,
            [
                def(19, true, Kind::Nothing),
                def(24, true, Kind::Resolvconf),
                def(46, true, Kind::Resolvconf),
            ]
        );
    }

    /// Ubuntu 20.04's stock hook (tests/fixtures/dhclient-hooks/README.md names its source):
    /// both definitions under `if systemctl is-enabled systemd-resolved`, the first in its
    /// `then` commands alone, doing nothing, the second also in a `case` by reason, writing
    /// the lease's servers to /run/systemd/resolved.conf.d; the comment that names the
    /// function names nothing.
    #[test]
    fn ubuntu_s_resolved_hook_hands_the_servers_to_systemd_resolved_where_it_is_enabled() {
        let text = include_str!("../../tests/fixtures/dhclient-hooks/ubuntu-20.04-resolved");
        let parsed = hook(text);
        assert!(!parsed.unbalanced && !parsed.too_deep);
        let guarded = |line, nested, kind| Definition {
            line,
            nested,
            resolved_guard: true,
            kind,
        };
        assert_eq!(
            parsed.definitions,
            [
                guarded(19, false, Kind::Nothing),
                guarded(24, true, Kind::Resolved)
            ]
        );
        // Its EXPIRE branch's `rm -f` of the drop-in hands nothing over.
        assert_eq!(parsed.hand_overs, []);
    }

    /// Only `systemctl [-q] is-enabled systemd-resolved` guards, in an `if`'s `then`
    /// commands: not its `else` or `elif` branches, not a negated or `||` condition, not a
    /// test of another thing, not after `fi`; a guard inside another compound command still
    /// leaves the definition nested.
    #[test]
    fn a_resolved_guard_is_the_is_enabled_test_s_then_branch_alone() {
        let guard = |cond: &str| {
            hook(&format!(
                "if {cond}; then\n  make_resolv_conf() {{ :; }}\nfi\n"
            ))
            .definitions
        };
        let guarded = Definition {
            line: 2,
            nested: false,
            resolved_guard: true,
            kind: Kind::Nothing,
        };
        for cond in [
            "systemctl is-enabled systemd-resolved > /dev/null 2>&1",
            "systemctl -q is-enabled --quiet systemd-resolved.service",
            "[ -x /usr/bin/resolvectl ] && systemctl is-enabled systemd-resolved",
        ] {
            assert_eq!(guard(cond), std::slice::from_ref(&guarded), "{cond}");
        }
        for cond in [
            "! systemctl is-enabled systemd-resolved",
            "systemctl is-enabled systemd-resolved || true",
            "[ -x /usr/bin/resolvectl ]",
            "systemctl is-active systemd-resolved",
            "systemctl is-enabled systemd-networkd",
            "[ -x /lib/systemd/systemd-resolved ]",
            "systemctl is-enabled systemd-resolved; false",
            "systemctl is-enabled systemd-resolved\n  false",
            "systemctl is-enabled systemd-resolved | grep -q x",
            "systemctl is-enabled systemd-resolved &",
            "systemctl is-enabled systemd-resolved && [ \"$interface\" = eth9 ]",
            "echo systemctl is-enabled systemd-resolved",
        ] {
            let found = guard(cond);
            assert!(
                matches!(found.as_slice(), [d] if d.nested && !d.resolved_guard && d.kind == Kind::Nothing),
                "{cond}: {found:?}"
            );
        }
        // A here-document's lines are text: its `fi` closes nothing.
        let heredoc = hook(
            "if systemctl is-enabled systemd-resolved; then\n  cat <<EOF\nfi\nEOF\n  make_resolv_conf() { :; }\nfi\n",
        );
        assert!(!heredoc.unbalanced);
        assert_eq!(
            heredoc.definitions,
            [Definition {
                line: 5,
                ..guarded.clone()
            }]
        );
        let branches = hook(
            "if systemctl is-enabled systemd-resolved; then :\nelse\n  make_resolv_conf() { :; }\nfi\n\
             if systemctl is-enabled systemd-resolved; then :\nelif systemctl is-enabled systemd-resolved; then\n  make_resolv_conf() { :; }\nfi\n\
             if systemctl is-enabled systemd-resolved; then :; fi\nmake_resolv_conf() { :; }\n\
             if systemctl is-enabled systemd-resolved; then\n  case $reason in BOUND) make_resolv_conf() { :; } ;; esac\nfi\n",
        );
        let lines: Vec<(usize, bool, bool)> = branches
            .definitions
            .iter()
            .map(|d| (d.line, d.nested, d.resolved_guard))
            .collect();
        assert_eq!(
            lines,
            [
                (3, true, false),
                (7, true, false),
                (10, false, false),
                (12, true, true)
            ]
        );
    }

    /// What hands the lease's servers to systemd-resolved outside a make_resolv_conf body,
    /// as an exit hook does (these texts are written for the test, not copied from a
    /// package): `resolvectl dns`, `systemd-resolve --set-dns`, a redirection into its
    /// drop-in directory; each place, with its guard. Comments, quoted text, other
    /// subcommands, a test of the program and removing a drop-in hand nothing.
    #[test]
    fn hand_overs_to_systemd_resolved_are_found_with_their_guards() {
        let found = |text: &str| -> Vec<(usize, bool)> {
            hook(text)
                .hand_overs
                .iter()
                .map(|h| (h.line, h.resolved_guard))
                .collect()
        };
        let guarded = "# hand the servers on\nif [ -x /usr/bin/resolvectl ] && systemctl is-enabled systemd-resolved >/dev/null 2>&1; then\n  resolvectl dns \"$interface\" $new_domain_name_servers\nfi\n";
        assert_eq!(found(guarded), [(3, true)]);
        assert_eq!(
            found(
                "if systemctl is-enabled systemd-resolved; then :\nelse\n  /usr/bin/resolvectl dns eth0 $new_domain_name_servers\nfi\nsystemd-resolve -i eth0 --set-dns=192.0.2.53\n"
            ),
            [(3, false), (5, false)]
        );
        assert_eq!(
            found("cat > \"/run/systemd/resolved.conf.d/dhcp-$interface.conf\" <<EOF\n"),
            [(1, false)]
        );
        // Through a variable assigned the directory, as Ubuntu's enter hook writes it.
        assert_eq!(
            found(
                "statedir=/run/systemd/resolved.conf.d\ncat <<EOF >${statedir}/isc-dhcp-v4-$interface.conf\n[Resolve]\nDNS=$new_domain_name_servers\nEOF\n"
            ),
            [(2, false)]
        );
        // `<< -EOF` (a space before the dash) ends at a line `-EOF`, tabs kept.
        assert_eq!(
            found("cat << -EOF\n-EOF\nresolvectl dns eth0 192.0.2.53\n"),
            [(3, false)]
        );
        // Nested in a case by reason it runs; in another branch, a function or a loop,
        // whether it runs is not known.
        let nested =
            |text: &str| -> Vec<bool> { hook(text).hand_overs.iter().map(|h| h.nested).collect() };
        assert_eq!(
            nested(
                "case \"$reason\" in\n  BOUND|RENEW) resolvectl dns \"$interface\" $new_domain_name_servers ;;\nesac\n"
            ),
            [false]
        );
        for text in [
            "if systemctl is-enabled systemd-resolved; then :\nelse\n  resolvectl dns eth0 192.0.2.53\nfi\n",
            "push() {\n  resolvectl dns eth0 192.0.2.53\n}\n",
            "if false; then\n  resolvectl dns eth0 192.0.2.53\nfi\n",
            "for i in eth0; do resolvectl dns $i 192.0.2.53; done\n",
        ] {
            assert_eq!(nested(text), [true], "{text}");
        }
        for text in [
            "# resolvectl dns eth0 192.0.2.53\n",
            "echo 'resolvectl dns eth0'\n",
            "echo resolvectl dns eth0\n",
            "resolvectl revert \"$interface\"\n",
            "[ -x /usr/bin/resolvectl ] && logger lease\n",
            "rm -f /run/systemd/resolved.conf.d/isc-dhcp-v4-$interface.conf\n",
            "cat <<EOF\nresolvectl dns eth0 192.0.2.53\nEOF\n",
            "cat <<-EOF\n\tresolvectl dns eth0 192.0.2.53\n\tEOF\n",
            "case $x in resolvectl) : ;; esac\n",
            "make_resolv_conf() {\n  resolvectl dns \"$interface\" $new_domain_name_servers\n}\n",
            "",
        ] {
            assert_eq!(found(text), [], "{text}");
        }
    }

    /// Compound commands nested deeper than any hook nests them are not read further, and
    /// a deep file costs time in proportion to its size, not its square (a 1 MiB file of
    /// nested definitions once took seconds per 128 KiB).
    #[test]
    fn a_hook_nested_beyond_reason_is_told_apart_and_read_in_linear_time() {
        let deep = "make_resolv_conf() {\n".repeat(50_000);
        let started = std::time::Instant::now();
        let parsed = hook(&deep);
        assert!(parsed.too_deep, "{:?}", parsed.definitions.len());
        assert_eq!(parsed.definitions.len(), MAX_DEPTH + 1);
        let deep = "if true; then\n".repeat(100_000);
        assert!(hook(&deep).too_deep);
        // An `if` without its `then`: its condition is read once, not to the end for each.
        let open = "if a; fi\n".repeat(120_000);
        assert!(!hook(&open).too_deep);
        // Many variables given the drop-in directory, many redirections: each looked up once.
        let vars: String = (0..20_000)
            .map(|k| format!("v{k}=/run/systemd/resolved.conf.d\n"))
            .chain((0..20_000).map(|k| format!(">$x{k}/f\n")))
            .collect();
        assert!(hook(&vars).hand_overs.is_empty());
        // Words at a case pattern start no command: none is read to the end of the file.
        let patterns = format!("case a in x) ;;\n{}", "systemd-resolve a ".repeat(60_000));
        assert!(hook(&patterns).hand_overs.is_empty());
        let nested = format!(
            "{}make_resolv_conf() {{ :; }}\n{}",
            "{\n".repeat(MAX_DEPTH - 1),
            "}\n".repeat(MAX_DEPTH - 1)
        );
        let parsed = hook(&nested);
        assert!(!parsed.too_deep && !parsed.unbalanced);
        assert_eq!(parsed.definitions, [def(MAX_DEPTH, true, Kind::Nothing)]);
        let wide = "make_resolv_conf() { :; }\n".repeat(40_000);
        assert_eq!(hook(&wide).definitions.len(), 40_000);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn run_parts_lists_letters_digits_underscores_and_hyphens_only() {
        for name in ["nodnsupdate", "zz-dnsfix", "00_keep", "A1"] {
            assert!(run_parts_name(name), "{name}");
        }
        for name in [
            "nodnsupdate.sh",
            "nodns~",
            "x.dpkg-old",
            ".hidden",
            "",
            "a b",
        ] {
            assert!(!run_parts_name(name), "{name}");
        }
    }

    /// RHEL's documented setting (initscripts doc/sysconfig.txt `PEERDNS=yes|no`), quoted
    /// or not; Red Hat's script compares the value with `no` exactly.
    #[test]
    fn peerdns_is_the_last_assignment_unquoted() {
        let ifcfg =
            "DEVICE=eth0\nBOOTPROTO=dhcp\nONBOOT=yes\nPEERDNS=yes\nPEERDNS=\"no\"  # ours\n";
        assert_eq!(peerdns(ifcfg), Some((5, Some("no".to_owned()))));
        assert_eq!(peerdns("PEERDNS='no'\n"), Some((1, Some("no".to_owned()))));
        assert_eq!(
            peerdns("export PEERDNS=no\n"),
            Some((1, Some("no".to_owned())))
        );
        assert_eq!(peerdns("PEERDNS=$DEFAULT\n"), Some((1, None)));
        assert_eq!(peerdns("DEVICE=eth0\n#PEERDNS=no\n"), None);
    }

    #[test]
    fn any_text_parses_without_panicking() {
        for bytes in
            crate::testing::random_inputs(17, b"(){};|&'\"`$\\#\n make_resolv_conf:", 300, 60, None)
        {
            let _ = hook(&String::from_utf8_lossy(&bytes));
        }
    }
}
