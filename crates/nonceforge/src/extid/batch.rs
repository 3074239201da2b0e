//! Batches: many ids at a time, equal to the calls one at a time, each AES
//! pass over a chunk of ids at once.

use super::{Decoded, ExtId, ExtIdCodec, ExtIdMode, Keys, cycle_walk, feistel};
use crate::error::{Error, Result};
use subtle::ConstantTimeEq;

/// A batch's `out` must be as long as its input.
fn out_len(expected: usize, len: usize) -> Result<()> {
    if expected == len {
        Ok(())
    } else {
        Err(Error::OutputLength {
            argument: "out",
            expected,
            len,
        })
    }
}

/// Ids per batch pass: enough to keep the pipelined AES busy, few enough to stay in L1.
const BATCH: usize = 256;

impl ExtIdCodec {
    /// Encodes many (seq, rand) pairs into `out` (same length). Every input is
    /// checked first: on error nothing is written.
    pub fn encode_batch(&self, input: &[(u64, u64)], out: &mut [ExtId]) -> Result<()> {
        out_len(input.len(), out.len())?;
        for &(s, r) in input {
            self.check_input(s, r)?;
        }
        let version = self.current;
        let keys = self.keys(version)?;
        let mut scratch = [[0u8; 16]; BATCH];
        let (mut ls, mut rs) = ([0u64; BATCH], [0u64; BATCH]);
        for (inp, out) in input.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = inp.len();
            match keys {
                Keys::One(k) => {
                    for (b, &(s, r)) in scratch.iter_mut().zip(inp) {
                        *b = ((s as u128) << 64 | r as u128).to_be_bytes();
                    }
                    k.encrypt_many(&mut scratch[..n]);
                    for ((o, b), &(s, r)) in out.iter_mut().zip(&scratch[..n]).zip(inp) {
                        *o = ExtId(
                            if self.mode == ExtIdMode::CycleWalk && !cycle_walk::in_domain(b) {
                                // Half the blocks walk on: one call at a time from here.
                                cycle_walk::encrypt(
                                    k,
                                    ((s as u128) << 64 | r as u128).to_be_bytes(),
                                )
                            } else {
                                *b
                            },
                        );
                    }
                }
                Keys::Rounds(ks) => {
                    for (i, &(s, r)) in inp.iter().enumerate() {
                        (ls[i], rs[i]) = (s, r);
                    }
                    feistel::encrypt_many(
                        ks,
                        self.l_bits(),
                        &mut ls[..n],
                        &mut rs[..n],
                        &mut scratch,
                    );
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = ExtId(feistel::place(
                            self.with_version(ls[i], rs[i], version),
                            rs[i],
                            self.uuid_version,
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// [`encode_seq`](Self::encode_seq) of many sequence numbers into `out`
    /// (same length): the same ids as one call at a time, the derived halves
    /// computed in batch. Every input is checked first: on error nothing is
    /// written. The batch call for tables that store nothing but the sequence
    /// number (there is no batch form that takes a zero or constant half by
    /// omission: [`encode_batch`](Self::encode_batch) takes each half).
    pub fn encode_seq_batch(&self, seqs: &[u64], out: &mut [ExtId]) -> Result<()> {
        out_len(seqs.len(), out.len())?;
        for &s in seqs {
            self.check_input(s, 0)?;
        }
        let mut scratch = [[0u8; 16]; BATCH];
        let mut rands = [0u64; BATCH];
        let mut pairs = [(0u64, 0u64); BATCH];
        for (chunk, out) in seqs.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = chunk.len();
            self.current_rand
                .prf64_many(chunk, &mut rands[..n], &mut scratch);
            for ((p, &s), &r) in pairs.iter_mut().zip(chunk).zip(&rands[..n]) {
                *p = (s, r & self.max_rand());
            }
            self.encode_batch(&pairs[..n], out)?;
        }
        Ok(())
    }

    /// [`decode_seq`](Self::decode_seq) of many ids into `out` (same length):
    /// the sequence numbers of ids this codec made without a random half,
    /// the derived halves checked in batch. The first id refused refuses the
    /// batch with the error one call at a time gives it, and `out` is left
    /// all zero. For a lookup that wants an answer per id, call
    /// [`find_seq`](Self::find_seq) on each.
    pub fn decode_seq_batch(&self, ids: &[ExtId], out: &mut [u64]) -> Result<()> {
        out_len(ids.len(), out.len())?;
        let mut decoded = [Decoded::default(); BATCH];
        for (chunk, out_chunk) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let d = &mut decoded[..chunk.len()];
            if let Err(e) = self.decode_batch(chunk, d) {
                out.fill(0);
                return Err(e);
            }
            for (o, d) in out_chunk.iter_mut().zip(d.iter()) {
                *o = d.seq;
            }
        }
        Ok(())
    }

    /// [`decode`](Self::decode) of many ids into `out` (same length), the
    /// derived halves checked in batch: the first id refused refuses the batch
    /// with the error one call at a time gives it, and `out` is left all
    /// default (no decoded value in it).
    pub fn decode_batch(&self, ids: &[ExtId], out: &mut [Decoded]) -> Result<()> {
        self.decode_unverified_batch(ids, out)?;
        let mut scratch = [[0u8; 16]; BATCH];
        let (mut seqs, mut rands) = ([0u64; BATCH], [0u64; BATCH]);
        for (chunk, ds) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = chunk.len();
            for (s, d) in seqs.iter_mut().zip(ds.iter()) {
                *s = d.seq;
            }
            self.current_rand
                .prf64_many(&seqs[..n], &mut rands[..n], &mut scratch);
            for ((id, d), &r) in chunk.iter().zip(ds.iter_mut()).zip(&rands[..n]) {
                let ok = if d.key_version == self.current {
                    bool::from(d.rand.ct_eq(&(r & self.max_rand())))
                } else {
                    self.is_derived(d)
                };
                if ok {
                    continue;
                }
                // Not derived under the version read: the one-id path tries
                // the other held versions (out of band) or words the refusal.
                match self.decode(id) {
                    Ok(found) => *d = found,
                    Err(e) => {
                        out.fill(Decoded::default());
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// [`decode_unverified`](Self::decode_unverified) of many ids into `out`
    /// (same length). On error nothing is written.
    pub fn decode_unverified_batch(&self, ids: &[ExtId], out: &mut [Decoded]) -> Result<()> {
        out_len(ids.len(), out.len())?;
        let mut scratch = [[0u8; 16]; BATCH];
        if let Keys::One(k) = self.keys(self.current)? {
            if self.mode == ExtIdMode::CycleWalk
                && let Some(id) = ids.iter().find(|id| !cycle_walk::in_domain(&id.0))
            {
                self.decode_unverified(id)?; // words the error
            }
            for (chunk, out) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
                let blocks = &mut scratch[..chunk.len()];
                for (b, id) in blocks.iter_mut().zip(chunk) {
                    *b = id.0;
                }
                k.decrypt_many(blocks);
                for ((o, b), id) in out.iter_mut().zip(blocks.iter()).zip(chunk) {
                    let b = if self.mode == ExtIdMode::Aes128 || cycle_walk::in_domain(b) {
                        *b
                    } else {
                        // Walk on, one call at a time.
                        cycle_walk::decrypt(k, id.0)
                    };
                    let v = u128::from_be_bytes(b);
                    let (seq, rand) = ((v >> 64) as u64, v as u64);
                    *o = Decoded {
                        seq,
                        rand,
                        key_version: self.current,
                    };
                }
            }
            return Ok(());
        }
        let (mut ls, mut rs, mut vs) = ([0u64; BATCH], [0u64; BATCH], [0u8; BATCH]);
        let mut staged = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH) {
            for (i, id) in chunk.iter().enumerate() {
                let (l, r, ver, var) = feistel::unplace(&id.0);
                if ver != self.uuid_version || var != 0b10 {
                    // The one-id path words the error.
                    self.decode_unverified(id)?;
                }
                let (l, v) = self.without_version(l, r, None);
                self.keys(v)?;
                (ls[i], rs[i], vs[i]) = (l, r, v);
            }
            let n = chunk.len();
            // Runs of one key version (nearly always the whole chunk) go together.
            let mut start = 0;
            while start < n {
                let v = vs[start];
                let end = (start..n).find(|&j| vs[j] != v).unwrap_or(n);
                let Keys::Rounds(ks) = self.keys(v)? else {
                    unreachable!("feistel-uuid holds round keys")
                };
                feistel::decrypt_many(
                    ks,
                    self.l_bits(),
                    &mut ls[start..end],
                    &mut rs[start..end],
                    &mut scratch,
                );
                start = end;
            }
            staged.extend((0..n).map(|i| Decoded {
                seq: ls[i],
                rand: rs[i],
                key_version: vs[i],
            }));
        }
        out.copy_from_slice(&staged);
        Ok(())
    }
}
