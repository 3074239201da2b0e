//! ChaCha20-Poly1305 with truncated tags.

use cipher::{InOutBuf, KeyInit, KeyIvInit, StreamCipher};

use crate::{BulkError, Tag};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// RFC 8439 §2.8, with the tag truncated to `tag.len` bytes (OpenSSL allows
/// 1–16) and checked in constant time before the ciphertext is decrypted.
pub(crate) fn chacha20_poly1305(
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    mut buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError> {
    use poly1305::universal_hash::UniversalHash;
    // 2^32 blocks of 64 bytes, the first for the Poly1305 key.
    if buf.len() as u64 > (u32::MAX as u64 - 1) * 64 {
        return Err(BulkError::TooLong);
    }
    let mut c = chacha20::ChaCha20::new_from_slices(key, iv).map_err(|_| BulkError::KeySize {
        expected: 32,
        got: key.len(),
    })?;
    let mut otk = [0u8; 64];
    c.apply_keystream(&mut otk);
    let mut mac = poly1305::Poly1305::new_from_slice(&otk[..32]).expect("32-byte key");
    otk.zeroize();
    let full = |mac: &mut poly1305::Poly1305, ct: &[u8]| {
        mac.update_padded(aad);
        mac.update_padded(ct);
        let mut lens = poly1305::Block::default();
        lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
        lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
        mac.update(&[lens]);
    };
    if encrypt {
        c.apply_keystream_inout(buf.reborrow());
        full(&mut mac, buf.get_out());
        let t = mac.finalize();
        tag.bytes[..tag.len].copy_from_slice(&t[..tag.len]);
        Ok(())
    } else {
        full(&mut mac, buf.get_in());
        let t = mac.finalize();
        if !bool::from(t[..tag.len].ct_eq(tag.as_slice())) {
            return Err(BulkError::Corrupt);
        }
        c.apply_keystream_inout(buf);
        Ok(())
    }
}
