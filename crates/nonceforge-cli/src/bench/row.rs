//! What every row of `nonceforge bench` shares, and nothing else: the
//! measuring method and the number of calls per timing check.

/// How a row is measured.
#[derive(Clone, Copy)]
pub(crate) enum Method {
    /// Run for the whole duration.
    Timed,
    /// Bursts on banked idle time (64-bit counter family).
    Burst,
}

/// Calls per timing check for single-nonce rows.
pub(crate) const CHUNK: u64 = 4096;
