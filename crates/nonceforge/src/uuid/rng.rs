//! The random source for time-prefixed ids: a ChaCha12 generator per thread,
//! seeded from the OS, reseeded after `fork()` and every 1 MiB of output.
//!
//! One OS call per id would cost many times an id (more again through
//! PostgreSQL's `pg_strong_random`: bench/RESULTS.md, "The measurements behind
//! the code"); a non-cryptographic generator seeded from the time and
//! the process id (as pg_tuid's C version does) makes ids guessable. ChaCha12 is
//! the `rand` crate's standard CSPRNG. A forked child must not replay its
//! parent's stream — PostgreSQL forks every backend from the postmaster — so a
//! `pthread_atfork` handler bumps a generation counter that every draw checks.

use rand_chacha::ChaCha12Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::cell::RefCell;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes drawn before the generator reseeds from the OS.
const RESEED_AFTER: u64 = 1 << 20;

/// Bumped in every child after `fork()`.
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static ATFORK: Once = Once::new();

extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

struct Local {
    rng: ChaCha12Rng,
    generation: u64,
    drawn: u64,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

fn seeded() -> Local {
    ATFORK.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function with no arguments
        // for the child side of fork(); it only touches an atomic.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        assert_eq!(
            rc, 0,
            "pthread_atfork failed: fork safety cannot be ensured"
        );
    });
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).expect("the OS random source failed");
    let rng = ChaCha12Rng::from_seed(seed);
    zeroize::Zeroize::zeroize(&mut seed);
    Local {
        rng,
        generation: FORK_GENERATION.load(Ordering::SeqCst),
        drawn: 0,
    }
}

/// Runs `draw` on this thread's generator, seeding it first where it is new,
/// after a `fork()`, and every [`RESEED_AFTER`] bytes; `draw` returns what it
/// drew and how many bytes that took.
#[inline]
fn with_rng<T>(draw: impl FnOnce(&mut ChaCha12Rng) -> (T, u64)) -> T {
    LOCAL.with(|cell| {
        let mut slot = cell.borrow_mut();
        let fresh = match slot.as_ref() {
            None => true,
            Some(l) => {
                l.generation != FORK_GENERATION.load(Ordering::Relaxed) || l.drawn >= RESEED_AFTER
            }
        };
        if fresh {
            *slot = Some(seeded());
        }
        let local = slot.as_mut().expect("seeded above");
        let (value, bytes) = draw(&mut local.rng);
        local.drawn += bytes;
        value
    })
}

/// Fills `out` with cryptographically strong random bytes.
pub fn fill(out: &mut [u8]) {
    with_rng(|rng| {
        rng.fill_bytes(out);
        ((), out.len() as u64)
    })
}

/// A random u64 (the generator's word call, not a fill of 8 bytes).
#[inline]
pub fn u64() -> u64 {
    with_rng(|rng| (rng.next_u64(), 8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ_and_reseed() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        fill(&mut a);
        fill(&mut b);
        assert_ne!(a, b);
        // Past the reseed point the stream goes on without a hitch.
        let mut big = vec![0u8; (RESEED_AFTER as usize) + 100];
        fill(&mut big);
        fill(&mut a);
        assert!(big.iter().any(|&x| x != 0));
    }

    #[test]
    fn a_forked_child_does_not_replay_the_parent() {
        fill(&mut [0u8; 8]); // seed this thread before forking
        let mut pipe = [0i32; 2];
        // SAFETY: a two-int array for pipe(2).
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: the child only draws random bytes, writes them to the pipe and
        // calls _exit; nothing else runs in it.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let mut b = [0u8; 16];
            fill(&mut b);
            // SAFETY: writes 16 bytes from a live buffer, then leaves without
            // running destructors or test-harness code in the child.
            unsafe {
                libc::write(pipe[1], b.as_ptr().cast(), 16);
                libc::_exit(0);
            }
        }
        let mut parent = [0u8; 16];
        fill(&mut parent);
        let mut child = [0u8; 16];
        // SAFETY: reads at most 16 bytes into a live 16-byte buffer; waits for
        // the child we forked.
        unsafe {
            assert_eq!(libc::read(pipe[0], child.as_mut_ptr().cast(), 16), 16);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
        assert_ne!(parent, child, "the child drew the parent's next bytes");
    }
}
