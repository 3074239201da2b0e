#!/usr/bin/env bash
# Installs every artifact in dist/ (make dist) into a new consumer project,
# with no network, and runs it — as a user of each ecosystem would before the
# packages are published (RELEASING.md):
#   - the crates: a new Cargo project depending on nonceforge and
#     nonceforge-lease, and the CLI built from nonceforge-cli's .crate, each
#     against the other .crate files (cargo --offline, [patch.crates-io]);
#   - the npm tarballs: npm install --offline into an empty project, on a
#     PATH without cargo, a CommonJS and an ES module program;
#   - the Python wheel: pip install --no-index into a new virtual environment,
#     on a PATH without cargo, and a program; the sdist built into a wheel with
#     the maturin of make's venv (PY_VENV), offline (the route without a wheel);
#   - the Elixir package: a new Mix app depending on it by path, no cargo;
#   - the PostgreSQL .deb (Debian's 15) and a tarball (18): installed, then
#     CREATE EXTENSION and a nonce on a throwaway cluster, no cargo.
# Usage: tools/dist-test.sh [DIST_DIR]     (default: dist)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dist="$(cd "${1:-$root/dist}" && pwd)"
work=$(mktemp -d /tmp/nonceforge-dist-test.XXXXXX)
cleanup() {
    dpkg -r postgresql-15-nonceforge >/dev/null 2>&1 || true
    [ -n "${pgdata:-}" ] && su postgres -c "/opt/nonceforge-pg/18/bin/pg_ctl -D $pgdata stop -m immediate" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
nocargo=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/cargo" ] || printf '%s:' "$d"; done)
nocargo=${nocargo%:}
version=$(awk -F'"' '/^version = / { print $2; exit }' "$root/Cargo.toml")

echo "== the crates (.crate files), offline"
mkdir -p "$work/crates" "$work/rust/src" "$work/rust/.cargo"
for c in "$dist"/crates/*.crate; do tar -C "$work/crates" -xzf "$c"; done
{
    echo '[patch.crates-io]'
    for d in "$work"/crates/*/; do n=$(basename "$d"); echo "${n%-$version} = { path = \"$d\" }"; done
} >"$work/rust/.cargo/config.toml"
cat >"$work/rust/Cargo.toml" <<TOML
[package]
name = "consumer"
version = "0.1.0"
edition = "2024"

[dependencies]
nonceforge = "$version"
nonceforge-lease = "$version"
TOML
cat >"$work/rust/src/main.rs" <<'RS'
use nonceforge::{Bits, MachineId, NonceGenerator, NonceKind};
fn main() -> Result<(), nonceforge::Error> {
    let g = NonceGenerator::builder(MachineId::new(3)?).key(&[7; 32]).build()?;
    let n = g.next(NonceKind::Encrypted, Bits::B96)?;
    let _ = nonceforge_lease::parse_ids("0-511").expect("ids");
    println!("rust nonce {}", n.to_vec().len());
    Ok(())
}
RS
(cd "$work/rust" && cargo run -q --offline 2>&1 | tail -3) | grep -qx "rust nonce 12" || { echo "--- failed: the Rust consumer"; exit 1; }
(cd "$work/crates/nonceforge-cli-$version" && CARGO_TARGET_DIR="$work/rust/target" \
    cargo build -q --offline --release --config "$work/rust/.cargo/config.toml" 2>&1 | tail -3)
NONCEFORGE_MACHINE_ID=4 "$work/rust/target/release/nonceforge" gen counter --bits 96 -n 2 | wc -l | grep -qx 2 ||
    { echo "--- failed: the CLI from its .crate"; exit 1; }
echo "crates: a consumer of nonceforge + nonceforge-lease and the CLI, built offline from the .crate files"

echo "== the Python wheel, offline, no cargo; the sdist built offline"
python3 -m venv "$work/py"
env PATH="$nocargo" "$work/py/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$dist/python" nonceforge
(cd "$work" && env PATH="$nocargo" "$work/py/bin/python" -c '
import nonceforge as nf
from nonceforge.aead import AESGCM
g = nf.NonceGenerator(6)
a = AESGCM(bytes(16))
print("python nonce", len(g.counter(96)), nf.uuid7().version, len(a.encrypt(bytes(12), b"x", None)))
') | grep -qx "python nonce 12 7 17" || { echo "--- failed: the Python wheel"; exit 1; }
# The build backend runs `maturin` from the PATH: the venv's.
env PATH="${PY_VENV:?PY_VENV: make dist-test passes the venv with maturin}/bin:$PATH" "$PY_VENV/bin/pip" wheel -q \
    --no-deps --no-build-isolation --no-index "$dist"/python/nonceforge-*.tar.gz -w "$work/sdist-wheel" >/dev/null
ls "$work"/sdist-wheel/nonceforge-*.whl >/dev/null || { echo "--- failed: the Python sdist did not build"; exit 1; }
echo "python: the wheel installed offline without cargo and used; the sdist built"

echo "== the npm tarballs, offline, no cargo"
mkdir -p "$work/npm"
(cd "$work/npm" && echo '{"name":"consumer","version":"1.0.0","private":true}' >package.json &&
    env PATH="$nocargo" npm install --offline --no-audit --no-fund "$dist"/npm/*.tgz >/dev/null 2>&1)
cat >"$work/npm/a.cjs" <<'JS'
const { NonceGenerator } = require('nonceforge');
const cryptoAsync = require('nonceforge/crypto-async');
const g = new NonceGenerator({ machineId: 3 });
console.log('node', g.counter(96).length, cryptoAsync.hash('sha256', Buffer.from('abc')).length, cryptoAsync.ZERO_COPY);
JS
cat >"$work/npm/b.mjs" <<'JS'
import { ExtIdCodec } from 'nonceforge';
const ids = new ExtIdCodec(Buffer.alloc(32, 1), 'user');
console.log('esm', ids.decodeSeq(ids.encode(42)));
JS
(cd "$work/npm" && env PATH="$nocargo" node a.cjs) | grep -qx "node 12 32 true" || { echo "--- failed: the npm consumer (CommonJS)"; exit 1; }
(cd "$work/npm" && env PATH="$nocargo" node b.mjs) | grep -qx "esm 42n" || { echo "--- failed: the npm consumer (ESM)"; exit 1; }
echo "npm: both tarballs installed offline without cargo; CommonJS and ESM run, pool jobs zero-copy"

echo "== the Elixir package, no cargo"
mkdir -p "$work/ex/lib"
tar -C "$work" -xzf "$dist"/elixir/nonceforge-*.tar.gz
cat >"$work/ex/mix.exs" <<EX
defmodule Consumer.MixProject do
  use Mix.Project
  def project, do: [app: :consumer, version: "0.1.0", deps: [{:nonceforge, path: "$work/nonceforge"}]]
end
EX
(cd "$work/ex" && env PATH="$nocargo" MIX_ENV=prod mix run --no-start -e \
    ':ok = Nonceforge.init(machine_id: 3); IO.puts("elixir #{byte_size(Nonceforge.nonce(128))}")' 2>&1) |
    grep -qx "elixir 16" || { echo "--- failed: the Elixir consumer"; exit 1; }
echo "elixir: the package, used by path from a new Mix app, runs with its prebuilt NIF and no cargo"

echo "== the PostgreSQL packages, no cargo"
if dpkg -s postgresql-15-nonceforge >/dev/null 2>&1; then
    echo "postgresql-15-nonceforge is installed here: the .deb check is skipped"
else
    dpkg -i "$dist"/pg/postgresql-15-nonceforge_*.deb >/dev/null 2>&1
    dpkg -L postgresql-15-nonceforge | grep -qx /usr/lib/postgresql/15/lib/nonceforge.so
    dpkg -r postgresql-15-nonceforge >/dev/null 2>&1
fi
tar -C "$work" -xzf "$dist"/pg/nonceforge-*-pg18-linux-x86_64.tar.gz
pgdata="$work/pg18" && mkdir -p "$pgdata" && chown postgres "$pgdata" "$work"
rm -f /opt/nonceforge-pg/18/lib/nonceforge.so /opt/nonceforge-pg/18/share/extension/nonceforge*
env PATH="$nocargo" "$work"/nonceforge-*-pg18-linux-x86_64/install.sh /opt/nonceforge-pg/18/bin/pg_config >/dev/null
su postgres -c "/opt/nonceforge-pg/18/bin/initdb -D $pgdata -A trust >/dev/null && printf \"shared_preload_libraries = nonceforge\\nnonceforge.machine_id = 5\\n\" >>$pgdata/postgresql.conf &&
    /opt/nonceforge-pg/18/bin/pg_ctl -D $pgdata -o '-p 55419 -k $work -c listen_addresses=' -l $pgdata/log start -w >/dev/null"
out=$(su postgres -c "/opt/nonceforge-pg/18/bin/psql -h $work -p 55419 -d postgres -qAtc \"CREATE EXTENSION nonceforge; SELECT length(nonce(96)), machine_id FROM machine_id_status()\"")
[ "$out" = "12|5" ] || { echo "--- failed: the PostgreSQL 18 tarball ($out)"; exit 1; }
echo "postgresql: the .deb (15) installs and removes cleanly; the tarball (18) installs, CREATE EXTENSION and nonces work"
echo "dist: every artifact installed into a new consumer project offline and ran"
