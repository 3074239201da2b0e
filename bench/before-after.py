#!/usr/bin/env python3
"""Benchmarks of an earlier commit and of this checkout, side by side in one run.

    python3 bench/before-after.py REV [--rounds 5] [--seconds 0.2] [--faces cli,node,go]
        [--go-bench REGEX] [--cpu N]

Builds REV in a git worktree (target/before-REV; its own cargo target directory,
the Node addon with this checkout's node_modules), then runs each face's
benchmark for REV and for this checkout alternately, --rounds times, so both
columns of a row share the machine's state. Prints Markdown tables: the median
of each row for both and after/before. A restructuring that keeps speed shows
ratios within the spread of the rounds (printed as min-max of the ratio of
each round's pair).

Faces: cli (`nonceforge bench --json --threads 1`: nonces, external ids, the
sanitizer), node (bench/node/bench.js --json: crypto-async rows and nonces),
go (`go test -bench` over go/nonce, go/extid, go/uuid, go/sanitizer; --go-bench
picks benchmarks, --cpu pins the runs to one core: on a VM whose cores read
differently, one core's rounds are comparable where unpinned ones are not).
"""

import argparse
import functools
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, cwd, env=None, quiet=False):
    full = dict(os.environ, **(env or {}))
    out = subprocess.run(cmd, cwd=cwd, env=full, check=True, text=True,
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL if quiet else None)
    return out.stdout


def prepare(rev, faces):
    tree = os.path.join(ROOT, "target", f"before-{rev}")
    if not os.path.isdir(tree):
        sh(["git", "worktree", "add", "--detach", tree, rev], ROOT)
    if "cli" in faces:
        for where in (tree, ROOT):
            print(f"building the CLI in {where}", file=sys.stderr)
            sh(["cargo", "build", "--release", "--locked", "-q", "-p", "nonceforge-cli"], where)
    if "node" in faces:
        link = os.path.join(tree, "node", "node_modules")
        if not os.path.exists(link):
            os.symlink(os.path.join(ROOT, "node", "node_modules"), link)
        for where in (tree, ROOT):
            print(f"building the Node addon in {where}", file=sys.stderr)
            sh(["npm", "run", "-s", "build"], os.path.join(where, "node"), quiet=True)
    return tree


def cli_rows(tree, seconds):
    out = sh([os.path.join(tree, "target", "release", "nonceforge"), "bench", "--json",
              "--threads", "1", "--seconds", str(seconds)], tree)
    rows = {}
    for line in out.splitlines():
        r = json.loads(line)
        # The AEAD rows carry their message size in `op` already ("64B").
        key = " ".join(str(x) for x in (r["name"], r.get("op", ""), r["bits"] or "") if x)
        rows[key] = r["ops_per_sec"] / 1e6  # M op/s
    return rows


def node_rows(tree, seconds):
    # The crypto-async drop-in's table, nonces from JavaScript; not the stalls
    # (one 64 MiB job a round: too few samples for a ratio).
    out = sh(["node", "bench/node/bench.js", "--json", "--runs", "1", "--seconds", str(seconds),
              "--sizes", "256,4096,1048576"], tree)
    data = json.loads(out.strip().splitlines()[-1])
    rows = {}
    for r in data["rows"]:
        rows[f'{r["algorithm"]} {r["size"]} B {r["mode"]}'] = r["nonceforge"]  # MB/s
    for k, v in data["nonces"].items():
        rows[f"nonces: {k}"] = v  # M/s
    return rows


GO_LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$")
GO_METRIC = re.compile(r"(-?[\d.]+) (\S+)")


def go_rows(tree, seconds, bench=".", cpu=None):
    # A row a benchmark: M op/s from its ns/op; a benchmark that reports its
    # own figures (BenchmarkSealInterleaved: "window-%", "plain-ns/seal")
    # gives a row for each, in its own unit, named after it.
    cmd = ["go", "test", "-run", "^$", "-bench", bench, "-benchtime", f"{seconds}s", "-count", "1",
           "./nonce", "./extid", "./uuid", "./sanitizer"]
    env = None
    if cpu is not None:
        # One core, and GOMAXPROCS as the whole machine would give (defaults
        # sized from it, the sanitizer's shards, stay as unpinned).
        cmd = ["taskset", "-c", str(cpu)] + cmd
        env = {"GOMAXPROCS": str(os.cpu_count())}
    out = sh(cmd, os.path.join(tree, "go"), env=env, quiet=True)
    rows = {}
    for line in out.splitlines():
        m = GO_LINE.match(line)
        if not m:
            continue
        for value, unit in GO_METRIC.findall(m.group(2)):
            if unit == "ns/op":
                if float(value) > 0:
                    rows[m.group(1)] = 1e3 / float(value)  # M op/s
            elif unit not in ("B/op", "allocs/op", "MB/s"):
                rows[f"{m.group(1)} {unit}"] = float(value)
    return rows


FACES = {"cli": (cli_rows, "M op/s"), "node": (node_rows, "MB/s or M/s"), "go": (go_rows, "M op/s")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("rev", help="the earlier commit (e.g. the one before a restructuring)")
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds (1..50, default 5)")
    p.add_argument("--seconds", type=float, default=0.2, help="seconds a row (0.05..5, default 0.2)")
    p.add_argument("--faces", default="cli,node,go", help="comma-separated: cli, node, go")
    p.add_argument("--go-bench", default=".", metavar="REGEX",
                   help="go: the benchmarks to run (go test -bench; default: all)")
    p.add_argument("--cpu", type=int, metavar="N",
                   help="go: run pinned to core N (taskset), GOMAXPROCS left at the machine's")
    a = p.parse_args()
    faces = [f for f in a.faces.split(",") if f]
    bad = [f for f in faces if f not in FACES]
    if bad or not faces:
        p.error(f"--faces: each of cli, node, go (got {a.faces!r})")
    if not 1 <= a.rounds <= 50:
        p.error("--rounds: 1..50")
    if not 0.05 <= a.seconds <= 5:
        p.error("--seconds: 0.05..5")
    if a.cpu is not None and not 0 <= a.cpu < (os.cpu_count() or 1):
        p.error(f"--cpu: a core of this machine, 0..{(os.cpu_count() or 1) - 1}")
    try:
        re.compile(a.go_bench)
    except re.error as e:
        p.error(f"--go-bench: not a regular expression ({e})")
    try:
        rev = sh(["git", "rev-parse", "--short", "--verify", "--quiet", a.rev + "^{commit}"], ROOT).strip()
    except subprocess.CalledProcessError:
        p.error(f"rev: {a.rev!r} is not a commit of this repository")
    tree = prepare(rev, faces)
    head = sh(["git", "rev-parse", "--short", "HEAD"], ROOT).strip()
    for face in faces:
        run, unit = FACES[face]
        if face == "go":
            run = functools.partial(go_rows, bench=a.go_bench, cpu=a.cpu)
        before, after = [], []
        for i in range(a.rounds):
            print(f"{face}: round {i + 1}/{a.rounds}", file=sys.stderr)
            # Alternate which goes first, so neither always runs on a warmer machine.
            if i % 2 == 0:
                before.append(run(tree, a.seconds))
                after.append(run(ROOT, a.seconds))
            else:
                after.append(run(ROOT, a.seconds))
                before.append(run(tree, a.seconds))
        print(f"\n**{face}** ({unit}, median of {a.rounds} alternating rounds of {a.seconds} s a row)\n")
        print(f"| row | {rev} (before) | {head} (after) | after / before | spread of round ratios |")
        print("|---|---:|---:|---:|---|")
        ratios = []
        for key in before[0]:
            if not all(key in r for r in before + after):
                continue
            b = statistics.median(r[key] for r in before)
            f = statistics.median(r[key] for r in after)
            pairs = sorted(x[key] / y[key] for x, y in zip(after, before) if y[key] > 0)
            if b <= 0 or not pairs:
                continue
            ratios.append(f / b)
            print(f"| {key} | {b:.4g} | {f:.4g} | {f / b:.2f}× | {pairs[0]:.2f}–{pairs[-1]:.2f} |")
        missing = sorted(set(before[0]) ^ set(after[0]))
        if ratios:
            print(f"\n{len(ratios)} rows: median after/before {statistics.median(ratios):.3f}×, "
                  f"geometric mean {statistics.geometric_mean(ratios):.3f}×")
        if missing:
            print(f"rows in one column only (renamed or new): {', '.join(missing)}")


if __name__ == "__main__":
    main()
