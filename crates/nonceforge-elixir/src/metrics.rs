//! The fleet's metric series (testdata/vectors/metrics.json) for an instance
//! and for a shared lease, and readiness: read when Elixir asks
//! (`Nonceforge.metrics/1`, `Nonceforge.Telemetry.dispatch_metrics/1` from a
//! poller), so the hot path writes nothing for them.

use crate::lease::SharedLease;
use crate::registry::instance;
use nonceforge::nonce::series::Sample;
use nonceforge_lease::Lease;
use rustler::{Encoder, Env, NifResult, ResourceArc, Term};

/// Samples as `[{name, type, [{label, value}], value}]`.
fn encode<'a>(env: Env<'a>, samples: &[Sample]) -> Term<'a> {
    samples
        .iter()
        .map(|s| {
            let labels: Vec<(&str, &str)> =
                s.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            (s.def.name, s.def.kind, labels, s.value)
        })
        .collect::<Vec<_>>()
        .encode(env)
}

fn lease_samples(lease: &Lease) -> Vec<Sample> {
    lease.metrics().samples(lease.readiness().is_ok())
}

/// An instance's series: its generator's and, when it holds its own lease
/// (`init/1` with `{:lease, url, opts}`), the lease's.
#[rustler::nif]
fn nif_metrics<'a>(env: Env<'a>, name: Term<'a>) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let mut samples = i.generator.stats().samples();
    let held = i.lease.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(held) = held.as_ref() {
        let lease = held.lease.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lease) = lease.as_ref() {
            samples.extend(lease_samples(lease));
        }
    }
    Ok(encode(env, &samples))
}

/// A shared lease's series (the lease strategies of `Nonceforge.MachineId`).
#[rustler::nif]
fn nif_lease_metrics(env: Env<'_>, shared: ResourceArc<SharedLease>) -> Term<'_> {
    encode(
        env,
        &shared.with(|l| Some(lease_samples(l))).unwrap_or_default(),
    )
}

/// Whether an instance issues now: `:ok`, or `{:error, why}` — disabled or
/// past its deadline, or its own lease's reason (starting, lapsed, lost,
/// released) as the lease crate words it.
#[rustler::nif]
fn nif_readiness<'a>(env: Env<'a>, name: Term<'a>) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let held = i.lease.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(held) = held.as_ref() {
        let lease = held.lease.lock().unwrap_or_else(|p| p.into_inner());
        match lease.as_ref().map(Lease::readiness) {
            Some(Err(why)) => return Ok((crate::atoms::error(), why.to_string()).encode(env)),
            None => return Ok((crate::atoms::error(), "the lease was released").encode(env)),
            Some(Ok(())) => {}
        }
    }
    Ok(if i.generator.stats().enabled {
        crate::atoms::ok().encode(env)
    } else {
        (
            crate::atoms::error(),
            "the generator is disabled or past its deadline",
        )
            .encode(env)
    })
}
