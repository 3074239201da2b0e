//! Machine ids leased through the Rust lease crate (the same stores, records
//! and rules as the CLI, Node and Go): the lease lives in the instance, its
//! keeper thread renews it, and the core's deadline stops the generator the
//! moment the lease may have lapsed. A watcher thread tells the owner process
//! `{:nonceforge, :lease_lost, reason}` when that happens (`reason` is
//! `:lapsed` — renewals go on, and generation resumes if the store still has
//! the id for us — or `:lost`, for good).

use crate::errors::arg_error;
use crate::init::{CryptOpts, build, install};
use crate::registry::{Held, instance, release, take};
use nonceforge_lease::{Lease, LeaseEvent, LeaseOptions, LeaseState, LostReason, MillisOptions};
use rustler::types::atom::Atom;
use rustler::{Encoder, Env, LocalPid, NifResult, OwnedEnv, ResourceArc, Term};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

mod atoms {
    rustler::atoms! { ok, error, nonceforge, lease_lost, lapsed, lost, held, released, none, taken, evicted, store_lost_data, store_went_back }
}

pub(crate) fn load(_env: Env) -> bool {
    true
}

/// The lease options, checked by Nonceforge.init/1 first (milliseconds; nil:
/// the lease crate's default).
#[derive(rustler::NifMap)]
struct LeaseOpts {
    ttl_ms: Option<u64>,
    renew_every_ms: Option<u64>,
    margin_ms: Option<u64>,
    connect_timeout_ms: Option<u64>,
    ids_first: Option<u16>,
    ids_last: Option<u16>,
    namespace: Option<String>,
    holder: Option<String>,
    pg_schema: Option<String>,
    fast_start: Option<String>,
    layout: String,
}

/// Tells `owner` when the lease lapses or is lost, as the lease's thread
/// pushes the change (a subscription: nothing polls).
fn watch(lease: Arc<Mutex<Option<Lease>>>, stop: Arc<AtomicBool>, owner: LocalPid) {
    let Some(events) = lease
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(Lease::subscribe)
    else {
        return;
    };
    std::thread::spawn(move || {
        let mut told: Option<Atom> = None;
        // Ends when the lease is released or dropped.
        for event in events {
            if stop.load(Ordering::Acquire) {
                return;
            }
            let now = match event {
                LeaseEvent::Lapsed => Some(atoms::lapsed()),
                LeaseEvent::Lost(_) => Some(atoms::lost()),
                LeaseEvent::Released => return,
                _ => None,
            };
            if let Some(reason) = now
                && now != told
            {
                let mut env = OwnedEnv::new();
                // The owner may have exited: nothing to tell then.
                let _ = env.send_and_clear(&owner, |env| {
                    (atoms::nonceforge(), atoms::lease_lost(), reason).encode(env)
                });
                if reason == atoms::lost() {
                    return;
                }
            }
            told = now;
        }
    });
}

impl From<LeaseOpts> for LeaseOptions {
    fn from(o: LeaseOpts) -> LeaseOptions {
        MillisOptions {
            ttl_ms: o.ttl_ms,
            renew_every_ms: o.renew_every_ms,
            margin_ms: o.margin_ms,
            connect_timeout_ms: o.connect_timeout_ms,
            ids: o.ids_first.zip(o.ids_last),
            namespace: o.namespace,
            holder: o.holder,
            pg_schema: o.pg_schema,
            // Nonceforge.lease_options/1 lets only :off, :verify and
            // :declared through; the off default is the safe one anyway.
            fast_start: o.fast_start.and_then(|f| f.parse().ok()),
            // Nonceforge.lease_options/2 lets only "standard" and "wide" through.
            layout: Some(nonceforge::Layout::parse(&o.layout).unwrap_or_default()),
        }
        .into()
    }
}

/// `Nonceforge.init/1` with `machine_id: {:lease, url, opts}`: acquires an id
/// (a dirty I/O scheduler: it talks to the store), builds the generator above
/// the previous holder's floor, attaches it.
#[rustler::nif(schedule = "DirtyIo")]
fn nif_init_leased<'a>(
    env: Env<'a>,
    name: Term<'a>,
    url: String,
    lease_opts: LeaseOpts,
    epoch_unix_ms: i64,
    opts: CryptOpts<'a>,
) -> NifResult<(Atom, u16)> {
    let lease =
        Lease::acquire(&url, &lease_opts.into()).map_err(|e| arg_error(format!("lease: {e}")))?;
    let machine_id = lease.machine_id().get();
    let (generator, crypt) = build(lease.builder(), epoch_unix_ms, &opts)?;
    lease
        .attach(&generator)
        .map_err(|e| arg_error(format!("lease: {e}")))?;
    let lease = Arc::new(Mutex::new(Some(lease)));
    let stop = Arc::new(AtomicBool::new(false));
    watch(lease.clone(), stop.clone(), env.pid());
    install(name, generator, crypt, Some(Held { lease, stop }))?;
    Ok((atoms::ok(), machine_id))
}

/// `Nonceforge.release/1`: stops the generator, records its floor, frees the id.
#[rustler::nif(schedule = "DirtyIo")]
fn nif_release<'a>(env: Env<'a>, name: Term<'a>) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    Ok(match take(i) {
        None => atoms::none().encode(env),
        Some(held) => match release(held) {
            Ok(()) => atoms::ok().encode(env),
            Err(e) => (atoms::error(), e).encode(env),
        },
    })
}

/// `{state, deadline_in_ms}` of an instance's lease; `:none` without one.
#[rustler::nif]
fn nif_lease_state<'a>(env: Env<'a>, name: Term<'a>) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let guard = i.lease.lock().unwrap_or_else(|p| p.into_inner());
    Ok(match guard.as_ref() {
        None => atoms::none().encode(env),
        Some(held) => state_term(env, held),
    })
}

fn state_term<'a>(env: Env<'a>, held: &Held) -> Term<'a> {
    let lease = held.lease.lock().unwrap_or_else(|p| p.into_inner());
    match lease.as_ref().map(Lease::state) {
        Some(LeaseState::Held { deadline_in }) => {
            (atoms::held(), deadline_in.as_millis() as u64).encode(env)
        }
        Some(LeaseState::Lapsed) => (atoms::lapsed(), 0u64).encode(env),
        Some(LeaseState::Lost) => (atoms::lost(), 0u64).encode(env),
        Some(LeaseState::Released) | None => (atoms::released(), 0u64).encode(env),
    }
}

/// A lease that several instances share (`Nonceforge.MachineId` with a
/// lease strategy): every instance inited on it is attached to it, so each
/// stops the moment the lease may have lapsed. Released when
/// `nif_lease_release` is called or, failing that, when the VM collects it.
pub struct SharedLease(Mutex<Option<Held>>);

#[rustler::resource_impl]
impl rustler::Resource for SharedLease {}

impl SharedLease {
    /// `f` of the lease, while it is held (`None` once released).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&Lease) -> Option<T>) -> Option<T> {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let held = held.as_ref()?;
        let lease = held.lease.lock().unwrap_or_else(|p| p.into_inner());
        lease.as_ref().and_then(f)
    }
}

impl Drop for SharedLease {
    fn drop(&mut self) {
        if let Some(held) = self.0.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = release(held);
        }
    }
}

/// Acquires a lease for `Nonceforge.MachineId`: `{:ok, lease, machine_id,
/// floor_unix_ms}`. The calling process is told `{:nonceforge, :lease_lost,
/// :lapsed | :lost}` when it may no longer issue.
#[rustler::nif(schedule = "DirtyIo")]
fn nif_lease_acquire(
    env: Env<'_>,
    url: String,
    lease_opts: LeaseOpts,
) -> NifResult<(Atom, ResourceArc<SharedLease>, u16, u64)> {
    let lease =
        Lease::acquire(&url, &lease_opts.into()).map_err(|e| arg_error(format!("lease: {e}")))?;
    Ok(share(env, lease))
}

/// A lease just acquired, as `{:ok, lease, id, floor_unix_ms}`: past its
/// start (here, on a dirty I/O scheduler: an id without history waits out the
/// TTL and margin before the instances, built on a dirty CPU one, start),
/// watched for the calling process.
fn share(env: Env<'_>, lease: Lease) -> (Atom, ResourceArc<SharedLease>, u16, u64) {
    lease.wait_for_start();
    let (id, floor) = (lease.machine_id().get(), lease.floor_unix_ms());
    let lease = Arc::new(Mutex::new(Some(lease)));
    let stop = Arc::new(AtomicBool::new(false));
    watch(lease.clone(), stop.clone(), env.pid());
    let shared = SharedLease(Mutex::new(Some(Held { lease, stop })));
    (atoms::ok(), ResourceArc::new(shared), id, floor)
}

/// Leases exactly the machine id a StatefulSet pod's index source names
/// (`env:VAR`, `file:PATH`, `hostname`: the lease crate's `PodIndex`), waiting
/// at most `wait_ms` (nil: as long as it takes) while another member holds
/// it: `{:ok, lease, id, floor_unix_ms}` as `nif_lease_acquire`, or
/// `{:error, :taken, id}` when the wait ended with the id still held. For
/// `env:VAR` the caller passes the variable's value as the VM sees it
/// (`System.get_env/1`: the emulator keeps its own copy of the environment).
#[rustler::nif(schedule = "DirtyIo")]
fn nif_lease_acquire_exact<'a>(
    env: Env<'a>,
    url: String,
    lease_opts: LeaseOpts,
    source: String,
    env_value: Option<String>,
    wait_ms: Option<u64>,
) -> NifResult<Term<'a>> {
    let bad = |e: &dyn std::fmt::Display| arg_error(format!("strategy_opts :id_from: {e}"));
    let parsed: nonceforge_lease::PodIndex = source.parse().map_err(|e| bad(&e))?;
    // The pod's index as an id of the members' layout (up to 65535 in the wide one).
    let layout = nonceforge::Layout::parse(&lease_opts.layout).unwrap_or_default();
    let id = match (&parsed, env_value) {
        (nonceforge_lease::PodIndex::Env(var), Some(value)) => {
            nonceforge::MachineId::from_trailing_number_in(layout, var, &value)
                .map_err(|e| bad(&e))?
        }
        (nonceforge_lease::PodIndex::Env(var), None) => {
            return Err(bad(&format!("the environment variable {var} is not set")));
        }
        _ => parsed.read_in(layout).map_err(|e| bad(&e))?,
    };
    let wait = wait_ms.map(std::time::Duration::from_millis);
    let lease = match Lease::acquire_exact(&url, id, &lease_opts.into(), wait) {
        Err(nonceforge_lease::LeaseError::AllTaken { .. }) => {
            return Ok((atoms::error(), atoms::taken(), id.get()).encode(env));
        }
        other => other.map_err(|e| arg_error(format!("lease: {e}")))?,
    };
    Ok(share(env, lease).encode(env))
}

/// `Nonceforge.init/1` on a shared lease: the generator is built from the
/// lease (its id, above the floor) and attached to it.
#[rustler::nif(schedule = "DirtyCpu")]
fn nif_init_on_lease<'a>(
    name: Term<'a>,
    shared: ResourceArc<SharedLease>,
    epoch_unix_ms: i64,
    opts: CryptOpts<'a>,
) -> NifResult<Atom> {
    let guard = shared.0.lock().unwrap_or_else(|p| p.into_inner());
    let held = guard
        .as_ref()
        .ok_or_else(|| arg_error("lease: it was released"))?;
    let lease_guard = held.lease.lock().unwrap_or_else(|p| p.into_inner());
    let lease = lease_guard
        .as_ref()
        .ok_or_else(|| arg_error("lease: it was released"))?;
    let (generator, crypt) = build(lease.builder(), epoch_unix_ms, &opts)?;
    lease
        .attach(&generator)
        .map_err(|e| arg_error(format!("lease: {e}")))?;
    install(name, generator, crypt, None)?;
    Ok(atoms::ok())
}

/// Releases a shared lease (its instances stop): `:ok`, `{:error, reason}`,
/// or `:none` when it was released already.
#[rustler::nif(schedule = "DirtyIo")]
fn nif_lease_release(env: Env<'_>, shared: ResourceArc<SharedLease>) -> Term<'_> {
    let held = shared.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    match held.map(release) {
        None => atoms::none().encode(env),
        Some(Ok(())) => atoms::ok().encode(env),
        Some(Err(e)) => (atoms::error(), e).encode(env),
    }
}

/// The TTL (ms) a shared lease is kept with: the option given, or the lease
/// crate's default.
#[rustler::nif]
fn nif_lease_ttl_ms(shared: ResourceArc<SharedLease>) -> u64 {
    shared
        .with(|l| Some(l.ttl().as_millis() as u64))
        .unwrap_or(0)
}

/// Why a shared lease was lost: `:taken`, `:evicted`, `:store_lost_data`
/// (the store lost its data) or `:store_went_back` (an older copy of it came
/// back); `nil` while it is not lost.
#[rustler::nif]
fn nif_lease_lost_reason(env: Env<'_>, shared: ResourceArc<SharedLease>) -> Term<'_> {
    match shared.with(Lease::lost_reason) {
        Some(LostReason::Taken) => atoms::taken().encode(env),
        Some(LostReason::Evicted) => atoms::evicted().encode(env),
        Some(LostReason::StoreWentBack) => atoms::store_went_back().encode(env),
        Some(_) => atoms::store_lost_data().encode(env),
        None => rustler::types::atom::nil().encode(env),
    }
}

/// `{state, deadline_in_ms}` of a shared lease.
#[rustler::nif]
fn nif_lease_status(env: Env<'_>, shared: ResourceArc<SharedLease>) -> Term<'_> {
    match shared.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        Some(held) => state_term(env, held),
        None => (atoms::released(), 0u64).encode(env),
    }
}
