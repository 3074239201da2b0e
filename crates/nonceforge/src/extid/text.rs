//! Text forms of an external id, each parsed strictly.
//!
//! | form | length | example |
//! |---|---|---|
//! | canonical UUID (RFC 9562 §4) | 36 | `0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4a` |
//! | base64url, no padding | 22 | `AZHzqGssjR6n8DxemxovSg` |
//! | Crockford base32 (TypeID's form) | 26 | `01j7sthtsch78afw1wbtdhtbta` |
//! | … with a type prefix | type + `_` + 26 | `user_01j7sthtsch78afw1wbtdhtbta` |
//! | … with a check character | + 1 | `user_01j7sthtsch78afw1wbtdhtbtaq` |
//!
//! Base32 writes the 128 bits as 26 five-bit digits, the first holding the top 3
//! bits (so it is 0-7), in the lower-case alphabet `0123456789abcdefghjkmnpqrstvwxyz`
//! (no i, l, o, u) — TypeID's suffix. Parsing follows TypeID's spec: lower case
//! only (an upper-case suffix is invalid there), no aliases (`o` for 0, `l` for
//! 1), so every id has exactly one spelling. The check character is
//! Crockford's: the 128-bit value mod 37, in `0-9 a-z` (as above) then `* ~ $ = u`.
//!
//! Every parse error names the form, the position (0-based, in characters) and
//! the rule broken.

use super::ExtId;
use crate::error::{Error, Result};
use base64::Engine;

const HEX: &[u8; 16] = b"0123456789abcdef";
const B32: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
const CHECK: &[u8; 37] = b"0123456789abcdefghjkmnpqrstvwxyz*~$=u";
/// Where the hyphens of a canonical UUID stand.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];

fn err(form: &'static str, position: usize, rule: &'static str) -> Error {
    Error::ParseId {
        form,
        position,
        rule,
    }
}

/// Which text form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TextForm {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex.
    #[default]
    Uuid,
    /// 22 characters of base64url, no padding.
    Base64Url,
    /// 26 characters of Crockford base32 (with the codec's prefix and check
    /// character, if it uses them).
    Base32,
}

impl std::str::FromStr for TextForm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "uuid" => Ok(TextForm::Uuid),
            "base64url" => Ok(TextForm::Base64Url),
            "base32" => Ok(TextForm::Base32),
            _ => Err(Error::ParseId {
                form: "format name",
                position: 0,
                rule: "the formats are uuid, base64url and base32",
            }),
        }
    }
}

impl ExtId {
    /// Writes the canonical UUID form into `out`.
    #[inline]
    pub fn write_uuid(&self, out: &mut [u8; 36]) {
        let mut j = 0;
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                out[j] = b'-';
                j += 1;
            }
            out[j] = HEX[(b >> 4) as usize];
            out[j + 1] = HEX[(b & 15) as usize];
            j += 2;
        }
    }

    /// The canonical UUID form, lower-case.
    pub fn to_uuid_string(&self) -> String {
        let mut out = [0u8; 36];
        self.write_uuid(&mut out);
        String::from_utf8(out.to_vec()).expect("hex digits and hyphens are ASCII")
    }

    /// Parses the canonical UUID form (hex digits in either case).
    #[inline]
    pub fn parse_uuid(s: &str) -> Result<ExtId> {
        let s = s.as_bytes();
        if s.len() != 36 {
            return Err(err(
                "uuid",
                s.len().min(36),
                "a UUID is 36 characters: 8-4-4-4-12 hex digits",
            ));
        }
        // All 32 digits through a table, errors sought only when one is bad.
        let mut out = [0u8; 16];
        let mut bad = (s[8] ^ b'-') | (s[13] ^ b'-') | (s[18] ^ b'-') | (s[23] ^ b'-');
        for (o, at) in out.iter_mut().zip(DIGIT_AT) {
            let (hi, lo) = (HEX_VALUE[s[at] as usize], HEX_VALUE[s[at + 1] as usize]);
            bad |= (hi | lo) & 0xf0;
            *o = (hi << 4) | (lo & 0x0f);
        }
        if bad != 0 {
            return Err(uuid_error(s));
        }
        Ok(ExtId(out))
    }

    /// Base64url without padding (22 characters).
    pub fn to_base64url(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.0)
    }

    /// Parses base64url without padding (exactly 22 characters; the last one
    /// must leave its 4 spare bits zero).
    pub fn parse_base64url(s: &str) -> Result<ExtId> {
        decode_base64url(
            s,
            "base64url",
            "a 16-byte id is 22 base64url characters, no padding",
            "the last character must leave its low 4 bits zero (A, Q, g or w)",
        )
        .map(ExtId)
    }

    /// Crockford base32, 26 characters, with an optional `type_` prefix and an
    /// optional check character.
    pub fn to_base32(&self, prefix: Option<&str>, check: bool) -> String {
        let v = u128::from_be_bytes(self.0);
        let mut out = String::with_capacity(prefix.map_or(0, |p| p.len() + 1) + 27);
        if let Some(p) = prefix {
            out.push_str(p);
            out.push('_');
        }
        out.push(B32[(v >> 125) as usize] as char);
        for i in (0..25).rev() {
            out.push(B32[((v >> (5 * i)) & 31) as usize] as char);
        }
        if check {
            out.push(CHECK[(v % 37) as usize] as char);
        }
        out
    }

    /// Parses the base32 form. With `prefix`, the text must start with
    /// `prefix_`; with `check`, it must end with the right check character.
    pub fn parse_base32(s: &str, prefix: Option<&str>, check: bool) -> Result<ExtId> {
        let mut body = s;
        let mut offset = 0;
        if let Some(p) = prefix {
            match s.rfind('_') {
                Some(at) if &s[..at] == p => {
                    body = &s[at + 1..];
                    offset = at + 1;
                }
                Some(at) => {
                    return Err(Error::WrongIdType {
                        expected: p.to_owned(),
                        found: crate::error::excerpt(&s[..at]),
                    });
                }
                None => {
                    return Err(err(
                        "base32",
                        0,
                        "the id must start with its type and _ (like user_…)",
                    ));
                }
            }
        } else if let Some(at) = s.find('_') {
            return Err(err("base32", at, "no type prefix is expected here"));
        }
        let want = 26 + check as usize;
        let b = body.as_bytes();
        if b.len() != want {
            return Err(err(
                "base32",
                offset + b.len().min(want),
                if check {
                    "the id is 26 base32 characters and a check character"
                } else {
                    "the id is 26 base32 characters"
                },
            ));
        }
        let mut v: u128 = 0;
        for (i, &c) in b[..26].iter().enumerate() {
            let d = b32_value(c).ok_or_else(|| {
                err(
                    "base32",
                    offset + i,
                    "only 0-9 and lower-case a-z without i, l, o, u (TypeID's alphabet)",
                )
            })?;
            if i == 0 && d > 7 {
                return Err(err(
                    "base32",
                    offset,
                    "the first character holds 3 bits: 0-7",
                ));
            }
            v = (v << 5) | d as u128;
        }
        if check {
            let c = b[26];
            if CHECK[(v % 37) as usize] != c {
                return Err(if CHECK.contains(&c) {
                    err(
                        "base32",
                        offset + 26,
                        "the check character does not match: a character is mistyped",
                    )
                } else {
                    err(
                        "base32",
                        offset + 26,
                        "a check character is 0-9, a-z without i l o, or * ~ $ = u",
                    )
                });
            }
        }
        Ok(ExtId(v.to_be_bytes()))
    }
}

/// Strict base64url without padding for exactly `N` bytes: errors name `form`,
/// the position, and `length_rule` or `last_rule` (the last character's spare
/// bits must be zero, so every value has exactly one spelling).
pub(crate) fn decode_base64url<const N: usize>(
    text: &str,
    form: &'static str,
    length_rule: &'static str,
    last_rule: &'static str,
) -> Result<[u8; N]> {
    let want = (N * 8).div_ceil(6);
    if text.len() != want {
        return Err(err(form, text.len().min(want), length_rule));
    }
    let mut out = [0u8; N];
    match base64::engine::general_purpose::URL_SAFE_NO_PAD.decode_slice(text, &mut out) {
        Ok(n) if n == N => Ok(out),
        Err(base64::DecodeSliceError::DecodeError(base64::DecodeError::InvalidByte(p, _))) => {
            Err(err(form, p, "only A-Z a-z 0-9 - _"))
        }
        Err(base64::DecodeSliceError::DecodeError(base64::DecodeError::InvalidLastSymbol(
            p,
            _,
        ))) => Err(err(form, p, last_rule)),
        _ => Err(err(form, 0, length_rule)),
    }
}

/// Where each byte's two hex digits begin in the canonical form.
const DIGIT_AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/// Hex digit values; 0xff for every other byte.
static HEX_VALUE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The first rule a 36-character text breaks.
#[cold]
fn uuid_error(s: &[u8]) -> Error {
    for (i, &c) in s.iter().enumerate() {
        if HYPHENS.contains(&i) {
            if c != b'-' {
                return err("uuid", i, "a hyphen belongs here (8-4-4-4-12)");
            }
        } else if HEX_VALUE[c as usize] > 15 {
            return err("uuid", i, "only hex digits 0-9 a-f A-F");
        }
    }
    unreachable!("called only for text that breaks a rule")
}

fn b32_value(c: u8) -> Option<u8> {
    B32.iter().position(|&x| x == c).map(|p| p as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_form_round_trips(bytes: [u8; 16], check: bool) {
            let id = ExtId(bytes);
            let u = id.to_uuid_string();
            prop_assert_eq!(&u, &uuid::Uuid::from_bytes(bytes).to_string());
            prop_assert_eq!(ExtId::parse_uuid(&u).unwrap(), id);
            prop_assert_eq!(ExtId::parse_uuid(&u.to_uppercase()).unwrap(), id);
            let b = id.to_base64url();
            prop_assert_eq!(b.len(), 22);
            prop_assert_eq!(ExtId::parse_base64url(&b).unwrap(), id);
            let c = id.to_base32(Some("user"), check);
            prop_assert_eq!(ExtId::parse_base32(&c, Some("user"), check).unwrap(), id);
            // TypeID: an upper-case suffix is invalid (any letter in it).
            let upper = c.to_uppercase().replacen("USER", "user", 1);
            if upper != c {
                prop_assert!(ExtId::parse_base32(&upper, Some("user"), check).is_err());
            }
            let bare = id.to_base32(None, false);
            prop_assert_eq!(bare.len(), 26);
            prop_assert_eq!(ExtId::parse_base32(&bare, None, false).unwrap(), id);
        }

        #[test]
        fn parsers_never_panic(s in "\\PC{0,80}") {
            let _ = ExtId::parse_uuid(&s);
            let _ = ExtId::parse_base64url(&s);
            let _ = ExtId::parse_base32(&s, Some("user"), true);
            let _ = ExtId::parse_base32(&s, None, false);
        }

        /// One mistyped character is always caught by the check character.
        #[test]
        fn check_character_catches_one_substitution(bytes: [u8; 16], at in 0usize..26, to in 0usize..32) {
            let s = ExtId(bytes).to_base32(None, true);
            let mut b = s.into_bytes();
            prop_assume!(B32[to] != b[at] && !(at == 0 && to > 7));
            b[at] = B32[to];
            let e = ExtId::parse_base32(std::str::from_utf8(&b).unwrap(), None, true).unwrap_err();
            prop_assert!(e.to_string().contains("check character"), "{}", e);
        }
    }

    fn position(e: Error) -> (usize, String) {
        match e {
            Error::ParseId { position, .. } => (position, e.to_string()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_text_names_position_and_rule() {
        let good = "0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4a";
        ExtId::parse_uuid(good).unwrap();
        for (bad, pos, rule) in [
            ("0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4", 35, "36 characters"),
            ("0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4a0", 36, "36 characters"),
            ("0191f3a8x6b2c-8d1e-a7f0-3c5e9b1d2f4a", 8, "hyphen"),
            ("0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4g", 35, "hex digits"),
            ("g191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4a", 0, "hex digits"),
            ("", 0, "36 characters"),
        ] {
            let (p, msg) = position(ExtId::parse_uuid(bad).unwrap_err());
            assert_eq!(p, pos, "{bad}: {msg}");
            assert!(msg.contains(rule) && msg.contains("uuid"), "{msg}");
        }
        let b64 = ExtId([7; 16]).to_base64url();
        assert_eq!(
            position(ExtId::parse_base64url(&b64[..21]).unwrap_err()).0,
            21
        );
        assert_eq!(
            position(ExtId::parse_base64url(&format!("{b64}A")).unwrap_err()).0,
            22
        );
        let mut t = b64.clone().into_bytes();
        t[5] = b'+';
        assert_eq!(
            position(ExtId::parse_base64url(std::str::from_utf8(&t).unwrap()).unwrap_err()).0,
            5
        );
        let mut t = b64.into_bytes();
        t[21] = b'B'; // spare bits set
        let (p, msg) =
            position(ExtId::parse_base64url(std::str::from_utf8(&t).unwrap()).unwrap_err());
        assert!(p == 21 && msg.contains("low 4 bits"), "{msg}");

        let s = ExtId([0xab; 16]).to_base32(Some("user"), false);
        assert!(matches!(
            ExtId::parse_base32(&s, Some("order"), false),
            Err(Error::WrongIdType { .. })
        ));
        let (p, msg) =
            position(ExtId::parse_base32(&s.replace('_', ""), Some("user"), false).unwrap_err());
        assert!(p == 0 && msg.contains("type"), "{msg}");
        let (p, _) =
            position(ExtId::parse_base32(&s[..s.len() - 1], Some("user"), false).unwrap_err());
        assert_eq!(p, 30);
        let mut b = s.clone().into_bytes();
        b[10] = b'o';
        let (p, msg) = position(
            ExtId::parse_base32(std::str::from_utf8(&b).unwrap(), Some("user"), false).unwrap_err(),
        );
        assert!(p == 10 && msg.contains("TypeID's alphabet"), "{msg}");
        let mut b = s.into_bytes();
        b[5] = b'8';
        let (p, msg) = position(
            ExtId::parse_base32(std::str::from_utf8(&b).unwrap(), Some("user"), false).unwrap_err(),
        );
        assert!(p == 5 && msg.contains("0-7"), "{msg}");
        let bare = ExtId([1; 16]).to_base32(None, false);
        assert!(ExtId::parse_base32(&format!("x_{bare}"), None, false).is_err());
    }
}
