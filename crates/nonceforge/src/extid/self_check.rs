//! The self-check: every id decoded, on a second copy of the keys, before it
//! is returned.

use super::{ExtId, ExtIdCodec};
use crate::error::{Error, Result};

/// A codec that decodes every id it makes before returning it, and refuses
/// one that does not give back its (seq, rand) ([`Error::SelfCheckFailed`]; a
/// failed batch leaves nothing written): the Plan B post's "graceful failure
/// on faulty hardware" — a miscomputed id is never handed out. The check runs
/// on a second copy of the keys, derived and expanded on its own and run by
/// other AES code (the `aes` crate's), so a fault in the expanded keys or the
/// cipher path of either copy shows as a mismatch; for the call without a
/// random half it also recomputes the derived half. It costs about one decode
/// an encode (two for the derived call); codecs without it pay nothing (a type
/// of its own, not a flag checked on every call). Decoding and everything else
/// is the codec's ([`Deref`](std::ops::Deref)).
///
/// ```
/// use nonceforge::extid::{ExtIdCodec, Keyring};
/// let ring = Keyring::new(0, &[0x42; 32])?;
/// let users = ExtIdCodec::builder(&ring, "user").build_self_checked()?;
/// let id = users.encode_seq(42)?;          // checked before it is returned
/// assert_eq!(users.decode_seq(&id)?, 42);  // the codec's own decode
/// # Ok::<(), nonceforge::Error>(())
/// ```
pub struct SelfCheckedCodec {
    pub(super) codec: ExtIdCodec,
    /// The same keys, derived and expanded again, on the portable path.
    pub(super) check: ExtIdCodec,
}

impl std::fmt::Debug for SelfCheckedCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SelfCheckedCodec")
            .field(&self.codec)
            .finish()
    }
}

impl std::ops::Deref for SelfCheckedCodec {
    type Target = ExtIdCodec;
    fn deref(&self) -> &ExtIdCodec {
        &self.codec
    }
}

impl SelfCheckedCodec {
    /// [`ExtIdCodec::encode`], checked.
    pub fn encode(&self, seq: u64, rand: u64) -> Result<ExtId> {
        let id = self.codec.encode(seq, rand)?;
        self.check.verify(id, seq, rand, false)
    }

    /// [`ExtIdCodec::encode_seq`], checked: the derived half is recomputed too.
    pub fn encode_seq(&self, seq: u64) -> Result<ExtId> {
        let rand = self.codec.derived_rand(seq);
        let id = self.codec.encode(seq, rand)?;
        self.check.verify(id, seq, rand, true)
    }

    /// [`ExtIdCodec::encode_batch`], checked; on a failure nothing is left in `out`.
    pub fn encode_batch(&self, input: &[(u64, u64)], out: &mut [ExtId]) -> Result<()> {
        self.codec.encode_batch(input, out)?;
        for (&(seq, rand), id) in input.iter().zip(out.iter()) {
            if let Err(e) = self.check.verify(*id, seq, rand, false) {
                out.fill(ExtId::default()); // nothing miscomputed leaves
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`ExtIdCodec::encode_seq_batch`], checked (the derived halves
    /// recomputed too); on a failure nothing is left in `out`.
    pub fn encode_seq_batch(&self, seqs: &[u64], out: &mut [ExtId]) -> Result<()> {
        self.codec.encode_seq_batch(seqs, out)?;
        for (&seq, id) in seqs.iter().zip(out.iter()) {
            let rand = self.check.derived_rand(seq);
            if let Err(e) = self.check.verify(*id, seq, rand, true) {
                out.fill(ExtId::default());
                return Err(e);
            }
        }
        Ok(())
    }

    /// The codec, without the check.
    pub fn into_inner(self) -> ExtIdCodec {
        self.codec
    }
}

impl ExtIdCodec {
    /// Decodes `id`, just made for (seq, rand) under the current key by
    /// another copy of this codec's keys, and refuses a mismatch; with
    /// `derived`, also that `rand` is the half this (checking) codec derives.
    #[inline(never)]
    fn verify(&self, id: ExtId, seq: u64, rand: u64, derived: bool) -> Result<ExtId> {
        #[cfg(test)]
        let seen = if self.inject_fault {
            let mut b = id.0;
            b[15] ^= 1;
            ExtId(b)
        } else {
            id
        };
        #[cfg(not(test))]
        let seen = id;
        match self.decode_inner(&seen, Some(self.current)) {
            Ok(d)
                if (d.seq, d.rand, d.key_version) == (seq, rand, self.current)
                    && (!derived || self.derived_rand(seq) == rand) =>
            {
                Ok(id)
            }
            _ => Err(Error::SelfCheckFailed { seq }),
        }
    }
}
