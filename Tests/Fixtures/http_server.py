#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 for Tempo's HTTP integration tests (standard library only).

It prints "PORT <n>" on its first line of output, then serves:

  GET /flaky?key=K&fail=N&after=S  the first N requests for key K get 503 with "Retry-After: S"
                                   (S may have a fraction, so the tests stay short); later ones 200
  GET /slow?key=K&delay=S          answers 200 only after S seconds: never in time for the tests
  GET /count?key=K                 how many /flaky and /slow requests key K has had

It exits when its standard input is closed, when it is terminated, or after two minutes.
"""

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

counts = {}
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
            pass  # the client gave up (a timeout in the test): nothing to do

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


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)

    # The test stops the server with SIGTERM. If the test process dies first, the server is
    # handed to another parent: it then stops by itself. (It used to stop when its standard
    # input closed, which also stopped it at once whenever its input was not the test's pipe.)
    parent = os.getppid()

    def stop_when_orphaned():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    # A server left behind stops by itself; long enough for a ThreadSanitizer run of the whole
    # suite on a loaded machine, where a test can wait minutes for a thread of the task pool.
    threading.Timer(900, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
