#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 for Tempo's HTTP integration tests (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /flaky?key=K&fail=N&after=S  the first N requests for key K get 503 with "Retry-After: S"
                                   (S may have a fraction, so the tests stay short); later ones 200
  GET /slow?key=K&delay=S          answers 200 only after S seconds: never in time for the tests
  GET /count?key=K                 how many /flaky and /slow requests key K has had

It exits when its standard input is closed, when it is terminated, or after two minutes.
"""

import threading
import time
from urllib.parse import parse_qs, urlparse

from fixture import QuietHandler, serve

counts = {}
lock = threading.Lock()


class Handler(QuietHandler):

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        key = query.get("key", [""])[0]
        with lock:
            if url.path in ("/flaky", "/slow"):
                counts[key] = counts.get(key, 0) + 1
            seen = counts.get(key, 0)
        if url.path == "/flaky":
            if seen <= int(query.get("fail", ["0"])[0]):
                after = query.get("after", ["1"])[0]
                return self.answer(503, f"unavailable {seen}", {"Retry-After": after})
            return self.answer(200, f"ok {seen}")
        if url.path == "/slow":
            time.sleep(float(query.get("delay", ["5"])[0]))
            return self.answer(200, "late")
        if url.path == "/count":
            return self.answer(200, str(seen))
        return self.answer(404, "not found")



if __name__ == "__main__":
    serve(Handler)
