#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that always fails, for Tempo's retry-budget integration
test (standard library only): it counts the requests each key sends while it is down.

It prints "PORT <n>" on its first line of output, then serves:

  GET /fail?key=K   counts one request of key K and answers 503 at once.
  GET /stats?key=K  "requests": how many requests key K sent to /fail.

It exits when it is terminated, when its parent process is gone, or after fifteen minutes.
"""

import threading

from fixture import QuietHandler, serve

counts = {}
lock = threading.Lock()


class Handler(QuietHandler):

    def do_GET(self):
        path, _, query = self.path.partition("?")
        key = query.partition("key=")[2].partition("&")[0]
        if path == "/fail":
            with lock:
                counts[key] = counts.get(key, 0) + 1
            return self.answer(503, "down")
        if path == "/stats":
            with lock:
                text = str(counts.get(key, 0))
            return self.answer(200, text)
        return self.answer(404, "not found")


if __name__ == "__main__":
    serve(Handler)
