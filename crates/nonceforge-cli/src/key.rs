//! Reading a base key from a file or the environment — never from a flag's value,
//! which would leak into process lists and shell history.

use crate::CliError;
use base64::Engine;
use zeroize::Zeroizing;

/// The environment variable that may hold the base key (hex or base64).
pub const KEY_ENV: &str = "NONCEFORGE_KEY";

/// The environment variable that may hold the external-id master key.
pub const EXTID_KEY_ENV: &str = "NONCEFORGE_EXTID_KEY";

/// Reads the key from `file` if given, else from the environment variable
/// `env`; `None` if neither.
pub fn load(
    file: Option<&std::path::Path>,
    env: &str,
) -> Result<Option<Zeroizing<Vec<u8>>>, CliError> {
    let (text, source) = match file {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                CliError::Usage(format!(
                    "--key-file {}: cannot read it: {e}",
                    path.display()
                ))
            })?;
            let text = Zeroizing::new(String::from_utf8(bytes).map_err(|_| {
                CliError::Usage(format!(
                    "--key-file {}: must hold the key as hex or base64 text",
                    path.display()
                ))
            })?);
            (text, format!("--key-file {}", path.display()))
        }
        None => match std::env::var(env) {
            Ok(v) => (Zeroizing::new(v), env.to_owned()),
            Err(_) => return Ok(None),
        },
    };
    let key = decode(text.trim()).ok_or_else(|| {
        CliError::Usage(format!(
            "{source}: the key must be hex or base64 (standard or URL-safe) of at least 32 bytes"
        ))
    })?;
    if key.len() < 32 {
        return Err(CliError::Usage(format!(
            "{source}: the key is {} bytes; it must be at least 32",
            key.len()
        )));
    }
    Ok(Some(key))
}

fn decode(text: &str) -> Option<Zeroizing<Vec<u8>>> {
    if text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return hex::decode(text).ok().map(Zeroizing::new);
    }
    for engine in [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ] {
        if let Ok(k) = engine.decode(text) {
            return Some(Zeroizing::new(k));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn hex_and_base64() {
        assert_eq!(decode("00ff").unwrap().as_slice(), &[0, 255]);
        assert_eq!(decode("AP8=").unwrap().as_slice(), &[0, 255]);
        assert_eq!(decode("AP8").unwrap().as_slice(), &[0, 255]);
        assert!(decode("not a key!").is_none());
    }
}
