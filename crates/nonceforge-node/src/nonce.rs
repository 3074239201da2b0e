//! Nonces: the generator class and the hot-path free function.

use crate::{bulk, core_err, invalid, lease};
use napi::bindgen_prelude::*;
use napi::{Env, Unknown};
use napi_derive::napi;
use nonceforge::nonce::NonceKind;
use nonceforge::{Bits, Layout, MachineId, NonceGenerator};

/// The kind and size a JS call names by one number, `kind * 3 + size` (kind:
/// 0 counter, 1 sortable, 2 encrypted; size: 0 = 64, 1 = 96, 2 = 128 bits):
/// numbers, not strings, because `next` is called once a nonce. node/lib/nonce.js
/// makes the code (`nonceCode`) after checking the names.
fn kind_bits(code: u32) -> Result<(NonceKind, Bits)> {
    const KINDS: [NonceKind; 3] = [
        NonceKind::Counter,
        NonceKind::Sortable,
        NonceKind::Encrypted,
    ];
    let k = *KINDS
        .get(code as usize / 3)
        .ok_or_else(|| invalid(format!("nonce code must be in 0..9, got {code}")))?;
    Ok((k, Bits::ALL[code as usize % 3]))
}

/// A nonce generator (one per process and machine id).
#[napi]
pub struct Generator {
    inner: NonceGenerator,
}

#[napi]
impl Generator {
    /// `machineId` in 0..=511 (0..=65535 with `layout` "wide"); `key` (≥ 32
    /// bytes) for encrypted nonces; `epochUnixMs` to move the epoch; `layout`
    /// "standard" (default) or "wide".
    #[napi(constructor, catch_unwind)]
    pub fn new(
        machine_id: u32,
        key: Option<&[u8]>,
        epoch_unix_ms: Option<f64>,
        layout: Option<String>,
    ) -> Result<Self> {
        let layout = match layout {
            Some(name) => Layout::parse(&name).map_err(core_err)?,
            None => Layout::Standard,
        };
        let id = MachineId::new_in(Layout::Wide, machine_id as u64).map_err(core_err)?;
        let b = NonceGenerator::builder(id).layout(layout);
        Self::build(b, key, epoch_unix_ms)
    }

    /// The layout: "standard" or "wide".
    #[napi(getter)]
    pub fn layout(&self) -> &'static str {
        self.inner.layout().name()
    }

    /// A generator on a leased machine id: started above the previous
    /// holder's floor and held to the lease's deadline.
    #[napi(factory, catch_unwind)]
    pub fn leased(
        lease: &lease::LeaseHandle,
        key: Option<&[u8]>,
        epoch_unix_ms: Option<f64>,
    ) -> Result<Self> {
        lease.with(|l| {
            let g = Self::build(l.builder(), key, epoch_unix_ms)?;
            l.attach(&g.inner).map_err(lease::lease_err)?;
            Ok(g)
        })
    }

    fn build(
        mut b: nonceforge::NonceGeneratorBuilder,
        key: Option<&[u8]>,
        epoch_unix_ms: Option<f64>,
    ) -> Result<Self> {
        if let Some(k) = key {
            b = b.key(k);
        }
        if let Some(e) = epoch_unix_ms {
            if !(e >= 0.0 && e.fract() == 0.0 && e <= 9_007_199_254_740_991.0) {
                return Err(invalid("epochUnixMs must be a non-negative integer"));
            }
            b = b.epoch_unix_ms(e as u64);
        }
        Ok(Self {
            inner: b.build().map_err(core_err)?,
        })
    }

    /// A handle on the same generator (shared state) for [`next_nonce_into`].
    #[napi]
    pub fn handle(&self) -> External<NonceGenerator> {
        External::new(self.inner.clone())
    }

    /// `count` nonces, back to back, in one new Buffer (one reservation).
    #[napi(catch_unwind)]
    pub fn fill(&self, code: u32, count: u32) -> Result<Buffer> {
        let (k, b) = kind_bits(code)?;
        let mut out = vec![0u8; b.bytes() * count as usize];
        self.inner.fill(k, b, &mut out).map_err(core_err)?;
        Ok(out.into())
    }

    /// Fill `out` (a whole number of nonces) in place.
    #[napi(catch_unwind)]
    pub fn fill_into(&self, code: u32, out: Unknown<'_>) -> Result<()> {
        let (k, b) = kind_bits(code)?;
        let mut view = BufferSlice::from_unknown(out)?;
        if view.len() % b.bytes() != 0 {
            return Err(invalid(format!(
                "out.length must be a multiple of {} (the nonce size)",
                b.bytes()
            )));
        }
        self.inner.fill(k, b, &mut view).map_err(core_err)
    }

    /// Decrypt an encrypted nonce back to its counter form.
    #[napi(catch_unwind)]
    pub fn decrypt(&self, nonce: &[u8]) -> Result<Buffer> {
        Ok(self.inner.decrypt(nonce).map_err(core_err)?.to_vec().into())
    }

    /// The parts of a counter or sortable nonce: `[unixMs, machineId, counter]`.
    #[napi(catch_unwind)]
    pub fn decompose(&self, nonce: &[u8]) -> Result<(f64, u32, BigInt)> {
        let p = self.inner.decompose(nonce).map_err(core_err)?;
        Ok((
            p.unix_ms as f64,
            p.machine_id as u32,
            BigInt::from(p.counter),
        ))
    }

    /// The machine id.
    #[napi(getter)]
    pub fn machine_id(&self) -> u32 {
        self.inner.machine_id().get() as u32
    }

    /// Stop issuing: every call fails until `enable()`.
    #[napi]
    pub fn disable(&self) {
        self.inner.disable();
    }

    /// Issue again.
    #[napi]
    pub fn enable(&self) {
        self.inner.enable();
    }

    /// Whether it issues.
    #[napi(getter)]
    pub fn enabled(&self) -> bool {
        self.inner.is_enabled()
    }

    /// The generator's figures as samples of the fleet's metric series
    /// (testdata/vectors/metrics.json): the core's mapping, not restated.
    #[napi(catch_unwind)]
    pub fn samples(&self) -> Vec<MetricSample> {
        to_js(self.inner.stats().samples())
    }
}

/// One value of one metric series, as node/lib/nonce.js's `metrics()`
/// returns it.
#[napi(object)]
pub struct MetricSample {
    /// The metric's name (`nonceforge_…`).
    pub name: String,
    /// `counter` or `gauge`.
    #[napi(js_name = "type")]
    pub kind: String,
    /// The series' own labels.
    pub labels: std::collections::HashMap<String, String>,
    /// The value now.
    pub value: f64,
}

/// Samples for JavaScript.
pub(crate) fn to_js(samples: Vec<nonceforge::nonce::series::Sample>) -> Vec<MetricSample> {
    samples
        .into_iter()
        .map(|s| MetricSample {
            name: s.def.name.to_owned(),
            kind: s.def.kind.to_owned(),
            labels: s
                .labels
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            value: s.value,
        })
        .collect()
}

/// A metric family of the fleet: name, type, label names, help.
#[napi(object)]
pub struct MetricDef {
    /// The metric's name (`nonceforge_…`).
    pub name: String,
    /// `counter` or `gauge`.
    #[napi(js_name = "type")]
    pub kind: String,
    /// The label names its series carry.
    pub labels: Vec<String>,
    /// What it counts or shows.
    pub help: String,
}

/// Every family a generator's and a lease's `metrics()` give, then the nonce
/// sanitizer's (`SanitizedAead.metrics()`), in testdata/vectors/metrics.json's
/// order ("metrics", then "sanitizer_metrics"; the core's and the lease
/// crate's tables, not restated): what lib/otel.js makes instruments of.
#[napi]
pub fn metric_defs() -> Vec<MetricDef> {
    nonceforge::nonce::series::GENERATOR_METRICS
        .iter()
        .chain(nonceforge_lease::LEASE_METRICS.iter())
        .chain(nonceforge::aead::SANITIZER_METRICS.iter())
        .map(|d| MetricDef {
            name: d.name.to_owned(),
            kind: d.kind.to_owned(),
            labels: d.labels.iter().map(|l| (*l).to_owned()).collect(),
            help: d.help.to_owned(),
        })
        .collect()
}

/// The nonce sanitizer's figures for the process (every key: seals checked,
/// refusals by violation, keys held, their memory) as samples of the fleet's
/// series; read without the keys' locks.
#[napi(catch_unwind)]
pub fn sanitizer_samples() -> Vec<MetricSample> {
    to_js(nonceforge::aead::registry_stats().samples())
}

/// The core's default nonce epoch (Unix ms): lib/nonce.js's default, read
/// from here rather than restated. (2^53 holds it exactly.)
#[napi]
pub fn default_epoch_unix_ms() -> f64 {
    nonceforge::layout::DEFAULT_EPOCH_UNIX_MS as f64
}

/// One nonce into the start of `out`: the hot path of `NonceGenerator#next`,
/// a free function over an External because a napi-rs class method call costs
/// about twice a free function's (bench/RESULTS.md, "The measurements behind
/// the code"). `code` as in `kind_bits`.
#[napi(catch_unwind)]
pub fn next_nonce_into(
    env: Env,
    generator: &External<NonceGenerator>,
    code: u32,
    out: Unknown<'_>,
) -> Result<()> {
    let (k, b) = kind_bits(code)?;
    let nonce = generator.next(k, b).map_err(core_err)?;
    let (ptr, len) = bulk::buffer_info(&env, &out)?;
    if len < b.bytes() {
        return Err(invalid(format!(
            "out is too short: {} bytes needed",
            b.bytes()
        )));
    }
    // SAFETY: `out` is a live buffer of at least `len` bytes and JS is blocked in this call.
    nonce
        .write_to(unsafe { &mut std::slice::from_raw_parts_mut(ptr, len)[..b.bytes()] })
        .map_err(core_err)
}
