//! Python's `shlex.split` (POSIX mode), which Ansible splits INI host lines (with
//! comments) and ssh arguments (without) with.

/// Python's `shlex.split(line, comments)` (POSIX mode): whitespace separates tokens,
/// quotes group and are removed, a backslash escapes outside single quotes, and with
/// `comments` an unquoted `#` ends the line, even in the middle of a token.
pub(super) fn split(line: &str, comments: bool) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut token = String::new();
    let mut in_token = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            // shlex's whitespace: these four, not Unicode's.
            ' ' | '\t' | '\r' | '\n' => {
                if in_token {
                    tokens.push(std::mem::take(&mut token));
                    in_token = false;
                }
            }
            '#' if comments => break,
            '\'' => {
                in_token = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => token.push(c),
                        None => return Err("no closing quotation".into()),
                    }
                }
            }
            '"' => {
                in_token = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => token.push(c),
                            Some(c) => {
                                token.push('\\');
                                token.push(c);
                            }
                            None => return Err("no closing quotation".into()),
                        },
                        Some(c) => token.push(c),
                        None => return Err("no closing quotation".into()),
                    }
                }
            }
            '\\' => {
                in_token = true;
                match chars.next() {
                    Some(c) => token.push(c),
                    None => return Err("no escaped character".into()),
                }
            }
            c => {
                in_token = true;
                token.push(c);
            }
        }
    }
    if in_token {
        tokens.push(token);
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shlex_matches_python() {
        let words = |s: &str| split(s, true).expect("splits");
        assert_eq!(words("node1 a=1  b='x y' # c=2"), ["node1", "a=1", "b=x y"]);
        assert_eq!(words("n pass=ab#cd"), ["n", "pass=ab"]);
        assert_eq!(
            words(r#"n a="q\"uote" b="\d""#),
            ["n", "a=q\"uote", "b=\\d"]
        );
        assert_eq!(words(r"n a=x\ y"), ["n", "a=x y"]);
        assert_eq!(words("n a=''"), ["n", "a="]);
        assert_eq!(words("n e=\"\""), ["n", "e="]);
        assert!(split("n a='x", true).is_err());
        assert!(split("n a=x\\", true).is_err());
        // Without comments (ssh arguments), `#` is a character like any other.
        assert_eq!(split("-o X=a#b", false).expect("splits"), ["-o", "X=a#b"]);
        assert_eq!(
            split("-o X=a\u{a0}b\x0bc", false).expect("splits"),
            ["-o", "X=a\u{a0}b\x0bc"]
        );
    }
}
