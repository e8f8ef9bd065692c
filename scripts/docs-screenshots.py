#!/usr/bin/env python3
"""Screenshots of the built documentation, as a reader sees it, for a look before a release.

Builds the DocC archive (scripts/build-docs.sh), serves it over HTTP on localhost, opens each
page of PAGES in headless Chromium and saves what it shows at a desktop width (1400 px) and a
phone width (400 px, device scale 2), in the light and the dark appearance:

  .build/docs/screenshots/<page>-<width>-<appearance>-<n>.png

Each page is cut into screen-high tiles (01, 02, ...) so that a long page stays readable. The
script also prints, per page and width, what overflows the text column: code lines and tables
that scroll or are clipped (on a phone, where every code block scrolls, tables only), and each
figure's drawn size against its natural size (a figure drawn smaller than it was made has
smaller text than it was made with).

  scripts/docs-screenshots.py                 build, serve, shoot every article and the
                                              reference pages of REFERENCE
  scripts/docs-screenshots.py --no-build      shoot the archive already built
  scripts/docs-screenshots.py debounce retry  only pages whose path contains these words

Chromium comes from the distribution: when no `chromium` is on the PATH the script installs
Debian's package with apt-get (as root). Not part of CI: it takes minutes. Only the Python 3
standard library is used; Chromium is driven over its DevTools pipe (--remote-debugging-pipe).
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / ".build" / "docs" / "Tempo.doccarchive"
OUTPUT = ROOT / ".build" / "docs" / "screenshots"

# The pages to look at: every article of the catalog (found in Docs/Tempo.docc, so a new one is
# never missed), and the reference pages below, at least one per helper. A reference page is
# named by the title it shows, not by its path: overloads of one name share a path up to a hash
# that changes with their signatures, so the path is looked up in the archive.
CATALOG = ROOT / "Docs" / "Tempo.docc"
REFERENCE = [
    ("tempo", "debounce(_:identifier:option:maxWait:operation:)"),
    ("tempo", "debounce, forwarding a call site, on the main actor"),
    ("tempo", "debounceResult(_:identifier:by:option:maxWait:latestWins:fileID:line:column:operation:)"),
    ("tempo", "throttle(_:identifier:option:operation:)"),
    ("tempo", "delay(_:by:onError:fileID:line:column:operation:)"),
    ("tempo", "execute(with:on:fileID:line:column:operation:)"),
    ("tempo", "sleep(_:)"),
    ("tempo", "repeat(every:mode:times:startingImmediately:identifier:by:onError:afterError:clock:"
              "fileID:line:column:operation:)"),
    ("tempo", "timeout(_:clock:fileID:line:column:operation:)"),
    ("tempo", "time(_:style:report:clock:isolation:fileID:line:column:operation:)"),
    ("tempo", "retry(_:every:budget:timeBudget:clock:isolation:fileID:line:column:operation:)"),
    ("tempo", "hedge(maxAttempts:after:identifier:fileID:line:column:operation:)"),
    ("tempo", "HedgingError"),
    ("tempo", "rateLimit(_:weight:whenLimited:identifier:fileID:line:column:operation:)"),
    ("tempo", "concurrencyLimit(_:queue:queueTimeout:identifier:fileID:line:column:operation:)"),
    ("tempo", "circuitBreaker(_:identifier:fileID:line:column:operation:)"),
    ("tempo", "RetryBudget"),
    ("tempo", "Debouncer"),
    ("tempo", "Throttler"),
    ("tempo", "TempoRegistry"),
    ("tempo", "DrainReport"),
    ("tempotesting", "ManualClock"),
]


def article_pages() -> list[str]:
    """Every article's path: the two module pages, then the articles in name order."""
    pages = ["tempo", "tempotesting"]
    for article in sorted(CATALOG.glob("*.md")):
        if article.stem not in ("Tempo", "TempoTesting"):
            pages.append("tempo/" + article.stem.lower())
    return pages


def reference_pages() -> list[str]:
    """The paths of the REFERENCE pages in the built archive; exits naming any not found."""
    titles: dict[tuple[str, str], str] = {}
    for module in {module for module, _ in REFERENCE}:
        for page in (ARCHIVE / "data" / "documentation" / module).glob("*.json"):
            title = json.loads(page.read_text())["metadata"].get("title", "")
            titles[(module, title)] = f"{module}/{page.stem}"
    missing = [title for module, title in REFERENCE if (module, title) not in titles]
    if missing:
        sys.exit("reference pages not in the archive: " + "; ".join(missing))
    return [titles[key] for key in REFERENCE]


# (name, CSS width, device scale factor, mobile)
WIDTHS = [("1400", 1400, 1, False), ("400", 400, 2, True)]
APPEARANCES = ["light", "dark"]
TILE_HEIGHT = {"1400": 1100, "400": 860}

# What the page measures of itself once it has rendered: the text column, and what is wider.
MEASURE = r"""
(() => {
  const out = {height: Math.ceil(document.documentElement.scrollHeight),
               column: 0, characters: 0, overflow: [], figures: []};
  // The text column, and how many characters of code fit in a code block's width.
  const pre = document.querySelector('pre');
  if (pre) {
    const style = getComputedStyle(pre);
    const inner = pre.parentElement.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight);
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    (pre.querySelector('code') || pre).appendChild(probe);
    out.column = pre.parentElement.clientWidth;
    out.characters = Math.floor(inner / (probe.getBoundingClientRect().width / 100));
    probe.remove();
  }
  document.querySelectorAll('pre, table').forEach(el => {
    const box = el.parentElement || el;
    const wide = el.scrollWidth, shown = box.clientWidth;
    if (wide > shown + 1) {
      const text = (el.innerText || '').split('\n')
        .reduce((a, b) => (b.length > a.length ? b : a), '');
      out.overflow.push({tag: el.tagName.toLowerCase(), wide, shown,
                         sample: text.slice(0, 60)});
    }
  });
  document.querySelectorAll('img').forEach(img => {
    if (!/\.svg/.test(img.currentSrc || img.src)) return;
    out.figures.push({src: (img.currentSrc || img.src).split('/').pop(),
                      natural: img.naturalWidth, shown: Math.round(img.width)});
  });
  return JSON.stringify(out);
})()
"""


class Chromium:
    """A headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4)."""

    def __init__(self, binary: str):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child gets our ends at fds 3 (it reads) and 4 (it writes).
        def child_fds() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.process = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--mute-audio",
             "--disable-extensions", "--font-render-hinting=none", "about:blank"],
            preexec_fn=child_fds, pass_fds=(3, 4, to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.session = ""

    def call(self, method: str, params: dict | None = None, session: bool = True) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        try:
            self.call("Browser.close", session=False)
        except RuntimeError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    print("chromium is missing: installing Debian's package (apt-get install chromium)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
    path = shutil.which("chromium")
    if not path:
        sys.exit("chromium is still missing after apt-get install")
    return path


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def send_head(self):  # DocC's single-page app: unknown paths get index.html
            path = self.translate_path(self.path)
            if not os.path.exists(path) and "/documentation/" in self.path:
                self.path = "/index.html"
            return super().send_head()

    handler = functools.partial(Handler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def shoot(browser: Chromium, url: str, stem: str, width: tuple, appearance: str) -> dict:
    label, css_width, scale, mobile = width
    tile = TILE_HEIGHT[label]
    browser.call("Emulation.setDeviceMetricsOverride", {
        "width": css_width, "height": tile, "deviceScaleFactor": scale, "mobile": mobile})
    browser.call("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": appearance}]})
    browser.call("Page.navigate", {"url": url})
    # DocC renders in JavaScript: wait until the page has a title and its images are loaded.
    deadline = time.time() + 30
    while time.time() < deadline:
        time.sleep(0.5)
        ready = browser.call("Runtime.evaluate", {"expression": (
            "!!document.querySelector('main h1') && document.readyState === 'complete' && "
            "[...document.images].every(i => i.complete) && "
            "(window.innerWidth < 1000 || !!document.querySelector('.navigator-card-item'))"),
            "returnByValue": True})
        if ready.get("result", {}).get("value"):
            break
    time.sleep(1.0)
    height = json.loads(browser.call("Runtime.evaluate", {
        "expression": MEASURE, "returnByValue": True})["result"]["value"])["height"]
    count = 0
    # Scrolled screen by screen, as a reader would: the sticky header and sidebar stay in place.
    for top in range(0, height, tile):
        count += 1
        browser.call("Runtime.evaluate", {"expression": f"window.scrollTo(0, {top})"})
        time.sleep(0.6)  # figures load lazily, once scrolled into view
        shot = browser.call("Page.captureScreenshot", {"format": "png"})
        path = OUTPUT / f"{stem}-{label}-{appearance}-{count:02d}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
    # Measured once every figure has been scrolled into view and has loaded.
    measured = json.loads(browser.call("Runtime.evaluate", {
        "expression": MEASURE, "returnByValue": True})["result"]["value"])
    measured["tiles"] = count
    return measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="use the archive already built")
    parser.add_argument("--light-only", action="store_true", help="skip the dark appearance")
    parser.add_argument("pages", nargs="*", help="only pages whose path contains one of these")
    args = parser.parse_args()

    if not args.no_build:
        subprocess.run([str(ROOT / "scripts" / "build-docs.sh")], check=True)
    if not (ARCHIVE / "index.html").exists():
        sys.exit(f"no archive at {ARCHIVE}: run scripts/build-docs.sh")
    every = article_pages() + reference_pages()
    pages = [p for p in every if not args.pages or any(word in p for word in args.pages)]
    appearances = APPEARANCES[:1] if args.light_only else APPEARANCES

    OUTPUT.mkdir(parents=True, exist_ok=True)
    for old in OUTPUT.glob("*.png"):
        if not args.pages:
            old.unlink()
    server, port = serve(ARCHIVE)
    browser = Chromium(find_chromium())
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = browser.call("Target.attachToTarget", {
            "targetId": target["targetId"], "flatten": True}, session=False)
        browser.session = attached["sessionId"]
        browser.call("Page.enable")
        problems = 0
        for page in pages:
            stem = page.replace("/", "-")
            for width in WIDTHS:
                for appearance in appearances:
                    url = f"http://127.0.0.1:{port}/documentation/{page}"
                    m = shoot(browser, url, stem, width, appearance)
                    if appearance != appearances[0]:
                        continue  # the layout is the same in both appearances
                    print(f"{page} @ {width[0]} px: code blocks {m['column']} px wide "
                          f"({m['characters']} characters), "
                          f"{m['tiles']} tiles, page {m['height']} px")
                    for o in m["overflow"]:
                        if width[3] and o["tag"] == "pre":
                            continue  # on a phone every code block scrolls: only tables count
                        problems += 1
                        print(f"  overflow: <{o['tag']}> {o['wide']} px in {o['shown']} px: "
                              f"{o['sample']!r}")
                    for f in m["figures"]:
                        scaled = f["shown"] < f["natural"]
                        print(f"  figure {f['src']}: {f['natural']} px drawn at {f['shown']} px"
                              + (f" (text x{f['shown'] / f['natural']:.2f})" if scaled else ""))
    finally:
        browser.close()
        server.shutdown()
    print(f"screenshots in {OUTPUT.relative_to(ROOT)}; {problems} overflowing blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
