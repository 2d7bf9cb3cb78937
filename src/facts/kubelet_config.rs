//! The kubelet `KubeletConfiguration` file: owns [`KubeletConfig`], its error type, and the
//! generic [`Located`] value-with-line that the other fact parsers reuse. Pure: it never
//! touches the network or the filesystem; [`KubeletConfig::parse`] takes the file's text.
//!
//! Where the file lives: `/etc/kubernetes/kubelet-config.yaml` (Kubespray, rendered from
//! `roles/kubernetes/node/templates/kubelet-config.v1beta1.yaml.j2`) or
//! `/var/lib/kubelet/config.yaml` (kubeadm). Only the DNS-relevant keys are extracted
//! (`resolvConf`, `clusterDNS`, `clusterDomain`), plus `kind`/`apiVersion` to recognise the file.
//!
//! The YAML is validated with serde_norway; line numbers of keys come from a textual scan for
//! the key at column 0, which is where every top-level key of a block mapping sits. A key that
//! appears twice is an error, except in the kubelet's own `--config` file, which it reads
//! leniently ([`KubeletConfig::parse_lenient`]): the scan takes a key's last line, whose
//! value that read keeps.

use serde::Serialize;
use serde_norway::{Mapping, Value};

/// A value together with the 1-based line it was read from (0 when the source has no lines,
/// e.g. `/proc/<pid>/cmdline`, or the key could not be located textually).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
}

impl<T> Located<T> {
    pub fn new(value: T, line: usize) -> Self {
        Located { value, line }
    }
}

/// The DNS-relevant part of a KubeletConfiguration file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub struct KubeletConfig {
    /// `kind`, normally `KubeletConfiguration`.
    pub kind: Option<String>,
    /// `apiVersion`, normally `kubelet.config.k8s.io/v1beta1`.
    pub api_version: Option<String>,
    /// `resolvConf`. `Some("")` is meaningful: kubelet then gives Default-policy pods
    /// `nameserver 127.0.0.1` and `search .` (kubelet dns.go `GetPodDNS`). `None` means the key
    /// is absent or null, and kubelet falls back to its default `/etc/resolv.conf`.
    pub resolv_conf: Option<Located<String>>,
    /// `clusterDNS` (block or flow list). `Some([])` is an explicit empty list: ClusterFirst pods
    /// then fall back to Default with the `MissingClusterDNS` event.
    pub cluster_dns: Option<Located<Vec<String>>>,
    /// `clusterDomain`.
    pub cluster_domain: Option<Located<String>>,
    /// `containerRuntimeEndpoint`: the CRI socket (from 1.27; defaults to containerd's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_runtime_endpoint: Option<Located<String>>,
    /// Every key that spells the internal field name `ResolverConfig` in some case, with
    /// its value, in file order: kubelet 1.28 to 1.31 took resolvConf from a `--config-dir`
    /// drop-in only so (kubernetes#126630). Nothing else reads them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resolver_configs: Vec<(String, Located<String>)>,
}

/// Why a kubelet config file could not be read. Kubelet refuses to start on every one of these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum KubeletConfigError {
    #[error("kubelet config is not valid yaml at line {line}, column {column}: {message}")]
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("kubelet config is empty (no yaml document, only blank lines or comments)")]
    Empty,
    #[error("kubelet config document at line {line} is a {found}, not a mapping")]
    NotAMapping { found: &'static str, line: usize },
    #[error("kubelet config key `{key}` at line {line} must be {expected}, found {found}")]
    WrongType {
        key: &'static str,
        line: usize,
        expected: &'static str,
        found: &'static str,
    },
}

impl KubeletConfig {
    /// Parses a KubeletConfiguration YAML document as the kubelet decodes a `--config-dir`
    /// drop-in: strictly (a duplicate key is an error: `DecodeKubeletConfigurationIntoJSON`).
    ///
    /// Type checks mirror kubelet's decoding into `KubeletConfiguration` (via JSON): a string
    /// field given a number or a list is an error, a null value counts as absent (the v1beta1
    /// fields are pointers or omitempty, so null leaves kubelet's default in place).
    pub fn parse(text: &str) -> Result<KubeletConfig, KubeletConfigError> {
        Self::from_top_level(text, load_top_level(text))
    }

    /// Parses the kubelet's `--config` file as the kubelet does: where strict decoding
    /// fails on a key written twice (an `echo >>` edit), it decodes again leniently and
    /// takes the last (pkg/kubelet/kubeletconfig/util/codec `DecodeKubeletConfiguration`:
    /// "Using lenient decoding as strict decoding failed"), and starts.
    pub fn parse_lenient(text: &str) -> Result<KubeletConfig, KubeletConfigError> {
        let strict = load_top_level(text);
        match &strict {
            Err(e) if e.message.contains("duplicate entry with key ") => match last_wins(text) {
                Some(value) => Self::from_top_level(text, Ok(classify(text, value))),
                None => Self::from_top_level(text, strict),
            },
            _ => Self::from_top_level(text, strict),
        }
    }

    fn from_top_level(
        text: &str,
        top: Result<TopLevel, YamlSyntax>,
    ) -> Result<KubeletConfig, KubeletConfigError> {
        let mapping = match top.map_err(KubeletConfigError::from)? {
            TopLevel::Empty => return Err(KubeletConfigError::Empty),
            TopLevel::Mapping(mapping) => mapping,
            TopLevel::Other { found, line } => {
                return Err(KubeletConfigError::NotAMapping { found, line });
            }
        };
        let line_of = |key: &str| top_level_key_line(text, key);

        Ok(KubeletConfig {
            kind: mapping
                .get("kind")
                .and_then(Value::as_str)
                .map(str::to_string),
            api_version: mapping
                .get("apiVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
            resolv_conf: string_field(&mapping, "resolvConf", &line_of)?,
            cluster_dns: string_list_field(&mapping, "clusterDNS", &line_of)?,
            cluster_domain: string_field(&mapping, "clusterDomain", &line_of)?,
            container_runtime_endpoint: string_field(
                &mapping,
                "containerRuntimeEndpoint",
                &line_of,
            )?
            .filter(|l| !l.value.is_empty()),
            resolver_configs: resolver_configs(&mapping, &line_of),
        })
    }
}

/// The keys that spell `ResolverConfig` in any case (Go's encoding/json matches field names
/// so) with a string value.
fn resolver_configs(
    mapping: &Mapping,
    line_of: &dyn Fn(&str) -> usize,
) -> Vec<(String, Located<String>)> {
    mapping
        .iter()
        .filter_map(|(k, v)| Some((k.as_str()?, v.as_str()?)))
        .filter(|(k, _)| k.eq_ignore_ascii_case("resolverConfig"))
        .map(|(k, v)| (k.to_owned(), Located::new(v.to_owned(), line_of(k))))
        .collect()
}

fn string_field(
    mapping: &Mapping,
    key: &'static str,
    line_of: &dyn Fn(&str) -> usize,
) -> Result<Option<Located<String>>, KubeletConfigError> {
    match mapping.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => Ok(Some(Located::new(value.clone(), line_of(key)))),
        Some(other) => Err(KubeletConfigError::WrongType {
            key,
            line: line_of(key),
            expected: "a string",
            found: value_kind(other),
        }),
    }
}

fn string_list_field(
    mapping: &Mapping,
    key: &'static str,
    line_of: &dyn Fn(&str) -> usize,
) -> Result<Option<Located<Vec<String>>>, KubeletConfigError> {
    let wrong = |found| KubeletConfigError::WrongType {
        key,
        line: line_of(key),
        expected: "a list of strings",
        found,
    };
    match mapping.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Sequence(items)) => {
            let mut values = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(value) => values.push(value.clone()),
                    // The kubelet decodes YAML as JSON: a null item of a string list is
                    // "" (Kubespray's `- {{ manual_dns_server }}` with its default "").
                    Value::Null => values.push(String::new()),
                    other => return Err(wrong(value_kind(other))),
                }
            }
            Ok(Some(Located::new(values, line_of(key))))
        }
        Some(other) => Err(wrong(value_kind(other))),
    }
}

/// The top-level node of a YAML document, as far as the config parsers care; `M` is how
/// a mapping is kept.
pub(crate) enum TopLevel<M = Mapping> {
    /// No document at all (empty file, only comments), which YAML reads as null.
    Empty,
    Mapping(M),
    /// Anything else; `line` is the first line with content.
    Other {
        found: &'static str,
        line: usize,
    },
}

/// A YAML syntax error with its 1-based position, shared by the config parsers.
#[derive(Debug)]
pub(crate) struct YamlSyntax {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

impl From<YamlSyntax> for KubeletConfigError {
    fn from(err: YamlSyntax) -> Self {
        KubeletConfigError::Yaml {
            line: err.line,
            column: err.column,
            message: err.message,
        }
    }
}

/// Parses `text` as one YAML document and classifies its top-level node.
pub(crate) fn load_top_level(text: &str) -> Result<TopLevel, YamlSyntax> {
    let value: Value = serde_norway::from_str(text).map_err(|err| yaml_error(text, &err))?;
    Ok(classify(text, value))
}

/// The first YAML document of `text` as go-yaml v2 reads it into a `yaml.MapSlice`, the
/// way k3s's `configfilearg` reads its config files (`yaml.Unmarshal(bytes, &data)`, k3s-io/k3s
/// pkg/configfilearg/parser.go @ f646604): `yaml.Unmarshal` decodes the first document and
/// never reads on, and a `MapSlice` keeps a key written twice as two entries, in file order
/// (go-yaml refuses repeated keys only in strict mode, which k3s does not use). A value that
/// is itself a mapping is read strictly.
pub(crate) fn load_first_entries(text: &str) -> Result<TopLevel<Vec<(Value, Value)>>, YamlSyntax> {
    let first = || serde_norway::Deserializer::from_str(text).next();
    let Some(document) = first() else {
        return Ok(TopLevel::Empty);
    };
    let error = |err: serde_norway::Error| yaml_error(text, &err);
    match serde::Deserialize::deserialize(document).map(|LastWins(value)| value) {
        Ok(Value::Null) => return Ok(TopLevel::Empty),
        // Read again as entries below, which also says what is wrong with one that fails.
        Ok(Value::Mapping(_)) | Err(_) => {}
        Ok(other) => {
            return Ok(TopLevel::Other {
                found: value_kind(&other),
                line: first_content_line(text),
            });
        }
    }
    let Some(document) = first() else {
        return Ok(TopLevel::Empty);
    };
    let Entries(entries) = serde::Deserialize::deserialize(document).map_err(error)?;
    Ok(TopLevel::Mapping(entries))
}

/// A top-level mapping's entries in file order, a key written twice kept twice.
struct Entries(Vec<(Value, Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EntriesVisitor)
    }
}

struct EntriesVisitor;

impl<'de> serde::de::Visitor<'de> for EntriesVisitor {
    type Value = Entries;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<Value, Value>()? {
            entries.push(entry);
        }
        Ok(Entries(entries))
    }
}

fn classify(text: &str, value: Value) -> TopLevel {
    match value {
        Value::Null => TopLevel::Empty,
        Value::Mapping(mapping) => TopLevel::Mapping(mapping),
        other => TopLevel::Other {
            found: value_kind(&other),
            line: first_content_line(text),
        },
    }
}

/// `text` as the kubelet's lenient decoding reads it ([`KubeletConfig::parse_lenient`]): a
/// key written twice in a mapping keeps its last value. `None` where even that fails.
pub(crate) fn last_wins(text: &str) -> Option<Value> {
    serde_norway::from_str::<LastWins>(text)
        .ok()
        .map(|LastWins(value)| value)
}

/// A YAML document read as a lenient decoder (go-yaml without strict mode) reads it: a key
/// written twice in a mapping keeps its last value. A tagged node is refused (the strict
/// error stands).
struct LastWins(Value);

impl<'de> serde::Deserialize<'de> for LastWins {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LastWinsVisitor).map(LastWins)
    }
}

struct LastWinsVisitor;

impl<'de> serde::de::Visitor<'de> for LastWinsVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(LastWins(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Sequence(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut mapping = Mapping::new();
        while let Some((LastWins(key), LastWins(value))) = map.next_entry()? {
            mapping.insert(key, value);
        }
        Ok(Value::Mapping(mapping))
    }
}

/// Converts a serde_norway error into a [`YamlSyntax`], moving the position into the
/// structured fields (and out of the message, which otherwise repeats it).
fn yaml_error(text: &str, err: &serde_norway::Error) -> YamlSyntax {
    let mut message = err.to_string();
    // serde_norway marks a duplicate key at the start of its mapping; the line an operator
    // must fix is the second occurrence.
    let duplicate = duplicate_key_line(text, &message).map(|line| (line, 1));
    let (line, column) = match (duplicate, err.location()) {
        (Some(position), _) => position,
        (None, Some(location)) => (location.line(), location.column()),
        // Errors without a mark (e.g. "more than one document") get the line of the second
        // document marker when there is one, else the first line with content.
        (None, None) => (
            second_document_line(text).unwrap_or_else(|| first_content_line(text)),
            1,
        ),
    };
    if let Some(location) = err.location() {
        let repeated = format!(" at line {} column {}", location.line(), location.column());
        if let Some(at) = message.find(&repeated) {
            message.replace_range(at..at + repeated.len(), "");
        }
    }
    YamlSyntax {
        line,
        column,
        message,
    }
}

/// For serde_norway's `duplicate entry with key "K"` message: the line of the second `K:` key
/// among lines with the same indentation (so a nested duplicate is found as well).
fn duplicate_key_line(text: &str, message: &str) -> Option<usize> {
    let quoted = message.strip_prefix("duplicate entry with key ")?;
    let key = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut first_at_indent: Vec<usize> = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let body = line.trim_start_matches(' ');
        let body = body.strip_prefix("- ").unwrap_or(body);
        if key_at(body, key) {
            let indent = line.len() - line.trim_start_matches(' ').len();
            if first_at_indent.contains(&indent) {
                return Some(index + 1);
            }
            first_at_indent.push(indent);
        }
    }
    None
}

/// A short human name for a YAML node's type, used in error messages.
pub(crate) fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "sequence",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged value",
    }
}

/// 1-based line of a top-level mapping key: the last line that starts (at column 0) with the
/// key, bare or quoted, followed by optional blanks and a `:` that ends the line or is followed
/// by a blank (YAML's rule for a mapping indicator); the last, as a lenient read keeps a
/// repeated key's last value. Falls back to the last line that contains the key followed by
/// `:` anywhere (flow mappings such as `{resolvConf: /x}`, indented JSON), then to 0.
pub(crate) fn top_level_key_line(text: &str, key: &str) -> usize {
    if let Some(line) = top_level_key_lines(text, key).last() {
        return *line;
    }
    let lines: Vec<&str> = text_lines(text).collect();
    lines
        .iter()
        .rposition(|line| {
            line.match_indices(key).any(|(at, _)| {
                let before = line[..at].chars().last();
                let quoted = matches!(before, Some('"' | '\''));
                let start = if quoted { at - 1 } else { at };
                let boundary = start == 0
                    || matches!(line[..start].chars().last(), Some(' ' | '\t' | '{' | ','));
                boundary && key_at(&line[start..], key)
            })
        })
        .map_or(0, |index| index + 1)
}

/// The 1-based lines that start with `key` used as a mapping key, in order: each entry of a
/// key written more than once.
pub(crate) fn top_level_key_lines(text: &str, key: &str) -> Vec<usize> {
    text_lines(text)
        .enumerate()
        .filter(|(_, line)| key_at(line, key))
        .map(|(index, _)| index + 1)
        .collect()
}

/// The lines of `text`, without a CR before the LF or a byte order mark.
fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').map(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line);
        line.strip_prefix('\u{feff}').unwrap_or(line)
    })
}

/// True when `line` starts with `key` (bare, `"key"` or `'key'`) used as a mapping key.
fn key_at(line: &str, key: &str) -> bool {
    let rest = ['"', '\'']
        .iter()
        .find_map(|quote| {
            line.strip_prefix(*quote)?
                .strip_prefix(key)?
                .strip_prefix(*quote)
        })
        .or_else(|| line.strip_prefix(key));
    let Some(rest) = rest else {
        return false;
    };
    let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix(':') else {
        return false;
    };
    after.is_empty() || after.starts_with([' ', '\t', '\r'])
}

/// First line that is neither blank, a comment, nor a `---` document marker; 1 if none.
fn first_content_line(text: &str) -> usize {
    text.split('\n')
        .position(|line| {
            let trimmed = line.trim();
            !trimmed.is_empty() && !trimmed.starts_with('#') && trimmed != "---"
        })
        .map_or(1, |index| index + 1)
}

/// Line of the `---` that starts a second document, if the text has one.
pub(crate) fn second_document_line(text: &str) -> Option<usize> {
    let mut seen_content = false;
    for (index, line) in text.split('\n').enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed.starts_with("--- ") {
            if seen_content {
                return Some(index + 1);
            }
        } else if !trimmed.trim_start().is_empty() && !trimmed.trim_start().starts_with('#') {
            seen_content = true;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kubespray's kubelet-config.yaml as `kubelet-config.v1beta1.yaml.j2` renders it with the
    /// defaults (nodelocaldns on, Ubuntu 22.04 vars file), plus an operator's comments.
    const KUBESPRAY: &str = r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
nodeStatusUpdateFrequency: "10s"
failSwapOn: True
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: True
  x509:
    clientCAFile: /etc/kubernetes/ssl/ca.crt
authorization:
  mode: Webhook
staticPodPath: /etc/kubernetes/manifests
cgroupDriver: systemd
containerLogMaxFiles: 5
containerLogMaxSize: 10Mi
maxPods: 110
podPidsLimit: -1
address: 10.0.0.11
readOnlyPort: 0
healthzPort: 10248
healthzBindAddress: 127.0.0.1
kubeletCgroups: /system.slice/kubelet.service
clusterDomain: cluster.local
protectKernelDefaults: true
rotateCertificates: true
# nodelocaldns is enabled, so pods talk to the link-local cache
clusterDNS:
- 169.254.25.10
kubeReservedCgroup: /kube.slice
resolvConf: "/run/systemd/resolve/resolv.conf"  # kube_resolv_conf from vars/ubuntu-22.yml
shutdownGracePeriod: 60s
shutdownGracePeriodCriticalPods: 20s
"#;

    /// `/var/lib/kubelet/config.yaml` as kubeadm 1.30 writes it on a systemd-resolved host
    /// (kubelet_unix.go `mutateResolverConfig`), abridged.
    const KUBEADM: &str = "apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: \"\"
cpuManagerReconcilePeriod: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: \"0\"
  verbosity: 0
memorySwap: {}
resolvConf: /run/systemd/resolve/resolv.conf
rotateCertificates: true
staticPodPath: /etc/kubernetes/manifests
";

    #[test]
    fn kubespray_rendered_file() {
        let config = KubeletConfig::parse(KUBESPRAY).expect("kubespray config parses");
        assert_eq!(config.kind.as_deref(), Some("KubeletConfiguration"));
        assert_eq!(
            config.api_version.as_deref(),
            Some("kubelet.config.k8s.io/v1beta1")
        );
        assert_eq!(
            config.resolv_conf,
            Some(Located::new(
                "/run/systemd/resolve/resolv.conf".to_string(),
                32
            ))
        );
        assert_eq!(
            config.cluster_dns,
            Some(Located::new(vec!["169.254.25.10".to_string()], 29))
        );
        assert_eq!(
            config.cluster_domain,
            Some(Located::new("cluster.local".to_string(), 25))
        );
    }

    #[test]
    fn kubeadm_written_file() {
        let config = KubeletConfig::parse(KUBEADM).expect("kubeadm config parses");
        assert_eq!(config.kind.as_deref(), Some("KubeletConfiguration"));
        assert_eq!(
            config.resolv_conf,
            Some(Located::new(
                "/run/systemd/resolve/resolv.conf".to_string(),
                26
            ))
        );
        assert_eq!(
            config.cluster_dns,
            Some(Located::new(vec!["10.96.0.10".to_string()], 13))
        );
        assert_eq!(config.cluster_domain.map(|d| d.line), Some(15));
    }

    #[test]
    fn flow_list_quoted_keys_crlf_and_no_trailing_newline() {
        let text = "---\r\nkind: KubeletConfiguration\r\n\"clusterDNS\": [10.233.0.3, \"10.233.0.4\"]\r\n'resolvConf' : ''";
        let config = KubeletConfig::parse(text).expect("parses");
        assert_eq!(
            config.cluster_dns,
            Some(Located::new(
                vec!["10.233.0.3".to_string(), "10.233.0.4".to_string()],
                3
            ))
        );
        // An explicit empty resolvConf is kept: it means "no host DNS" to kubelet.
        assert_eq!(config.resolv_conf, Some(Located::new(String::new(), 4)));
    }

    #[test]
    fn absent_and_null_keys_are_none() {
        let text = "kind: KubeletConfiguration\nresolvConf:\nclusterDNS: ~\n";
        let config = KubeletConfig::parse(text).expect("parses");
        assert_eq!(config.resolv_conf, None);
        assert_eq!(config.cluster_dns, None);
        assert_eq!(config.cluster_domain, None);
    }

    /// Kubespray's template with dns_mode manual and manual_dns_server left at its
    /// default "" renders `- ` (kubelet-config.v1beta1.yaml.j2 @46dbdd39): a null item,
    /// which the kubelet reads as "" and drops as no IP address.
    #[test]
    fn a_null_list_item_is_an_empty_string() {
        let config =
            KubeletConfig::parse("kind: KubeletConfiguration\nclusterDNS:\n- \n").expect("parses");
        assert_eq!(
            config.cluster_dns,
            Some(Located::new(vec![String::new()], 2))
        );
    }

    #[test]
    fn empty_cluster_dns_list_is_kept() {
        let config = KubeletConfig::parse("clusterDNS: []\n").expect("parses");
        assert_eq!(config.cluster_dns, Some(Located::new(vec![], 1)));
    }

    #[test]
    fn key_inside_nested_mapping_is_not_top_level() {
        // Only the column-0 occurrence is the real key; the nested one must not be picked.
        let text = "extra:\n  resolvConf: /nested\nresolvConf: /etc/resolv.conf\n";
        let config = KubeletConfig::parse(text).expect("parses");
        assert_eq!(
            config.resolv_conf,
            Some(Located::new("/etc/resolv.conf".to_string(), 3))
        );
    }

    #[test]
    fn similar_key_prefix_is_not_matched() {
        let text = "resolvConfExtra: /x\nresolvConf: /y\n";
        let config = KubeletConfig::parse(text).expect("parses");
        assert_eq!(config.resolv_conf, Some(Located::new("/y".to_string(), 2)));
    }

    #[test]
    fn flow_mapping_document_falls_back_to_any_column() {
        let text = "{kind: KubeletConfiguration,\n resolvConf: /etc/resolv.conf}\n";
        let config = KubeletConfig::parse(text).expect("parses");
        assert_eq!(
            config.resolv_conf,
            Some(Located::new("/etc/resolv.conf".to_string(), 2))
        );
    }

    #[test]
    fn tab_indentation_names_the_line() {
        let text = "kind: KubeletConfiguration\nclusterDNS:\n\t- 10.96.0.10\nresolvConf: /x\n";
        let err = KubeletConfig::parse(text).expect_err("tabs are not yaml indentation");
        let KubeletConfigError::Yaml { line, .. } = &err else {
            panic!("unexpected error {err:?}");
        };
        assert_eq!(*line, 3);
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn unclosed_quote_names_the_line() {
        let text = "kind: KubeletConfiguration\nresolvConf: \"/run/systemd/resolve/resolv.conf\nclusterDomain: cluster.local\n";
        let err = KubeletConfig::parse(text).expect_err("unterminated string");
        let KubeletConfigError::Yaml { line, message, .. } = &err else {
            panic!("unexpected error {err:?}");
        };
        // libyaml reports where the scalar started (line 2) or where it hit end of input.
        assert!(*line >= 2, "{err}");
        assert!(!message.is_empty());
        assert!(
            err.to_string()
                .starts_with("kubelet config is not valid yaml at line")
        );
    }

    #[test]
    fn duplicate_key_is_an_error() {
        let text = "resolvConf: /a\nclusterDomain: cluster.local\nresolvConf: /b\n";
        let err = KubeletConfig::parse(text).expect_err("duplicate key");
        assert_eq!(
            err.to_string(),
            "kubelet config is not valid yaml at line 3, column 1: \
             duplicate entry with key \"resolvConf\""
        );
    }

    /// The kubelet's own file: a key written twice (an `echo >>` edit) is read leniently,
    /// the last value at its line; a drop-in (strict) still refuses it.
    #[test]
    fn a_duplicate_key_in_the_config_file_takes_the_last() {
        let text = "resolvConf: /run/systemd/resolve/resolv.conf\nclusterDomain: cluster.local\nauthentication:\n  x509: {}\n  x509: {clientCAFile: /a}\nresolvConf: /etc/resolv.conf\n";
        let config = KubeletConfig::parse_lenient(text).expect("lenient");
        assert_eq!(
            config.resolv_conf,
            Some(Located::new("/etc/resolv.conf".into(), 6))
        );
        assert_eq!(
            config.cluster_domain,
            Some(Located::new("cluster.local".into(), 2))
        );
        assert!(KubeletConfig::parse(text).is_err());
        // Another error is not forgiven.
        assert!(KubeletConfig::parse_lenient("resolvConf: [\n").is_err());
        assert!(KubeletConfig::parse_lenient("resolvConf: 5\nresolvConf: 6\n").is_err());
    }

    #[test]
    fn empty_and_comment_only_files() {
        assert_eq!(KubeletConfig::parse(""), Err(KubeletConfigError::Empty));
        assert_eq!(
            KubeletConfig::parse("# managed by ansible\n\n"),
            Err(KubeletConfigError::Empty)
        );
    }

    #[test]
    fn not_a_mapping() {
        let err = KubeletConfig::parse("# header\n- resolvConf: /x\n").expect_err("a list");
        assert_eq!(
            err,
            KubeletConfigError::NotAMapping {
                found: "sequence",
                line: 2
            }
        );
        assert_eq!(
            err.to_string(),
            "kubelet config document at line 2 is a sequence, not a mapping"
        );
        let err = KubeletConfig::parse("just a string\n").expect_err("a scalar");
        assert!(matches!(
            err,
            KubeletConfigError::NotAMapping {
                found: "string",
                ..
            }
        ));
    }

    #[test]
    fn wrong_types_name_key_and_line() {
        let err = KubeletConfig::parse("kind: KubeletConfiguration\nresolvConf: [/a, /b]\n")
            .expect_err("list for a string");
        assert_eq!(
            err.to_string(),
            "kubelet config key `resolvConf` at line 2 must be a string, found sequence"
        );
        let err = KubeletConfig::parse("clusterDNS: 10.96.0.10\n").expect_err("scalar for a list");
        assert_eq!(
            err,
            KubeletConfigError::WrongType {
                key: "clusterDNS",
                line: 1,
                expected: "a list of strings",
                found: "string"
            }
        );
        let err =
            KubeletConfig::parse("clusterDNS:\n- 10.96.0.10\n- 53\n").expect_err("number item");
        assert!(matches!(
            err,
            KubeletConfigError::WrongType {
                found: "number",
                ..
            }
        ));
    }

    #[test]
    fn multiple_documents_are_an_error_with_a_line() {
        let err = KubeletConfig::parse("kind: KubeletConfiguration\n---\nkind: Other\n")
            .expect_err("two documents");
        let KubeletConfigError::Yaml { line, .. } = err else {
            panic!("unexpected error {err:?}");
        };
        assert_eq!(line, 2);
    }

    #[test]
    fn error_serializes_with_a_tag() {
        let json = serde_json::to_value(KubeletConfigError::NotAMapping {
            found: "string",
            line: 1,
        })
        .expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"error": "not_a_mapping", "found": "string", "line": 1})
        );
    }

    #[test]
    fn huge_file_parses() {
        let mut text = String::from("kind: KubeletConfiguration\nclusterDNS:\n");
        for i in 0..10_000 {
            text.push_str(&format!("- 10.0.{}.{}\n", i / 256, i % 256));
        }
        text.push_str("resolvConf: /etc/resolv.conf\n");
        let config = KubeletConfig::parse(&text).expect("parses");
        assert_eq!(config.cluster_dns.map(|c| c.value.len()), Some(10_000));
        assert_eq!(config.resolv_conf.map(|r| r.line), Some(10_003));
    }
}
