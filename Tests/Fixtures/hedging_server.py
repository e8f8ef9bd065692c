#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 with a slow tail, for Tempo's hedging integration test
(standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /work?key=K&every=N&slow=S&fast=F  counts the request as key K's next arrival; every
                                         N-th arrival of K (the N-th, the 2N-th, ...) is held
                                         S seconds, the others F seconds; then answers 200
                                         with the arrival's number.
  GET /stats?key=K                       "arrivals slow": the requests of key K that arrived,
                                         and how many of them were held the slow time.

It exits when it is terminated, when its parent process is gone, or after fifteen minutes.
"""

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

stats = {}
lock = threading.Lock()


def entry(key):
    return stats.setdefault(key, {"arrivals": 0, "slow": 0})


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        if url.path == "/work":
            every = int(query.get("every", ["10"])[0])
            with lock:
                e = entry(key)
                e["arrivals"] += 1
                number = e["arrivals"]
                slow = number % every == 0
                if slow:
                    e["slow"] += 1
            hold = query.get("slow", ["0.4"])[0] if slow else query.get("fast", ["0.005"])[0]
            time.sleep(float(hold))
            return self.answer(200, str(number))
        if url.path == "/stats":
            with lock:
                e = entry(key)
                text = f'{e["arrivals"]} {e["slow"]}'
            return self.answer(200, text)
        return self.answer(404, "not found")


if __name__ == "__main__":
    serve(Handler)
