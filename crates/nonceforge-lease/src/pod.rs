//! Kubernetes StatefulSets: the machine id is the pod's index, and a lease on
//! exactly that id fences it. During a rolling update, a node partition or a
//! forced delete, two pods with one index can run at once for a while (the old
//! one not yet gone, or cut off but alive); the lease makes the newcomer wait
//! until the old one's lease is released or has lapsed, so that they never
//! both issue. docs/operations.md has the manifests.

use crate::error::{LeaseError, Result};
use crate::{Lease, LeaseOptions};
use nonceforge::{Layout, MachineId};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The label a StatefulSet's controller puts on each pod (Kubernetes 1.28+),
/// readable through the downward API as an environment variable or a file.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// Where a StatefulSet pod's index comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodIndex {
    /// An environment variable holding the index, or a name ending in it
    /// (`env:POD_INDEX` with `fieldRef: metadata.labels['apps.kubernetes.io/pod-index']`,
    /// or `env:POD_NAME` with `fieldRef: metadata.name`, `web-3`).
    Env(String),
    /// A downward API volume's labels file (`file:/etc/podinfo/labels`), read
    /// for the `apps.kubernetes.io/pod-index="N"` line.
    LabelsFile(PathBuf),
    /// The host name's trailing number (a StatefulSet pod's host name is its
    /// name, `web-3`).
    Hostname,
}

impl std::str::FromStr for PodIndex {
    type Err = LeaseError;

    /// `env:VAR`, `file:PATH` or `hostname`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |rule| LeaseError::BadOption {
            option: "pod index source",
            value: s.to_owned(),
            rule,
        };
        if let Some(var) = s.strip_prefix("env:") {
            if var.is_empty() || var.contains('=') || var.contains('\0') {
                return Err(bad("env:VAR needs a variable name (no '=' or NUL)"));
            }
            Ok(PodIndex::Env(var.to_owned()))
        } else if let Some(path) = s.strip_prefix("file:") {
            if path.is_empty() {
                return Err(bad("file:PATH needs a path"));
            }
            Ok(PodIndex::LabelsFile(PathBuf::from(path)))
        } else if s == "hostname" {
            Ok(PodIndex::Hostname)
        } else {
            Err(bad(
                "use env:VAR, file:PATH (a downward API labels file) or hostname",
            ))
        }
    }
}

impl PodIndex {
    /// The pod's index as a machine id.
    ///
    /// ```
    /// use nonceforge_lease::PodIndex;
    /// // SAFETY of the example: no other thread reads the environment.
    /// unsafe { std::env::set_var("EXAMPLE_POD_NAME", "nonces-3") };
    /// let source: PodIndex = "env:EXAMPLE_POD_NAME".parse()?;
    /// assert_eq!(source.read()?.get(), 3);
    /// # Ok::<(), nonceforge_lease::LeaseError>(())
    /// ```
    pub fn read(&self) -> Result<MachineId> {
        self.read_in(Layout::Standard)
    }

    /// The pod's index as a machine id of `layout`: up to 65535 in the wide
    /// one (a StatefulSet of more than 512 pods).
    pub fn read_in(&self, layout: Layout) -> Result<MachineId> {
        match self {
            PodIndex::Env(var) => Ok(MachineId::from_env_in(layout, var)?),
            PodIndex::Hostname => {
                let host = MachineId::this_host().ok_or(LeaseError::BadOption {
                    option: "pod index source",
                    value: "hostname".into(),
                    rule: "this host's name cannot be read",
                })?;
                Ok(MachineId::from_trailing_number_in(
                    layout, "hostname", &host,
                )?)
            }
            PodIndex::LabelsFile(path) => {
                let shown = path.display().to_string();
                let text = std::fs::read_to_string(path).map_err(|_| LeaseError::BadOption {
                    option: "pod index source",
                    value: shown.clone(),
                    rule: "the labels file cannot be read (a downwardAPI volume with metadata.labels)",
                })?;
                let value = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix(POD_INDEX_LABEL)?.strip_prefix('='))
                    .ok_or(LeaseError::BadOption {
                        option: "pod index source",
                        value: shown.clone(),
                        rule: "the labels file has no apps.kubernetes.io/pod-index line (Kubernetes 1.28+ sets it on StatefulSet pods)",
                    })?;
                let digits = value.trim().trim_matches('"');
                let index = digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse::<u64>().ok())
                    .flatten()
                    .ok_or(LeaseError::BadOption {
                        option: "pod index source",
                        value: shown,
                        rule: "apps.kubernetes.io/pod-index is not a number",
                    })?;
                Ok(MachineId::new_in(layout, index)?)
            }
        }
    }
}

impl Lease {
    /// Leases exactly `machine_id` — a StatefulSet pod's index — in the store
    /// at `url`, waiting while another member holds it (the pod this one
    /// replaces, still running or cut off; or a second pod with the same
    /// index), up to `max_wait` (`None`: as long as it takes). The wait is
    /// logged once, as a warning, naming the id. `options.ids` is ignored:
    /// the id is the one given. Fails as [`Lease::acquire`] does, and with
    /// [`LeaseError::AllTaken`] when `max_wait` passes.
    pub fn acquire_exact(
        url: &str,
        machine_id: MachineId,
        options: &LeaseOptions,
        max_wait: Option<Duration>,
    ) -> Result<Lease> {
        let id = machine_id.get();
        let options = LeaseOptions {
            ids: id..=id,
            ..options.clone()
        };
        let retry = (options.ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let start = Instant::now();
        let mut told = false;
        loop {
            match Lease::acquire(url, &options) {
                Err(LeaseError::AllTaken { .. })
                    if max_wait.is_none_or(|w| start.elapsed() + retry <= w) =>
                {
                    if !told {
                        log::warn!(
                            "nonceforge-lease: machine id {id} is held by another member (the pod this one replaces, or another with the same index): waiting for it to be released or to lapse (at most the TTL, {} ms, after that member stops renewing)",
                            options.ttl.as_millis()
                        );
                        told = true;
                    }
                    std::thread::sleep(retry);
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_and_refuse_by_name() {
        assert_eq!(
            "env:POD_INDEX".parse::<PodIndex>().unwrap(),
            PodIndex::Env("POD_INDEX".into())
        );
        assert_eq!(
            "file:/etc/podinfo/labels".parse::<PodIndex>().unwrap(),
            PodIndex::LabelsFile("/etc/podinfo/labels".into())
        );
        assert_eq!("hostname".parse::<PodIndex>().unwrap(), PodIndex::Hostname);
        for bad in ["", "env:", "file:", "env:A=B", "pod-index", "ENV:X"] {
            let e = bad.parse::<PodIndex>().unwrap_err().to_string();
            assert!(e.starts_with("pod index source = "), "{bad}: {e}");
        }
    }

    #[test]
    fn labels_files() {
        let dir = std::env::temp_dir().join(format!("nf-pod-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("labels");
        let read = |text: &str| {
            std::fs::write(&file, text).unwrap();
            PodIndex::LabelsFile(file.clone()).read()
        };
        let ok = "app=\"nonces\"\napps.kubernetes.io/pod-index=\"3\"\nstatefulset.kubernetes.io/pod-name=\"nonces-3\"\n";
        assert_eq!(read(ok).unwrap().get(), 3);
        assert_eq!(read("apps.kubernetes.io/pod-index=\"0\"").unwrap().get(), 0);
        assert_eq!(
            read("apps.kubernetes.io/pod-index=\"007\"").unwrap().get(),
            7
        );
        for (text, rule) in [
            ("app=\"nonces\"\n", "no apps.kubernetes.io/pod-index line"),
            ("apps.kubernetes.io/pod-index=\"\"", "not a number"),
            ("apps.kubernetes.io/pod-index=\"-1\"", "not a number"),
            ("apps.kubernetes.io/pod-index=\"3a\"", "not a number"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(rule), "{text}: {e}");
        }
        let e = read("apps.kubernetes.io/pod-index=\"512\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("511"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        let e = PodIndex::LabelsFile(dir.join("labels")).read().unwrap_err();
        assert!(e.to_string().contains("cannot be read"), "{e}");
    }

    /// testdata/vectors/pod-index.json, which Go's tests read too.
    #[test]
    fn the_shared_vectors() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/vectors/pod-index.json"
        ))
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["label"], POD_INDEX_LABEL);
        for case in v["sources"].as_array().unwrap() {
            let source = case["source"].as_str().unwrap();
            assert_eq!(
                source.parse::<PodIndex>().is_ok(),
                case["ok"].as_bool().unwrap(),
                "{source}"
            );
        }
        let dir = std::env::temp_dir().join(format!("nf-pod-vectors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("labels");
        let layout = |case: &serde_json::Value| {
            Layout::parse(case["layout"].as_str().unwrap_or("standard")).unwrap()
        };
        for case in v["labels_files"].as_array().unwrap() {
            std::fs::write(&file, case["text"].as_str().unwrap()).unwrap();
            let got = PodIndex::LabelsFile(file.clone()).read_in(layout(case));
            match case["index"].as_u64() {
                Some(index) => assert_eq!(got.unwrap().get() as u64, index, "{case}"),
                None => {
                    let e = got.unwrap_err().to_string();
                    assert!(e.contains(case["refused"].as_str().unwrap()), "{case}: {e}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        for (i, case) in v["env_values"].as_array().unwrap().iter().enumerate() {
            let var = format!("NF_POD_VECTOR_{}_{i}", std::process::id());
            // SAFETY: a variable of this test's own; no other thread reads it.
            unsafe { std::env::set_var(&var, case["value"].as_str().unwrap()) };
            let got = PodIndex::Env(var).read_in(layout(case));
            match case["index"].as_u64() {
                Some(index) => assert_eq!(got.unwrap().get() as u64, index, "{case}"),
                None => assert!(got.is_err(), "{case}"),
            }
        }
    }
}
