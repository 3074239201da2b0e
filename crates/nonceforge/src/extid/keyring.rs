//! Versioned master keys, and the per-type keys derived from them.
//!
//! A keyring holds up to 16 master keys, each under a version number 0..=15, and
//! names one of them current: new ids are made with it, old ids still decode with
//! the key of the version they were made under. Every (id type, version, layout)
//! gets its own keys:
//!
//! ```text
//!   keys = HKDF-SHA256(ikm = master key of that version, salt = none,
//!                      info = "nonceforge/extid/v1/" ‖ label ‖ "/" ‖ type ‖ "/" ‖ version)
//! ```
//!
//! where the label names the layout (mode, rounds, UUID version, where the key
//! version travels: `layout_label` in the codec) or the derived half's key.
//!
//! so ids of two tables never correlate, and an id of one type decoded as another
//! gives an unrelated number (which the checks on [`super::Decoded`] then refuse).

use crate::error::{Error, Result};
use hkdf::Hkdf;
use sha2::Sha256;
use std::collections::BTreeMap;
use zeroize::Zeroizing;

/// The highest key version (versions travel in 4 bits).
pub const MAX_KEY_VERSION: u8 = 15;
// Error::KeyVersionOutOfRange says 0..=15 in its message.
const _: () = assert!(MAX_KEY_VERSION == 15);

/// Master keys under version numbers, one of them current.
///
/// ```
/// use nonceforge::extid::Keyring;
/// let mut ring = Keyring::new(0, &[7; 32])?;
/// ring.add(1, &[8; 32])?;          // rotate: new ids under version 1 …
/// ring.set_current(1)?;
/// assert_eq!(ring.current(), 1);   // … old ids still decode under version 0
/// # Ok::<(), nonceforge::Error>(())
/// ```
#[derive(Clone)]
pub struct Keyring {
    keys: BTreeMap<u8, Zeroizing<Vec<u8>>>,
    current: u8,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("versions", &self.keys.keys().collect::<Vec<_>>())
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl Keyring {
    /// A keyring with one master key (at least 32 bytes), current.
    pub fn new(version: u8, master_key: &[u8]) -> Result<Self> {
        let mut ring = Keyring {
            keys: BTreeMap::new(),
            current: version,
        };
        ring.add(version, master_key)?;
        Ok(ring)
    }

    /// Adds a master key under `version` (0..=15, not yet used).
    pub fn add(&mut self, version: u8, master_key: &[u8]) -> Result<()> {
        if version > MAX_KEY_VERSION {
            return Err(Error::KeyVersionOutOfRange { version });
        }
        if master_key.len() < 32 {
            return Err(Error::KeyTooShort {
                len: master_key.len(),
            });
        }
        if self.keys.contains_key(&version) {
            return Err(Error::KeyVersionTaken { version });
        }
        self.keys
            .insert(version, Zeroizing::new(master_key.to_vec()));
        Ok(())
    }

    /// Makes `version` (already added) the one new ids are made with.
    pub fn set_current(&mut self, version: u8) -> Result<()> {
        if !self.keys.contains_key(&version) {
            return Err(Error::UnknownKeyVersion { version });
        }
        self.current = version;
        Ok(())
    }

    /// The version new ids are made with.
    pub fn current(&self) -> u8 {
        self.current
    }

    /// The versions held, lowest first.
    pub fn versions(&self) -> impl Iterator<Item = u8> + '_ {
        self.keys.keys().copied()
    }

    /// `N` key bytes for (label, type, version).
    pub(crate) fn derive<const N: usize>(
        &self,
        label: &str,
        type_name: &str,
        version: u8,
    ) -> Result<Zeroizing<[u8; N]>> {
        let master = self
            .keys
            .get(&version)
            .ok_or(Error::UnknownKeyVersion { version })?;
        let info = format!("nonceforge/extid/v1/{label}/{type_name}/{version}");
        let mut okm = Zeroizing::new([0u8; N]);
        Hkdf::<Sha256>::new(None, master)
            .expand(info.as_bytes(), okm.as_mut())
            .expect("HKDF-SHA256 gives up to 8160 bytes; we ask for at most 64");
        Ok(okm)
    }
}

/// Checks an id type name: 1 to 63 characters, lower-case ASCII letters and
/// underscores, starting and ending with a letter (TypeID's prefix rule).
pub fn check_type_name(name: &str) -> Result<()> {
    let bad = |position: usize, rule: &'static str| Error::InvalidTypeName {
        name: crate::error::excerpt(name),
        position,
        rule,
    };
    if name.is_empty() || name.len() > 63 {
        return Err(bad(0, "it must be 1 to 63 characters long"));
    }
    for (i, c) in name.bytes().enumerate() {
        if !(c.is_ascii_lowercase() || c == b'_') {
            return Err(bad(i, "only a-z and _ are allowed"));
        }
    }
    if !name.as_bytes()[0].is_ascii_lowercase() {
        return Err(bad(0, "it must start with a letter"));
    }
    if !name.as_bytes()[name.len() - 1].is_ascii_lowercase() {
        return Err(bad(name.len() - 1, "it must end with a letter"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_keys() {
        let mut r = Keyring::new(3, &[1; 32]).unwrap();
        assert_eq!(
            r.add(3, &[2; 32]),
            Err(Error::KeyVersionTaken { version: 3 })
        );
        assert_eq!(
            r.add(16, &[2; 32]),
            Err(Error::KeyVersionOutOfRange { version: 16 })
        );
        assert_eq!(r.add(4, &[2; 31]), Err(Error::KeyTooShort { len: 31 }));
        assert_eq!(
            r.set_current(9),
            Err(Error::UnknownKeyVersion { version: 9 })
        );
        r.add(4, &[2; 32]).unwrap();
        r.set_current(4).unwrap();
        assert_eq!(r.versions().collect::<Vec<_>>(), [3, 4]);
        let a = r.derive::<16>("aes128", "user", 3).unwrap();
        let b = r.derive::<16>("aes128", "order", 3).unwrap();
        let c = r.derive::<16>("aes128", "user", 4).unwrap();
        let d = r.derive::<16>("feistel", "user", 3).unwrap();
        assert!(*a != *b && *a != *c && *a != *d);
        assert!(
            !format!("{r:?}").contains("1, 1"),
            "Debug never shows key bytes"
        );
    }

    #[test]
    fn type_names() {
        for ok in ["user", "a", "order_item", "x_y_z"] {
            check_type_name(ok).unwrap();
        }
        for (bad, pos) in [
            ("", 0),
            ("User", 0),
            ("_user", 0),
            ("user_", 4),
            ("us-er", 2),
            ("usér", 2),
        ] {
            match check_type_name(bad) {
                Err(Error::InvalidTypeName { position, .. }) => assert_eq!(position, pos, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert!(check_type_name(&"a".repeat(64)).is_err());
    }
}
