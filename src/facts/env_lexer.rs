//! The lexer of systemd `EnvironmentFile=` files: systemd's env-file state machine
//! (`src/basic/env-file.c` `parse_env_file_internal`, v254+; the rules are listed on
//! `EnvFile::parse`), keeping for every value character where it came from in the text.
//! The facts parser (`kubelet_flags::EnvFile`) reads values from it and the editor
//! (`edit::env_flag`) splices by its positions, so the two can never read a file
//! differently. Pure.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quote {
    None,
    Single,
    Double,
}

/// One character of a variable's value after env-file unquoting, with its bytes in the text
/// (an escape such as `\"` covers both bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Char {
    pub c: char,
    pub start: usize,
    pub end: usize,
    pub quote: Quote,
    /// A backslash-newline continuation was eaten right before this character.
    pub after_break: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Assignment {
    pub name: String,
    /// Written as `export NAME=…` (systemd ignores such a line).
    pub exported: bool,
    /// 1-based line of the name.
    pub line: usize,
    /// Where a first word goes when the value has none: after the opening quote, or
    /// right after `=`.
    pub empty_at: (usize, Quote),
    /// The value after systemd's unquoting and unescaping, one character at a time.
    pub chars: Vec<Char>,
    /// Byte positions of the env-level quote characters, which a splice must not cross.
    pub quote_marks: Vec<usize>,
    pub unterminated: Option<Quote>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    PreKey,
    Key,
    PreValue,
    Value,
    ValueEscape,
    SingleQuote,
    DoubleQuote,
    DoubleQuoteEscape,
    Comment,
    CommentEscape,
}

/// systemd's WHITESPACE: what ends a word and what is trimmed around a value.
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[derive(Debug)]
struct Lexer {
    state: State,
    key: String,
    key_line: usize,
    key_trim: Option<usize>,
    chars: Vec<Char>,
    value_trim: Option<usize>,
    empty_at: (usize, Quote),
    quote_marks: Vec<usize>,
    escape_start: usize,
    /// A continuation newline was eaten and no character followed yet.
    pending_break: bool,
    out: Vec<Assignment>,
}

/// The assignments of an environment file, as systemd reads them (see `EnvFile::parse`).
pub(crate) fn lex(text: &str) -> Vec<Assignment> {
    let mut lexer = Lexer {
        state: State::PreKey,
        key: String::new(),
        key_line: 1,
        key_trim: None,
        chars: Vec::new(),
        value_trim: None,
        empty_at: (0, Quote::None),
        quote_marks: Vec::new(),
        escape_start: 0,
        pending_break: false,
        out: Vec::new(),
    };
    let mut line = 1;
    let mut iter = text.char_indices().peekable();
    while let Some((at, c)) = iter.next() {
        // CRLF reads as LF, as in the facts parser.
        if c == '\r' && iter.peek().is_some_and(|(_, next)| *next == '\n') {
            continue;
        }
        lexer.step(c, at, line);
        if c == '\n' {
            line += 1;
        }
    }
    lexer.finish();
    lexer.out
}

impl Lexer {
    fn push_char(&mut self, c: char, start: usize, end: usize, quote: Quote) {
        self.chars.push(Char {
            c,
            start,
            end,
            quote,
            after_break: std::mem::take(&mut self.pending_break),
        });
    }

    fn step(&mut self, c: char, at: usize, line: usize) {
        let newline = c == '\n' || c == '\r';
        let end = at + c.len_utf8();
        match self.state {
            State::PreKey => self.pre_key(c, line),
            State::Key => self.key_char(c, end, newline),
            State::PreValue => self.pre_value(c, at, end, newline),
            State::Value => self.value_char(c, at, end, newline),
            State::ValueEscape => self.value_escape(c, end, newline),
            State::SingleQuote => self.single_quoted(c, at, end),
            State::DoubleQuote => self.double_quoted(c, at, end),
            State::DoubleQuoteEscape => self.double_quote_escape(c, at, end),
            State::Comment => self.comment(c, newline),
            State::CommentEscape => {
                self.state = if newline {
                    State::PreKey
                } else {
                    State::Comment
                };
            }
        }
    }

    /// Before a name: blanks are skipped, `#` and `;` start a comment.
    fn pre_key(&mut self, c: char, line: usize) {
        use State::*;
        if c == '#' || c == ';' {
            self.state = Comment;
        } else if !is_blank(c) {
            self.state = Key;
            self.key.clear();
            self.key.push(c);
            self.key_line = line;
            self.key_trim = None;
        }
    }

    /// In a name: `=` ends it, a line break drops it.
    fn key_char(&mut self, c: char, end: usize, newline: bool) {
        use State::*;
        if newline {
            self.state = PreKey;
        } else if c == '=' {
            self.state = PreValue;
            self.chars.clear();
            self.quote_marks.clear();
            self.value_trim = None;
            self.pending_break = false;
            self.empty_at = (end, Quote::None);
        } else {
            if !is_blank(c) {
                self.key_trim = None;
            } else if self.key_trim.is_none() {
                self.key_trim = Some(self.key.len());
            }
            self.key.push(c);
        }
    }

    /// After `=` or a closing quote: quotes open, blanks are skipped.
    fn pre_value(&mut self, c: char, at: usize, end: usize, newline: bool) {
        use State::*;
        if newline {
            self.push_var(false, None);
        } else if c == '\'' || c == '"' {
            let quote = if c == '\'' {
                Quote::Single
            } else {
                Quote::Double
            };
            if self.chars.is_empty() {
                self.empty_at = (end, quote);
            }
            self.quote_marks.push(at);
            self.state = if c == '\'' { SingleQuote } else { DoubleQuote };
        } else if c == '\\' {
            self.escape_start = at;
            self.state = ValueEscape;
        } else if !is_blank(c) {
            self.state = Value;
            self.push_char(c, at, end, Quote::None);
        }
    }

    /// In an unquoted value: a line break ends it, trailing blanks are trimmed.
    fn value_char(&mut self, c: char, at: usize, end: usize, newline: bool) {
        use State::*;
        if newline {
            self.push_var(true, None);
        } else if c == '\\' {
            self.escape_start = at;
            self.state = ValueEscape;
            self.value_trim = None;
        } else {
            if !is_blank(c) {
                self.value_trim = None;
            } else if self.value_trim.is_none() {
                self.value_trim = Some(self.chars.len());
            }
            self.push_char(c, at, end, Quote::None);
        }
    }

    /// After `\` in an unquoted value: the next character as is; a line break continues it.
    fn value_escape(&mut self, c: char, end: usize, newline: bool) {
        use State::*;
        self.state = Value;
        if !newline {
            self.push_char(c, self.escape_start, end, Quote::None);
        } else {
            // Only a real line break counts for the line numbering.
            self.pending_break |= c == '\n';
        }
    }

    /// In single quotes: everything is literal up to the closing quote.
    fn single_quoted(&mut self, c: char, at: usize, end: usize) {
        use State::*;
        if c == '\'' {
            self.quote_marks.push(at);
            self.state = PreValue;
        } else {
            self.push_char(c, at, end, Quote::Single);
        }
    }

    /// In double quotes: `\` escapes, `"` closes.
    fn double_quoted(&mut self, c: char, at: usize, end: usize) {
        use State::*;
        if c == '"' {
            self.quote_marks.push(at);
            self.state = PreValue;
        } else if c == '\\' {
            self.escape_start = at;
            self.state = DoubleQuoteEscape;
        } else {
            self.push_char(c, at, end, Quote::Double);
        }
    }

    /// After `\` in double quotes: only `"`, `\`, `` ` `` and `$` are escaped.
    fn double_quote_escape(&mut self, c: char, at: usize, end: usize) {
        use State::*;
        self.state = DoubleQuote;
        if matches!(c, '"' | '\\' | '`' | '$') {
            self.push_char(c, self.escape_start, end, Quote::Double);
        } else if c == '\n' {
            self.pending_break = true;
        } else {
            let start = self.escape_start;
            self.push_char('\\', start, start + 1, Quote::Double);
            self.push_char(c, at, end, Quote::Double);
        }
    }

    /// In a comment: a line break ends it unless escaped.
    fn comment(&mut self, c: char, newline: bool) {
        use State::*;
        if c == '\\' {
            self.state = CommentEscape;
        } else if newline {
            self.state = PreKey;
        }
    }

    fn push_var(&mut self, chomp: bool, unterminated: Option<Quote>) {
        self.state = State::PreKey;
        if chomp && let Some(at) = self.value_trim {
            self.chars.truncate(at);
        }
        if let Some(at) = self.key_trim {
            self.key.truncate(at);
        }
        let (name, exported) = match self.key.strip_prefix("export") {
            Some(rest) if rest.starts_with(is_blank) => (rest.trim_start_matches(is_blank), true),
            _ => (self.key.as_str(), false),
        };
        let mut chars = name.chars();
        let valid = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            self.out.push(Assignment {
                name: name.to_string(),
                exported,
                line: self.key_line,
                empty_at: self.empty_at,
                chars: std::mem::take(&mut self.chars),
                quote_marks: std::mem::take(&mut self.quote_marks),
                unterminated,
            });
        }
        self.chars.clear();
        self.quote_marks.clear();
        self.pending_break = false;
    }

    fn finish(&mut self) {
        use State::*;
        match self.state {
            Value => self.push_var(true, None),
            PreValue | ValueEscape => self.push_var(false, None),
            SingleQuote => self.push_var(false, Some(Quote::Single)),
            DoubleQuote | DoubleQuoteEscape => self.push_var(false, Some(Quote::Double)),
            PreKey | Key | Comment | CommentEscape => {}
        }
    }
}

impl Assignment {
    /// The value as text. Where a backslash-newline continuation sat between words a `\n`
    /// is kept in its place (systemd drops it), so a word's line can be told; where it would
    /// glue two words together, systemd's join is kept.
    pub fn value(&self) -> String {
        let mut value = String::with_capacity(self.chars.len());
        for ch in &self.chars {
            if ch.after_break && (value.chars().last().is_none_or(is_blank) || is_blank(ch.c)) {
                value.push('\n');
            }
            value.push(ch.c);
        }
        value
    }
}
