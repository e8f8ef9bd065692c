#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that enforces a request rate, for Tempo's rate-limit
integration test (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /limited?key=K&rate=R&burst=B  200 while key K stays within R requests a second with a
                                     burst of B (a GCRA bucket, as servers commonly enforce);
                                     429 with "Retry-After" above it
  GET /stats?key=K                   "<accepted> <rejected> <t1> <t2> ...": the counts of key K,
                                     then the arrival time (monotonic seconds) of each accepted
                                     request, in order

It exits when it is terminated, when its parent dies, or after fifteen minutes.
"""

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

full_at = {}
stats = {}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=None):
        data = body.encode()
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        if url.path == "/limited":
            refill = 1.0 / float(query.get("rate", ["10"])[0])
            tolerance = int(query.get("burst", ["1"])[0]) * refill
            with lock:
                now = time.monotonic()
                record = stats.setdefault(key, [0, 0, []])
                start = max(full_at.get(key, now), now)
                # A request is admitted when the bucket stays within its tolerance (a
                # microsecond of slack for floating point).
                if start + refill - now <= tolerance + 1e-6:
                    full_at[key] = start + refill
                    record[0] += 1
                    record[2].append(now)
                    status, after = 200, None
                else:
                    record[1] += 1
                    status, after = 429, start + refill - tolerance - now
            if status == 200:
                return self.answer(200, "ok")
            return self.answer(429, "too many requests", {"Retry-After": f"{after:.3f}"})
        if url.path == "/stats":
            with lock:
                accepted, rejected, arrivals = stats.get(key, [0, 0, []])
                times = " ".join(f"{t:.6f}" for t in arrivals)
            return self.answer(200, f"{accepted} {rejected} {times}".strip())
        return self.answer(404, "not found")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    parent = os.getppid()

    def stop_when_orphaned():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    threading.Timer(900, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
