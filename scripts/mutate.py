#!/usr/bin/env python3
"""Mutation testing for Tempo: does the test suite catch small behavioural faults?

Each mutant in scripts/mutants.txt is an exact source snippet and its replacement: one fault
(a flipped comparison, a dropped guard, two statements swapped). For each mutant, one at a
time, this script puts the fault in the tree, builds in its own scratch directory, runs the
test suite with a time limit, and puts the original source back. A mutant is

  killed     a test failed (or the suite crashed),
  timeout    the suite hung past the time limit (counted as killed),
  survived   every test passed: a gap in the tests, or an equivalent mutant to mark as such,
  stale      its snippet is not in the file exactly once (the code moved on: refresh the list),
  broken     it does not compile (fix the mutant),
  equivalent marked so in the list, with the reason; not run.

Score = (killed + timeout) / (killed + timeout + survived). Stale, broken and equivalent
mutants are not counted. See CONTRIBUTING.md.

The tree is always restored: after each mutant, on errors, on Ctrl-C and on SIGTERM; a run
killed harder than that (SIGKILL) leaves a journal that the next run restores from first.
Every build and test run starts in a session of its own, and everything in it (the test
runner `swift test` starts in a process group of its own included) is killed when the run
ends, times out, or the script is interrupted: a hung mutant leaves no process behind.

Only the Python 3 standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIST = ROOT / "scripts" / "mutants.txt"
DEFAULT_SCRATCH = ROOT / ".build" / "mutation"
# Not run against mutants: the network suites serve from a local Python server and measure
# rates and latencies on the real clock. They test the wiring to URLSession, which the
# deterministic suites check on the manual clock, and under the load of a mutation run (a
# build beside every test run) their real-clock margins fail now and then: a mutant "killed"
# by one of them would count a flake as a catch, and a flaky baseline stops the whole run.
SKIPPED_SUITES = [
    "HTTPIntegrationTests", "RateLimitIntegrationTests", "ConcurrencyLimitHTTPTests",
    "HedgingHTTPTests", "CircuitBreakerHTTPTests", "RetryBudgetHTTPTests",
    "WindowLimitIntegrationTests", "WindowLimitHoldIntegrationTests",
    # Redis on the real clock: a paused server's timeouts, fleets against a counting service,
    # faults mid-run. The shared limiter's own suite and the scripts' model checks do run.
    "RedisInfrastructureTests", "SharedLimitFleetTests", "SharedLimitFaultTests",
]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Mutant:
    name: str
    file: str
    find: str
    replace: str
    why: str = ""
    equivalent: str = ""
    line: int = 0  # where it is defined in the list

    def occurrences(self) -> int:
        path = ROOT / self.file
        if not path.is_file():
            return 0
        return path.read_text().count(self.find)


@dataclass
class Outcome:
    mutant: Mutant
    status: str
    seconds: float = 0.0
    detail: str = ""
    output: list[str] = field(default_factory=list)


# MARK: - The list


def parse_mutants(path: Path) -> list[Mutant]:
    """Reads the mutant list (format described at the top of mutants.txt)."""
    mutants: list[Mutant] = []
    current: dict | None = None
    block: str | None = None
    lines: list[str] = []

    def fail(number: int, message: str) -> None:
        sys.exit(f"{path}:{number}: {message}")

    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        if block is not None:
            if raw.startswith("== "):
                fail(number, f"mutant {current['name']} has no --- end before the next one")
            if raw in ("--- replace", "--- end"):
                current[block] = "\n".join(lines) + ("\n" if lines else "")
                lines = []
                block = "replace" if raw == "--- replace" else None
                if raw == "--- end":
                    if "find" not in current or "replace" not in current:
                        fail(number, f"mutant {current['name']} needs --- find and --- replace")
                    mutants.append(Mutant(**current))
                    current = None
                continue
            lines.append(raw)
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("== "):
            if current is not None:
                fail(number, f"mutant {current['name']} has no --- end")
            current = {"name": stripped[3:].strip(), "line": number}
            continue
        if current is None:
            fail(number, f"expected '== name', found {raw!r}")
        if stripped == "--- find":
            block = "find"
            continue
        match = re.match(r"(file|why|equivalent):\s*(.*)$", stripped)
        if not match:
            fail(number, f"unknown line in mutant {current['name']}: {raw!r}")
        key, value = match.groups()
        current[key] = (current.get(key, "") + " " + value).strip()
    if current is not None or block is not None:
        fail(number, "the last mutant has no --- end")
    names = [m.name for m in mutants]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        sys.exit(f"{path}: duplicate mutant names: {', '.join(sorted(duplicates))}")
    for mutant in mutants:
        if not mutant.file:
            sys.exit(f"{path}:{mutant.line}: mutant {mutant.name} has no file:")
        if not mutant.find.strip():
            sys.exit(f"{path}:{mutant.line}: mutant {mutant.name} has an empty snippet")
    return mutants


# MARK: - The tree


class Tree:
    """Writes mutants into the source tree and always puts the original back.

    Before a file is changed its original text is written to a journal in the scratch
    directory; the journal is removed once the file is restored. A run that died without
    restoring (SIGKILL, power loss) leaves the journal, and the next run restores from it.
    """

    def __init__(self, scratch: Path):
        self.journal = scratch / "journal.json"
        self.saved: dict[str, str] | None = None

    def recover(self) -> None:
        if not self.journal.exists():
            return
        saved = json.loads(self.journal.read_text())
        for relative, text in saved.items():
            (ROOT / relative).write_text(text)
            print(f"mutate: restored {relative} left mutated by an interrupted run", file=sys.stderr)
        self.journal.unlink()

    def apply(self, mutant: Mutant) -> None:
        path = ROOT / mutant.file
        original = path.read_text()
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        self.journal.write_text(json.dumps({mutant.file: original}))
        self.saved = {mutant.file: original}
        path.write_text(original.replace(mutant.find, mutant.replace, 1))

    def restore(self) -> None:
        if self.saved is None:
            return
        for relative, text in self.saved.items():
            (ROOT / relative).write_text(text)
        self.saved = None
        if self.journal.exists():
            self.journal.unlink()


# MARK: - Running


class Interrupted(Exception):
    pass


def on_signal(number, _frame):
    raise Interrupted(signal.Signals(number).name)


def processes() -> list[tuple[int, int, int, int]]:
    """(pid, parent pid, process group, session) of every live process (not zombies), from
    /proc (Linux) or ps (elsewhere, without sessions)."""
    found = []
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            # pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses.
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] in ("Z", "X"):
                continue
            found.append((int(entry.name), int(fields[1]), int(fields[2]), int(fields[3])))
        return found
    listing = subprocess.run(
        ["ps", "-axo", "pid=,ppid=,pgid=,stat="], capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        pid, ppid, pgid, state = line.split(None, 3)
        if not state.startswith("Z"):
            found.append((int(pid), int(ppid), int(pgid), -1))
    return found


def kill_tree(leader: int) -> None:
    """Kills `leader` (started in a session of its own) and everything it started.

    `swift test` starts the test runner (TempoPackageTests.xctest) in a process group of its
    own, so killing the leader's group alone leaves the runner going, reparented to init. So
    every process of the leader's session, of its process groups, or descended from it is
    killed, until none is left: the session and the groups survive the reparenting."""
    for _ in range(50):
        table = processes()
        children: dict[int, list[int]] = {}
        for pid, ppid, _, _ in table:
            children.setdefault(ppid, []).append(pid)
        tree, stack = set(), [leader]
        while stack:
            pid = stack.pop()
            if pid not in tree:
                tree.add(pid)
                stack.extend(children.get(pid, []))
        groups = {pgid for pid, _, pgid, _ in table if pid in tree} | {leader}
        victims = {pid for pid, _, pgid, sid in table
                   if pid in tree or sid == leader or pgid in groups}
        victims.discard(os.getpid())
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.1)
    print(f"mutate: processes of session {leader} still alive after SIGKILL", file=sys.stderr)


def run(command: list[str], timeout: float, stop_at_failure: bool) -> tuple[str, list[str]]:
    """Runs `command` in a session of its own. Returns (status, output lines): status is
    'ok', 'failed' or 'timeout'. With `stop_at_failure`, the run is stopped at the first
    failing test (a Swift Testing line starting with ✘, or an XCTest failure). Whatever ends
    the run (its end, a timeout, a failure, Ctrl-C, SIGTERM), every process it started is
    killed before this returns: see `kill_tree`."""
    # The output goes to a pseudo-terminal so that the test runner writes each line as it
    # happens (a pipe would buffer it to the end), which lets a failing run stop early.
    leader, follower = pty.openpty()
    environment = dict(os.environ, NO_COLOR="1", TERM="dumb")
    process = subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
        start_new_session=True, env=environment)
    os.close(follower)
    output: list[str] = []
    pending = b""
    deadline = time.monotonic() + timeout
    status = None
    try:
        while status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                status = "timeout"
                break
            ready, _, _ = select.select([leader], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process closed the terminal: it has ended
                chunk = b""
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = ANSI.sub("", raw.decode("utf-8", "replace")).rstrip("\r")
                output.append(line)
                if stop_at_failure and (line.startswith("✘") or " error: -[" in line):
                    status = "failed"
    finally:
        # Signals wait until the tree is gone, so a second Ctrl-C cannot cut the killing short.
        blocked = signal.pthread_sigmask(
            signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        try:
            # Also after a normal end: a runner the test tool left behind would go on. The
            # leader is reaped only afterwards, so its id (the session's) cannot be reused.
            kill_tree(process.pid)
            process.wait()
            os.close(leader)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    if pending:
        output.append(ANSI.sub("", pending.decode("utf-8", "replace")))
    if status is None:
        status = "ok" if process.returncode == 0 else "failed"
    return status, output


def failing_tests(output: list[str]) -> str:
    names = []
    for line in output:
        match = re.match(r"✘ Test (\S+?)(\(.*?\))? (recorded|failed)", line)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    for line in output:
        if "Fatal error" in line or "Crash" in line:
            names.append("crash: " + line.strip()[:80])
            break
    return ", ".join(names[:3])


def build(scratch: Path, timeout: float) -> tuple[str, list[str]]:
    return run(["swift", "build", "--build-tests", "--scratch-path", str(scratch)], timeout, False)


def test(scratch: Path, timeout: float, filter_: str | None) -> tuple[str, list[str]]:
    command = ["swift", "test", "--skip-build", "--scratch-path", str(scratch)]
    for suite in SKIPPED_SUITES:
        command += ["--skip", suite]
    if filter_:
        command += ["--filter", filter_]
    return run(command, timeout, True)


# MARK: - Areas and the journal

TESTS = ROOT / "Tests" / "TempoTests"
# A source folder's tests are in the test folder of the same name, but for these targets.
AREA_OF_TARGET = {"TempoRedis": "Redis", "TempoTesting": "TempoTesting"}
SUITE_TYPE = re.compile(r"^(?:@\w+(?:\([^\n]*?\))?\s+)*(?:final\s+)?(?:struct|class|enum)\s+"
                        r"([A-Za-z_]\w*)", re.M)


def area_filter(mutant: Mutant) -> str | None:
    """A --filter for the suites nearest the mutant's file: the types declared at the top level
    of the test folder named after its source folder (Sources/Tempo/Debounce/… ->
    Tests/TempoTests/Debounce/), or after its target (TempoRedis -> Redis). None when there is
    no such folder: the whole suite then."""
    parts = Path(mutant.file).parts
    if len(parts) < 3 or parts[0] != "Sources":
        return None
    folder = parts[2] if parts[1] == "Tempo" and len(parts) > 3 else AREA_OF_TARGET.get(parts[1])
    if folder is None and len(parts) > 2:
        folder = parts[1]
    directory = TESTS / folder if folder else None
    if directory is None or not directory.is_dir():
        return None
    names = sorted({name for file in directory.rglob("*.swift")
                    for name in SUITE_TYPE.findall(file.read_text(encoding="utf-8"))})
    return f"\\.({'|'.join(names)})/" if names else None


def git_commit() -> str:
    """The commit the tree is at, with `+changes` when files under Sources/ or Tests/ differ
    from it (a journal of such a run holds for no commit)."""
    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    commit = git("rev-parse", "HEAD") or "unknown"
    return commit + ("+changes" if git("status", "--porcelain", "--", "Sources", "Tests")
                     else "")


def read_journal(path: Path, commit: str, mutants: list[Mutant]) -> dict[str, Outcome]:
    """The outcomes a journal holds for `commit` (the latest per mutant)."""
    by_name = {m.name: m for m in mutants}
    found: dict[str, Outcome] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("commit") == commit and entry.get("name") in by_name:
                found[entry["name"]] = Outcome(by_name[entry["name"]], entry["status"],
                                               entry.get("seconds", 0.0), entry.get("detail", ""))
    return found


def append_journal(path: Path, commit: str, outcome: Outcome, how: str) -> None:
    with path.open("a") as file:
        file.write(json.dumps({"commit": commit, "name": outcome.mutant.name,
                               "status": outcome.status, "seconds": round(outcome.seconds, 1),
                               "detail": outcome.detail, "how": how}) + "\n")


# MARK: - Main


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Applies each mutant of scripts/mutants.txt in turn, runs the tests, "
        "restores the tree, and prints the kill rate and the survivors.")
    parser.add_argument("names", nargs="*", help="run only these mutants (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--check", action="store_true",
                        help="only check that every snippet is found exactly once")
    parser.add_argument("--timeout", type=float, default=150,
                        help="seconds the test suite may take per mutant (default 150)")
    parser.add_argument("--build-timeout", type=float, default=900,
                        help="seconds a build may take (default 900)")
    parser.add_argument("--scratch-path", type=Path, default=DEFAULT_SCRATCH,
                        help="build directory (default .build/mutation, not your .build)")
    parser.add_argument("--filter", help="pass --filter to swift test (while developing "
                        "a test; a full run leaves it out)")
    parser.add_argument("--mutants", type=Path, default=DEFAULT_LIST, help="the mutant list")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip checking that the unmutated tree passes first")
    parser.add_argument("--verbose", action="store_true",
                        help="print the test output of killed mutants")
    parser.add_argument("--min-score", type=float, default=95.0,
                        help="exit 1 when the score is below this percentage (default 95)")
    parser.add_argument("--area-first", action="store_true",
                        help="test each mutant first with the suites of its own folder "
                        "(Tests/TempoTests/<folder>), and with the whole suite only when they "
                        "all pass: the same kills and survivors as a whole-suite run, in a "
                        "fraction of the time (a kill by any test is a kill)")
    parser.add_argument("--journal", type=Path,
                        help="append each outcome to this file (JSON lines, with the commit "
                        "tested) and skip the mutants it already holds for this commit: a run "
                        "of the whole list can stop and go on later; the report covers both")
    args = parser.parse_args()

    mutants = parse_mutants(args.mutants)
    if args.names:
        unknown = [n for n in args.names if n not in {m.name for m in mutants}]
        if unknown:
            sys.exit(f"unknown mutant(s): {', '.join(unknown)} (see --list)")
        mutants = [m for m in mutants if m.name in args.names]

    if args.list or args.check:
        for m in mutants:
            found = m.occurrences()
            state = "ok" if found == 1 else f"STALE (found {found}x)"
            marker = " [equivalent]" if m.equivalent else ""
            if args.list or found != 1:
                print(f"{m.name:44} {m.file:42} {state}{marker}")
                if args.list and m.why:
                    print(f"    {m.why}")
        stale = [m for m in mutants if m.occurrences() != 1]
        return 1 if (args.check and stale) else 0

    scratch = args.scratch_path.resolve()
    tree = Tree(scratch)
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, on_signal)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    try:
        tree.recover()
        if not args.no_baseline:
            print("baseline: building and testing the unmutated tree...", flush=True)
            status, output = build(scratch, args.build_timeout)
            if status != "ok":
                print("\n".join(output[-40:]))
                print("baseline build failed: fix the tree first")
                return 2
            status, output = test(scratch, args.timeout, args.filter)
            if status != "ok":
                print("\n".join(output[-40:]))
                print(f"baseline tests {status} ({failing_tests(output)}): "
                      "the suite must pass before mutants mean anything")
                return 2
        runnable = [m for m in mutants if not m.equivalent]
        commit = git_commit()
        earlier = read_journal(args.journal, commit, runnable) if args.journal else {}
        if args.journal:
            if commit.endswith("+changes"):
                print(f"mutate: Sources/ or Tests/ differ from {commit[:-8]}: the journal's "
                      "outcomes hold for no commit", file=sys.stderr)
            print(f"journal {args.journal}: {len(earlier)} of {len(runnable)} mutants already "
                  f"run on {commit[:12]}", flush=True)
        for index, mutant in enumerate(runnable, start=1):
            prefix = f"[{index:2}/{len(runnable)}]"
            if mutant.name in earlier:
                outcomes.append(earlier[mutant.name])
                continue
            found = mutant.occurrences()
            how = "whole suite" if not args.filter else f"--filter {args.filter}"
            if found != 1:
                outcome = Outcome(mutant, "stale", detail=f"snippet found {found} times")
            else:
                began = time.monotonic()
                tree.apply(mutant)
                try:
                    status, output = build(scratch, args.build_timeout)
                    if status != "ok":
                        errors = [l for l in output if "error:" in l][:2]
                        outcome = Outcome(mutant, "broken", detail="; ".join(errors) or status)
                    else:
                        nearest = area_filter(mutant) if args.area_first else None
                        if nearest and not args.filter:
                            status, output = test(scratch, args.timeout, nearest)
                            how = "its folder's suites"
                            if status == "ok":
                                status, output = test(scratch, args.timeout, None)
                                how = "its folder's suites, then the whole suite"
                        else:
                            status, output = test(scratch, args.timeout, args.filter)
                        outcome = Outcome(
                            mutant,
                            {"ok": "survived", "failed": "killed", "timeout": "timeout"}[status],
                            detail=failing_tests(output) if status == "failed" else "",
                            output=output)
                finally:
                    tree.restore()
                outcome.seconds = time.monotonic() - began
            outcomes.append(outcome)
            if args.journal:
                append_journal(args.journal, commit, outcome, how)
            detail = f"  {outcome.detail}" if outcome.detail else ""
            print(f"{prefix} {outcome.status:9} {outcome.seconds:6.1f} s  {mutant.name}{detail}",
                  flush=True)
            if args.verbose and outcome.status == "killed":
                print("\n".join("      " + l for l in outcome.output if l.startswith("✘"))[:3000])
    except Interrupted as error:
        print(f"\nmutate: interrupted ({error}); the tree is restored", file=sys.stderr)
        return 130
    finally:
        tree.restore()

    return report(outcomes, [m for m in mutants if m.equivalent], started, args.min_score)


def report(outcomes: list[Outcome], equivalent: list[Mutant], started: float,
           min_score: float) -> int:
    def having(*statuses):
        return [o for o in outcomes if o.status in statuses]

    killed, survived = having("killed", "timeout"), having("survived")
    counted = len(killed) + len(survived)
    print()
    print(f"mutants: {len(outcomes) + len(equivalent)} in the list, {counted} counted, "
          f"{len(having('timeout'))} of the kills by timeout, "
          f"{len(equivalent)} equivalent (not run), {len(having('stale'))} stale, "
          f"{len(having('broken'))} broken; {time.monotonic() - started:.0f} s")
    score = 100.0 * len(killed) / counted if counted else 0.0
    print(f"score: {len(killed)}/{counted} killed = {score:.1f}%")
    for title, group in (("survived", survived), ("stale", having("stale")),
                         ("broken", having("broken"))):
        if group:
            print(f"\n{title}:")
            for o in group:
                print(f"  {o.mutant.name} ({o.mutant.file}, mutants.txt:{o.mutant.line})")
                if o.mutant.why:
                    print(f"      {o.mutant.why}")
                if o.detail:
                    print(f"      {o.detail}")
    if equivalent:
        print("\nequivalent (not run):")
        for m in equivalent:
            print(f"  {m.name}: {m.equivalent}")
    return 0 if counted and score >= min_score else 1


if __name__ == "__main__":
    sys.exit(main())
