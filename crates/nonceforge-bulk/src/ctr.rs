//! CTR mode over a 128-bit block cipher, as OpenSSL's.

use crate::BulkError;
use aes_gcm::aead::array::Array;
use cipher::consts::U16;
use cipher::typenum::Unsigned;
use cipher::{BlockCipherEncrypt, BlockSizeUser, InOutBuf, KeyInit};
use zeroize::Zeroize;

/// Counter blocks encrypted at a time by [`ctr`]: 2 KiB of keystream on the stack.
pub(crate) const CTR_BLOCKS: usize = 128;

/// CTR mode as OpenSSL's: the whole 128-bit block is the counter, big-endian,
/// wrapping at 2^128.
///
/// Written here instead of with the `ctr` crate (kept as the reference in the
/// tests) because that crate was the bottleneck: it encrypts a few blocks per
/// step and XORs them in, and ran behind OpenSSL. Encrypting 128 counter
/// blocks in one `encrypt_blocks` call (the backend pipelines them:
/// VAES/AES-NI) and XORing 2 KiB at once runs ahead of it (figures:
/// bench/RESULTS.md, "The measurements behind the code").
pub(crate) fn ctr<C>(key: &[u8], iv: &[u8], mut buf: InOutBuf<'_, '_, u8>) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + KeyInit,
{
    let c = C::new_from_slice(key).map_err(|_| BulkError::KeySize {
        expected: C::KeySize::USIZE,
        got: key.len(),
    })?;
    let iv: [u8; 16] = iv.try_into().map_err(|_| BulkError::IvSize {
        expected: 16,
        got: iv.len(),
    })?;
    let mut counter = u128::from_be_bytes(iv);
    let mut ks = [Array::<u8, U16>::default(); CTR_BLOCKS];
    while !buf.is_empty() {
        let n = buf.len().min(16 * CTR_BLOCKS);
        let blocks = &mut ks[..n.div_ceil(16)];
        for b in blocks.iter_mut() {
            *b = counter.to_be_bytes().into();
            counter = counter.wrapping_add(1);
        }
        c.encrypt_blocks(blocks);
        let (mut head, tail) = buf.split_at(n);
        let ks = &Array::slice_as_flattened(&ks)[..n];
        let (input, output) = head.reborrow().into_raw();
        if std::ptr::eq(input, output) {
            // In place, `xor_in2out`'s loop over two equal raw pointers does not
            // vectorize (3.5x slower: bench/RESULTS.md, "The measurements
            // behind the code"); over one `&mut` slice it does.
            for (o, k) in head.into_out().iter_mut().zip(ks) {
                *o ^= k;
            }
        } else {
            head.xor_in2out(ks);
        }
        buf = tail;
    }
    // The keystream is the plaintext's mask: not left on the stack.
    Array::slice_as_flattened_mut(&mut ks).zeroize();
    Ok(())
}
