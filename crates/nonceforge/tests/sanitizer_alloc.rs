//! Zero allocations per seal in steady state, and memory flat over 10 million
//! seals: a counting global allocator around the sanitized AEADs.

use nonceforge::aead::{GuardConfig, NonceMode, Policy, SanitizedLessSafeKey};
use ring::aead as r;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn no_allocation_per_seal_and_flat_memory_over_ten_million_seals() {
    for mode in [NonceMode::Random, NonceMode::Counter] {
        let key = SanitizedLessSafeKey::new(
            &r::AES_256_GCM,
            &[mode as u8 + 40; 32],
            GuardConfig::new().mode(mode).policy(Policy::Error),
        )
        .unwrap();
        let at_start = key.guard().memory_bytes();
        let mut buf = [0u8; 64];
        let nonce = |i: u64| {
            let mut n = [0u8; 12];
            // Counter: i; random-looking: i scrambled by an odd multiplier.
            let v = if mode == NonceMode::Counter {
                i
            } else {
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            };
            n[4..].copy_from_slice(&v.to_be_bytes());
            n
        };
        let mut seal = |range: std::ops::Range<u64>| {
            for i in range {
                let _tag = key
                    .seal_in_place_separate_tag(
                        r::Nonce::assume_unique_for_key(nonce(i)),
                        r::Aad::empty(),
                        &mut buf,
                    )
                    .unwrap();
            }
        };
        seal(0..10_000);
        // The state grows with use (a window doubles as it fills) up to its
        // configured size, which 10,000 seals reach; then it stays flat.
        let memory = key.guard().memory_bytes();
        assert!(
            at_start < 1024,
            "{mode:?}: {at_start} bytes before any seal"
        );
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        seal(10_000..10_000_000);
        let during = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(
            during, 0,
            "{mode:?}: {during} allocations over 9,990,000 seals"
        );
        assert_eq!(key.guard().memory_bytes(), memory);
        println!("{mode:?}: {at_start} bytes of sanitizer state at first, {memory} in use");
    }
}
