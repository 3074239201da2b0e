//! The repository's shared test vectors (`testdata/vectors/`), which the Go
//! module's tests read too.

/// The vectors file `name`, parsed; `None` when this crate was packed alone
/// (cargo package), where the repository's vectors are not beside it.
pub(crate) fn read(name: &str) -> Option<serde_json::Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/vectors");
    let Ok(text) = std::fs::read_to_string(format!("{dir}/{name}")) else {
        assert!(
            !std::path::Path::new(dir).exists(),
            "cannot read {dir}/{name}"
        );
        return None;
    };
    Some(serde_json::from_str(&text).expect("the vectors are JSON"))
}
