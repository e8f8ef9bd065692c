#!/usr/bin/env python3
"""What TempoRedis's scripts cost in a real Redis: latency, throughput, commands, memory.

Starts a redis-server of its own (loopback, a free port, persistence off, a temporary
directory), loads the Lua scripts as the Swift library sends them, and measures:

1. Latency: one call's round trip on one connection, one call at a time, for a bare PING,
   for two floors under any script (an empty one, and one that only reads the server's clock
   as every admission does first) and for the window and bucket admissions (keys that admit
   every call at once, on the server's clock, as production calls them), in the same run. In
   each block this script's RESP client makes the five calls in turn, call by call (each
   round trip timed with perf_counter_ns: exact p50 and p99 over every call), so a burst of
   load on a busy machine falls on all five alike; then `redis-benchmark -c 1` runs each
   command as many times (its p50 and p99: the median over the blocks). The ratio to PING is
   what an admission adds to the round trip a call to Redis costs anyway (target: at most
   1.3x).
2. Throughput: calls a second from 50 clients without pipelining, on one hot key and spread
   over 10,000 keys, by this script's driver (one thread, many sockets; its PING row shows
   its own ceiling) and by redis-benchmark; with the server's own CPU time a call, which a
   busy machine inflates less than it does the rates.
3. Commands per admitted call: 200 calls of a limit of 10 a second (190 of them get a start
   reserved in the future and would sleep locally), counted in `INFO commandstats`.
4. Memory: `MEMORY USAGE ... SAMPLES 0` and `OBJECT ENCODING` of a full window's keys (100,
   1,000 and 10,000 starts) and of a bucket's hash.

The scripts' sources come from Sources/TempoRedis/RedisScripts.swift: each multi-line string
literal is taken as Swift reads it (the closing delimiter's indentation removed from every
line, escapes resolved), and the SHA1 of the text must equal what `SCRIPT LOAD` answers.

Prints Markdown (progress goes to stderr). Only the Python 3 standard library is used.

    Benchmarks/redis_bench.py            # the full run (about 2 minutes)
    Benchmarks/redis_bench.py --quick    # fewer calls (under 30 s)

Exit status: 0 after a run, 2 on an error (no redis-server, a script that does not load, an
unexpected reply), 130 when interrupted. The server is stopped in every case.
"""

from __future__ import annotations

import argparse
import csv
import gc
import hashlib
import io
import itertools
import math
import os
import platform
import random
import re
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS_FILE = ROOT / "Sources" / "TempoRedis" / "RedisScripts.swift"
SCRIPT_NAMES = [
    "tempo-window-admit", "tempo-window-cancel", "tempo-bucket-admit", "tempo-bucket-cancel",
    "tempo-hold", "tempo-reset",
]

# Admission arguments that admit every call at once, on the server's clock (ARGV[1] empty):
# a window of 10^9 permits over 1,000 s; a bucket of 10^9 permits refilled one a second.
WINDOW_OPEN = ["", "1000000000", "1000000000", "1", ""]
# Measured beside PING and the admissions: what any script costs before it does anything.
EMPTY_SCRIPT = "return 1"
CLOCK_SCRIPT = "local t = redis.call('TIME')\nreturn 1"
BUCKET_OPEN = ["", "1000000", "1000000000", "1", ""]


class BenchError(Exception):
    """A failure that ends the run with status 2."""


class RedisError(Exception):
    """An error reply."""


# --- The scripts, as Swift reads them --------------------------------------------------------

LITERAL = re.compile(
    r'name:\s*"(?P<name>[^"\\]+)",\s*source:\s*(?:(?P<prefix>[A-Za-z_]\w*)\s*\+\s*)?'
    r'(?P<raw>#*)"""[ \t]*\n(?P<body>.*?)\n(?P<indent>[ \t]*)"""',
    re.S,
)
# A part several scripts share, such as `static let decisionInstant = """ ... """`: a script
# written `source: decisionInstant + """ ... """` starts with it.
SHARED_PART = re.compile(
    r'static let (?P<name>[A-Za-z_]\w*)\s*=\s*(?P<raw>#*)"""[ \t]*\n'
    r'(?P<body>.*?)\n(?P<indent>[ \t]*)"""',
    re.S,
)
ESCAPE = re.compile(
    r'\\(?:u\{(?P<u>[0-9A-Fa-f]{1,8})\}|(?P<c>[0nrt"\'\\])|[ \t]*\n|(?P<x>.))', re.S)
SIMPLE_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def swift_multiline(body: str, indent: str, name: str) -> str:
    """The value of a `\"\"\"` literal: every line loses the closing delimiter's indentation
    (a line of only whitespace may have less), then escapes are resolved (a backslash at the
    end of a line joins it to the next)."""
    lines = []
    for number, line in enumerate(body.split("\n"), 1):
        if line.startswith(indent):
            lines.append(line[len(indent):])
        elif line.strip(" \t") == "":
            lines.append("")
        else:
            raise BenchError(f"{name}: line {number} of its source is indented less than its "
                             f'closing """: Swift would not compile it')

    def resolve(match: re.Match[str]) -> str:
        if match.group("u"):
            return chr(int(match.group("u"), 16))
        if match.group("c"):
            return SIMPLE_ESCAPES[match.group("c")]
        if match.group("x") is not None:
            raise BenchError(f"{name}: its source has \\{match.group('x')} (an interpolation or "
                             "an escape this script does not read)")
        return ""

    return ESCAPE.sub(resolve, "\n".join(lines))


def read_scripts() -> dict[str, str]:
    """Every script's source by name, from RedisScripts.swift."""
    text = SCRIPTS_FILE.read_text(encoding="utf-8").replace("\r\n", "\n")
    parts: dict[str, str] = {}
    for match in SHARED_PART.finditer(text):
        if not match.group("raw"):
            parts[match.group("name")] = swift_multiline(
                match.group("body"), match.group("indent"), match.group("name"))
    sources: dict[str, str] = {}
    for match in LITERAL.finditer(text):
        name = match.group("name")
        if match.group("raw"):
            raise BenchError(f"{name}: a raw string literal (#\"\"\"), which this script "
                             "does not read")
        prefix = match.group("prefix")
        if prefix and prefix not in parts:
            raise BenchError(f"{name}: its source starts with `{prefix}`, which is not a "
                             f'`static let {prefix} = """` literal in {SCRIPTS_FILE.name}')
        body = swift_multiline(match.group("body"), match.group("indent"), name)
        sources[name] = (parts[prefix] if prefix else "") + body
    missing = [name for name in SCRIPT_NAMES if name not in sources]
    if missing:
        raise BenchError(f"{SCRIPTS_FILE}: no source found for {', '.join(missing)}")
    return sources


# --- A small RESP client ---------------------------------------------------------------------

def encode(*args: str | bytes | int) -> bytes:
    """A command as RESP: an array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def parse(buf: bytes, pos: int = 0):
    """(reply, end) for the RESP2 reply at `pos`, or None when it is not all there yet. An
    error reply is returned as a RedisError, not raised."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    kind, line = buf[pos:pos + 1], buf[pos + 1:end]
    if kind == b"+":
        return line.decode(), end + 2
    if kind == b"-":
        return RedisError(line.decode()), end + 2
    if kind == b":":
        return int(line), end + 2
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None, end + 2
        if len(buf) < end + 2 + size + 2:
            return None
        return buf[end + 2:end + 2 + size], end + 2 + size + 2
    if kind == b"*":
        count = int(line)
        if count < 0:
            return None, end + 2
        items, at = [], end + 2
        for _ in range(count):
            found = parse(buf, at)
            if found is None:
                return None
            item, at = found
            items.append(item)
        return items, at
    raise BenchError(f"not a RESP2 reply: {buf[pos:pos + 40]!r}")


class Connection:
    """One connection to the server: commands one at a time, or a pipeline of them."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def _reply(self):
        while True:
            found = parse(self.buf)
            if found is not None:
                reply, end = found
                self.buf = self.buf[end:]
                return reply
            data = self.sock.recv(1 << 16)
            if not data:
                raise BenchError("the server closed the connection")
            self.buf += data

    def call(self, *args):
        """Sends one command and returns its reply; raises on an error reply."""
        self.sock.sendall(encode(*args))
        reply = self._reply()
        if isinstance(reply, RedisError):
            raise reply
        return reply

    def pipeline(self, commands: list[bytes]) -> list:
        """Sends encoded commands at once and returns their replies (errors included)."""
        self.sock.sendall(b"".join(commands))
        return [self._reply() for _ in commands]

    def info(self, *sections: str) -> dict[str, str]:
        text = self.call("INFO", *sections).decode()
        fields = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                key, value = line.split(":", 1)
                fields[key] = value
        return fields


def command_calls(info: dict[str, str]) -> dict[str, int]:
    """`cmdstat_NAME: calls=N,...` as {NAME: N}."""
    calls = {}
    for key, value in info.items():
        if key.startswith("cmdstat_"):
            calls[key[len("cmdstat_"):]] = int(value.split(",")[0].split("=")[1])
    return calls


def server_micros(conn: Connection) -> int:
    seconds, micros = conn.call("TIME")
    return int(seconds) * 1_000_000 + int(micros)


# --- The server ------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A redis-server of this run's own, stopped by stop() whatever happened."""

    def __init__(self, binary: str, directory: str):
        self.binary, self.directory = binary, directory
        self.process: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        log = os.path.join(self.directory, "redis.log")
        for _ in range(5):
            self.port = free_port()
            self.process = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", self.directory,
                 "--logfile", log, "--daemonize", "no"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C reaches this script, which stops the server
            )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    conn = Connection(self.port)
                    try:
                        if conn.call("PING") == "PONG":
                            return
                    finally:
                        conn.close()
                except (OSError, RedisError):
                    time.sleep(0.05)
            self.stop()  # the port was taken meanwhile, or the server is still loading
        tail = Path(log).read_text(errors="replace")[-2000:] if os.path.exists(log) else ""
        raise BenchError(f"redis-server did not start; its log ends with:\n{tail}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- 1. Latency ------------------------------------------------------------------------------

def percentile(ordered: list[int], fraction: float) -> float:
    """Nearest rank of a sorted list."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def interleaved_block(conn: Connection, kinds: list, calls: int, warmup: int,
                      seconds: float) -> dict[str, list[int]]:
    """Nanoseconds of round trips of each kind's command on one connection, one call at a
    time, the kinds taking turns call by call (so a burst of load on a busy machine falls on
    all of them alike): up to `calls` of each, for at most `seconds`. A reply is known
    complete when it has as many CRLFs as that command's first reply had (a check done in C,
    alike for PING and a script, so the client's own cost is the same); each reply is checked
    to start with the kind's `accept` after the timed loop."""
    sock = conn.sock
    plan = []
    for kind in kinds:
        sock.sendall(kind.raw)
        first = conn._reply()
        if isinstance(first, RedisError):
            raise BenchError(f"{kind.label}: {first}")
        plan.append((kind, kind.raw, encode_reply(first).count(b"\r\n")))
    send, recv, clock = sock.sendall, sock.recv, time.perf_counter_ns
    samples = {kind.label: [0] * calls for kind in kinds}
    replies = {kind.label: [b""] * calls for kind in kinds}
    deadline = 0
    done = 0
    for index in range(-warmup, calls):
        if index == 0:
            deadline = clock() + int(seconds * 1e9)
        elif index > 0 and clock() > deadline:
            break
        for kind, raw, need in plan:
            start = clock()
            send(raw)
            data = recv(4096)
            while data.count(b"\r\n") < need and data[:1] != b"-":
                data += recv(4096)
            took = clock() - start
            if index >= 0:
                samples[kind.label][index] = took
                replies[kind.label][index] = data
        done = max(done, index + 1)
    for kind in kinds:
        for data in replies[kind.label][:done]:
            if not data.startswith(kind.accept):
                raise BenchError(f"{kind.label}: unexpected reply {data[:80]!r}")
    return {label: values[:done] for label, values in samples.items()}


def encode_reply(reply) -> bytes:
    """A parsed reply written back as RESP2 (to count its lines)."""
    if isinstance(reply, str):
        return b"+" + reply.encode() + b"\r\n"
    if isinstance(reply, int):
        return b":%d\r\n" % reply
    if isinstance(reply, bytes):
        return b"$%d\r\n%s\r\n" % (len(reply), reply)
    if reply is None:
        return b"$-1\r\n"
    return b"*%d\r\n" % len(reply) + b"".join(encode_reply(item) for item in reply)


def run_benchmark(port: int, clients: int, calls: int, args: list[str],
                  keyspace: int = 0) -> dict[str, float]:
    """One redis-benchmark run of a custom command; its CSV row as numbers."""
    command = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
               "-n", str(calls), "-P", "1", "--csv"]
    if keyspace:
        command += ["-r", str(keyspace)]
    done = subprocess.run(command + args, capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(io.StringIO(done.stdout)))
    if done.returncode != 0 or len(rows) < 2:
        raise BenchError(f"redis-benchmark failed ({done.returncode}): {done.stderr.strip()}")
    row = dict(zip(rows[0], rows[-1]))
    return {key: float(value) for key, value in row.items() if key != "test"}


def error_replies(conn: Connection) -> int:
    return int(conn.info("stats")["total_error_replies"])


def server_counts(conn: Connection, command: str) -> tuple[int, float, float]:
    """What the server counted so far: the command's calls and microseconds in it
    (commandstats), and the server's CPU time in microseconds (user and system), which a busy
    machine does not inflate the way it does the time in a command."""
    info = conn.info("cpu", "commandstats")
    line = info.get(f"cmdstat_{command}", "calls=0,usec=0")
    fields = dict(item.split("=") for item in line.split(","))
    cpu = float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    return int(fields["calls"]), float(fields["usec"]), cpu * 1e6


def per_call(before: tuple[int, float, float],
             after: tuple[int, float, float]) -> tuple[float, float]:
    """(µs in the command, server CPU µs) a call between two server_counts."""
    calls = max(1, after[0] - before[0])
    return (after[1] - before[1]) / calls, (after[2] - before[2]) / calls


def check_hot_window(conn: Connection, calls: int) -> None:
    """After a run from flushed keys: every call admitted (one start each), on the server's
    clock (the empty first argument reached the script as an empty string)."""
    now = server_micros(conn)
    count = conn.call("ZCARD", "{tempo:hot}:w")
    last = conn.call("ZRANGE", "{tempo:hot}:w", -1, -1, "WITHSCORES")
    if count != calls or not last or abs(float(last[1]) - now) > 60e6:
        raise BenchError(f"window: {count} starts after {calls} calls, the last at {last}, "
                         f"the server's clock at {now}")


def check_hot_bucket(conn: Connection, calls: int) -> None:
    """As check_hot_window: the bucket's latest admission is on the server's clock and its
    `full` moved one refill (1 s) a call."""
    now = server_micros(conn)
    full, last = conn.call("HMGET", "{tempo:hot}:b", "f", "l")
    if full is None or abs(int(last) - now) > 60e6 or int(full) - int(last) < calls * 1e6 - 120e6:
        raise BenchError(f"bucket: full {full}, last {last} after {calls} calls at {now}")


class Kind:
    """A command measured: what redis-benchmark and the RESP client send, what its reply starts
    with, and a check of the keys after redis-benchmark's run (None: none)."""

    def __init__(self, label: str, args: list[str], accept: bytes, check=None):
        self.label, self.args, self.accept, self.check = label, args, accept, check
        self.raw = encode(*args)


def latency(conn: Connection, port: int, kinds: list[Kind], blocks: int, calls: int,
            seconds: float, use_benchmark: bool) -> list[list[str]]:
    """Blocks from flushed keys: the RESP client's calls of every kind taking turns, then a
    redis-benchmark run of each kind with as many calls; the kinds' order turns one further
    each block. Rows of the latency table."""
    ours: dict[str, list[int]] = {kind.label: [] for kind in kinds}
    ours_blocks: dict[str, list[float]] = {kind.label: [] for kind in kinds}
    theirs: dict[str, list[dict[str, float]]] = {kind.label: [] for kind in kinds}
    for block in range(blocks):
        order = kinds[block % len(kinds):] + kinds[:block % len(kinds)]
        progress(f"latency block {block + 1}/{blocks}")
        conn.call("FLUSHALL")
        gc.disable()
        try:
            samples = interleaved_block(conn, order, calls, max(100, calls // 20), seconds)
        finally:
            gc.enable()
        for kind in kinds:
            ours[kind.label] += samples[kind.label]
            ours_blocks[kind.label].append(statistics.median(samples[kind.label]))
        if not use_benchmark:
            continue
        for kind in order:
            conn.call("FLUSHALL")
            errors = error_replies(conn)
            count = len(samples[kind.label])
            theirs[kind.label].append(run_benchmark(port, 1, count, kind.args))
            if error_replies(conn) != errors:
                raise BenchError(f"redis-benchmark {kind.label}: the server answered errors")
            if kind.check:
                kind.check(conn, count)

    rows = []
    base = kinds[0].label
    ping = sorted(ours[base])
    ping_p50, ping_p99 = percentile(ping, 0.50), percentile(ping, 0.99)
    for kind in kinds:
        ordered = sorted(ours[kind.label])
        p50, p99 = percentile(ordered, 0.50), percentile(ordered, 0.99)
        block_ratios = [a / b for a, b in zip(ours_blocks[kind.label], ours_blocks[base])]
        rows.append([kind.label, "RESP client", f"{len(ordered):,}", us(p50), us(p99),
                     ratio(p50, ping_p50, kind is kinds[0]), ratio(p99, ping_p99, kind is kinds[0]),
                     spread(block_ratios, kind is kinds[0])])
    if use_benchmark:
        def med(label: str, field: str) -> float:
            return statistics.median(run[field] for run in theirs[label]) * 1e6  # ms -> ns

        for kind in kinds:
            p50, p99 = med(kind.label, "p50_latency_ms"), med(kind.label, "p99_latency_ms")
            block_ratios = [a["p50_latency_ms"] / b["p50_latency_ms"]
                            for a, b in zip(theirs[kind.label], theirs[base])]
            rows.append([kind.label, "redis-benchmark", f"{len(ours[kind.label]):,}", us(p50),
                         us(p99), ratio(p50, med(base, "p50_latency_ms"), kind is kinds[0]),
                         ratio(p99, med(base, "p99_latency_ms"), kind is kinds[0]),
                         spread(block_ratios, kind is kinds[0])])
    return rows


def us(nanoseconds: float) -> str:
    return f"{nanoseconds / 1000:.1f}"


def ratio(value: float, base: float, is_base: bool) -> str:
    if is_base:
        return "1 (base)"
    mark = "" if value <= 1.3 * base else " (over 1.3×)"
    return f"{value / base:.2f}×{mark}"


def spread(ratios: list[float], is_base: bool) -> str:
    if is_base or not ratios:
        return "—"
    return f"{min(ratios):.2f}–{max(ratios):.2f}×"


# --- 2. Throughput ---------------------------------------------------------------------------

def drive(port: int, commands: list[bytes], accept: bytes, clients: int,
          seconds: float) -> float:
    """Calls a second from `clients` connections, each with one call in flight (no
    pipelining), driven by one thread; each call picks one of `commands` at random."""
    probe = Connection(port)
    try:
        first = probe.pipeline([commands[0]])[0]
    finally:
        probe.close()
    if isinstance(first, RedisError):
        raise BenchError(f"{commands[0][:60]!r}: {first}")
    need = encode_reply(first).count(b"\r\n")
    rng = random.Random(7)
    picks = itertools.cycle([commands[rng.randrange(len(commands))] for _ in range(1 << 16)])
    selector = selectors.DefaultSelector()
    socks, buffers = [], {}
    for _ in range(clients):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        socks.append(sock)
        buffers[sock] = b""
        selector.register(sock, selectors.EVENT_READ)
    try:
        warm_until = time.perf_counter() + min(0.5, seconds / 4)
        start = end = 0.0
        done = counted = 0
        measuring = False
        for sock in socks:
            sock.send(next(picks))
        in_flight = clients
        while in_flight:
            now = time.perf_counter()
            if not measuring and now >= warm_until:
                measuring, start, done = True, now, 0
            stopping = measuring and now - start >= seconds
            if stopping and not end:
                end = now
                counted = done
            events = selector.select(timeout=10)
            if not events:
                raise BenchError("no reply in 10 s")
            for key, _ in events:
                sock = key.fileobj
                data = buffers[sock] + sock.recv(1 << 16)
                if data.count(b"\r\n") < need and data[:1] != b"-":
                    buffers[sock] = data
                    continue
                if not data.startswith(accept):
                    raise BenchError(f"unexpected reply {data[:80]!r}")
                buffers[sock] = b""
                done += 1
                if stopping:
                    in_flight -= 1
                else:
                    sock.send(next(picks))
        return counted / (end - start)
    finally:
        selector.close()
        for sock in socks:
            sock.close()


class Workload:
    """A throughput row: the commands the driver picks from, the reply it accepts, the
    arguments redis-benchmark gets (with `-r keyspace` when not 0), a check of the keys after
    redis-benchmark's run (None: none), and a mark for its figure (a footnote)."""

    def __init__(self, label: str, commands: list[bytes], accept: bytes, bench_args: list[str],
                 keyspace: int = 0, check=None, mark: str = ""):
        self.label, self.commands, self.accept = label, commands, accept
        self.stat = "ping" if bench_args == ["PING"] else "evalsha"
        self.bench_args, self.keyspace, self.check, self.mark = (
            bench_args, keyspace, check, mark)


def throughput(conn: Connection, port: int, workloads: list[Workload], rounds: int,
               clients: int, seconds: float, use_benchmark: bool) -> list[list[str]]:
    """Calls a second of each workload by the driver, then by redis-benchmark with as many
    calls as the driver made in `seconds`; the median over rounds. Rows of the table."""
    ours: dict[str, list[float]] = {load.label: [] for load in workloads}
    theirs: dict[str, list[float]] = {load.label: [] for load in workloads}
    server: dict[str, list[tuple[float, float]]] = {load.label: [] for load in workloads}
    for round_ in range(rounds):
        for load in workloads:
            progress(f"throughput round {round_ + 1}/{rounds}: {load.label}")
            conn.call("FLUSHALL")
            counts = server_counts(conn, load.stat)
            rate = drive(port, load.commands, load.accept, clients, seconds)
            ours[load.label].append(rate)
            server[load.label].append(per_call(counts, server_counts(conn, load.stat)))
            if use_benchmark:
                conn.call("FLUSHALL")
                errors = error_replies(conn)
                calls = max(5_000, int(rate * seconds))
                run = run_benchmark(port, clients, calls, load.bench_args, load.keyspace)
                if error_replies(conn) != errors:
                    raise BenchError(f"redis-benchmark {load.label}: the server answered errors")
                if load.check:
                    load.check(conn, calls)
                theirs[load.label].append(run["rps"])
    ping_ours = statistics.median(ours[workloads[0].label])
    ping_theirs = statistics.median(theirs[workloads[0].label]) if use_benchmark else 0
    rows = []
    for load in workloads:
        mine = statistics.median(ours[load.label])
        row = [load.label]
        if use_benchmark:
            bench = statistics.median(theirs[load.label])
            row += [f"{bench:,.0f}{load.mark}", f"{bench / ping_theirs:.2f}"]
        in_command = statistics.median(run[0] for run in server[load.label])
        used = statistics.median(run[1] for run in server[load.label])
        row += [f"{mine:,.0f}", f"{mine / ping_ours:.2f}", f"{in_command:.1f}", f"{used:.1f}",
                f"{1e6 / used:,.0f}"]
        rows.append(row)
    return rows


# --- 3. Commands per admitted call -----------------------------------------------------------

def commands_per_call(conn: Connection, sha: str, label: str, keys: list[str],
                      args: list[str], calls: int) -> tuple[list[str], dict[str, int]]:
    """`calls` calls, one at a time, of a limit that lets 10 through at once: the rest get a
    reserved start. Counts what the server ran for them."""
    conn.call("FLUSHALL")
    before = conn.info("stats", "commandstats")
    replies = [conn.call("EVALSHA", sha, len(keys), *keys, *args) for _ in range(calls)]
    after = conn.info("stats", "commandstats")
    if any(reply[0] != 1 for reply in replies):
        raise BenchError(f"{label}: a call was refused")
    waits = [reply[1] for reply in replies]
    waited = sum(1 for wait in waits if wait > 0)
    calls_before, calls_after = command_calls(before), command_calls(after)
    delta = {name: calls_after.get(name, 0) - calls_before.get(name, 0) for name in calls_after}
    delta = {name: count for name, count in delta.items() if count}
    evalsha = delta.pop("evalsha", 0)
    infos = delta.pop("info", 0)
    inside = sum(delta.values())
    total = int(after["total_commands_processed"]) - int(before["total_commands_processed"])
    from_client = total - infos - inside
    row = [label, str(calls), str(calls - waited), str(waited), f"{max(waits) / 1e6:.1f} s",
           str(evalsha), str(from_client), f"{from_client / calls:.2f}", str(inside),
           f"{inside / calls:.2f}", str(total - infos), f"{(total - infos) / calls:.2f}"]
    if evalsha != calls or from_client != calls:
        raise BenchError(f"{label}: {evalsha} EVALSHA and {from_client} commands for {calls} calls")
    return row, delta


# --- 4. Memory -------------------------------------------------------------------------------

def memory(conn: Connection, shas: dict[str, str], sizes: list[int]) -> list[list[str]]:
    rows = []
    span = 60_000_000
    for size in sizes:
        for spread_out in (False, True):
            conn.call("FLUSHALL")
            w, h = "{tempo:mem}:w", "{tempo:mem}:h"
            start = server_micros(conn)
            instants = [start + (i * 1000 if spread_out else 0) for i in range(size)]
            replies = conn.pipeline([
                encode("EVALSHA", shas["tempo-window-admit"], 2, w, h, at, span, size, 1, "")
                for at in instants])
            if any(isinstance(r, RedisError) or r[0] != 1 or r[1] != 0 for r in replies):
                raise BenchError(f"memory: a call of the window of {size} was not admitted at once")
            # Full: one more call that may not wait is refused (and writes nothing).
            refused = conn.call("EVALSHA", shas["tempo-window-admit"], 2, w, h, instants[-1],
                                span, size, 1, "0")
            if refused[0] != 0 or conn.call("ZCARD", w) != size:
                raise BenchError(f"memory: the window of {size} is not full after {size} calls")
            w_bytes = conn.call("MEMORY", "USAGE", w, "SAMPLES", "0")
            # The window's hash exists only while a hold is set (none here).
            h_bytes = conn.call("MEMORY", "USAGE", h, "SAMPLES", "0") or 0
            h_encoding = conn.call("OBJECT", "ENCODING", h)
            rows.append([
                f"window, {size:,} starts", "1 ms apart" if spread_out else "one instant",
                conn.call("OBJECT", "ENCODING", w).decode(), f"{w_bytes:,}",
                h_encoding.decode() if h_encoding else "(none)", f"{h_bytes:,}",
                f"{w_bytes + h_bytes:,}", f"{w_bytes / size:.1f}"])
    conn.call("FLUSHALL")
    b = "{tempo:mem}:b"
    reply = conn.call("EVALSHA", shas["tempo-bucket-admit"], 1, b, server_micros(conn),
                      100_000, 10, 1, "")
    if reply[0] != 1:
        raise BenchError("memory: the bucket refused its first call")
    b_bytes = conn.call("MEMORY", "USAGE", b, "SAMPLES", "0")
    rows.append(["bucket (10 a second, burst 10)", "—", "—", "—",
                 conn.call("OBJECT", "ENCODING", b).decode(), f"{b_bytes:,}", f"{b_bytes:,}",
                 "—"])
    conn.call("FLUSHALL")
    return rows


# --- Output ----------------------------------------------------------------------------------

def progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key = line.split(":", 1)[0].strip()
            if key in ("model name", "Model", "Hardware", "cpu model"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


# --- Main ------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls: under 30 s")
    parser.add_argument("--no-redis-benchmark", action="store_true",
                        help="measure with this script's own client only")
    options = parser.parse_args()

    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server is not installed (or not on the PATH). Install it, e.g.:\n"
              "  Debian/Ubuntu: sudo apt-get install redis-server\n"
              "  macOS:         brew install redis", file=sys.stderr)
        return 2
    use_benchmark = not options.no_redis_benchmark and shutil.which("redis-benchmark") is not None

    # A latency block is up to block_calls calls or block_seconds; a throughput run lasts
    # `seconds` (redis-benchmark's runs are sized from the driver's rate to last about as long).
    if options.quick:
        blocks, block_calls, block_seconds, rounds, seconds = 2, 5_000, 0.5, 1, 1.0
    else:
        blocks, block_calls, block_seconds, rounds, seconds = 5, 20_000, 1.5, 3, 2.0
    clients, keyspace = 50, 10_000

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    # Started in the background by a shell, a program inherits SIGINT ignored: take it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sources = read_scripts()
    started = time.monotonic()
    load_start = load()
    with tempfile.TemporaryDirectory(prefix="tempo-redis-bench-") as directory:
        server = Server(binary, directory)
        try:
            progress("starting redis-server")
            server.start()
            conn = Connection(server.port)
            shas = {}
            for name in SCRIPT_NAMES:
                ours = hashlib.sha1(sources[name].encode()).hexdigest()
                theirs = conn.call("SCRIPT", "LOAD", sources[name]).decode()
                if ours != theirs:
                    raise BenchError(f"{name}: SHA1 {ours} of the extracted source, "
                                     f"SCRIPT LOAD answered {theirs}")
                shas[name] = ours
            version = conn.info("server")["redis_version"]
            allocator = conn.info("memory").get("mem_allocator", "?")
            pairs = conn.call("CONFIG", "GET", "*-max-listpack-entries")
            listpack = {pairs[i].decode(): pairs[i + 1].decode() for i in range(0, len(pairs), 2)}

            window, bucket = shas["tempo-window-admit"], shas["tempo-bucket-admit"]
            hot_w, hot_b = ["{tempo:hot}:w", "{tempo:hot}:h"], ["{tempo:hot}:b"]
            # The floor under any script: one that does nothing, and one that only reads the
            # server's clock, as every admission does first.
            empty = conn.call("SCRIPT", "LOAD", EMPTY_SCRIPT).decode()
            clock = conn.call("SCRIPT", "LOAD", CLOCK_SCRIPT).decode()
            kinds = [
                Kind("PING", ["PING"], b"+PONG\r\n"),
                Kind("empty script", ["EVALSHA", empty, "0"], b":1\r\n"),
                Kind("script reading TIME", ["EVALSHA", clock, "0"], b":1\r\n"),
                Kind("window admit", ["EVALSHA", window, "2", *hot_w, *WINDOW_OPEN],
                     b"*4\r\n:1\r\n", check_hot_window),
                Kind("bucket admit", ["EVALSHA", bucket, "1", *hot_b, *BUCKET_OPEN],
                     b"*6\r\n:1\r\n", check_hot_bucket),
            ]
            latency_rows = latency(conn, server.port, kinds, blocks, block_calls, block_seconds,
                                   use_benchmark)

            def spread_keys(suffixes: list[str], i: int) -> list[str]:
                return [f"{{tempo:{i:012d}}}:{suffix}" for suffix in suffixes]

            window_spread = [encode("EVALSHA", window, 2, *spread_keys(["w", "h"], i),
                                    *WINDOW_OPEN) for i in range(keyspace)]
            bucket_spread = [encode("EVALSHA", bucket, 1, *spread_keys(["b"], i), *BUCKET_OPEN)
                             for i in range(keyspace)]
            rand = "{tempo:__rand_int__}"
            workloads = [
                Workload("PING", [encode("PING")], b"+PONG\r\n", ["PING"]),
                Workload("window admit, 1 hot key", [kinds[3].raw], kinds[3].accept,
                         kinds[3].args, check=check_hot_window),
                Workload(f"window admit, {keyspace:,} keys", window_spread, kinds[3].accept,
                         ["EVALSHA", window, "2", rand + ":w", rand + ":h", *WINDOW_OPEN],
                         keyspace, mark=" †"),
                Workload("bucket admit, 1 hot key", [kinds[4].raw], kinds[4].accept,
                         kinds[4].args, check=check_hot_bucket),
                Workload(f"bucket admit, {keyspace:,} keys", bucket_spread, kinds[4].accept,
                         ["EVALSHA", bucket, "1", rand + ":b", *BUCKET_OPEN], keyspace),
            ]
            throughput_rows = throughput(conn, server.port, workloads, rounds, clients, seconds,
                                         use_benchmark)

            progress("commands per admitted call")
            window_row, window_inside = commands_per_call(
                conn, window, "window, 10 a second", ["{tempo:waiters}:w", "{tempo:waiters}:h"],
                ["", "1000000", "10", "1", ""], 200)
            bucket_row, bucket_inside = commands_per_call(
                conn, bucket, "bucket, 10 a second, burst 10", ["{tempo:waiters}:b"],
                ["", "100000", "10", "1", ""], 200)

            progress("memory")
            memory_rows = memory(conn, shas, [100, 1_000, 10_000])
            conn.close()
        finally:
            server.stop()
    elapsed = time.monotonic() - started

    mode = "quick" if options.quick else "default"
    print("# TempoRedis scripts in Redis\n")
    print(f"- Machine: {platform.machine()}, {cpu_model()}, {os.cpu_count()} cores; load "
          f"average {load_start} at the start, {load()} at the end")
    print(f"- redis-server {version} ({allocator}), loopback TCP, persistence off; "
          f"Python {platform.python_version()}")
    print(f"- Scripts from {SCRIPTS_FILE.relative_to(ROOT)}: {len(shas)} loaded, each SHA1 of "
          "the extracted source equal to SCRIPT LOAD's (window admit "
          f"{window[:12]}…, bucket admit {bucket[:12]}…)")
    print(f"- Mode: {mode}, {elapsed:.0f} s")
    print("\n## 1. Latency of one call (one connection, one call at a time)\n")
    print(f"{blocks} blocks from flushed keys. In a block the RESP client makes up to "
          f"{block_calls:,} calls of each command in {block_seconds:g} s at most, the five "
          "taking turns call by call, every round trip timed; then `redis-benchmark -c 1` makes "
          "as many calls of each, one command a run (its p50 and p99 here: the median over "
          "the blocks). Window: "
          '`{tempo:hot}:w {tempo:hot}:h "" 1000000000 1000000000 1 ""`; bucket: '
          '`{tempo:hot}:b "" 1000000 1000000000 1 ""`: every call admitted at once, on '
          "the server's clock. Target: an admission at most 1.3× a PING. Two floors under "
          f"any script: `{EMPTY_SCRIPT}`, and a script that only reads the server's clock "
          "(`TIME`), the first thing an admission does.\n")
    print(table(["command", "client", "calls", "p50 µs", "p99 µs", "p50 vs PING", "p99 vs PING",
                 "block p50 ratios"], latency_rows))
    print("\nBlock p50 ratios: the lowest and highest of the blocks' own p50 ratios.")
    print(f"\n## 2. Calls a second ({clients} clients, no pipelining)\n")
    if use_benchmark:
        print(f"The RESP driver (one Python thread, {clients} sockets) runs {seconds:g} s "
              "(after a warm-up); then redis-benchmark makes as many calls as the driver did "
              f"in that time. The median of {rounds} run(s) each; keys flushed before each "
              "run.\n")
        header = ["workload", "redis-benchmark calls/s", "vs PING", "RESP driver calls/s",
                  "vs PING", "µs in the command", "server CPU µs a call", "calls/s a core"]
    else:
        print(f"The RESP driver (one Python thread, {clients} sockets), {seconds:g} s a run, "
              f"the median of {rounds} run(s).\n")
        header = ["workload", "RESP driver calls/s", "vs PING", "µs in the command",
                  "server CPU µs a call", "calls/s a core"]
    print(table(header, throughput_rows))
    print("\nOver the driver's runs (the median), the server's own count a call: the time in "
          "the command (`INFO commandstats`: a busy machine stretches it, as the server is "
          "descheduled inside a command) and the server's CPU time, user and system, reading "
          "and writing the sockets included (`INFO cpu`). Calls/s a core: a million over the "
          "CPU time, what a core given to the server alone would take.")
    if use_benchmark:
        print("\n† redis-benchmark draws each `__rand_int__` of a command on its own, so a "
              "call's `:w` and `:h` keys have different numbers (10,000 of each, paired at "
              "random); the RESP driver sends pairs with the same number, as Tempo does.")
    print("\n## 3. Redis commands per admitted call\n")
    print("200 calls, one at a time, on the server's clock: 10 admitted at once, the other "
          "190 given a reserved start (they would sleep locally). From `INFO stats "
          "commandstats` before and after; the INFO calls are left out. In Redis 7 "
          "`total_commands_processed` counts the commands a script runs too.\n")
    print(table(["limit", "calls", "at once", "waited", "longest wait", "EVALSHA",
                 "client commands", "per call", "run by the script", "per call",
                 "total_commands_processed", "per call"], [window_row, bucket_row]))
    print("\nRun by the scripts: window "
          + ", ".join(f"{name} {count}" for name, count in sorted(window_inside.items()))
          + "; bucket "
          + ", ".join(f"{name} {count}" for name, count in sorted(bucket_inside.items())) + ".")
    print("\n## 4. Memory per key\n")
    print("A window of N permits over 60 s filled by N calls of weight 1 (instants passed in), "
          "then refused one more: `MEMORY USAGE key SAMPLES 0`. "
          + ", ".join(f"`{key}` {value}" for key, value in sorted(listpack.items())) + ".\n")
    print(table(["state", "starts at", ":w encoding", ":w bytes", "hash encoding", "hash bytes",
                 "key state bytes", "bytes per start"], memory_rows))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        print(f"redis_bench: {error}", file=sys.stderr)
        sys.exit(2)
    except RedisError as error:
        print(f"redis_bench: the server answered an error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("redis_bench: interrupted", file=sys.stderr)
        sys.exit(130)
