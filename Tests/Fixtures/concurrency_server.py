#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that allows a fixed number of requests in flight at once, for
Tempo's concurrency-limit integration test (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /work?key=K&limit=L&sleep=S  if L requests of key K are already in flight, answers 429 at
                                   once; otherwise holds the request S seconds and answers 200.
                                   A request leaves the in-flight count before its answer is
                                   sent, so a client that waits for an answer before sending the
                                   next request never sees a 429.
  GET /stats?key=K                 "served rejected peak span": the 200s and 429s of key K, the
                                   most requests it had in flight at once, and the seconds from
                                   its first request's arrival to its last 200's departure.

It exits when it is terminated, when its parent process is gone, or after fifteen minutes.
"""

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

stats = {}
lock = threading.Lock()


def entry(key):
    return stats.setdefault(
        key, {"flight": 0, "served": 0, "rejected": 0, "peak": 0, "first": None, "last": None}
    )


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        if url.path == "/work":
            limit = int(query.get("limit", ["1"])[0])
            with lock:
                e = entry(key)
                if e["first"] is None:
                    e["first"] = time.monotonic()
                if e["flight"] >= limit:
                    e["rejected"] += 1
                    rejected = True
                else:
                    e["flight"] += 1
                    e["peak"] = max(e["peak"], e["flight"])
                    rejected = False
            if rejected:
                return self.answer(429, "too many requests in flight")
            time.sleep(float(query.get("sleep", ["0.1"])[0]))
            with lock:
                e["flight"] -= 1
                e["served"] += 1
                e["last"] = time.monotonic()
            return self.answer(200, "ok")
        if url.path == "/stats":
            with lock:
                e = entry(key)
                span = (e["last"] - e["first"]) if e["last"] is not None else 0.0
                text = f'{e["served"]} {e["rejected"]} {e["peak"]} {span:.6f}'
            return self.answer(200, text)
        return self.answer(404, "not found")




if __name__ == "__main__":
    serve(Handler)
