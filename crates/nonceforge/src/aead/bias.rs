//! Biased ownership of a key's state: while one thread is the only one sealing
//! under a key (the common case), its checks use no locked instruction at all.
//!
//! A locked instruction (a compare-and-swap, a lock) waits for every store
//! before it to drain, so right after a seal it costs more than the check
//! itself (bench/RESULTS.md). So the first thread to seal becomes the key's
//! *owner* and checks with plain loads and stores. Any other thread first
//! revokes the bias, once, for good; from then on everyone uses the locked
//! paths.
//!
//! Revocation is an asymmetric Dekker handshake. The owner, on each check:
//! `busy = true`, a compiler-only fence, then it reads `owner` and proceeds only
//! if it still owns the state. The revoker: `owner = REVOKING`, then a
//! process-wide barrier (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`,
//! which runs a full fence on every CPU running this process), then it waits
//! until `busy` is false, and publishes `owner = REVOKED`. The barrier turns
//! the owner's compiler fence into a real one for this exchange: either the
//! owner sees REVOKING, or the revoker sees `busy` and waits. Where the
//! barrier is missing (another OS, an old kernel, a sandbox that forbids
//! it), no thread ever becomes owner.
//!
//! The `membarrier` crate does the same handshake but aborts the process when
//! the system call fails; here a failure only means no bias.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, compiler_fence};
use std::sync::{Mutex, OnceLock};

const UNOWNED: u64 = 0;
const REVOKING: u64 = u64::MAX - 1;
const REVOKED: u64 = u64::MAX;

/// This thread's token: nonzero, unique among live threads.
#[inline]
fn token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: Cell<u64> = const { Cell::new(0) };
    }
    TOKEN.with(|t| {
        let v = t.get();
        if v != 0 {
            return v;
        }
        let v = NEXT.fetch_add(1, Ordering::Relaxed);
        t.set(v);
        v
    })
}

#[cfg(target_os = "linux")]
mod barrier {
    const CMD_QUERY: libc::c_long = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: membarrier takes (cmd, flags, cpu_id) by value and touches
        // no memory of ours; an unknown command fails with EINVAL.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Whether the process-wide barrier works here (registered once).
    pub(super) fn supported() -> bool {
        let q = membarrier(CMD_QUERY);
        q >= 0
            && q & CMD_PRIVATE_EXPEDITED != 0
            && q & CMD_REGISTER_PRIVATE_EXPEDITED != 0
            && membarrier(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
    }

    /// A full fence on every CPU running a thread of this process.
    pub(super) fn heavy() -> bool {
        membarrier(CMD_PRIVATE_EXPEDITED) == 0
    }
}

#[cfg(not(target_os = "linux"))]
mod barrier {
    pub(super) fn supported() -> bool {
        false
    }
    pub(super) fn heavy() -> bool {
        false
    }
}

fn barrier_supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED
        .get_or_init(|| std::env::var_os("NONCEFORGE_NO_BIAS").is_none() && barrier::supported())
}

/// Who may check without locked instructions.
#[derive(Debug)]
pub(crate) struct Bias {
    owner: AtomicU64,
    busy: AtomicBool,
    revoking: Mutex<()>,
}

/// The owner inside a biased check; dropping it ends the check.
pub(crate) struct Owned<'a> {
    bias: &'a Bias,
}

impl Drop for Owned<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.bias.busy.store(false, Ordering::Release);
    }
}

impl Bias {
    pub(crate) fn new() -> Self {
        Bias {
            owner: AtomicU64::new(UNOWNED),
            busy: AtomicBool::new(false),
            revoking: Mutex::new(()),
        }
    }

    /// Begins a biased check if this thread owns the state. While the
    /// returned guard lives, no other thread touches the state.
    #[inline(always)]
    pub(crate) fn enter(&self) -> Option<Owned<'_>> {
        let t = token();
        if self.owner.load(Ordering::Relaxed) != t {
            return None;
        }
        self.busy.store(true, Ordering::Relaxed);
        // With the revoker's process-wide barrier, this orders the store
        // above before the load below (see the module's comment).
        compiler_fence(Ordering::SeqCst);
        if self.owner.load(Ordering::Relaxed) == t {
            // Keeps the compiler from moving the caller's reads of the state
            // above the ownership check. No CPU fence is needed: since this
            // thread became owner, no other thread has written the state.
            compiler_fence(Ordering::Acquire);
            return Some(Owned { bias: self });
        }
        self.busy.store(false, Ordering::Release);
        None
    }

    /// Makes the state safe for the locked paths from this thread: the first
    /// thread ever becomes the owner (and may use either); any other thread
    /// revokes the bias, once, for good.
    #[inline]
    pub(crate) fn share(&self) {
        let o = self.owner.load(Ordering::Acquire);
        if o == REVOKED || o == token() {
            return;
        }
        self.settle();
    }

    #[cold]
    fn settle(&self) {
        let _one_at_a_time = self.revoking.lock().unwrap_or_else(|e| e.into_inner());
        let t = token();
        match self.owner.load(Ordering::Acquire) {
            REVOKED => {}
            o if o == t => {}
            UNOWNED if barrier_supported() => self.owner.store(t, Ordering::Release),
            UNOWNED => self.owner.store(REVOKED, Ordering::Release),
            _ => {
                self.owner.store(REVOKING, Ordering::SeqCst);
                if !barrier::heavy() {
                    // Registered, yet failing: cannot happen on a working
                    // kernel. A full fence here still orders our side.
                    std::sync::atomic::fence(Ordering::SeqCst);
                }
                let mut spins = 0u32;
                while self.busy.load(Ordering::Acquire) {
                    spins += 1;
                    if spins > 64 {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
                self.owner.store(REVOKED, Ordering::Release);
            }
        }
    }

    /// Whether some thread owns the state now (for tests).
    pub(crate) fn is_owned(&self) -> bool {
        !matches!(
            self.owner.load(Ordering::Acquire),
            UNOWNED | REVOKING | REVOKED
        )
    }
}
