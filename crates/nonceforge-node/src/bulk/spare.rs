//! The message buffers of finished copying pool jobs, kept for the next ones
//! (the copy path only: a zero-copy job has none).
//!
//! The copy a job makes at its call runs on the JS thread, and into a fresh
//! allocation it costs a page fault per 4 KiB touched (see bench/RESULTS.md,
//! "Node: the pool path's copies", for the figures). A few buffers are kept,
//! bounded in number and bytes; what they held is overwritten by the next
//! copy before anything reads it.
use std::sync::Mutex;

/// At most this many buffers are kept…
const KEEP: usize = 4;
/// …holding at most this many bytes in all (no single buffer larger).
const KEEP_BYTES: usize = 128 << 20;
/// Smaller ones are cheap to allocate and are not kept.
const KEEP_FROM: usize = 64 << 10;

static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer with room for `n` bytes: the smallest spare that fits, or a new one.
pub fn take(n: usize) -> Vec<u8> {
    if n >= KEEP_FROM
        && let Ok(mut spare) = SPARE.lock()
        && let Some(i) = (0..spare.len())
            .filter(|&i| spare[i].capacity() >= n)
            .min_by_key(|&i| spare[i].capacity())
    {
        let mut buf = spare.swap_remove(i);
        buf.clear();
        return buf;
    }
    Vec::with_capacity(n)
}

/// Keeps `buf` for a later job within the bounds (dropping the smallest
/// spares first: the large ones save the most), else frees it.
pub fn give(buf: Vec<u8>) {
    let cap = buf.capacity();
    if !(KEEP_FROM..=KEEP_BYTES).contains(&cap) {
        return;
    }
    let Ok(mut spare) = SPARE.lock() else { return };
    spare.push(buf);
    while spare.len() > KEEP || spare.iter().map(Vec::capacity).sum::<usize>() > KEEP_BYTES {
        let smallest = (0..spare.len())
            .min_by_key(|&i| spare[i].capacity())
            .unwrap_or(0);
        spare.swap_remove(smallest);
    }
}
