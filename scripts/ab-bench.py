#!/usr/bin/env python3
"""A/B benchmark gate: the hot paths of the working tree (B) against a baseline commit (A).

The loops are those of Benchmarks/HotLoops, a package of its own whose `tempo-hot-loops ROW
CALLS` runs one hot loop in a fresh process. The same loops are built against both trees: the
working tree's Benchmarks/HotLoops is copied into the baseline's exported tree, where it
depends on that tree's Tempo. Its asynchronous rows run their task on an executor drained on
the process's one thread, so no thread starts and valgrind runs every row.

Each row is judged on its instructions a call: each build's loop runs under
`valgrind --tool=callgrind` with N and 2N calls, and the difference over N is its instructions
per call (the process's start and exit cancel out). With SWIFT_DETERMINISTIC_HASHING set (the
gate sets it) the count of a row that awaits is the same from run to run, and that of a
synchronous row within about 2% (the same tree gave 749 to 765 for `debounce` in six runs),
whatever else the machine does. A row fails when B's count is more than the threshold (20%)
above A's. Each row's CPU time is measured and reported too, not judged.

Without valgrind (`--no-valgrind`, or none on the PATH) every row is judged on CPU time: in
each round every row runs once in each build, the order flipping from round to round (A B,
then B A, ...), so both builds see the same moments of a busy machine. Each run is measured by
the CPU time its process used (less that of a run of one call: its start and exit) over its
calls. Each round gives a ratio, B's run over A's; a row fails when the median of those ratios
is more than the threshold above 1. A row that fails is measured once more, with as many rounds
again, and judged on all of its rounds together. CPU time moves with a build's code layout and
with the machine, by 10% and more between machines, so this is a weaker gate than the count.

The baseline is, in this order: --base REV, the commit named in --base-file (a file holding
a commit, e.g. Benchmarks/baseline, as CI passes), or main's merge base with HEAD. Its tree is
exported with `git archive` into .build/ab/<commit>/ and built there (kept for later runs).

Exit status: 0 when every row passes, 1 when a row is too slow, 2 on an error (a build that
fails, a row that prints no figure in B).

    scripts/ab-bench.py                      # against main's merge base
    scripts/ab-bench.py --base 985e44a       # against a commit or tag
    scripts/ab-bench.py --base-file Benchmarks/baseline --quick   # what CI runs
    scripts/ab-bench.py --base 985e44a --head 0c018ab   # two commits (B exported too)
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every hot loop of Benchmarks/HotLoops (its main.swift), in its order.
ROWS = [
    "floor", "debounce", "throttle", "debouncecapturing", "throttlecapturing", "ratelimit",
    "ratereject", "rateasync", "raterejectasync", "breaker", "breakeropen", "climit",
    "climitbusy", "climitreject",
]
LOOPS = os.path.join("Benchmarks", "HotLoops")
PRODUCT = "tempo-hot-loops"
# Calls in the shorter of a row's two valgrind runs (the longer has twice as many).
COUNTED_CALLS = 20_000


def log(message):
    print(message, file=sys.stderr, flush=True)


def git(*args):
    return subprocess.run(
        ["git", "-C", ROOT, *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def resolve_base(args):
    """The baseline commit's full hash, and how it was chosen."""
    if args.base:
        return git("rev-parse", "--verify", args.base + "^{commit}"), "--base " + args.base
    if args.base_file:
        path = os.path.join(ROOT, args.base_file)
        with open(path, encoding="utf-8") as file:
            lines = [
                line.split("#")[0].strip() for line in file if line.split("#")[0].strip()
            ]
        if not lines:
            raise SystemExit(f"{args.base_file} names no commit")
        return git("rev-parse", "--verify", lines[0] + "^{commit}"), args.base_file
    for main in ("main", "origin/main"):
        try:
            return git("merge-base", main, "HEAD"), f"merge base of {main} and HEAD"
        except subprocess.CalledProcessError:
            continue
    raise SystemExit("no branch main or origin/main: pass --base REV")


def export_tree(commit):
    """The baseline's tree in .build/ab/<commit>/ (exported once, then reused)."""
    directory = os.path.join(ROOT, ".build", "ab", commit[:7])
    marker = os.path.join(directory, ".exported")
    if not os.path.exists(marker):
        os.makedirs(directory, exist_ok=True)
        archive = subprocess.Popen(
            ["git", "-C", ROOT, "archive", commit], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", directory], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise SystemExit(f"git archive {commit} failed")
        open(marker, "w", encoding="utf-8").close()
    return directory


def build(tree, label):
    """Builds the hot loops against `tree`'s Tempo in release mode; returns the binary's path.
    In a tree other than the working tree the loops are first copied in from the working tree
    (sources only), so both builds run the same loops."""
    package = os.path.join(tree, LOOPS)
    if os.path.realpath(tree) != os.path.realpath(ROOT):
        source = os.path.join(ROOT, LOOPS)
        for name in ("Package.swift", "Sources"):
            target = os.path.join(package, name)
            if os.path.isdir(target):
                shutil.rmtree(target)
            elif os.path.exists(target):
                os.remove(target)
        os.makedirs(package, exist_ok=True)
        shutil.copy2(os.path.join(source, "Package.swift"), package)
        shutil.copytree(os.path.join(source, "Sources"), os.path.join(package, "Sources"))
    command = ["swift", "build", "-c", "release", "--package-path", package]
    started = time.monotonic()
    log(f"[{label}] building {os.path.relpath(package, ROOT)} (release)")
    result = subprocess.run(
        command + ["--product", PRODUCT], capture_output=True, text=True)
    if result.returncode != 0:
        log(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(2)
    log(f"[{label}] built in {time.monotonic() - started:.0f} s")
    bin_path = subprocess.run(
        command + ["--show-bin-path"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return os.path.join(bin_path, PRODUCT)


def child_cpu():
    """CPU seconds (user and system) of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_process(binary, row, calls):
    """One run of a hot loop in a fresh process: the figure it prints (wall nanoseconds per
    call, or "nan" for a row it does not have) and the CPU seconds the process used."""
    before = child_cpu()
    result = subprocess.run(
        [binary, row, str(calls)], capture_output=True, text=True, timeout=300)
    cpu = child_cpu() - before
    try:
        value = float(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, cpu
    return (None if value != value or result.returncode != 0 else value), cpu


def run_loop(binary, row, calls):
    """Wall nanoseconds per call of one run, as the process measured it, or None."""
    return run_process(binary, row, calls)[0]


def startup_cpu(binary, row):
    """The CPU seconds of a run of one call: the process's start and exit, taken off each
    run's CPU time (the median of three)."""
    return statistics.median(run_process(binary, row, 1)[1] for _ in range(3))


def run_cpu(binary, row, calls, startup):
    """CPU nanoseconds per call of one run: the process's CPU time, less its start, over the
    calls. CPU time, not the wall time the loop prints: time other processes take from the
    cores does not count, so a loaded machine moves it much less."""
    value, cpu = run_process(binary, row, calls)
    if value is None:
        return None
    return max(cpu - startup, 0.0) * 1e9 / calls


def calibrate(binary, row, seconds, startup):
    """How many calls make one run of `row` use about `seconds` of CPU: a first guess from the
    wall time of a short run, then a run of that many calls measured by its CPU time."""
    per_call = run_loop(binary, row, 20_000)
    if per_call is None:
        return None
    guess = max(20_000, min(5_000_000, int(0.05 * 1e9 / max(per_call, 1.0))))
    cpu = run_cpu(binary, row, guess, startup) or per_call
    return max(20_000, min(50_000_000, int(seconds * 1e9 / max(cpu, 1.0))))


def instructions(binary, row, calls):
    """Instructions of a run of `row` with `calls` calls under callgrind, or None."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, row,
         str(calls)], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1"))
    for line in result.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split("Collected :")[1].strip())
    return None


def instructions_per_call(binary, row):
    """Instructions per call of `row`: runs of N and 2N calls, the difference over N."""
    short = instructions(binary, row, COUNTED_CALLS)
    long = instructions(binary, row, 2 * COUNTED_CALLS)
    if short is None or long is None:
        return None
    return (long - short) / COUNTED_CALLS


def measure(binaries, rows, calls, startups, rounds, figures):
    """`rounds` rounds: each row once in each build, A first in even rounds, B in odd ones."""
    for index in range(rounds):
        log(f"round {index + 1} of {rounds}")
        for row in rows:
            order = ("A", "B") if index % 2 == 0 else ("B", "A")
            for side in order:
                value = run_cpu(binaries[side], row, calls[row], startups[side][row])
                if value is None:
                    log(f"{row}: no figure from {side}")
                    raise SystemExit(2)
                figures[row][side].append(value)


def judge(figures, row, threshold):
    """A's and B's medians, the median of the rounds' ratios (B's run over A's in the same
    round), and whether that ratio is within the threshold."""
    a = statistics.median(figures[row]["A"])
    b = statistics.median(figures[row]["B"])
    ratios = [y / x for x, y in zip(figures[row]["A"], figures[row]["B"]) if x > 0]
    ratio = statistics.median(ratios) if ratios else float("inf")
    return a, b, ratio, ratio <= 1 + threshold


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the baseline commit or tag (A)")
    parser.add_argument("--base-file", help="a file naming the baseline commit (A)")
    parser.add_argument("--head", help="a commit to measure as B instead of the working tree")
    parser.add_argument("--rounds", type=int, help="alternations per row (default 7; 5 quick)")
    parser.add_argument("--seconds", type=float,
                        help="one run's CPU time (default 0.25 s; 0.15 s quick)")
    parser.add_argument("--threshold", type=float, default=0.20,
                        help="how much slower B's median may be (default 0.20: 20%%)")
    parser.add_argument("--rows", help="comma-separated rows (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter runs (for CI)")
    parser.add_argument("--no-recheck", action="store_true",
                        help="judge a failing row on its first rounds alone")
    parser.add_argument("--no-valgrind", action="store_true",
                        help="judge every row on CPU time, none on instructions")
    args = parser.parse_args()
    rounds = args.rounds or (5 if args.quick else 7)
    seconds = args.seconds or (0.15 if args.quick else 0.25)
    rows = args.rows.split(",") if args.rows else ROWS

    commit, chosen = resolve_base(args)
    if args.head:
        head = git("rev-parse", "--verify", args.head + "^{commit}")
        dirty = False
        tree_b, name_b = export_tree(head), f"commit {head[:12]}"
    else:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no") != ""
        tree_b = ROOT
        name_b = f"the working tree at {head[:12]}" + (
            " with uncommitted changes" if dirty else "")
    log(f"A: {commit[:12]} ({chosen}); B: {name_b}")
    started = time.monotonic()
    binaries = {"A": build(export_tree(commit), "A"), "B": build(tree_b, "B")}

    calls, missing = {}, []
    for row in rows:
        if run_loop(binaries["A"], row, 1) is None:
            missing.append(row)
            continue
        if run_loop(binaries["B"], row, 1) is None:
            log(f"{row}: B has no such row")
            return 2
        calls[row] = 0
    startups = {
        side: {row: startup_cpu(binaries[side], row) for row in calls} for side in ("A", "B")}
    for row in calls:
        calls[row] = calibrate(binaries["A"], row, seconds, startups["A"][row])
    for row in missing:
        log(f"{row}: not in A ({commit[:12]}): skipped")
    measured = [row for row in rows if row in calls]
    figures = {row: {"A": [], "B": []} for row in measured}
    counted = {}
    if not args.no_valgrind and shutil.which("valgrind"):
        for row in measured:
            pair = {side: instructions_per_call(binaries[side], row) for side in ("A", "B")}
            if pair["A"] is None or pair["B"] is None or pair["A"] <= 0:
                log(f"{row}: no instruction count under valgrind; judged on CPU time")
                continue
            counted[row] = pair
            log(f"{row}: {pair['A']:.0f} -> {pair['B']:.0f} instructions a call")
    elif not args.no_valgrind:
        log("no valgrind on the PATH: every row is judged on CPU time")
    measure(binaries, measured, calls, startups, rounds, figures)

    def passes(row):
        if row in counted:
            return counted[row]["B"] / counted[row]["A"] <= 1 + args.threshold
        return judge(figures, row, args.threshold)[3]

    slow = [row for row in measured if row not in counted and not passes(row)]
    if slow and not args.no_recheck:
        log(f"over {args.threshold:.0%}: {', '.join(slow)}; measured again")
        measure(binaries, slow, calls, startups, rounds, figures)

    print(f"A/B: A = {commit[:12]}, B = {name_b}; threshold +{args.threshold:.0%}; a row "
          "is judged on its instructions a call where counted, else on the median of its "
          "rounds' CPU-time ratios (judged on: *)")
    print()
    print("| row | A instr | B instr | B/A instr | runs each | A median ns | B median ns "
          "| B/A ns (rounds' median) | |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    failed = []
    for row in measured:
        a, b, ratio, _ = judge(figures, row, args.threshold)
        ok = passes(row)
        if not ok:
            failed.append(row)
        if row in counted:
            ia, ib = counted[row]["A"], counted[row]["B"]
            instr = f"{ia:.0f} | {ib:.0f} | {ib / ia:.3f}*"
            timed = f"{ratio:.3f}"
        else:
            instr = " | | "
            timed = f"{ratio:.3f}*"
        print(f"| {row} | {instr} | {len(figures[row]['A'])} | {a:.1f} | {b:.1f} "
              f"| {timed} | {'ok' if ok else 'SLOWER'} |")
    for row in missing:
        print(f"| {row} | | | | | not in A | | | skipped |")
    print()
    log(f"measured in {time.monotonic() - started:.0f} s (builds included)")
    if failed:
        print(f"FAILED: {', '.join(failed)} more than {args.threshold:.0%} slower than "
              f"{commit[:12]}")
        return 1
    print(f"passed: {len(measured)} rows within {args.threshold:.0%} of {commit[:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
