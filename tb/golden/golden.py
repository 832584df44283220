#!/usr/bin/env python3
"""Golden runs: canonical `gpumux run`s whose stats.json is stored in tb/golden/NAME/stats.json.

  golden.py check  --gpumux BIN [--root DIR] [--only NAME]...   (ctest `golden`)
  golden.py update --gpumux BIN [--root DIR] [--only NAME]...   (scripts/update-golden)

The runs are listed in tb/golden/runs.txt. Each is run from the repository root (so every path the
model sees is relative; stats.json holds names only), with --out in a temporary folder and
GPUMUX_CACHE_DIR in that folder too (no isolated baseline from this machine's cache leaks in).

check: every run is compared, value by value, with its stored file; any difference fails, printing
the run, then one line per field that moved: JSON path, stored value -> new value. A run in the
manifest without a stored file, or a stored file no run names, fails too.
update: rewrites the stored files and prints the same diff, so the change can be reviewed in the
commit.

The keys left out of the comparison and of the stored files are `gpumux_version` (the project
version, not a model number: a release bump must not need new golden files) and the run's record of its
inputs, `inputs` (file names and SHA-1s of the effective GPU and workload) and `config_sha1`: hashes of
the configuration, not results, which change with any edit to a kernel library or GPU file, even one that
moves no number of these runs (a change that does move one shows in the numbers). Every model number is
compared exactly.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

IGNORED_KEYS = ("gpumux_version", "inputs", "config_sha1")
MAX_LINES_PER_RUN = 40


def read_manifest(path):
    """[(name, [args...])] in file order; '#' starts a comment, blank lines are skipped."""
    runs = []
    seen = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            name, args = words[0], words[1:]
            if name in seen:
                sys.exit(f"{path}:{number}: run '{name}' listed twice")
            if not args:
                sys.exit(f"{path}:{number}: run '{name}' has no arguments")
            for forbidden in ("--out", "--quiet", "--no-cache"):
                if forbidden in args:
                    sys.exit(f"{path}:{number}: run '{name}': {forbidden} is added by golden.py")
            seen.add(name)
            runs.append((name, args))
    return runs


def strip(stats):
    return {k: v for k, v in stats.items() if k not in IGNORED_KEYS}


def diff(old, new, path=""):
    """Lines 'path: old -> new' for every leaf that differs (types, values, array lengths, keys)."""
    out = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            sub = f"{path}.{key}" if path else key
            if key not in new:
                out.append(f"{sub}: {json.dumps(old[key])} -> (removed)")
            elif key not in old:
                out.append(f"{sub}: (absent) -> {json.dumps(new[key])}")
            else:
                out += diff(old[key], new[key], sub)
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            out.append(f"{path}: {len(old)} entries -> {len(new)} entries")
        for i in range(min(len(old), len(new))):
            out += diff(old[i], new[i], f"{path}[{i}]")
        for i in range(len(new), len(old)):
            out.append(f"{path}[{i}]: {json.dumps(old[i])} -> (removed)")
        for i in range(len(old), len(new)):
            out.append(f"{path}[{i}]: (absent) -> {json.dumps(new[i])}")
    elif type(old) is not type(new) or old != new:  # 2 and 2.0 differ: the writer changed
        out.append(f"{path or '(root)'}: {json.dumps(old)} -> {json.dumps(new)}")
    return out


def print_diff(name, lines):
    print(f"  {name}: {len(lines)} field(s) moved")
    for line in lines[:MAX_LINES_PER_RUN]:
        print(f"    {line}")
    if len(lines) > MAX_LINES_PER_RUN:
        print(f"    ... and {len(lines) - MAX_LINES_PER_RUN} more")


def run_one(gpumux, root, work, name, args):
    out = os.path.join(work, "out", name)
    env = dict(os.environ, GPUMUX_CACHE_DIR=os.path.join(work, "cache"))
    cmd = [gpumux, "run", *args, "--out", out, "--quiet"]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"  {name}: gpumux exited {proc.returncode}: {shlex.join(['gpumux', 'run', *args])}")
        for line in (proc.stdout + proc.stderr).splitlines()[:20]:
            print(f"    {line}")
        return None
    with open(os.path.join(out, "stats.json"), encoding="utf-8") as f:
        return strip(json.load(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["check", "update"])
    parser.add_argument("--gpumux", required=True, help="the gpumux binary")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."),
                        help="repository root (runs are started there)")
    parser.add_argument("--only", action="append", default=[], help="run only this golden run (repeatable)")
    opts = parser.parse_args()

    root = os.path.abspath(opts.root)
    gpumux = os.path.abspath(opts.gpumux)
    golden = os.path.join(root, "tb", "golden")
    runs = read_manifest(os.path.join(golden, "runs.txt"))
    names = {name for name, _ in runs}
    for only in opts.only:
        if only not in names:
            sys.exit(f"golden: no run named '{only}' in tb/golden/runs.txt")
    if opts.only:
        runs = [(n, a) for n, a in runs if n in opts.only]

    failures = 0
    moved = 0
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="gpumux-golden-")
    try:
        for name, args in runs:
            stored_path = os.path.join(golden, name, "stats.json")
            new = run_one(gpumux, root, work, name, args)
            if new is None:
                failures += 1
                continue
            old = None
            if os.path.exists(stored_path):
                with open(stored_path, encoding="utf-8") as f:
                    old = strip(json.load(f))
            if old is None:
                if opts.mode == "check":
                    print(f"  {name}: no stored file {os.path.relpath(stored_path, root)} (run scripts/update-golden)")
                    failures += 1
                else:
                    print(f"  {name}: new")
            else:
                lines = diff(old, new)
                if lines:
                    moved += 1
                    print_diff(name, lines)
                    failures += opts.mode == "check"
            if opts.mode == "update":
                os.makedirs(os.path.dirname(stored_path), exist_ok=True)
                with open(stored_path, "w", encoding="utf-8") as f:
                    f.write(json.dumps(new, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if not opts.only:  # stored runs the manifest no longer names
        for entry in sorted(os.listdir(golden)):
            if os.path.exists(os.path.join(golden, entry, "stats.json")) and entry not in names:
                if opts.mode == "check":
                    print(f"  {entry}: stored but not in tb/golden/runs.txt (run scripts/update-golden)")
                    failures += 1
                else:
                    shutil.rmtree(os.path.join(golden, entry))
                    print(f"  {entry}: removed (not in tb/golden/runs.txt)")

    seconds = time.monotonic() - started
    if opts.mode == "check":
        verdict = "FAILED" if failures else "ok"
        print(f"golden: {len(runs)} runs, {moved} changed, {failures} failure(s), {seconds:.1f} s: {verdict}")
        if moved:
            print("golden: if the change is intended, run scripts/update-golden and commit the new files")
        return 1 if failures else 0
    print(f"golden: {len(runs)} runs, {moved} changed, {seconds:.1f} s; files in tb/golden/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
