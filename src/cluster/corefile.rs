//! The parts of a Corefile dnsfix judges: each server block's zones, the `forward` that
//! takes the names outside the cluster (FROM `.`) and whether the `loop` plugin is on; and
//! the one edit dnsfix makes there, that `forward`'s targets.
//!
//! Read as CoreDNS reads it, with coredns/caddy's `caddyfile` package (lexer.go, parse.go,
//! dispenser.go at 15135a99): words split at white space, a word that starts with `"` runs
//! to the next unescaped `"` (line breaks too), `#` outside one starts a comment to the end
//! of the line; `{` and `}` count only as words of their own. A server block is its
//! addresses, up to a `{` on their line or the next, then its directives: one a line, a
//! directive running on over the lines of the `{ }` it opens (`forward . 192.0.2.53 {
//! max_fails 3 }` is one). `(name) { }` defines a snippet and `import name` puts its words
//! there; `import FILE` puts a file's, which dnsfix reads only where the CoreDNS pods mount
//! that directory from a ConfigMap it read ([`Files`], [`parse_with`]: k3s's
//! `coredns-custom`). A Corefile CoreDNS would
//! refuse is not read at all ([`parse`] says why); where a root block's `forward .` may come
//! from a file it could not read, or from the CoreDNS process's environment (`{$VAR}`, `{%VAR%}`,
//! which caddy puts in addresses, directive names and arguments alike), where it forwards
//! is unknown ([`RootForward::Unknown`]). Never
//! writes: the edit returns the new text, every byte but the targets' kept.

use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// One server block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerBlock {
    /// `.:53`, `cluster.local:53`, as written.
    pub zones: Vec<String>,
    /// 1-based line of the block's first address.
    pub line: usize,
    /// Its first `forward .`: where names no narrower `forward` before it takes go. CoreDNS
    /// (1.10 on) chains a block's `forward`s in order and the first whose FROM holds a name
    /// takes it (plugin/forward README, setup.go `setup`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forward: Option<Forward>,
    /// The `loop` plugin is on: the block dies on a forwarding loop at start-up.
    pub loop_plugin: bool,
    /// Why where the block forwards `.` is not known from the Corefile alone: it imports a
    /// file (dnsfix cannot read it) before its `forward .` or has none of its own, or the
    /// `forward .` names an environment variable of the CoreDNS process.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub forward_unknown: Option<String>,
    /// The words of its `bind` lines (addresses or interface names; NodeLocal DNSCache's
    /// blocks bind its link-local address, Kubespray's nodelocaldns-config.yml.j2 `bind
    /// {{ nodelocaldns_ip }}`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub bind: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forward {
    /// The zone forwarded (`.`: everything).
    pub from: String,
    /// Addresses or a resolv.conf path (`/etc/resolv.conf`).
    pub to: Vec<String>,
    /// Its line in the Corefile: for one from an imported file, the import's.
    pub line: usize,
    /// The imported file it comes from (k3s's `/etc/coredns/custom/NAME.override`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl ServerBlock {
    /// It serves the root zone (`.`, `.:53`, `dns://.:53`): where names outside the
    /// cluster go.
    pub fn is_root(&self) -> bool {
        self.zones.iter().any(|z| is_root_zone(z))
    }

    /// It serves the root zone on port 53 (`.:53`, or `.` on CoreDNS's default port), the
    /// port the cluster's DNS Service sends pods' questions to.
    fn is_root_on_53(&self) -> bool {
        self.zones
            .iter()
            .any(|z| matches!(without_scheme(z), "." | ".:53"))
    }
}

/// The block that takes pods' questions for names outside the cluster: the root zone's on
/// port 53 where there is one, else the first for the root zone. CoreDNS serves `.:5353`
/// and `.:53` apart, each on its port, and a key without one on 53 (core/dnsserver/
/// register.go `InspectServerBlocks` at 4b26cced; `-dns.port` changes that default).
pub fn root_block(blocks: &[ServerBlock]) -> Option<usize> {
    blocks
        .iter()
        .position(ServerBlock::is_root_on_53)
        .or_else(|| blocks.iter().position(ServerBlock::is_root))
}

fn is_root_zone(zone: &str) -> bool {
    let z = without_scheme(zone);
    z == "." || z.starts_with(".:")
}

/// A server block key without its `dns://` (plain DNS, the default).
fn without_scheme(zone: &str) -> &str {
    zone.strip_prefix("dns://").unwrap_or(zone)
}

impl Forward {
    /// It forwards to the servers of the pod's /etc/resolv.conf: the file the kubelet
    /// handed it (dnsPolicy Default).
    pub fn to_resolv_conf(&self) -> bool {
        self.to.iter().any(|t| t == POD_RESOLV_CONF)
    }

    /// It forwards to the servers of another file (a path the forward plugin reads as a
    /// resolv.conf, `parse.HostPortOrFile`): one mounted into the pod, whose servers dnsfix
    /// does not know, not the kubelet's.
    pub fn to_other_file(&self) -> bool {
        self.to
            .iter()
            .any(|t| t.starts_with('/') && t != POD_RESOLV_CONF)
    }
}

/// The resolv.conf the kubelet writes into a pod's containers.
const POD_RESOLV_CONF: &str = "/etc/resolv.conf";

/// A Corefile as CoreDNS would load it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub blocks: Vec<ServerBlock>,
    /// Files imported outside any server block (k3s's `import /etc/coredns/custom/*.server`)
    /// with their lines: server blocks dnsfix cannot see.
    pub imports: Vec<(String, usize)>,
}

/// Where a Corefile sends the names outside the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootForward<'a> {
    /// The root block's `forward .`.
    Forward(&'a ServerBlock, &'a Forward),
    /// A root block without a `forward .` (and no file it imports to hold one): CoreDNS
    /// forwards those names nowhere.
    NoForward(&'a ServerBlock),
    /// No block for the root zone, and no file imported outside the blocks to hold one.
    NoRoot,
    /// Not known from the Corefile: why.
    Unknown(String),
}

impl Parsed {
    /// The block serving the root zone (`.:53`, `.`): where names outside the cluster go.
    pub fn root(&self) -> Option<&ServerBlock> {
        root_block(&self.blocks).map(|i| &self.blocks[i])
    }

    /// Where the Corefile sends names outside the cluster.
    pub fn root_forward(&self) -> RootForward<'_> {
        root_forward(&self.blocks, &self.imports)
    }
}

/// [`Parsed::root_forward`] of these `blocks` and top-level `imports`.
pub fn root_forward<'a>(blocks: &'a [ServerBlock], imports: &[(String, usize)]) -> RootForward<'a> {
    // An address CoreDNS takes from its environment (caddy's `addresses` calls
    // replaceEnvVars) may be the root zone's, or, beside another root block, the one on
    // port 53 (`.:{$PORT}` alone is the root zone's whatever its port).
    let roots = blocks.iter().filter(|b| b.is_root()).count();
    if let Some((block, zone)) = blocks.iter().find_map(|b| {
        let zone = b
            .zones
            .iter()
            .find(|z| names_env(z) && (!is_root_zone(z) || roots > 1))?;
        Some((b, zone))
    }) {
        return RootForward::Unknown(format!(
            "its block on line {} serves {}, an address from an environment variable of the CoreDNS process, which may be the root zone",
            block.line,
            crate::text::escape(zone)
        ));
    }
    match root_block(blocks).map(|i| &blocks[i]) {
        Some(block) => match (&block.forward_unknown, &block.forward) {
            (Some(why), _) => RootForward::Unknown(format!(
                "its {} block (line {}) {why}",
                block.zones.join(" "),
                block.line
            )),
            (None, Some(forward)) => RootForward::Forward(block, forward),
            (None, None) => RootForward::NoForward(block),
        },
        None => match imports.first() {
            Some((path, line)) => RootForward::Unknown(format!(
                "it has no block for the root zone and imports {} (line {line}), which dnsfix cannot read and may hold one",
                crate::text::escape(path)
            )),
            None => RootForward::NoRoot,
        },
    }
}

/// The server blocks of `text`, as CoreDNS would load them; why not where it would refuse
/// the file (a `{` never closed, a `}` that closes nothing, a snippet declared twice, a
/// `forward` without FROM and TO, ...).
pub fn parse(text: &str) -> Result<Parsed, String> {
    parse_with(text, &Files::default())
}

/// [`parse`], reading the files it imports from `files` where they are known there.
pub fn parse_with(text: &str, files: &Files) -> Result<Parsed, String> {
    Ok(Ast::parse(text, files)?.summary()?.parsed)
}

/// A word of the Corefile as caddy's lexer reads it.
#[derive(Debug, Clone)]
struct Token {
    text: String,
    /// 1-based line it starts on.
    line: usize,
    /// Its bytes in the Corefile, quotes included.
    span: Range<usize>,
    /// The snippet `import` took it from, where it did.
    snippet: Option<String>,
    /// The file `import` took it from (its line is the file's), and the Corefile's line
    /// of that import, where it did.
    file: Option<(String, usize)>,
}

impl Token {
    /// The line it ends on: a quoted word may hold line breaks (caddy's `numLineBreaks`).
    fn end_line(&self) -> usize {
        self.line + self.text.matches('\n').count()
    }

    /// `next` follows it on its line: the same file, and the line it ends on (caddy's
    /// dispenser compares the tokens' files too).
    fn same_line(&self, next: &Token) -> bool {
        self.file.as_ref().map(|f| &f.0) == next.file.as_ref().map(|f| &f.0)
            && self.end_line() == next.line
    }

    /// Its line in the Corefile: for a word of an imported file, the import's.
    fn corefile_line(&self) -> usize {
        self.file.as_ref().map_or(self.line, |f| f.1)
    }
}

/// The files a Corefile may import, as the CoreDNS container sees them: directories that
/// are ConfigMap volumes (k3s's and AKS's `coredns-custom` at /etc/coredns/custom), each
/// file a key. An import elsewhere, or of a directory whose ConfigMap was not read, stays
/// unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Files {
    /// The Corefile's directory: caddy takes an import's relative path from there
    /// (caddyfile/parse.go `doImport`).
    pub base: String,
    /// Each directory, with its files by name (none: the ConfigMap is optional and
    /// missing, so the directory is empty); `None` where what it holds is not known.
    pub dirs: Vec<(String, Option<std::collections::BTreeMap<String, String>>)>,
}

impl Files {
    /// The files `pattern` imports, in the order CoreDNS reads them (`filepath.Glob`:
    /// sorted by name), each with its path and text; `None` where that is not known: a
    /// directory not among [`Files::dirs`] or not read, a wildcard in the directory, a `\`
    /// escape, or a pattern that may match the entries every ConfigMap volume holds beside
    /// its keys (`..data`, `..<timestamp>`: directories, which caddy refuses to import). A
    /// pattern without wildcards that names no file: CoreDNS refuses the Corefile, so
    /// unknown too. `Err` where caddy refuses the pattern itself.
    ///
    /// A relative pattern is taken from `base`, the directory of the file the `import` is
    /// in (caddy's `doImport` joins it to `filepath.Dir` of `Dispenser.File()`, the
    /// token's file): for one in an imported file, that file's, not the Corefile's.
    fn resolve_from(
        &self,
        base: &str,
        pattern: &str,
    ) -> Result<Option<Vec<(String, String)>>, String> {
        let path = if pattern.starts_with('/') {
            pattern.to_owned()
        } else if base.is_empty() {
            return Ok(None);
        } else {
            format!("{}/{pattern}", base.trim_end_matches('/'))
        };
        // caddyfile/parse.go `doImport` (coredns/caddy at 15135a99) counts over the whole
        // path: one `*`, one `?`, and no `[`..`]` (caddy issue #2096); an unclosed `[` is
        // filepath.Glob's ErrBadPattern, which it refuses too.
        if path.matches('*').count() > 1 || path.matches('?').count() > 1 || path.contains('[') {
            return Err(format!(
                "caddy refuses the import pattern {}: one `*`, one `?` and no `[` at most",
                crate::text::escape(pattern)
            ));
        }
        let Some((dir, name)) = path.rsplit_once('/') else {
            return Ok(None);
        };
        if name.contains(['\\', ']']) || dir.contains(['*', '?']) || may_match_volume_entries(name)
        {
            return Ok(None);
        }
        let dir = if dir.is_empty() { "/" } else { dir };
        let Some((_, Some(files))) = self
            .dirs
            .iter()
            .find(|(d, _)| d.trim_end_matches('/') == dir)
        else {
            return Ok(None);
        };
        let found: Vec<(String, String)> = files
            .iter()
            .filter(|(file, _)| glob_match(name, file))
            .map(|(file, text)| (format!("{dir}/{file}"), text.clone()))
            .collect();
        if found.is_empty() && !name.contains(['*', '?']) {
            return Ok(None);
        }
        Ok(Some(found))
    }
}

/// The file name `name` (a glob) may match an entry the kubelet keeps in every ConfigMap
/// volume beside its keys: `..data`, the link to the current payload, and the payload's
/// directory `..2006_01_02_15_04_05.<digits>` (kubernetes pkg/volume/util atomic_writer.go).
/// Both are directories, and caddy's `doSingleImport` refuses to import a directory. A
/// key never starts with `..` (the API refuses it), so neither does a file of the volume.
fn may_match_volume_entries(name: &str) -> bool {
    if !name.contains(['*', '?']) {
        return name.starts_with("..");
    }
    if ["..data", "..2006_01_02_15_04_05.1"]
        .iter()
        .any(|entry| glob_match(name, entry))
    {
        return true;
    }
    // Other timestamps and digits: a literal head `..` holds, and a literal tail of digits.
    let head = &name[..name.find(['*', '?']).unwrap_or(name.len())];
    let tail = &name[name.rfind(['*', '?']).map_or(name.len(), |i| i + 1)..];
    (head.starts_with("..") || "..".starts_with(head))
        && tail
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
}

/// `name` matches the glob `pattern` of `*` (any run of characters) and `?` (one).
fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The words of `text` (caddyfile/lexer.go `next`): a byte order mark first is skipped;
/// white space ends a word, except `\r`, which is dropped; `#` starts a comment to the end of
/// the line (in the middle of a word too); a word that starts with `"` runs to the next `"`
/// not escaped with `\` (which is dropped before `"` only), or to the end of the text.
fn lex(text: &str) -> Vec<Token> {
    fn push(tokens: &mut Vec<Token>, text: String, line: usize, span: Range<usize>) {
        tokens.push(Token {
            text,
            line,
            span,
            snippet: None,
            file: None,
        });
    }
    let skip = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut chars = text[skip..].char_indices().map(|(i, c)| (i + skip, c));
    let mut tokens = Vec::new();
    let mut line = 1;
    'words: loop {
        let (mut val, mut start, mut end, mut first) = (String::new(), 0, 0, line);
        let (mut comment, mut quoted, mut escaped) = (false, false, false);
        loop {
            let Some((i, ch)) = chars.next() else {
                if !val.is_empty() {
                    push(&mut tokens, val, first, start..end);
                }
                break 'words;
            };
            if quoted {
                if !escaped && ch == '\\' {
                    escaped = true;
                    continue;
                }
                if !escaped && ch == '"' {
                    push(&mut tokens, val, first, start..i + 1);
                    continue 'words;
                }
                if ch == '\n' {
                    line += 1;
                }
                if escaped && ch != '"' {
                    val.push('\\');
                }
                val.push(ch);
                end = i + ch.len_utf8();
                escaped = false;
                continue;
            }
            if ch.is_whitespace() {
                if ch == '\r' {
                    continue;
                }
                if ch == '\n' {
                    line += 1;
                    comment = false;
                }
                if !val.is_empty() {
                    push(&mut tokens, val, first, start..end);
                    continue 'words;
                }
                continue;
            }
            if ch == '#' {
                comment = true;
            }
            if comment {
                continue;
            }
            if val.is_empty() {
                (start, first) = (i, line);
                if ch == '"' {
                    quoted = true;
                    continue;
                }
            }
            val.push(ch);
            end = i + ch.len_utf8();
        }
    }
    tokens
}

/// A server block as caddy's parser groups it: its addresses, then its directives in order.
#[derive(Debug, Default)]
struct Block {
    keys: Vec<Token>,
    entries: Vec<Entry>,
}

#[derive(Debug)]
enum Entry {
    /// A directive's words, its `{ }` blocks included.
    Directive(Vec<Token>),
    /// `import FILE` among the directives: words dnsfix cannot read.
    Import { path: String, line: usize },
}

/// Where an `import` stands, which decides what its words become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Outside a server block (before its addresses).
    Addresses,
    /// Among a server block's directives.
    Block,
    /// On a line of its own inside a directive's `{ }`.
    Directive,
}

/// More snippet imports than this is a snippet importing itself (caddy stops at 10000).
const MAX_EXPANSIONS: usize = 1000;

/// The Corefile's server blocks, as caddy's parser reads them (caddyfile/parse.go, with
/// dispenser.go's cursor moves: `Next`, `NextArg`, `isNewLine`).
#[derive(Debug, Default)]
struct Ast {
    blocks: Vec<Block>,
    imports: Vec<(String, usize)>,
}

#[derive(Debug)]
struct Parser<'f> {
    files: &'f Files,
    tokens: Vec<Token>,
    cursor: isize,
    snippets: HashMap<String, Vec<Token>>,
    expansions: usize,
    eof: bool,
    block: Block,
    ast: Ast,
}

impl Ast {
    fn parse(text: &str, files: &Files) -> Result<Ast, String> {
        let mut parser = Parser {
            files,
            tokens: lex(text),
            cursor: -1,
            snippets: HashMap::new(),
            expansions: 0,
            eof: false,
            block: Block::default(),
            ast: Ast::default(),
        };
        // parseAll
        while parser.next() {
            parser.block = Block::default();
            parser.begin()?;
            if !parser.block.keys.is_empty() {
                let block = std::mem::take(&mut parser.block);
                parser.ast.blocks.push(block);
            }
        }
        Ok(parser.ast)
    }
}

impl Parser<'_> {
    fn at(&self) -> Option<&Token> {
        usize::try_from(self.cursor)
            .ok()
            .and_then(|c| self.tokens.get(c))
    }

    fn val(&self) -> &str {
        self.at().map_or("", |t| t.text.as_str())
    }

    /// The line of the current word (of the last one, past the end).
    fn line(&self) -> usize {
        self.at().or(self.tokens.last()).map_or(1, |t| t.line)
    }

    fn next(&mut self) -> bool {
        if self.cursor + 1 < self.tokens.len() as isize {
            self.cursor += 1;
            true
        } else {
            false
        }
    }

    /// The next word, only where it is on the current word's line.
    fn next_arg(&mut self) -> bool {
        let Ok(c) = usize::try_from(self.cursor) else {
            self.cursor += 1;
            return true;
        };
        if c + 1 < self.tokens.len() && self.tokens[c].same_line(&self.tokens[c + 1]) {
            self.cursor += 1;
            return true;
        }
        false
    }

    /// The current word starts a line: it comes from another file than the word before
    /// it, or from a later line. Not from an earlier one: a snippet's words keep the lines
    /// they were written on, before the `import` that puts them here, and caddy's
    /// dispenser (`isNewLine`, dispenser.go:262-263 at 15135a99:
    /// `Line+numLineBreaks < next.Line`) takes the first of them as on the line before.
    fn is_new_line(&self) -> bool {
        match usize::try_from(self.cursor) {
            Ok(0) | Err(_) => true,
            Ok(c) if c >= self.tokens.len() => false,
            Ok(c) => {
                let (before, now) = (&self.tokens[c - 1], &self.tokens[c]);
                before.file.as_ref().map(|f| &f.0) != now.file.as_ref().map(|f| &f.0)
                    || before.end_line() < now.line
            }
        }
    }

    fn begin(&mut self) -> Result<(), String> {
        if self.tokens.is_empty() {
            return Ok(());
        }
        self.addresses()?;
        if self.eof {
            return Ok(());
        }
        let snippet = match self.block.keys.as_slice() {
            [key] => key
                .text
                .strip_prefix('(')
                .and_then(|k| k.strip_suffix(')'))
                .map(str::to_owned),
            _ => None,
        };
        let Some(name) = snippet else {
            return self.block_contents();
        };
        let line = self.block.keys[0].line;
        if self.snippets.contains_key(&name) {
            return Err(format!("line {line}: snippet {name} is declared twice"));
        }
        let tokens = self.snippet_tokens()?;
        let imports_itself = tokens.windows(2).enumerate().any(|(i, w)| {
            w[0].text == "import"
                && w[1].text == name
                && (i == 0 || tokens[i - 1].line != w[0].line)
        });
        if imports_itself {
            return Err(format!("line {line}: snippet {name} imports itself"));
        }
        self.snippets.insert(name, tokens);
        self.block.keys.clear();
        Ok(())
    }

    fn addresses(&mut self) -> Result<(), String> {
        let mut expecting = false;
        loop {
            let word = self.val().to_owned();
            if word == "import" && self.is_new_line() {
                self.import(Place::Addresses)?;
                continue;
            }
            if word == "{" {
                if expecting {
                    return Err(format!(
                        "line {}: `{{` where another address was to follow a comma",
                        self.line()
                    ));
                }
                break;
            }
            if let (false, Some(token)) = (word.is_empty(), self.at()) {
                let mut key = token.clone();
                expecting = key.text.ends_with(',');
                if expecting {
                    key.text.pop();
                }
                self.block.keys.push(key);
            }
            let more = self.next();
            if expecting && !more {
                return Err(format!("line {}: the file ends after a comma", self.line()));
            }
            if !more {
                self.eof = true;
                break;
            }
            if !expecting && self.is_new_line() {
                break;
            }
        }
        Ok(())
    }

    fn block_contents(&mut self) -> Result<(), String> {
        let (open, line) = (self.val() == "{", self.line());
        if !open {
            // A server block without braces runs to the end of the file.
            self.cursor -= 1;
        }
        self.directives()?;
        if open && self.val() != "}" {
            // A `{` with no address before it (caddy drops an empty "" one) is a block too.
            return Err(match self.block.keys.first() {
                Some(key) => format!(
                    "line {}: the block of {} is never closed",
                    key.line,
                    crate::text::escape(&key.text)
                ),
                None => format!("line {line}: a `{{` without addresses is never closed"),
            });
        }
        Ok(())
    }

    fn directives(&mut self) -> Result<(), String> {
        while self.next() {
            if self.val() == "}" {
                break;
            }
            if self.val() == "import" {
                self.import(Place::Block)?;
                self.cursor -= 1;
                continue;
            }
            self.directive()?;
        }
        Ok(())
    }

    /// One directive: its words to the end of its line, and of the lines of the `{ }` it
    /// opens.
    fn directive(&mut self) -> Result<(), String> {
        let Some(first) = self.at().cloned() else {
            return Ok(());
        };
        let mut words = vec![first];
        let mut nesting = 0usize;
        while self.next() {
            let (word, new_line) = (self.val(), self.is_new_line());
            if word == "{" {
                nesting += 1;
            } else if new_line && nesting == 0 {
                self.cursor -= 1;
                break;
            } else if word == "}" && nesting > 0 {
                nesting -= 1;
            } else if word == "}" {
                return Err(format!("line {}: a `}}` that closes nothing", self.line()));
            } else if word == "import" && new_line {
                self.import(Place::Directive)?;
                self.cursor -= 1;
                continue;
            }
            words.extend(self.at().cloned());
        }
        if nesting > 0 {
            return Err(format!(
                "line {}: a `{{` of {} is never closed",
                words[0].line, words[0].text
            ));
        }
        self.block.entries.push(Entry::Directive(words));
        Ok(())
    }

    /// `import NAME`: a snippet's words, or a file's, which dnsfix cannot read (none are
    /// put there; the import is kept where it stands). The cursor ends on the first word
    /// put there, or on what followed the import.
    fn import(&mut self, place: Place) -> Result<(), String> {
        let (at, line) = (self.cursor, self.line());
        // The directory of the file this `import` is in: an imported file's, else the
        // Corefile's.
        let base = match self.at().and_then(|t| t.file.as_ref()) {
            Some((path, _)) => match path.rsplit_once('/') {
                Some(("", _)) => "/".to_owned(),
                Some((dir, _)) => dir.to_owned(),
                None => String::new(),
            },
            None => self.files.base.clone(),
        };
        if !self.next_arg() || self.val().is_empty() {
            return Err(format!("line {line}: `import` without a file or snippet"));
        }
        let name = self.val().to_owned();
        if self.next_arg() {
            return Err(format!("line {line}: `import` takes one file or snippet"));
        }
        let words: Vec<Token> = match self.snippets.get(&name) {
            Some(words) => {
                self.expansions += 1;
                if self.expansions > MAX_EXPANSIONS {
                    return Err(format!(
                        "line {line}: snippets import each other without end"
                    ));
                }
                words
                    .iter()
                    .map(|w| Token {
                        snippet: w.snippet.clone().or_else(|| Some(name.clone())),
                        ..w.clone()
                    })
                    .collect()
            }
            None => match self
                .files
                .resolve_from(&base, &name)
                .map_err(|why| format!("line {line}: {why}"))?
            {
                Some(files) => {
                    self.expansions += 1;
                    if self.expansions > MAX_EXPANSIONS {
                        return Err(format!("line {line}: files import each other without end"));
                    }
                    let at = self.at().map_or(line, Token::corefile_line);
                    files
                        .iter()
                        .flat_map(|(path, text)| {
                            lex(text).into_iter().map(move |w| Token {
                                span: 0..0,
                                file: w.file.clone().or_else(|| Some((path.clone(), at))),
                                ..w
                            })
                        })
                        .collect()
                }
                None => {
                    match place {
                        Place::Addresses => self.ast.imports.push((name, line)),
                        Place::Block => {
                            self.block.entries.push(Entry::Import { path: name, line });
                        }
                        Place::Directive => {}
                    }
                    Vec::new()
                }
            },
        };
        let at = usize::try_from(at).unwrap_or_default();
        let after = self.tokens.split_off((at + 2).min(self.tokens.len()));
        self.tokens.truncate(at);
        self.tokens.extend(words);
        self.tokens.extend(after);
        self.cursor = at as isize;
        Ok(())
    }

    /// A snippet's words, between its `{` and the `}` that closes it.
    fn snippet_tokens(&mut self) -> Result<Vec<Token>, String> {
        let line = self.line();
        if self.val() != "{" {
            return Err(format!("line {line}: a snippet without `{{`"));
        }
        let (mut depth, mut words) = (1usize, Vec::new());
        while self.next() {
            match self.val() {
                "}" if depth == 1 => return Ok(words),
                "}" => depth -= 1,
                "{" => depth += 1,
                _ => {}
            }
            words.extend(self.at().cloned());
        }
        Err(format!("line {line}: a snippet whose `{{` is never closed"))
    }
}

/// [`Parsed`], with the words of the root block's `forward .` targets, for the edit.
struct Summary {
    parsed: Parsed,
    root_targets: Option<Vec<Token>>,
}

impl Ast {
    fn summary(&self) -> Result<Summary, String> {
        let mut parsed = Parsed {
            blocks: Vec::new(),
            imports: self.imports.clone(),
        };
        let mut targets = Vec::new();
        let mut served: Vec<(String, usize)> = Vec::new();
        for block in &self.blocks {
            // CoreDNS refuses two blocks serving one zone on one port ("cannot serve ... it
            // is already defined": core/dnsserver/register.go
            // `validateZonesAndListeningAddresses` at 4b26cced), as from a `.server` file
            // k3s imports beside its own `.:53`. A block with `bind` (its own addresses) or
            // `view` (filters, which may share a zone) is left to CoreDNS.
            let judged = !block.entries.iter().any(|e| {
                matches!(e, Entry::Directive(words) if matches!(words[0].text.as_str(), "bind" | "view"))
            });
            for key in &block.keys {
                if let Some(why) = refused_key(&key.text) {
                    return Err(format!(
                        "line {}: CoreDNS refuses the address {}: {why}",
                        key.corefile_line(),
                        crate::text::escape(&key.text)
                    ));
                }
            }
            for key in block.keys.iter().filter(|_| judged) {
                let Some(listen) = listen_key(&key.text) else {
                    continue;
                };
                let line = key.corefile_line();
                if let Some((_, first)) = served.iter().find(|(l, _)| *l == listen) {
                    return Err(format!(
                        "line {line}: {listen} is served by the block at line {first} too: CoreDNS refuses that (\"already defined\")"
                    ));
                }
                served.push((listen, line));
            }
            let (summary, to) = server_block(block)?;
            targets.push(to.map(<[Token]>::to_vec));
            parsed.blocks.push(summary);
        }
        let root_targets = root_block(&parsed.blocks).and_then(|i| targets.swap_remove(i));
        Ok(Summary {
            parsed,
            root_targets,
        })
    }
}

/// Plain DNS's zone and port a server block key serves (`.`, `.:53` and `dns://.` alike:
/// `zone.:53`), as CoreDNS's register.go normalizes keys (lower case, a trailing dot, port
/// 53 by default); `None` for another transport, a CIDR key CoreDNS expands into reverse
/// zones, or one that names an environment variable.
fn listen_key(key: &str) -> Option<String> {
    let key = without_scheme(key);
    if key.contains("://") || key.contains('/') || names_env(key) {
        return None;
    }
    let (zone, port) = match key.rsplit_once(':') {
        Some((zone, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (zone, port)
        }
        Some(_) => return None,
        None => (key, "53"),
    };
    let zone = zone.to_ascii_lowercase();
    let dot = if zone.ends_with('.') { "" } else { "." };
    Some(format!("{zone}{dot}:{port}"))
}

/// Why CoreDNS refuses a server block key, as its register.go `InspectServerBlocks` reads
/// it (at 4b26cced: `parse.Transport`, then `plugin.SplitHostPort`): a port only where the
/// text after the last colon is a number, else the whole is the zone, and a zone with a
/// leading dot other than `.` itself is no domain name (miekg/dns v1.1.72 `IsDomainName`).
/// So `.:53{`, a `{` written against the address, is refused, not the root zone on 53;
/// `None` where it is taken (or names an environment variable, filled in first).
fn refused_key(key: &str) -> Option<String> {
    if names_env(key) {
        return None;
    }
    let key = key.split_once("://").map_or(key, |(_, rest)| rest);
    if key.ends_with(':') {
        return Some("nothing after its last colon".into());
    }
    let zone = match key.rsplit_once(':') {
        Some((zone, port)) if port.parse::<i64>().is_ok() => zone,
        _ => key,
    };
    (zone.len() > 1 && zone.starts_with('.') && !zone.contains('/')).then(|| {
        format!(
            "{} is no domain name (a leading dot; a port that is not a number stays in the zone)",
            crate::text::escape(zone)
        )
    })
}

/// A word CoreDNS replaces with an environment variable of its process (caddy's
/// `replaceEnvVars`: `{$NAME}`, `{%NAME%}`).
fn names_env(word: &str) -> bool {
    word.contains("{$") || word.contains("{%")
}

/// What dnsfix reads of a server block, and the words of its `forward .` targets.
fn server_block(block: &Block) -> Result<(ServerBlock, Option<&[Token]>), String> {
    let mut summary = ServerBlock {
        zones: block.keys.iter().map(|k| k.text.clone()).collect(),
        line: block.keys.first().map_or(1, Token::corefile_line),
        forward: None,
        loop_plugin: false,
        forward_unknown: None,
        bind: Vec::new(),
    };
    let mut targets = None;
    let mut imported: Option<(&str, usize)> = None;
    for entry in &block.entries {
        let words = match entry {
            Entry::Import { path, line } => {
                if summary.forward.is_none() && imported.is_none() {
                    imported = Some((path, *line));
                }
                continue;
            }
            Entry::Directive(words) => words,
        };
        // CoreDNS fills a directive's name from its environment too (caddy's `directive`
        // calls replaceEnvVars): one before the `forward .` may be a `forward` that comes
        // first.
        if names_env(&words[0].text)
            && summary.forward.is_none()
            && summary.forward_unknown.is_none()
        {
            summary.forward_unknown = Some(format!(
                "has a directive whose name is an environment variable of the CoreDNS process ({}, line {}) before any `forward .`",
                crate::text::escape(&words[0].text),
                words[0].line
            ));
        }
        match words[0].text.as_str() {
            "loop" => summary.loop_plugin = true,
            "bind" => summary.bind.extend(
                words[1..]
                    .iter()
                    .map(|w| w.text.clone())
                    .take_while(|w| w != "{"),
            ),
            "forward" => {
                let end = forward_targets(words)?;
                if summary.forward.is_some() || summary.forward_unknown.is_some() {
                    continue;
                }
                let from = &words[1];
                if names_env(&from.text) {
                    summary.forward_unknown = Some(format!(
                        "has a `forward` whose zone names an environment variable (line {})",
                        words[0].line
                    ));
                } else if from_root(&from.text) {
                    let to = &words[2..end];
                    summary.forward_unknown =
                        forward_unknown(words[0].corefile_line(), to, imported);
                    summary.forward = Some(Forward {
                        from: from.text.clone(),
                        to: to.iter().map(|t| t.text.clone()).collect(),
                        line: words[0].corefile_line(),
                        file: words[0].file.as_ref().map(|f| f.0.clone()),
                    });
                    targets = Some(to);
                }
            }
            _ => {}
        }
    }
    if let (None, None, Some((path, line))) = (&summary.forward, &summary.forward_unknown, imported)
    {
        summary.forward_unknown = Some(format!(
            "has no `forward .` of its own and imports {} (line {line}), which dnsfix cannot read and may hold one",
            crate::text::escape(path)
        ));
    }
    Ok((summary, targets))
}

/// A `forward` FROM that holds every name: `.` as the forward plugin reads its FROM
/// (plugin/forward/setup.go `parseStanza`: `plugin.Host(from).NormalizeExact()`, which drops
/// a transport prefix, plugin/pkg/parse/transport.go, and a numeric port, normalize.go
/// `SplitHostPort`, at coredns 4b26cced), so `.:53` and `dns://.` too.
fn from_root(from: &str) -> bool {
    const TRANSPORTS: [&str; 7] = [
        "tls://",
        "dns://",
        "quic://",
        "grpc://",
        "https3://",
        "https://",
        "unix://",
    ];
    let host = TRANSPORTS
        .iter()
        .find_map(|t| from.strip_prefix(t))
        .unwrap_or(from);
    let host = match host.rsplit_once(':') {
        Some((host, port)) if port.parse::<i64>().is_ok() => host,
        _ => host,
    };
    host == "."
}

/// Why the `forward .` on `line`, to `to`, may not be where names outside the cluster go: a
/// file imported before it (a `forward .` there comes first), or a target CoreDNS takes
/// from its environment.
fn forward_unknown(line: usize, to: &[Token], imported: Option<(&str, usize)>) -> Option<String> {
    if let Some((path, at)) = imported {
        return Some(format!(
            "imports {} (line {at}) before its `forward .` (line {line}): a `forward .` in that file, which dnsfix cannot read, would come first",
            crate::text::escape(path)
        ));
    }
    to.iter().any(|t| names_env(&t.text)).then(|| {
        format!("forwards `.` to an environment variable of the CoreDNS process (line {line})")
    })
}

/// Where the TO words of a `forward` directive's `words` end (their index past the last),
/// as the forward plugin reads them (plugin/forward/setup.go `parseStanza`): FROM and the
/// TOs on the directive's line, up to a `{` there that opens its options, which the
/// directive's last word closes. Anything else is a `forward` CoreDNS refuses.
fn forward_targets(words: &[Token]) -> Result<usize, String> {
    let line = words[0].line;
    let mut end = 1;
    while end < words.len()
        && words[end - 1].end_line() == words[end].line
        && words[end].text != "{"
    {
        end += 1;
    }
    if end < 3 {
        return Err(format!(
            "line {line}: a `forward` without FROM and TO on its line, which CoreDNS refuses"
        ));
    }
    if end == words.len() {
        return Ok(end);
    }
    let opens = words[end].text == "{" && words[end - 1].end_line() == words[end].line;
    let mut depth = 0usize;
    let mut closed_at = None;
    for (i, w) in words.iter().enumerate().skip(end) {
        match w.text.as_str() {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    closed_at = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    if opens && closed_at == Some(words.len() - 1) {
        Ok(end)
    } else {
        Err(format!(
            "line {line}: a `forward` whose words after its targets are not one `{{ }}` of options on its line, which CoreDNS refuses"
        ))
    }
}

/// The root block's `forward .` set to other targets: the new Corefile text, and what
/// changed where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardEdit {
    pub text: String,
    /// The root block's addresses (`.:53`), as written.
    pub block: String,
    /// The forward's FROM as written (`.`, or `.:53`, which CoreDNS reads as `.`).
    pub from: String,
    /// 1-based line of the `forward` in the root block.
    pub line: usize,
    /// Its targets before.
    pub was: Vec<String>,
}

/// `text` with the `forward .` of its root block (`.:53`, `.`: where names outside the
/// cluster go) sent to `servers`, as Kubespray renders `upstream_dns_servers` there:
/// `forward . 192.0.2.53 198.51.100.53`. Only the words of the old targets are replaced
/// (with the new ones, one space between them, as Kubespray writes them); every other
/// byte stays, the options block's `{` and a comment after them included. `None` when it
/// already forwards there. Refused where CoreDNS would not load the file, where the
/// targets come from a snippet (other blocks may import it) or where the root forward is
/// not known from the file ([`RootForward::Unknown`]). The result is parsed again to prove
/// nothing else moved.
pub fn set_root_forward(text: &str, servers: &[String]) -> Result<Option<ForwardEdit>, String> {
    let before = Ast::parse(text, &Files::default())
        .and_then(|ast| ast.summary())
        .map_err(|e| format!("the Corefile is not one CoreDNS would load: {e}"))?;
    let (block, forward) = match before.parsed.root_forward() {
        RootForward::Forward(block, forward) => (block, forward),
        RootForward::NoForward(block) => {
            return Err(format!(
                "the `{}` block (line {}) has no `forward .`",
                block.zones.join(" "),
                block.line
            ));
        }
        RootForward::NoRoot => {
            return Err("the Corefile has no block for the root zone (`.:53`)".into());
        }
        RootForward::Unknown(why) => {
            return Err(format!("where the Corefile forwards is not known: {why}"));
        }
    };
    if forward.to == servers {
        return Ok(None);
    }
    if servers.is_empty() || servers.iter().any(|s| !valid_target(s)) {
        return Err(format!(
            "not a list of DNS server addresses: {}",
            servers.join(" ")
        ));
    }
    if servers.len() > MAX_FORWARD_TARGETS {
        return Err(format!(
            "{} servers: CoreDNS's forward takes at most {MAX_FORWARD_TARGETS} and would refuse the Corefile",
            servers.len()
        ));
    }
    let targets = before.root_targets.as_deref().unwrap_or_default();
    let (Some(first), Some(last)) = (targets.first(), targets.last()) else {
        return Err("the root `forward .` has no targets".into());
    };
    if let Some(snippet) = targets.iter().find_map(|t| t.snippet.as_deref()) {
        return Err(format!(
            "the `forward .` on line {} comes from snippet {snippet}, which other blocks may import: edit it by hand",
            forward.line
        ));
    }
    let span = first.span.start..last.span.end;
    let out = format!(
        "{}{}{}",
        &text[..span.start],
        servers.join(" "),
        &text[span.end..]
    );
    let after = parse(&out).ok();
    let mut wanted = before.parsed.clone();
    if let Some(i) = root_block(&wanted.blocks)
        && let Some(f) = wanted.blocks[i].forward.as_mut()
    {
        f.to = servers.to_vec();
    }
    if after.as_ref() != Some(&wanted) {
        return Err(format!(
            "the `forward .` on line {} could not be changed alone: edit it by hand",
            forward.line
        ));
    }
    Ok(Some(ForwardEdit {
        text: out,
        block: block.zones.join(" "),
        from: forward.from.clone(),
        line: forward.line,
        was: forward.to.clone(),
    }))
}

/// How many servers one `forward` takes (plugin/forward/setup.go `max`, 15 since 1.8.0 and
/// at 4b26cced): more and CoreDNS refuses the Corefile.
const MAX_FORWARD_TARGETS: usize = 15;

/// The address of a `forward` target written as [`valid_target`] takes it: an IP,
/// optionally with `dns://` and a port.
pub fn target_address(target: &str) -> Option<std::net::IpAddr> {
    let t = target.strip_prefix("dns://").unwrap_or(target);
    t.parse::<std::net::IpAddr>()
        .ok()
        .or_else(|| t.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
}

/// A server address CoreDNS's forward takes as plain DNS (`parse.HostPortOrFile`): an IP
/// address, or one with a port (`192.0.2.53:5353`, `[2001:db8::53]:53`), optionally
/// `dns://`. Anything else (a name, a typo) would stop every CoreDNS pod that reloads.
fn valid_target(s: &str) -> bool {
    target_address(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::KUBEADM_COREFILE as KUBEADM;

    /// Kubespray's nodelocaldns ConfigMap (roles/kubernetes-apps/ansible/templates/
    /// nodelocaldns-config.yml.j2 at 46dbdd39, 2026-08-21) rendered with its defaults:
    /// nodelocaldns_ip 169.254.25.10, skydns_server 10.233.0.3, health port 9254,
    /// prometheus port 9253, upstream_dns_servers set to 192.0.2.53 198.51.100.53.
    const NODELOCALDNS: &str = "\
cluster.local:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
    health 169.254.25.10:9254
}
in-addr.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
}
ip6.arpa:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 10.233.0.3 {
        force_tcp
    }
    prometheus :9253
}
.:53 {
    errors
    cache 30
    reload
    loop
    bind 169.254.25.10
    forward . 192.0.2.53 198.51.100.53
    prometheus :9253
}
";

    #[test]
    fn kubeadm_corefile_forwards_to_the_pods_resolv_conf_with_loop_on() {
        let blocks = parse(KUBEADM).expect("parses").blocks;
        assert_eq!(blocks.len(), 1);
        let b = &blocks[0];
        assert_eq!(
            (b.zones.as_slice(), b.line, b.loop_plugin),
            (&[".:53".to_owned()][..], 1, true)
        );
        let f = b.forward.as_ref().expect("forward");
        assert_eq!(
            (f.from.as_str(), f.to.as_slice(), f.line),
            (".", &["/etc/resolv.conf".to_owned()][..], 13)
        );
        assert!(f.to_resolv_conf());
    }

    #[test]
    fn nodelocaldns_blocks_forward_cluster_zones_to_coredns_and_the_rest_upstream() {
        let blocks = parse(NODELOCALDNS).expect("parses").blocks;
        let summary: Vec<(&str, Vec<&str>, bool)> = blocks
            .iter()
            .map(|b| {
                (
                    b.zones[0].as_str(),
                    b.forward
                        .as_ref()
                        .map(|f| f.to.iter().map(String::as_str).collect())
                        .unwrap_or_default(),
                    b.loop_plugin,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("cluster.local:53", vec!["10.233.0.3"], true),
                ("in-addr.arpa:53", vec!["10.233.0.3"], true),
                ("ip6.arpa:53", vec!["10.233.0.3"], true),
                (".:53", vec!["192.0.2.53", "198.51.100.53"], true),
            ]
        );
        assert_eq!(blocks[3].forward.as_ref().map(|f| f.line), Some(44));
        assert!(
            !blocks[3]
                .forward
                .as_ref()
                .is_some_and(Forward::to_resolv_conf)
        );
    }

    fn servers(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_root_forward_is_set_as_kubespray_renders_it_and_nothing_else_moves() {
        // kubeadm's: the options block's `{` stays, as Kubespray's coredns-config.yml.j2
        // renders `forward . {{ upstream_dns_servers | join(' ') }} {`.
        let edit = set_root_forward(KUBEADM, &servers(&["192.0.2.53", "198.51.100.53"]))
            .expect("edit")
            .expect("a change");
        assert_eq!(
            (edit.line, edit.was.as_slice()),
            (13, &["/etc/resolv.conf".to_owned()][..])
        );
        let want = KUBEADM.replace(
            "    forward . /etc/resolv.conf {\n",
            "    forward . 192.0.2.53 198.51.100.53 {\n",
        );
        assert_eq!(edit.text, want);
        // Already there: nothing to do.
        assert_eq!(
            set_root_forward(&want, &servers(&["192.0.2.53", "198.51.100.53"])),
            Ok(None)
        );
        // nodelocaldns: only the `.:53` block's forward, never the cluster zones'.
        let edit = set_root_forward(NODELOCALDNS, &servers(&["203.0.113.53"]))
            .expect("edit")
            .expect("a change");
        assert_eq!(
            edit.text,
            NODELOCALDNS.replace(
                "    forward . 192.0.2.53 198.51.100.53\n",
                "    forward . 203.0.113.53\n"
            )
        );
        assert_eq!(edit.line, 44);
        // A comment after the targets and CRLF line ends are kept.
        let crlf = ".:53 {\r\n  forward . /etc/resolv.conf # upstream\r\n  loop\r\n}\r\n";
        let edit = set_root_forward(crlf, &servers(&["192.0.2.53"])).expect("edit");
        assert_eq!(
            edit.map(|e| e.text).as_deref(),
            Some(".:53 {\r\n  forward . 192.0.2.53 # upstream\r\n  loop\r\n}\r\n")
        );
    }

    #[test]
    fn a_corefile_without_a_root_forward_or_with_odd_servers_is_refused() {
        let only_cluster = "cluster.local:53 {\n    forward . 10.233.0.3\n}\n";
        assert!(set_root_forward(only_cluster, &servers(&["192.0.2.53"])).is_err());
        let no_forward = ".:53 {\n    whoami\n}\n";
        assert!(set_root_forward(no_forward, &servers(&["192.0.2.53"])).is_err());
        for bad in [
            &[][..],
            &["192.0.2.53\n}"][..],
            &["a b"][..],
            &["dns.example"][..],
            &["8.8.8"][..],
            &["1.2.3.4.5"][..],
            &["/run/other/resolv.conf"][..],
            &[
                "192.0.2.1",
                "192.0.2.2",
                "192.0.2.3",
                "192.0.2.4",
                "192.0.2.5",
                "192.0.2.6",
                "192.0.2.7",
                "192.0.2.8",
                "192.0.2.9",
                "192.0.2.10",
                "192.0.2.11",
                "192.0.2.12",
                "192.0.2.13",
                "192.0.2.14",
                "192.0.2.15",
                "192.0.2.16",
            ][..],
        ] {
            assert!(
                set_root_forward(KUBEADM, &servers(bad)).is_err(),
                "{bad:?} accepted"
            );
        }
        for good in [
            &["2001:db8::53"][..],
            &["[2001:db8::53]:53", "192.0.2.53:5353"][..],
            &["dns://192.0.2.53"][..],
            &[
                "192.0.2.1",
                "192.0.2.2",
                "192.0.2.3",
                "192.0.2.4",
                "192.0.2.5",
                "192.0.2.6",
                "192.0.2.7",
                "192.0.2.8",
                "192.0.2.9",
                "192.0.2.10",
                "192.0.2.11",
                "192.0.2.12",
                "192.0.2.13",
                "192.0.2.14",
                "192.0.2.15",
            ][..],
        ] {
            assert!(
                set_root_forward(KUBEADM, &servers(good)).is_ok(),
                "{good:?} refused"
            );
        }
        // CoreDNS's `dns://` server block prefix is the root zone too.
        let scheme = "dns://.:53 {\n    forward . /etc/resolv.conf\n}\n";
        assert_eq!(
            set_root_forward(scheme, &servers(&["192.0.2.53"]))
                .expect("edit")
                .map(|e| e.text)
                .as_deref(),
            Some("dns://.:53 {\n    forward . 192.0.2.53\n}\n")
        );
    }

    fn words(text: &str) -> Vec<String> {
        lex(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn a_hash_starts_a_comment_where_corednss_lexer_says() {
        // coredns/caddy caddyfile/lexer.go: outside quotes a `#` ends the line, in the
        // middle of a word too; a quoted word (one that starts with `"`) keeps it, and
        // `\"` does not end it; a quote inside a word is a character.
        for (line, want) in [
            (
                "forward . 10.0.0.1 # ours",
                &["forward", ".", "10.0.0.1"][..],
            ),
            ("forward . 10.0.0.1#ours", &["forward", ".", "10.0.0.1"][..]),
            ("log \"a # b\" # c", &["log", "a # b"][..]),
            ("log \"a \\\" # b\" # c", &["log", "a \" # b"][..]),
            ("log a\"b # c", &["log", "a\"b"][..]),
            ("# all", &[][..]),
            ("loop", &["loop"][..]),
        ] {
            assert_eq!(words(line), want, "{line}");
        }
        let blocks = parse(".:53 {\n  errors \"#\"\n  forward . 10.0.0.1#x\n  loop\n}\n")
            .expect("parses")
            .blocks;
        assert_eq!(
            blocks[0].forward.as_ref().map(|f| f.to.clone()),
            Some(vec!["10.0.0.1".to_owned()])
        );
        assert!(blocks[0].loop_plugin);
    }

    #[test]
    fn comments_several_zones_and_a_broken_file() {
        let parsed = parse(
            "# site\nexample.org example.net:53 { # two zones\n  forward . 10.0.0.1 # ours\n}\n",
        )
        .expect("parses");
        assert_eq!(parsed.blocks[0].zones, ["example.org", "example.net:53"]);
        assert!(!parsed.blocks[0].loop_plugin);
        assert_eq!(
            parsed.blocks[0].forward.as_ref().map(|f| f.to.clone()),
            Some(vec!["10.0.0.1".to_owned()])
        );
        // A block never closed: CoreDNS refuses the file ("Unexpected token 'loop', expecting
        // '}'"), and so does dnsfix, rather than read half of it.
        let broken = parse("example.org {\n  forward . 10.0.0.1\n}\n.:53 {\n  loop\n");
        assert!(broken.is_err_and(|e| e.contains("never closed")));
    }

    /// k3s's Corefile (k3s-io/k3s manifests/coredns.yaml at 66c487bd, CLUSTER_DOMAIN
    /// cluster.local): files of the optional `coredns-custom` ConfigMap imported at the end
    /// of `.:53` and outside it.
    const K3S: &str = "\
.:53 {
    errors
    health
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    hosts /etc/coredns/NodeHosts {
      ttl 60
      reload 15s
      fallthrough
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
    import /etc/coredns/custom/*.override
}
import /etc/coredns/custom/*.server
";

    /// The CoreDNS Helm chart's Corefile (coredns/helm charts/coredns 1.46.2 at caac031:
    /// templates/configmap.yaml rendered with text/template and sprig's `default` and
    /// `indent` over values.yaml's defaults, then read from the ConfigMap's YAML): `Corefile:
    /// |-`, so no line break at its end.
    const HELM: &str = ".:53 {\n    errors\n    health {\n        lameduck 10s\n    }\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n        fallthrough in-addr.arpa ip6.arpa\n        ttl 30\n    }\n    prometheus 0.0.0.0:9153\n    forward . /etc/resolv.conf\n    cache 30\n    loop\n    reload\n    loadbalance\n}";

    /// Kubespray's coredns and nodelocaldns Corefiles as it renders them with its defaults
    /// (the lab's ConfigMaps: roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2
    /// and nodelocaldns-config.yml.j2 at 46dbdd39).
    fn kubespray() -> Vec<String> {
        crate::cluster::parse_configmaps(include_bytes!("../../tests/lab/standins/configmaps.json"))
            .expect("configmaps")
            .corefiles
            .into_iter()
            .map(|c| c.text)
            .collect()
    }

    fn root_targets(text: &str) -> Result<Vec<String>, String> {
        let parsed = parse(text)?;
        match parsed.root_forward() {
            RootForward::Forward(_, f) => Ok(f.to.clone()),
            other => Err(format!("{other:?}")),
        }
    }

    /// Forms coredns/caddy's parser takes (each checked with its caddyfile.Parse at
    /// 15135a99): an options block on the targets' line, the block's `{` on the line after
    /// its addresses, a nested block closed on its last option's line, a quoted target, and
    /// a `forward` for a narrower zone before or after the root one (CoreDNS chains them in
    /// order, plugin/forward README). kubeadm's `forward . /etc/resolv.conf { max_concurrent
    /// 1000 }`, written on one line, forwards to /etc/resolv.conf alone.
    #[test]
    fn the_forms_corednss_parser_takes_are_read_as_it_reads_them() {
        let one_line = KUBEADM.replace(
            "forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }",
            "forward . /etc/resolv.conf { max_concurrent 1000 }",
        );
        let next_line = KUBEADM.replace(".:53 {\n", ".:53\n{\n");
        let closed_on_option = KUBEADM.replace(
            "       max_concurrent 1000\n    }",
            "       max_concurrent 1000 }",
        );
        for text in [&one_line, &next_line, &closed_on_option] {
            assert_ne!(text, KUBEADM);
            let parsed = parse(text).expect("parses");
            assert_eq!(parsed.blocks.len(), 1, "{text}");
            assert!(parsed.blocks[0].loop_plugin, "{text}");
            assert_eq!(
                root_targets(text).as_deref(),
                Ok(&["/etc/resolv.conf".to_owned()][..]),
                "{text}"
            );
        }
        for (text, want) in [
            (
                ".:53 {\n    forward . 192.0.2.53 { force_tcp }\n    loop\n}\n",
                &["192.0.2.53"][..],
            ),
            (
                ".:53 {\n    forward . \"192.0.2.53\" 198.51.100.53#x\n}\n",
                &["192.0.2.53", "198.51.100.53"][..],
            ),
            (
                ".:53 {\n    forward . /etc/resolv.conf\n    forward example.local 10.0.0.1\n}\n",
                &["/etc/resolv.conf"][..],
            ),
            (
                ".:53 {\n    forward example.local 10.0.0.1\n    forward . /etc/resolv.conf\n}\n",
                &["/etc/resolv.conf"][..],
            ),
            // FROM as the plugin normalizes it: a port or a transport on `.` is still `.`,
            // and the first such forward takes every name.
            (
                ".:53 {\n    forward .:53 192.0.2.53\n    loop\n}\n",
                &["192.0.2.53"][..],
            ),
            (
                ".:53 {\n    forward dns://. 192.0.2.53\n    forward . /etc/resolv.conf\n}\n",
                &["192.0.2.53"][..],
            ),
            // Two blocks for the root zone: the one on port 53 takes pods' questions,
            // whichever comes first.
            (
                ".:5353 {\n    forward . 192.0.2.9\n}\n.:53 {\n    forward . 192.0.2.53\n}\n",
                &["192.0.2.53"][..],
            ),
            (
                "dns://.:5353 {\n    forward . 192.0.2.9\n}\n. {\n    forward . 192.0.2.53\n}\n",
                &["192.0.2.53"][..],
            ),
            (
                ". {\n    forward . 192.0.2.53\n}\n.:5353 {\n    forward . 192.0.2.9\n}\n",
                &["192.0.2.53"][..],
            ),
            // A port from the environment: still the root zone.
            (
                ".:{$PORT} {\n    forward . 192.0.2.53\n}\n",
                &["192.0.2.53"][..],
            ),
        ] {
            assert_eq!(root_targets(text), Ok(servers(want)), "{text}");
        }
    }

    /// What CoreDNS refuses to load is not read: caddy's "Unexpected '}' because no
    /// matching opening brace" and "expecting '}'", and the forward plugin's argument
    /// errors (no TO; options not in one `{ }` on the targets' line).
    #[test]
    fn what_coredns_refuses_is_not_read() {
        // What it takes: the root zone, on a port, through a transport; another zone with a
        // `{` in it is a (strange) domain name.
        for text in [
            ".:53 {\n}\n",
            ". {\n}\n",
            "dns://.:1053 {\n}\n",
            "example.org:53{ {\n}\n",
        ] {
            assert!(parse(text).is_ok(), "{text}");
        }
        for text in [
            ".:53 {\n    forward . 1.1.1.1 }\n",
            ".:53 {\n  loop\n",
            ".:53 {\n    forward .\n    loop\n}\n",
            ".:53 {\n    forward . 192.0.2.53\n    {\n        force_tcp\n    }\n}\n",
            ".:53 {\n    forward . 192.0.2.53 { max_fails 3 } 198.51.100.53\n}\n",
            "(a) {\n  loop\n}\n(a) {\n  errors\n}\n",
            // A `{` before any address, or after an empty one, never closed.
            "{\n  loop\n",
            "# site\n\"\" {\n  forward . 192.0.2.53\n",
            // A `{` against the address is part of it: port "53{" is no number, so the
            // zone is `.:53{`, which a leading dot makes no domain name (before, dnsfix read
            // the root zone on 53); an address ending in a colon.
            ".:53{\n    forward . 10.233.0.3\n}\n",
            "dns://.:53{\n    forward . 10.233.0.3\n}\n",
            ".: {\n    forward . 192.0.2.53\n}\n",
        ] {
            assert!(parse(text).is_err(), "{text}");
            assert!(
                set_root_forward(text, &servers(&["192.0.2.53"])).is_err(),
                "{text}"
            );
        }
    }

    /// Files a Corefile imports are read where [`Files`] knows their directory: a glob of
    /// `*` and `?` in name order, a path relative to the Corefile's directory (AKS's
    /// `import custom/*.override`), each file's lines its own (a directive per line, as
    /// caddy reads them); its `forward .` reported on the import's line, with the file.
    /// A directory not known, a pattern with `[`, or a plain path naming no file: unknown.
    #[test]
    fn imported_files_are_read_where_their_directory_is_known() {
        let custom = std::collections::BTreeMap::from([
            (
                "b.override".to_owned(),
                "log\nforward . 192.0.2.53\n".to_owned(),
            ),
            ("a.override".to_owned(), "errors\n".to_owned()),
            (
                "x.server".to_owned(),
                "example.org {\n  forward . 192.0.2.1\n}\n".to_owned(),
            ),
        ]);
        let files = Files {
            base: "/etc/coredns".into(),
            dirs: vec![("/etc/coredns/custom".into(), Some(custom))],
        };
        let text = ".:53 {\n    cache 30\n    import custom/*.override\n    forward . /etc/resolv.conf\n}\nimport /etc/coredns/custom/*.server\n";
        let parsed = parse_with(text, &files).expect("parses");
        assert!(parsed.imports.is_empty(), "{:?}", parsed.imports);
        assert_eq!(parsed.blocks.len(), 2);
        let RootForward::Forward(_, f) = parsed.root_forward() else {
            panic!("{:?}", parsed.root_forward());
        };
        assert_eq!(
            (f.to.as_slice(), f.line, f.file.as_deref()),
            (
                &servers(&["192.0.2.53"])[..],
                3,
                Some("/etc/coredns/custom/b.override")
            )
        );
        assert_eq!(parsed.blocks[1].zones, ["example.org"]);
        assert_eq!(parsed.blocks[1].line, 6);
        for (pattern, known) in [
            ("custom/?.override", Ok(true)),
            ("/etc/coredns/custom/*.nothing", Ok(true)),
            ("/etc/coredns/custom/missing.override", Ok(false)),
            ("/etc/other/*.override", Ok(false)),
            // caddy's doImport refuses these (coredns/caddy caddyfile/parse.go at
            // 15135a99): before, each was read as a pattern CoreDNS loads, or unknown.
            ("/etc/coredns/custom/[ab].override", Err(())),
            ("/etc/coredns/custom/*.*", Err(())),
            ("custom/??.override", Err(())),
            ("/etc/coredns/custom/a[b.override", Err(())),
            // `..data` and `..<timestamp>` are directories in every ConfigMap volume:
            // caddy refuses to import them, so what a bare `*` does is not read as the
            // keys alone.
            ("custom/*", Ok(false)),
            ("custom/.*", Ok(false)),
            ("custom/..data", Ok(false)),
            ("custom/*5", Ok(false)),
            ("custom/?override", Ok(true)),
        ] {
            let got = files
                .resolve_from(&files.base, pattern)
                .map(|f| f.is_some())
                .map_err(|_| ());
            assert_eq!(got, known, "{pattern}");
        }
        // An import in an imported file is taken from that file's directory (caddy's
        // doImport, `Dispenser.File()`): before, from the Corefile's, where it named
        // /etc/coredns/b.inc, a file dnsfix does not know, and the forward was unknown.
        let mut nested = files.clone();
        let dir = nested.dirs[0].1.as_mut().expect("read");
        dir.insert("b.override".into(), "import b.inc\n".into());
        dir.insert("b.inc".into(), "forward . 192.0.2.7\n".into());
        let parsed = parse_with(text, &nested).expect("parses");
        let RootForward::Forward(_, f) = parsed.root_forward() else {
            panic!("{:?}", parsed.root_forward());
        };
        assert_eq!(
            (f.to.as_slice(), f.file.as_deref()),
            (
                &servers(&["192.0.2.7"])[..],
                Some("/etc/coredns/custom/b.inc")
            )
        );
        let relative = Files {
            base: String::new(),
            ..files.clone()
        };
        assert_eq!(relative.resolve_from("", "custom/*.override"), Ok(None));
        // A `.server` file that serves `.:53` beside the Corefile's own: CoreDNS stops,
        // "already defined" (core/dnsserver/register.go at 4b26cced); before, dnsfix read
        // it as loaded. Another port, or a `bind` of its own, is CoreDNS's to judge.
        let with = |server: &str| {
            let mut twice = files.clone();
            let dir = twice.dirs[0].1.as_mut().expect("read");
            dir.insert("dup.server".into(), server.to_owned());
            parse_with(text, &twice)
        };
        let refused = with("dns://.:53 {\n  forward . 192.0.2.9\n}\n").expect_err("refused");
        assert!(refused.contains("already defined"), "{refused}");
        assert!(with(".:5353 {\n  forward . 192.0.2.9\n}\n").is_ok());
        assert!(with(". {\n  bind 127.0.0.2\n  forward . 192.0.2.9\n}\n").is_ok());
        assert!(parse(".:53 {\n}\nexample.org example.ORG.:53 {\n}\n").is_err());
        assert!(parse(". {\n}\nexample.org:53 {\n}\n").is_ok());
        assert!(glob_match("*.override", "a.override"));
        assert!(!glob_match("*.override", "a.server"));
        assert!(glob_match("a*b?c", "axxbyc") && !glob_match("a*b?c", "axxbc"));
    }

    /// Snippets are read where `import` puts them; a file CoreDNS imports is not readable
    /// here: where the root `forward .` may come from one (imported before it, or with none
    /// of its own, or no root block beside a top-level import), it is unknown. k3s's own
    /// imports come after its `forward .`, which comes first, so that one is known.
    #[test]
    fn snippets_are_read_and_imported_files_leave_the_root_forward_unknown() {
        let snippet = "(common) {\n    errors\n    cache 30\n    loop\n    forward . /etc/resolv.conf\n}\ncluster.local:53 {\n    import common\n}\n.:53 {\n    import common\n    reload\n}\n";
        let parsed = parse(snippet).expect("parses");
        assert_eq!(parsed.blocks.len(), 2);
        assert!(parsed.blocks.iter().all(|b| b.loop_plugin));
        assert_eq!(root_targets(snippet), Ok(servers(&["/etc/resolv.conf"])));

        let helm = parse(HELM).expect("parses");
        assert!(helm.blocks.len() == 1 && helm.blocks[0].loop_plugin);
        assert_eq!(root_targets(HELM), Ok(servers(&["/etc/resolv.conf"])));

        let k3s = parse(K3S).expect("parses");
        assert_eq!(
            k3s.imports,
            [("/etc/coredns/custom/*.server".to_owned(), 22)]
        );
        assert_eq!(root_targets(K3S), Ok(servers(&["/etc/resolv.conf"])));

        for text in [
            ".:53 {\n    import /etc/coredns/custom/*.override\n    forward . /etc/resolv.conf\n}\n",
            ".:53 {\n    errors\n    import /etc/coredns/custom/*.override\n}\n",
            "cluster.local:53 {\n    forward . 10.96.0.10\n}\nimport /etc/coredns/custom/*.server\n",
            ".:53 {\n    forward . {$UPSTREAM}\n}\n",
            // CoreDNS puts its environment in every word, a directive's name and a block's
            // addresses too: with X unset, `forwa{$X}rd` is a `forward` that comes first,
            // and `{$ZONE}:53` may be the root zone.
            ".:53 {\n    forwa{$X}rd . 192.0.2.9\n    forward . 192.0.2.53\n}\n",
            "{$ZONE}:53 {\n    forward . 192.0.2.9\n}\ncluster.local:53 {\n    forward . 10.96.0.10\n}\n",
            ".:{$PORT} {\n    forward . 192.0.2.9\n}\n. {\n    forward . 192.0.2.53\n}\n",
        ] {
            let parsed = parse(text).expect("parses");
            assert!(
                matches!(parsed.root_forward(), RootForward::Unknown(_)),
                "{text}: {:?}",
                parsed.root_forward()
            );
            assert!(
                set_root_forward(text, &servers(&["192.0.2.53"])).is_err(),
                "{text}"
            );
        }
        // A snippet whose first word is `import`, imported where addresses begin: caddy
        // takes that word as on the line before (the snippet's line is earlier than the
        // import's), so `import` and `inner` are the block's addresses, not the `.` the
        // inner snippet holds. Before, dnsfix read a root block CoreDNS does not have.
        let nested = "(inner) {\n    .\n}\n(outer) {\n    import inner\n}\nimport outer\n{\n    forward . 192.0.2.53\n}\n";
        let parsed = parse(nested).expect("parses");
        assert_eq!(parsed.blocks[0].zones, ["import", "inner"]);
        assert_eq!(parsed.root_forward(), RootForward::NoRoot);
        // A root block without `forward .`, or none at all, forwards nowhere: known.
        let none = parse(".:53 {\n    whoami\n}\n").expect("parses");
        assert!(matches!(none.root_forward(), RootForward::NoForward(_)));
        let cluster_only = parse("cluster.local:53 {\n    forward . 10.96.0.10\n}\n");
        assert_eq!(
            cluster_only.expect("parses").root_forward(),
            RootForward::NoRoot
        );
    }

    /// The edit replaces the root `forward .` targets' bytes and nothing else, in the
    /// Corefiles kubeadm, k3s and Kubespray write and in the forms above; a second edit
    /// finds nothing to do. A snippet's `forward .` is left alone: other blocks import it.
    #[test]
    fn the_edit_keeps_every_other_byte() {
        let mut texts = vec![
            KUBEADM.to_owned(),
            K3S.to_owned(),
            HELM.to_owned(),
            KUBEADM.replace(
                "forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }",
                "forward . /etc/resolv.conf { max_concurrent 1000 }",
            ),
            KUBEADM.replace(".:53 {\n", ".:53\n{\n"),
            KUBEADM.replace(
                "       max_concurrent 1000\n    }",
                "       max_concurrent 1000 }",
            ),
            KUBEADM.replace('\n', "\r\n"),
            K3S.replace(
                "forward . /etc/resolv.conf",
                "forward  .   /etc/resolv.conf   # ours",
            ),
            KUBEADM.replace(
                "forward . /etc/resolv.conf",
                "forward .:53 /etc/resolv.conf",
            ),
            format!(".:5353 {{\n    forward . 192.0.2.9\n}}\n{KUBEADM}"),
        ];
        texts.extend(kubespray());
        let new = servers(&["192.0.2.53", "198.51.100.53"]);
        for text in &texts {
            let parsed = parse(text).expect("parses");
            let RootForward::Forward(_, forward) = parsed.root_forward() else {
                panic!("{text}");
            };
            let old = forward.to.join(" ");
            // The old targets' place, found apart from the parser: on the forward's line.
            let line_start: usize = text
                .split_inclusive('\n')
                .take(forward.line - 1)
                .map(str::len)
                .sum();
            let at = line_start + text[line_start..].find(&old).expect("on its line");
            let edit = set_root_forward(text, &new)
                .expect("edits")
                .expect("a change");
            assert_eq!(
                edit.text,
                format!(
                    "{}{}{}",
                    &text[..at],
                    new.join(" "),
                    &text[at + old.len()..]
                ),
                "{text}"
            );
            assert_eq!(set_root_forward(&edit.text, &new), Ok(None));
        }
        // Two root blocks: the edit is the one on port 53's, and says which block it is.
        let two = ".:5353 {\n    forward . 192.0.2.9\n}\n. {\n    forward . /etc/resolv.conf\n}\n";
        let edit = set_root_forward(two, &new)
            .expect("edits")
            .expect("a change");
        assert_eq!(
            (edit.block.as_str(), edit.line, edit.text.as_str()),
            (
                ".",
                5,
                ".:5353 {\n    forward . 192.0.2.9\n}\n. {\n    forward . 192.0.2.53 198.51.100.53\n}\n"
            )
        );
        let snippet =
            "(common) {\n    forward . /etc/resolv.conf\n}\n.:53 {\n    import common\n}\n";
        assert!(
            set_root_forward(snippet, &new).is_err_and(|e| e.contains("snippet common")),
            "the snippet's words are not the root block's alone"
        );
    }
}
