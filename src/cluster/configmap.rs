//! One key of a kube-system ConfigMap swapped for new text through kubectl, the way a
//! careful operator would: read the object, change the key only while it still holds what
//! the plan read (its sha256), and `kubectl replace` the object with the resourceVersion
//! just read, so an edit made in between is refused by the API server (409 Conflict)
//! rather than overwritten. Everything else in the object (labels, annotations, other
//! keys) goes back as it was read.

use serde_json::Value;

use super::{Kubectl, kubectl, valid_pod_name};
use crate::util::sha256_hex;

/// What a swap did.
#[derive(Debug, Clone, PartialEq)]
pub enum Swapped {
    /// Replaced: the object as it was read, and the new resourceVersion.
    Written {
        old: Value,
        resource_version: String,
    },
    /// The key already holds the new text.
    Already,
    /// The key holds neither the expected nor the new text, or the object changed
    /// between the read and the write: why.
    Stale(String),
    /// kubectl failed: why.
    Failed(String),
}

impl Kubectl {
    /// The ConfigMap `name` in kube-system as the API server returns it; `None` when there
    /// is none.
    pub async fn get_configmap(&mut self, name: &str) -> Result<Option<Value>, String> {
        if !valid_pod_name(name) {
            return Err(format!(
                "{}: not a ConfigMap name",
                crate::text::escape(name)
            ));
        }
        let out = self
            .run(&format!("get configmap {name} --ignore-not-found -o json"))
            .await?;
        if out.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let object: Value = serde_json::from_slice(&out)
            .map_err(|e| format!("kubectl's answer is not JSON: {e}"))?;
        if object["kind"] != "ConfigMap" || object["metadata"]["name"] != name {
            return Err(format!("kubectl's answer is not the ConfigMap {name}"));
        }
        Ok(Some(object))
    }

    /// `kubectl replace` of `object` (its metadata.resourceVersion makes it a compare-and-
    /// swap); the object the API server stored.
    async fn replace(&mut self, object: &Value) -> Result<Value, String> {
        let body = serde_json::to_string(object).map_err(|e| e.to_string())?;
        // The object goes in as one quoted word: nothing in it reaches the shell.
        let script = kubectl(
            &format!(
                "{}printf '%s' {} | ",
                self.prologue,
                crate::node_script::quote(&body)
            ),
            "replace -f - -o json",
            self.request_secs(),
        );
        let out = self.exec(&script).await?;
        serde_json::from_slice(&out).map_err(|e| format!("kubectl's answer is not JSON: {e}"))
    }

    /// Sets `key` of the ConfigMap `name` to `to`, only while it holds the text whose
    /// sha256 is `expect`.
    pub async fn swap_configmap_key(
        &mut self,
        name: &str,
        key: &str,
        expect: &str,
        to: &str,
    ) -> Swapped {
        let object = match self.get_configmap(name).await {
            Ok(Some(object)) => object,
            Ok(None) => return Swapped::Stale(format!("the ConfigMap {name} is gone")),
            Err(e) => return Swapped::Failed(e),
        };
        let now = object["data"][key].as_str();
        if now == Some(to) {
            return Swapped::Already;
        }
        if now.map(|t| sha256_hex(t.as_bytes())).as_deref() != Some(expect) {
            return Swapped::Stale(format!(
                "{name}'s {key} changed since it was read (resourceVersion now {})",
                object["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or("?")
            ));
        }
        if object["metadata"]["resourceVersion"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            return Swapped::Failed(format!(
                "the ConfigMap {name} came without a resourceVersion"
            ));
        }
        let mut new = object.clone();
        new["data"][key] = Value::String(to.to_owned());
        match self.replace(&new).await {
            Ok(stored) => Swapped::Written {
                old: object,
                resource_version: stored["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            },
            // The API server's answer to a stale resourceVersion.
            Err(e) if e.contains("the object has been modified") || e.contains("Conflict") => {
                Swapped::Stale(format!("{name} changed while it was being written: {e}"))
            }
            Err(e) => Swapped::Failed(e),
        }
    }
}
