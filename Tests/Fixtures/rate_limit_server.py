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

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

full_at = {}
stats = {}
lock = threading.Lock()


class Handler(QuietHandler):

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



if __name__ == "__main__":
    serve(Handler)
