#!/usr/bin/env python3
"""Reads values out of a VCD for the RTL waveform tests (tb/rtl/*_test.sh).

  vcd_probe.py FILE first SIGNAL VALUE      time of the first change of SIGNAL to VALUE
  vcd_probe.py FILE at SIGNAL TIME          SIGNAL's value at TIME (after the changes at TIME)
  vcd_probe.py FILE changes SIGNAL          every change of SIGNAL: "time value" lines
  vcd_probe.py FILE same A B low|high       A and B are equal at every time clk_i goes low (a cycle's
                                            start) or high (its rising edge); else the first time not

SIGNAL is a variable of the first scope of the file (the top's ports), VALUE and the values printed are
decimal. Exit 1 when the signal or the value is not found.
"""
import sys


def parse(path, name):
    """(time, value) for every change of `name`, in order."""
    ident = None
    scope_depth = 0
    changes = []
    time = 0
    with open(path) as f:
        for line in f:
            tok = line.split()
            if not tok:
                continue
            head = tok[0]
            if head == "$scope":
                scope_depth += 1
            elif head == "$upscope":
                scope_depth -= 1
            elif head == "$var" and ident is None and scope_depth == 1 and tok[4] == name:
                ident = tok[3]
            elif head.startswith("#"):
                time = int(head[1:])
            elif ident is None:
                continue
            elif head[0] in "01xzXZ" and head[1:] == ident:
                changes.append((time, 0 if head[0] != "1" else 1))
            elif head[0] in "bB" and len(tok) == 2 and tok[1] == ident:
                bits = head[1:]
                changes.append((time, int(bits, 2) if set(bits) <= {"0", "1"} else -1))
    if ident is None:
        sys.exit(f"vcd_probe: no signal '{name}' in the top scope of {path}")
    return changes


def value_at(changes, at):
    value = None
    for time, v in changes:
        if time > at:
            break
        value = v
    return value


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, cmd, name = sys.argv[1:4]
    if cmd == "same":
        a, b = parse(path, name), parse(path, sys.argv[4])
        level = 0 if sys.argv[5] == "low" else 1
        times = [t for t, v in parse(path, "clk_i") if v == level]
        for t in times:
            if value_at(a, t) != value_at(b, t):
                sys.exit(f"vcd_probe: {name} = {value_at(a, t)} but {sys.argv[4]} = {value_at(b, t)} at {t}")
        print(f"{name} = {sys.argv[4]} at {len(times)} times")
        return
    changes = parse(path, name)
    if cmd == "first":
        want = int(sys.argv[4])
        for time, value in changes:
            if value == want:
                print(time)
                return
        sys.exit(f"vcd_probe: {name} never becomes {want} in {path}")
    elif cmd == "at":
        at = int(sys.argv[4])
        value = value_at(changes, at)
        if value is None:
            sys.exit(f"vcd_probe: {name} has no value at {at} in {path}")
        print(value)
    elif cmd == "changes":
        for time, value in changes:
            print(time, value)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
