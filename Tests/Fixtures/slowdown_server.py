#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that goes into a "slow down" period, for Tempo's test of a
window limit that holds its key on a 429's Retry-After (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /limited?key=K&after=A&period=P  200, except that the A-th request of key K starts a
                                       slow-down period of P seconds: it and every request of
                                       K that arrives during it get 429 with "Retry-After"
                                       (the seconds left of the period)
  GET /stats?key=K                     "<accepted> <during>": the requests of key K answered
                                       200, and those that arrived during the slow-down period

It exits when it is terminated, when its parent dies, or after fifteen minutes.
"""

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

keys = {}
lock = threading.Lock()


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        if url.path == "/limited":
            after = int(query.get("after", ["5"])[0])
            period = float(query.get("period", ["2"])[0])
            with lock:
                now = time.monotonic()
                record = keys.setdefault(key, {"seen": 0, "accepted": 0, "during": 0, "until": None})
                record["seen"] += 1
                if record["until"] is None and record["seen"] == after:
                    record["until"] = now + period
                until = record["until"]
                if until is not None and now < until:
                    record["during"] += 1
                    left = until - now
                else:
                    record["accepted"] += 1
                    left = None
            if left is None:
                return self.answer(200, "ok")
            return self.answer(429, "slow down", {"Retry-After": f"{left:.3f}"})
        if url.path == "/stats":
            with lock:
                record = keys.get(key, {"accepted": 0, "during": 0})
                text = f"{record['accepted']} {record['during']}"
            return self.answer(200, text)
        return self.answer(404, "not found")


if __name__ == "__main__":
    serve(Handler)
