//! ChaCha20 with OpenSSL's 16-byte IV.

use crate::BulkError;
use cipher::StreamCipherSeek;
use cipher::{InOutBuf, KeyIvInit, StreamCipher};
use zeroize::Zeroize;

/// OpenSSL's ChaCha20: the 16-byte IV is a 64-bit little-endian block counter
/// (which carries from its low into its high word and wraps at 2^64) followed
/// by an 8-byte nonce — DJB's original layout.
pub(crate) fn chacha20_openssl(
    key: &[u8],
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
) -> Result<(), BulkError> {
    use cipher::StreamCipherCore;
    let pos = u64::from_le_bytes(iv[..8].try_into().expect("16-byte iv"));
    let nonce = &iv[8..];
    let mut c =
        chacha20::ChaCha20Legacy::new_from_slices(key, nonce).map_err(|_| BulkError::KeySize {
            expected: 32,
            got: key.len(),
        })?;
    // The crate's wrapper stops before block 2^64 - 1; OpenSSL uses that block and
    // goes on at block 0. So: the blocks before it, that block from the core, the rest.
    let before = (u64::MAX - pos).saturating_mul(64);
    let first = buf.len().min(usize::try_from(before).unwrap_or(usize::MAX));
    c.seek(pos as u128 * 64);
    let (head, rest) = buf.split_at(first);
    c.apply_keystream_inout(head);
    if rest.is_empty() {
        return Ok(());
    }
    let last_len = rest.len().min(64);
    let (mut last, tail) = rest.split_at(last_len);
    let mut core = chacha20::ChaCha20LegacyCore::new_from_slices(key, nonce).map_err(|_| {
        BulkError::KeySize {
            expected: 32,
            got: key.len(),
        }
    })?;
    core.set_block_pos(u64::MAX);
    let mut block = Default::default();
    core.write_keystream_block(&mut block);
    last.xor_in2out(&block[..last_len]);
    block.zeroize();
    if !tail.is_empty() {
        c.seek(0u64);
        c.apply_keystream_inout(tail);
    }
    Ok(())
}
