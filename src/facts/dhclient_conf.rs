//! dhclient.conf as ISC dhclient reads it, into statements: a pure parser, no I/O.
//!
//! The file is free-form (dhclient.conf(5)): a statement ends at its `;`, not at the end of a
//! line, so one may span lines and a line may hold several; `#` starts a comment that runs
//! to the end of the line, except inside a quoted string. `interface "NAME" { ... }` holds
//! statements for that interface alone, which dhclient runs after the file's top-level ones
//! (client/clparse.c `parse_interface_declaration` → `make_client_config`: the interface's
//! `on_receipt` group is a clone whose `next` is the top-level group, and
//! common/execute.c `execute_statements_in_scope` runs `group->next` first, @572032cb).
//! Other blocks (`lease`, `alias`, `pseudo`) describe recorded leases or aliases, not what is
//! done with a new lease: their statements are kept apart.

/// Where a statement stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// At the top level: it applies to every interface.
    Top,
    /// Inside `interface "NAME" { ... }`.
    Interface(String),
    /// Inside another block (`lease`, `alias`, `pseudo`, or one nested deeper).
    Other,
}

/// One statement, its words joined by single spaces and ended by `;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub scope: Scope,
    /// The 1-based line its first word is on.
    pub line: usize,
    pub text: String,
}

/// The statements of a dhclient.conf, in file order. A statement cut short by the end of
/// the file or by a `}` (which dhclient refuses) is left out.
pub fn statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut stack: Vec<Scope> = Vec::new();
    let mut current = String::new();
    let mut start = 0;
    let mut line = 1;
    let mut chars = text.chars().peekable();
    let mut space = false;
    let scope = |stack: &[Scope]| stack.last().cloned().unwrap_or(Scope::Top);
    while let Some(c) = chars.next() {
        match c {
            '#' => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            '"' => {
                push(&mut current, &mut space, &mut start, line, '"');
                while let Some(q) = chars.next() {
                    if q == '\n' {
                        line += 1;
                    }
                    current.push(q);
                    if q == '\\' {
                        if let Some(e) = chars.next() {
                            current.push(e);
                        }
                    } else if q == '"' {
                        break;
                    }
                }
            }
            ';' => {
                if !current.is_empty() {
                    current.push(';');
                    out.push(Statement {
                        scope: scope(&stack),
                        line: start,
                        text: std::mem::take(&mut current),
                    });
                }
                space = false;
            }
            '{' => {
                let header = std::mem::take(&mut current);
                // `interface"ens5"{` is the same block: dhclient's lexer ends a word at a
                // `"` (common/conflex.c get_token @572032cb).
                let name = header
                    .strip_prefix("interface")
                    .filter(|rest| rest.starts_with([' ', '"']));
                let inner = match (stack.is_empty(), name) {
                    (true, Some(name)) => {
                        Scope::Interface(name.trim().trim_matches('"').to_owned())
                    }
                    _ => Scope::Other,
                };
                stack.push(inner);
                space = false;
            }
            '}' => {
                current.clear();
                stack.pop();
                space = false;
            }
            c if c.is_whitespace() => {
                if c == '\n' {
                    line += 1;
                }
                space = !current.is_empty();
            }
            c => push(&mut current, &mut space, &mut start, line, c),
        }
    }
    out
}

/// Adds `c` to the statement, after one space where white space came before it; the first
/// character sets the statement's line.
fn push(current: &mut String, space: &mut bool, start: &mut usize, line: usize, c: char) {
    if current.is_empty() {
        *start = line;
    } else if *space {
        current.push(' ');
    }
    *space = false;
    current.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(scope: Scope, line: usize, text: &str) -> Statement {
        Statement {
            scope,
            line,
            text: text.into(),
        }
    }

    #[test]
    fn statements_end_at_their_semicolon_and_blocks_set_their_scope() {
        let conf = "# top\nsupersede domain-name-servers 192.0.2.53,\n\t127.0.0.1; # two lines\nprepend domain-name-servers 127.0.0.1; append domain-name-servers ::1;\ninterface \"eth0\" {\n  send host-name \"a;b # c\";\n  supersede domain-name-servers 127.0.0.53;\n}\nlease {\n  interface \"ep0\";\n  option domain-name-servers 127.0.0.1;\n}\nrequest subnet-mask";
        let eth0 = || Scope::Interface("eth0".into());
        assert_eq!(
            statements(conf),
            [
                st(
                    Scope::Top,
                    2,
                    "supersede domain-name-servers 192.0.2.53, 127.0.0.1;"
                ),
                st(Scope::Top, 4, "prepend domain-name-servers 127.0.0.1;"),
                st(Scope::Top, 4, "append domain-name-servers ::1;"),
                st(eth0(), 6, "send host-name \"a;b # c\";"),
                st(eth0(), 7, "supersede domain-name-servers 127.0.0.53;"),
                st(Scope::Other, 10, "interface \"ep0\";"),
                st(Scope::Other, 11, "option domain-name-servers 127.0.0.1;"),
            ]
        );
    }

    /// No blank between `interface`, its name and the brace: still the interface's block.
    #[test]
    fn an_interface_block_needs_no_blanks() {
        assert_eq!(
            statements("interface\"ens5\"{supersede domain-name-servers 192.0.2.53;}"),
            [st(
                Scope::Interface("ens5".into()),
                1,
                "supersede domain-name-servers 192.0.2.53;"
            )]
        );
        assert_eq!(statements("interfaces \"x\" { a; }")[0].scope, Scope::Other);
    }

    #[test]
    fn any_text_parses_without_panicking() {
        for bytes in crate::testing::random_inputs(11, b"{};#\"\\ \t\nabc,.", 400, 60, None) {
            let _ = statements(&String::from_utf8_lossy(&bytes));
        }
    }
}
