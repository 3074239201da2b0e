//! Sealing with a whole tag through ring.

use cipher::InOutBuf;

use crate::{BulkError, Tag};

/// AES-128/256-GCM and ChaCha20-Poly1305 sealing with a whole 16-byte tag,
/// through ring (BoringSSL's assembly): faster than the `aes-gcm` crate and
/// than OpenSSL through @ronomon/crypto-async for AES-GCM, and than the
/// composition below for ChaCha20-Poly1305 on small messages (figures:
/// bench/RESULTS.md, "The measurements behind the code"). Opening stays
/// with the code below, which checks the tag before it writes: ring decrypts
/// as it authenticates, so a forged message would reach the target.
pub(crate) fn seal_ring(
    alg: &'static ring::aead::Algorithm,
    key: &[u8],
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError> {
    use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let key = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| BulkError::KeySize {
        expected: alg.key_len(),
        got: key.len(),
    })?);
    let nonce = Nonce::try_assume_unique_for_key(iv).map_err(|_| BulkError::IvSize {
        expected: 12,
        got: iv.len(),
    })?;
    let out = buf.into_out_with_copied_in();
    let t = key
        .seal_in_place_separate_tag(nonce, Aad::from(aad), out)
        .map_err(|_| BulkError::TooLong)?;
    tag.bytes.copy_from_slice(t.as_ref());
    Ok(())
}
