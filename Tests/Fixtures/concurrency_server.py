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

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

stats = {}
lock = threading.Lock()


def entry(key):
    return stats.setdefault(
        key, {"flight": 0, "served": 0, "rejected": 0, "peak": 0, "first": None, "last": None}
    )


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: without TCP_NODELAY the second waits for
    # the client's delayed ACK (40 ms on Linux), which the throughput check would count.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body.encode()
        try:
            self.send_response(status)
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


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of connections must not be refused by the backlog


def main():
    server = Server(("127.0.0.1", 0), Handler)
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
