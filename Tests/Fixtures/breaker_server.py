#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that fails for a phase and then recovers, for Tempo's
circuit-breaker integration test (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /call?key=K           counts the call of key K, then answers 500 while K is failing
                            and 200 otherwise (every key starts failing).
  GET /recover?key=K        K answers 200 from now on.
  GET /stats?key=K          "calls failed": the calls of key K it has counted, and how many
                            of them it answered with 500.

It exits when it is terminated, when its parent process is gone, or after fifteen minutes.
"""

import threading
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

stats = {}
lock = threading.Lock()


def entry(key):
    return stats.setdefault(key, {"calls": 0, "failed": 0, "failing": True})


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        key = parse_qs(url.query).get("key", [""])[0]
        with lock:
            e = entry(key)
            if url.path == "/call":
                e["calls"] += 1
                if e["failing"]:
                    e["failed"] += 1
                    status = 500
                else:
                    status = 200
            elif url.path == "/recover":
                e["failing"] = False
                status = 200
            elif url.path == "/stats":
                return self.answer(200, f'{e["calls"]} {e["failed"]}')
            else:
                status = 404
        return self.answer(status, "failing" if status == 500 else "ok")


if __name__ == "__main__":
    serve(Handler)
