//! A spin lock for the window shards' critical sections, which are a few tens
//! of nanoseconds long: unlocking is a plain release store, where std's Mutex
//! needs an atomic swap to learn whether to wake a waiter. Waiters back off and
//! then yield (crossbeam's `Backoff`), so a preempted holder costs its waiters
//! a yield, not a spinning time slice. Measured on the sanitizer's window path
//! (benches/sanitizer.rs, guard_only/window): see the figure in bench/RESULTS.md.

use crossbeam_utils::Backoff;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `value` to one thread at a time (the
// guard exists only while `locked` is held), so sharing the lock between
// threads is sound whenever T may be sent between them.
unsafe impl<T: Send> Sync for SpinLock<T> {}

pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
        SpinGuard { lock: self }
    }

    /// The value without taking the lock, for the biased owner (bias.rs).
    ///
    /// # Safety
    /// No other access to the value — locked or not — may happen while the
    /// returned reference lives.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)] // exclusivity is the caller's contract, as documented
    pub(crate) unsafe fn get_unchecked(&self) -> &mut T {
        // SAFETY: the caller guarantees exclusive access (see above).
        unsafe { &mut *self.value.get() }
    }

    #[cold]
    fn lock_slow(&self) {
        let backoff = Backoff::new();
        loop {
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the
        // value exists until it is dropped.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref; `&mut self` makes this the only access.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes() {
        let lock = SpinLock::new(0u64);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100_000 {
                        let mut g = lock.lock();
                        let v = *g;
                        std::hint::black_box(());
                        *g = v + 1;
                    }
                });
            }
        });
        assert_eq!(*lock.lock(), 400_000);
    }
}
