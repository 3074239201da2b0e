//! The NIF of the `nonceforge` Elixir package (elixir/): thin rustler bindings
//! over the core crate, in the module `Nonceforge` itself.
//!
//! **The hot path takes no resource argument.** A call such as
//! `Nonceforge.nonce(128)` *is* the NIF: no Elixir wrapper, no
//! `:persistent_term` lookup, no resource to decode. Instances live in a
//! registry in this library keyed by the name atom's term (atoms are never
//! collected, so the term is stable for the VM's life): the default name has
//! its own pointer, other names a lock-free open-addressing table read with
//! one atomic load per probe. An instance replaced by a later `init/1` under
//! the same name is kept (a caller may still be using it) — a few hundred
//! bytes per `init`, the way `:persistent_term` keeps NoNoncense's state.
//!
//! **Nothing crosses into the VM but terms.** Errors are raised as the
//! package's exception structs (`Nonceforge.Errors.UninitializedError`,
//! `DisabledError`) or `ArgumentError`, with a message naming the argument
//! and the rule; rustler turns a panic into an exception too. No call holds a
//! scheduler long: a nonce is tens of nanoseconds; `init` (PBKDF2), batches
//! above ~1 ms of work and everything that talks to a lease store run on dirty
//! schedulers (see elixir/lib/nonceforge.ex).

mod batch;
mod errors;
mod extid;
mod init;
mod lease;
mod metrics;
mod nonces;
mod registry;
mod uuid;

use rustler::types::atom::Atom;
use rustler::{Encoder, Env, Term};
use std::sync::atomic::Ordering;

use nonces::SIZE_TERMS;
use registry::{DEFAULT_NAME, term_bits};

pub(crate) mod atoms {
    rustler::atoms! {
        ok,
        error,
        counter,
        sortable,
        encrypted,
        blowfish,
        des3,
        speck,
        aes,
        nononcense,
        nonceforge,
        standard,
        wide,
    }
}

fn load(env: Env, _info: Term) -> bool {
    let default = Atom::from_str(env, "Elixir.Nonceforge").expect("a valid atom");
    DEFAULT_NAME.store(term_bits(default.to_term(env)), Ordering::Relaxed);
    for (slot, n) in SIZE_TERMS.iter().zip([64i64, 96, 128]) {
        slot.store(term_bits(n.encode(env)), Ordering::Relaxed);
    }
    extid::load(env) && lease::load(env)
}

rustler::init!("Elixir.Nonceforge", load = load);
