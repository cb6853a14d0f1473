#!/usr/bin/env python3
"""Times two whole commands against each other, in turn, and prints medians and their ratio.

    python3 benches/peers/paired.py [-n RUNS] [--warmup N] [--prepare 'SHELL'] \\
        --vs 'COMMAND_B' -- COMMAND_A [ARG ...]

A and B run alternately (A B A B ...) RUNS times each after N warm-up pairs that are not
counted. Each run's wall time is read from a monotonic clock around the child, its user and
system seconds from the kernel's accounting of the reaped child (``os.wait4``). ``--prepare``
is a shell command run before every run (warm-ups too) and not timed: removing the previous
run's output and syncing, so that neither side pays for the other's leftovers. The ratio A/B is
taken pair by pair and its median printed, which keeps it meaningful when the machine's speed
drifts. Commands get no shell: write ``sh -c '...'`` for one that needs it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def run(command: list[str], prepare: str | None) -> tuple[float, float]:
    """Wall seconds and CPU (user + system) seconds of one run of ``command``."""
    if prepare:
        subprocess.run(prepare, shell=True, check=True)
    start = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code  # reaped here: Popen must not wait for it again
    if code != 0:
        sys.exit(f"paired.py: {shlex.join(command)} exited with {code}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--prepare", help="shell command run, untimed, before every run")
    parser.add_argument("--vs", required=True, help="command B, split as a shell splits words")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="command A, after --")
    args = parser.parse_args()
    a = args.command[1:] if args.command[:1] == ["--"] else args.command
    b = shlex.split(args.vs)
    if not a:
        parser.error("command A is missing (after --)")
    for _ in range(args.warmup):
        run(a, args.prepare)
        run(b, args.prepare)
    walls: dict[str, list[float]] = {"A": [], "B": []}
    cpus: dict[str, list[float]] = {"A": [], "B": []}
    for _ in range(args.runs):
        for side, command in (("A", a), ("B", b)):
            wall, cpu = run(command, args.prepare)
            walls[side].append(wall)
            cpus[side].append(cpu)
    ratios = [x / y for x, y in zip(walls["A"], walls["B"])]
    for side, command in (("A", a), ("B", b)):
        print(f"{side}: {shlex.join(command)}")
        print(f"   wall s median (min-max) {spread(walls[side])}   cpu s {spread(cpus[side])}")
    print(f"A/B wall, pair by pair: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}), {args.runs} pairs")


if __name__ == "__main__":
    main()
