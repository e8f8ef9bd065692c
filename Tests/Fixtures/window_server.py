#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that enforces a rolling-window limit, as services publish
"N requests per W", for Tempo's window-limit integration test (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /limited?key=K&n=N&window=W  200 while key K has had fewer than N accepted requests
                                   in the last W seconds (arrivals in (now - W, now]); 429
                                   with "Retry-After" (seconds until one leaves) above it;
                                   with &sent=S (the client's monotonic seconds when it took
                                   its permit), the trip arrival - S is recorded
  GET /trips?key=K                 "<t1> <t2> ...": the recorded trips of key K, in seconds
  GET /sent?key=K                  "<s1> <s2> ...": the clients' permit times of key K (the
                                   `sent` of each request), in order
  GET /stats?key=K                 "<accepted> <rejected> <t1> <t2> ...": the counts of key K,
                                   then the arrival time (monotonic seconds) of each accepted
                                   request, in order

It exits when it is terminated, when its parent dies, or after fifteen minutes.
"""

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

stats = {}
trips = {}
lock = threading.Lock()


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        if url.path == "/limited":
            limit = int(query.get("n", ["10"])[0])
            window = float(query.get("window", ["1"])[0])
            with lock:
                now = time.monotonic()
                record = stats.setdefault(key, [0, 0, []])
                if "sent" in query:
                    sent = float(query["sent"][0])
                    trips.setdefault(key, []).append((now - sent, sent))
                recent = [t for t in record[2] if t > now - window]
                if len(recent) < limit:
                    record[0] += 1
                    record[2].append(now)
                    status, after = 200, None
                else:
                    record[1] += 1
                    status, after = 429, recent[-limit] + window - now
            if status == 200:
                return self.answer(200, "ok")
            return self.answer(429, "too many requests", {"Retry-After": f"{after:.3f}"})
        if url.path == "/stats":
            with lock:
                accepted, rejected, arrivals = stats.get(key, [0, 0, []])
                times = " ".join(f"{t:.6f}" for t in arrivals)
            return self.answer(200, f"{accepted} {rejected} {times}".strip())
        if url.path == "/trips":
            with lock:
                times = " ".join(f"{t:.6f}" for t, _ in trips.get(key, []))
            return self.answer(200, times)
        if url.path == "/sent":
            with lock:
                times = " ".join(f"{s:.6f}" for s in sorted(s for _, s in trips.get(key, [])))
            return self.answer(200, times)
        return self.answer(404, "not found")


if __name__ == "__main__":
    serve(Handler)
