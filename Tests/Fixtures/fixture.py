"""What the loopback fixture servers share: a quiet plain-text handler and the way a server
starts and stops.

Each server prints `PORT <n>` as its first line (the tests read it), then serves on 127.0.0.1
until the test stops it: it closes the server's standard input and sends SIGTERM, and either
ends it. If the test process dies first, the server is handed to another parent and stops by
itself; one left behind anyway stops after 15 minutes, long enough for a ThreadSanitizer run of
the whole suite on a loaded machine.
"""

import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no request log, plain-text answers."""

    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: without TCP_NODELAY the second waits for
    # the client's delayed ACK (40 ms on Linux), which a throughput check would count.
    disable_nagle_algorithm = True

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


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of connections must not be refused by the backlog


def serve(handler):
    """Serves `handler` on a free port of 127.0.0.1 until stopped."""
    # A process started from a thread of the Swift task pool inherits that thread's signal
    # mask, which blocks SIGTERM: unblocked, the test's terminate() ends the server instead of
    # leaving it running (and the test's wait for its exit spinning) until the run ends.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    # A real service runs on a machine of its own, where the client's load does not delay its
    # count. Here it shares the test machine, loaded by the suite or by a build beside it: it
    # asks for a higher priority (where it may: as root, as CI runs), so that the arrivals it
    # counts are the clients' and not the time its own threads waited for a core.
    try:
        os.nice(-10)
    except OSError:
        pass
    server = Server(("127.0.0.1", 0), handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    parent = os.getppid()

    def stop_when_orphaned():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    def stop_when_input_closes():
        sys.stdin.buffer.read()
        os._exit(0)

    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    threading.Thread(target=stop_when_input_closes, daemon=True).start()
    threading.Timer(900, lambda: os._exit(0)).start()
    server.serve_forever()
