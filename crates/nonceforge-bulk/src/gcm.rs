//! GCM over AES and ARIA, with every tag length OpenSSL allows.

use crate::{BulkError, Tag};
use aes_gcm::aead::AeadInOut;
use aes_gcm::aead::array::Array;
use cipher::consts::{U4, U8, U12, U13, U14, U15, U16};
use cipher::typenum::Unsigned;
use cipher::{BlockCipherEncrypt, BlockSizeUser, InOutBuf, KeyInit};

pub(crate) fn gcm<C>(
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + KeyInit,
{
    let block = C::new_from_slice(key).map_err(|_| BulkError::KeySize {
        expected: C::KeySize::USIZE,
        got: key.len(),
    })?;
    macro_rules! with_tag {
        ($t:ty) => {
            gcm_tag::<C, $t>(block, encrypt, iv, buf, aad, tag)
        };
    }
    match tag.len {
        4 => with_tag!(U4),
        8 => with_tag!(U8),
        12 => with_tag!(U12),
        13 => with_tag!(U13),
        14 => with_tag!(U14),
        15 => with_tag!(U15),
        16 => with_tag!(U16),
        n => Err(BulkError::TagSize { got: n }),
    }
}

fn gcm_tag<C, T>(
    block: C,
    encrypt: bool,
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>,
    T: aes_gcm::TagSize,
{
    let g = aes_gcm::AesGcm::<C, U12, T>::from(block);
    let nonce = Array::<u8, U12>::try_from(iv).map_err(|_| BulkError::IvSize {
        expected: 12,
        got: iv.len(),
    })?;
    if encrypt {
        let t = g
            .encrypt_inout_detached(&nonce, aad, buf)
            .map_err(|_| BulkError::TooLong)?;
        tag.bytes[..tag.len].copy_from_slice(&t);
        Ok(())
    } else {
        let t = Array::<u8, T>::try_from(tag.as_slice())
            .map_err(|_| BulkError::TagSize { got: tag.len })?;
        g.decrypt_inout_detached(&nonce, aad, buf, &t)
            .map_err(|_| BulkError::Corrupt)
    }
}
