#!/usr/bin/env python3
"""Screenshots and measurements of the built documentation, as a reader sees it.

Builds the DocC archive (scripts/build-docs.sh), serves it over HTTP on localhost, opens each
page in headless Chromium and saves what it shows at a desktop width (1400 px, device scale 1)
and a phone width (390 px, an iPhone's CSS width, device scale 2, mobile emulation), in the
light and the dark appearance:

  .build/docs/screenshots/<page>-<width>-<appearance>-<n>.png

Each page is cut into screen-high tiles (01, 02, ...) so that a long page stays readable.

The pages: every article of Docs/Tempo.docc (each .md file whose title is not a ``symbol``
link, i.e. not the module page or an extension file; found in the catalog, so a new one is
never missed), the two module pages, and the reference pages of REFERENCE: at least one per
helper of HELPERS (checked when the script starts), then a few types.

What it measures, per page and width, once the page has rendered (its title is there, the
document and its fonts have loaded, and every image but the lazy ones below the screen), has
been scrolled to the bottom screen by screen (figures load lazily, and the page grows as they
do), and is back at the top with every image loaded:

- height: the page's full height in CSS px, document.documentElement.scrollHeight (the header
  bar and the footer included);
- code blocks and tables wider than the text column (a block's or table's scroll width against
  the client width of the box that scrolls it), with a line of each; on the phone every code
  block scrolls, so there only tables and the declaration are listed;
- at the phone width, every table that does not fit its column (its scroll width against its
  client width, with its first header cells so that a reader can find it), and whether the
  page's FIRST code sample (the first code listing; a reference page's declaration is not a
  sample) reads without scrolling sideways (scrollWidth <= clientWidth); when it does not, how
  many of its lines are cut at the right edge and the first cut line's text;
- each figure's drawn width against its natural width;
- the heights of the Topics and See Also sections DocC draws at a page's end (named in the
  line of a page over the aim).

The run starts by saying what it looks at (the pages, both widths, the appearances, the fonts
Chromium drew with) and ends with a markdown table, page | height at 1400 | height at 390 |
tables that do not fit at 390 | first sample fits at 390, and a line for each page over the
~8,000 px aim at 390.

  scripts/docs-screenshots.py                    build, serve, shoot and measure every page
  scripts/docs-screenshots.py --no-build         use the archive already built
  scripts/docs-screenshots.py debounce retry     only pages whose path or name contains a word
  scripts/docs-screenshots.py --light-only       screenshots in the light appearance only (the
                                                 measurements are the same: the layout does not
                                                 change with the appearance); about half the time
  scripts/docs-screenshots.py --no-shots         measure only, no screenshots (still scrolls
                                                 every page so that its figures load)
  scripts/docs-screenshots.py --json FILE        also write the figures to FILE
  scripts/docs-screenshots.py --compare BEFORE.json AFTER.json
                                                 print two runs side by side (no build, no
                                                 browser): e.g. before and after a docs change

Heights depend on the fonts: Chromium on Linux draws DocC's Apple font stack with what it finds
(Liberation Sans or DejaVu Sans for the text, DejaVu Sans Mono for code, which has Menlo's
widths), so a height is a figure to compare between runs on the same machine, near but not equal
to what a reader's Safari shows.

Chromium comes from the distribution: when no `chromium` is on the PATH the script installs
Debian's package with apt-get (as root). Not part of CI: it takes many minutes. Only the Python 3
standard library is used; Chromium is driven over its DevTools pipe (--remote-debugging-pipe).
"""

from __future__ import annotations

import argparse
import base64
import datetime
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / ".build" / "docs" / "Tempo.doccarchive"
OUTPUT = ROOT / ".build" / "docs" / "screenshots"
CATALOG = ROOT / "Docs" / "Tempo.docc"

# The helpers: each has a reference page in REFERENCE (a name there is the helper's own).
HELPERS = ["debounce", "throttle", "delay", "execute", "sleep", "repeat", "timeout", "time",
           "retry", "rateLimit", "concurrencyLimit", "circuitBreaker", "hedge"]

# The reference pages to look at, as (name, module, title): one per helper first, then other
# pages worth a look. A reference page is found by the title it shows, not by its path:
# overloads of one name share a path up to a hash that changes with their signatures, so the
# path is looked up in the archive.
REFERENCE = [
    ("debounce", "tempo", "debounce(_:identifier:option:maxWait:operation:)"),
    ("throttle", "tempo", "throttle(_:identifier:option:operation:)"),
    ("delay", "tempo", "delay(_:by:onError:fileID:line:column:operation:)"),
    ("execute", "tempo", "execute(with:on:fileID:line:column:operation:)"),
    ("sleep", "tempo", "sleep(_:)"),
    ("repeat", "tempo", "repeat(every:mode:times:startingImmediately:identifier:by:onError:"
                        "afterError:clock:fileID:line:column:operation:)"),
    ("timeout", "tempo", "timeout(_:clock:fileID:line:column:operation:)"),
    ("time", "tempo", "time(_:style:report:clock:isolation:fileID:line:column:operation:)"),
    ("retry", "tempo", "retry(_:every:budget:timeBudget:clock:isolation:fileID:line:column:"
                       "operation:)"),
    ("rateLimit", "tempo", "rateLimit(_:weight:whenLimited:identifier:fileID:line:column:"
                           "operation:)"),
    ("concurrencyLimit", "tempo", "concurrencyLimit(_:queue:queueTimeout:identifier:fileID:line:"
                                  "column:operation:)"),
    ("circuitBreaker", "tempo", "circuitBreaker(_:identifier:fileID:line:column:operation:)"),
    ("hedge", "tempo", "hedge(maxAttempts:after:identifier:fileID:line:column:operation:)"),
    # Beyond one page per helper:
    ("debounce forwarding", "tempo", "debounce, forwarding a call site, on the main actor"),
    ("debounceResult", "tempo", "debounceResult(_:identifier:by:option:maxWait:latestWins:"
                                "fileID:line:column:operation:)"),
    ("HedgingError", "tempo", "HedgingError"),
    ("RetryBudget", "tempo", "RetryBudget"),
    ("Debouncer", "tempo", "Debouncer"),
    ("Throttler", "tempo", "Throttler"),
    ("TempoRegistry", "tempo", "TempoRegistry"),
    ("DrainReport", "tempo", "DrainReport"),
    ("ManualClock", "tempotesting", "ManualClock"),
]

# (name, CSS width, device scale factor, mobile, screen height): a desktop window, and an
# iPhone's 390 x 844 CSS px screen at device scale 2.
DESKTOP = ("1400", 1400, 1, False, 1100)
PHONE = ("390", 390, 2, True, 844)
WIDTHS = [DESKTOP, PHONE]
APPEARANCES = ["light", "dark"]
AIM = 8000  # px at the phone width: a page longer than this is over the aim of issue 41


class Page:
    """A page to look at: its key (what the summary calls it), archive path and kind."""

    def __init__(self, key: str, path: str, kind: str, title: str):
        self.key, self.path, self.kind, self.title = key, path, kind, title

    def matches(self, words: list[str]) -> bool:
        return not words or any(w.lower() in self.key.lower() or w.lower() in self.path.lower()
                                for w in words)


def heading(markdown: Path) -> str:
    for line in markdown.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def catalog_pages() -> list[Page]:
    """The module pages, then every article in name order; exits naming one not in the archive.

    A file of the catalog whose title is a ``symbol`` link extends that symbol's page (the
    module page when the link has no `/`): it is not an article. Every other .md is one, at
    documentation/<module>/<file name, lower case>; articles belong to the first module."""
    modules: list[str] = []
    articles: list[Path] = []
    for markdown in sorted(CATALOG.rglob("*.md")):
        title = heading(markdown)
        link = re.fullmatch(r"``([^`]+)``", title)
        if link and "/" not in link.group(1) and "." not in link.group(1):
            modules.append(link.group(1).lower())
        elif not link:
            articles.append(markdown)
    modules.sort(key=lambda m: (m != "tempo", m))
    data = ARCHIVE / "data" / "documentation"
    pages = [Page(m, m, "module", json.loads((data / f"{m}.json").read_text())["metadata"]
                  .get("title", m)) for m in modules if (data / f"{m}.json").exists()]
    missing = []
    for article in articles:
        path = f"{modules[0]}/{article.stem.lower()}"
        if not (data / f"{path}.json").exists():
            missing.append(str(article.relative_to(ROOT)))
        pages.append(Page(path, path, "article", heading(article)))
    if missing:
        sys.exit("articles with no page in the archive: " + "; ".join(missing))
    return pages


def reference_pages() -> list[Page]:
    """The REFERENCE pages, found by title in the built archive; exits naming any not found."""
    names = {name for name, _, _ in REFERENCE}
    if [h for h in HELPERS if h not in names]:
        sys.exit("helpers with no reference page in REFERENCE: "
                 + ", ".join(h for h in HELPERS if h not in names))
    titles: dict[tuple[str, str], str] = {}
    for module in {module for _, module, _ in REFERENCE}:
        for page in (ARCHIVE / "data" / "documentation" / module).glob("*.json"):
            title = json.loads(page.read_text())["metadata"].get("title", "")
            titles[(module, title)] = f"{module}/{page.stem}"
    missing = [title for _, module, title in REFERENCE if (module, title) not in titles]
    if missing:
        sys.exit("reference pages not in the archive: " + "; ".join(missing))
    return [Page(f"ref: {name}", titles[(module, title)], "reference", title)
            for name, module, title in REFERENCE]


# What the page measures of itself once it has rendered. `box(el)` is the box that scrolls an
# element sideways (the element itself or its nearest ancestor that clips), whose client width
# is what a reader sees of it.
MEASURE = r"""
(() => {
  const box = el => {
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') return e;
    }
    return el.parentElement || el;
  };
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const longest = el => (el.innerText || '').split('\n')
    .reduce((a, b) => (b.length > a.length ? b : a), '');
  const out = {height: Math.ceil(document.documentElement.scrollHeight),
               column: 0, characters: 0, overflow: [], tables: [], firstSample: null,
               declaration: null, figures: []};
  const listings = [...document.querySelectorAll('main .code-listing pre, main pre')]
    .filter(p => !p.closest('.declaration-group, .declaration, .source'));
  const first = listings[0];
  // The text column, and how many characters of code fit in a code block's width.
  if (first) {
    const scroller = box(first), style = getComputedStyle(first);
    const inner = scroller.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight);
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    (first.querySelector('code') || first).appendChild(probe);
    out.column = scroller.clientWidth;
    out.charWidth = probe.getBoundingClientRect().width / 100;
    out.characters = Math.floor(inner / out.charWidth);
    probe.remove();
  }
  // Every code block and table that scrolls or is clipped.
  document.querySelectorAll('main pre, main table').forEach(el => {
    const b = box(el);
    const wide = Math.max(el.scrollWidth, b.scrollWidth), shown = b.clientWidth;
    if (wide > shown + 1) {
      const kind = el.tagName === 'TABLE' ? 'table'
        : (el.closest('.declaration-group, .declaration') ? 'declaration' : 'code');
      out.overflow.push({tag: kind, wide, shown, sample: clip(longest(el), 60)});
    }
  });
  // Every table, with its first header cells, and whether it fits its column.
  document.querySelectorAll('main table').forEach((t, i) => {
    const b = box(t);
    const wide = Math.max(t.scrollWidth, b.scrollWidth), shown = b.clientWidth;
    const row = t.querySelector('thead tr') || t.querySelector('tr');
    const head = row ? [...row.children].slice(0, 3)
      .map(c => clip(c.innerText.trim().replace(/\s+/g, ' '), 24)) : [];
    out.tables.push({index: i + 1, head, wide, shown, fits: wide <= shown + 1});
  });
  // The first code sample: does it read without scrolling sideways, and which lines are cut.
  if (first) {
    const b = box(first), rect = b.getBoundingClientRect();
    const right = rect.left + b.clientLeft + b.clientWidth;
    let lines = [...first.querySelectorAll('.code-line')].map(l => ({
      text: l.textContent.replace(/\s+$/, ''), right: l.getBoundingClientRect().right}));
    if (!lines.length) {  // no line spans: lines by count of characters
      const code = first.querySelector('code') || first;
      const each = out.charWidth || 1e9;
      lines = code.innerText.replace(/\n$/, '').split('\n').map(t => ({
        text: t.replace(/\s+$/, ''),
        right: rect.left + parseFloat(getComputedStyle(first).paddingLeft)
          + t.replace(/\s+$/, '').length * each}));
    }
    const cut = lines.filter(l => l.text.length && l.right > right + 0.5);
    const wide = Math.max(first.scrollWidth, b.scrollWidth), shown = b.clientWidth;
    out.firstSample = {fits: wide <= shown, wide, shown, lines: lines.length, cut: cut.length,
                       firstCut: cut.length ? clip(cut[0].text, 100) : ''};
  }
  // The first declaration (a reference page's), when it scrolls.
  const declaration = document.querySelector('main .declaration-group pre, main pre.source');
  if (declaration) {
    const b = box(declaration);
    const wide = Math.max(declaration.scrollWidth, b.scrollWidth), shown = b.clientWidth;
    out.declaration = {fits: wide <= shown + 1, wide, shown};
  }
  // The heights of the Topics and See Also sections DocC draws at the end of a page.
  out.sections = {};
  document.querySelectorAll('main h2').forEach(h => {
    const title = h.innerText.trim();
    if (title !== 'Topics' && title !== 'See Also') return;
    let sec = h.parentElement;
    while (sec && sec.parentElement && sec.parentElement.querySelectorAll('h2').length === 1
           && sec.parentElement.tagName !== 'MAIN') sec = sec.parentElement;
    out.sections[title] = Math.round(sec.getBoundingClientRect().height);
  });
  document.querySelectorAll('img').forEach(img => {
    if (!/\.svg/.test(img.currentSrc || img.src)) return;
    out.figures.push({src: (img.currentSrc || img.src).split('/').pop(),
                      natural: img.naturalWidth, shown: Math.round(img.width)});
  });
  return JSON.stringify(out);
})()
"""

# The page has rendered: its title is there, the document and its fonts have loaded, and so has
# every image (but for a lazy one, which loads only near the screen, when `lazy` is true), and,
# on a desktop, the sidebar.
READY = ("!!document.querySelector('main h1') && document.readyState === 'complete' && "
         "[...document.images].every(i => i.complete || (LAZY && i.loading === 'lazy')) && "
         "document.fonts.status === 'loaded' && "
         "(window.innerWidth < 1000 || !!document.querySelector('.navigator-card-item'))")


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
        self.version = self.call("Browser.getVersion", session=False).get("product", "")

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

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        reply = self.call("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True})
        return reply.get("result", {}).get("value")

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


def settle(browser: Chromium, timeout: float, lazy: bool) -> bool:
    """Waits until the page is READY (lazy images too unless `lazy`); False after `timeout`."""
    deadline = time.time() + timeout
    ready = READY.replace("LAZY", "true" if lazy else "false")
    while time.time() < deadline:
        time.sleep(0.5)
        if browser.evaluate(ready):
            browser.evaluate("document.fonts.ready.then(() => true)")
            return True
    return False


def shoot(browser: Chromium, url: str, stem: str, width: tuple, appearance: str,
          screenshots: bool) -> dict:
    label, css_width, scale, mobile, screen = width
    browser.call("Emulation.setDeviceMetricsOverride", {
        "width": css_width, "height": screen, "deviceScaleFactor": scale, "mobile": mobile})
    browser.call("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": appearance}]})
    browser.call("Page.navigate", {"url": url})
    # DocC renders in JavaScript: wait until the page has a title and its images are loaded
    # (those below the screen load once scrolled near).
    ready = settle(browser, 30, lazy=True)
    time.sleep(1.0)
    count = 0
    top = 0
    # Scrolled screen by screen, as a reader would: the sticky header and sidebar stay in place.
    # The height is read again at each screen: a figure that loads can make the page longer.
    while top < browser.evaluate("document.documentElement.scrollHeight"):
        count += 1
        browser.evaluate(f"window.scrollTo(0, {top})")
        time.sleep(0.6)  # figures load lazily, once scrolled into view
        if screenshots:
            shot = browser.call("Page.captureScreenshot", {"format": "png"})
            path = OUTPUT / f"{stem}-{label}-{appearance}-{count:02d}.png"
            path.write_bytes(base64.b64decode(shot["data"]))
        top += screen
    # Measured once every figure has been scrolled into view and has loaded, back at the top.
    browser.evaluate("window.scrollTo(0, 0)")
    ready = settle(browser, 15, lazy=False) and ready
    time.sleep(0.3)
    measured = json.loads(browser.evaluate(MEASURE))
    measured["tiles"] = count
    measured["ready"] = ready
    return measured


def fonts_used(browser: Chromium) -> dict:
    """The fonts Chromium drew the current page's text and code with (not the CSS stacks)."""
    used = {}
    try:
        browser.call("DOM.enable")
        browser.call("CSS.enable")
        root = browser.call("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        for name, selector in (("text", "main p"), ("code", "main .code-listing code")):
            node = browser.call("DOM.querySelector", {"nodeId": root, "selector": selector})
            if node.get("nodeId"):
                fonts = browser.call("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
                used[name] = ", ".join(f["familyName"] for f in fonts.get("fonts", []))
        browser.call("CSS.disable")
        browser.call("DOM.disable")
    except RuntimeError as error:
        used["error"] = str(error)
    return used


def describe(page: Page, width: str, m: dict) -> list[str]:
    """The lines printed for one page at one width."""
    lines = [f"  {width} px: page {m['height']} px, {m['tiles']} screens; "
             + (f"code blocks {m['column']} px wide ({m['characters']} characters)"
                if m["column"] else "no code sample")
             + ("" if m.get("ready", True) else "; NOT READY: title, fonts or images "
                                               "missing after the waits (measured anyway)")]
    phone = width == PHONE[0]
    for o in m["overflow"]:
        if phone and o["tag"] != "declaration":
            continue  # on a phone every code block scrolls; tables are listed below
        lines.append(f"    overflow: {o['tag']} {o['wide']} px in {o['shown']} px: "
                     f"{o['sample']!r}")
    if phone:
        wide = [t for t in m["tables"] if not t["fits"]]
        if m["tables"]:
            lines.append(f"    tables: {len(m['tables'])}, "
                         + (f"{len(wide)} wider than the column" if wide else "all fit"))
        for t in wide:
            lines.append(f"    table {t['index']} ({' | '.join(t['head'])}): "
                         f"{t['wide']} px in {t['shown']} px")
        s = m["firstSample"]
        if s is None:
            lines.append("    first sample: none (no code listing)")
        elif s["fits"]:
            lines.append(f"    first sample: fits ({s['wide']} px in {s['shown']} px, "
                         f"{s['lines']} lines)")
        else:
            lines.append(f"    first sample: scrolls sideways ({s['wide']} px in {s['shown']} px):"
                         f" {s['cut']} of {s['lines']} lines cut, first {s['firstCut']!r}")
    for f in m["figures"]:
        scaled = f["shown"] < f["natural"]
        lines.append(f"    figure {f['src']}: {f['natural']} px drawn at {f['shown']} px"
                     + (f" (text x{f['shown'] / f['natural']:.2f})" if scaled else ""))
    return lines


# The summary, for one run or two.

def cell_tables(m: dict | None) -> str:
    if m is None:
        return "—"
    wide = [t for t in m["tables"] if not t["fits"]]
    if not wide:
        return "none" if m["tables"] else "no table"
    return "; ".join(f"{' / '.join(t['head'][:2])} ({t['wide']} in {t['shown']})" for t in wide)


def cell_sample(m: dict | None) -> str:
    if m is None:
        return "—"
    s = m["firstSample"]
    if s is None:
        return "no sample"
    if s["fits"]:
        return "yes"
    return f"no: {s['cut']} of {s['lines']} lines cut"


def figures_of(run: dict, key: str, width: str) -> dict | None:
    for page in run["pages"]:
        if page["key"] == key:
            return page["widths"].get(width)
    return None


def height(m: dict | None) -> str:
    return "—" if m is None else f"{m['height']:,}"


def summary(run: dict) -> list[str]:
    desk, phone = DESKTOP[0], PHONE[0]
    out = [f"| page | height at {desk} | height at {phone} | tables that do not fit at {phone} "
           f"| first sample fits at {phone} |", "| --- | ---: | ---: | --- | --- |"]
    for page in run["pages"]:
        d, p = page["widths"].get(desk), page["widths"].get(phone)
        out.append(f"| {page['key']} | {height(d)} | {height(p)} | {cell_tables(p)} "
                   f"| {cell_sample(p)} |")
    out.append("")
    over = [(page["key"], page["widths"][phone]) for page in run["pages"]
            if phone in page["widths"] and page["widths"][phone]["height"] > run["aim"]]
    for key, m in over:
        parts = [f"{name} {h:,} px" for name, h in m.get("sections", {}).items()]
        drawn = f" (of which {', '.join(parts)})" if parts else ""
        out.append(f"{key}: {m['height']:,} px at {phone} px, over the ~{run['aim']:,} px aim"
                   + drawn)
    out.append(f"{len(over)} of {len(run['pages'])} pages over the ~{run['aim']:,} px aim at "
               f"{phone} px")
    return out


def compare(before: dict, after: dict) -> list[str]:
    desk, phone = DESKTOP[0], PHONE[0]

    def delta(b: dict | None, a: dict | None) -> str:
        if b is None or a is None:
            return "—"
        d = a["height"] - b["height"]
        return f"{d:+,}" + (f" ({d / b['height']:+.0%})" if b["height"] else "")

    out = [f"before: {before.get('commit', '?')} ({before.get('date', '?')})",
           f"after:  {after.get('commit', '?')} ({after.get('date', '?')})", "",
           f"| page | {desk} before | {desk} after | change at {desk} | {phone} before "
           f"| {phone} after | change at {phone} | tables that do not fit at {phone}, "
           f"before → after | first sample fits at {phone}, before → after |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    keys = [p["key"] for p in before["pages"]]
    keys += [p["key"] for p in after["pages"] if p["key"] not in keys]
    for key in keys:
        bd, ad = figures_of(before, key, desk), figures_of(after, key, desk)
        bp, ap = figures_of(before, key, phone), figures_of(after, key, phone)
        tables = (cell_tables(bp) if cell_tables(bp) == cell_tables(ap)
                  else f"{cell_tables(bp)} → {cell_tables(ap)}")
        sample = (cell_sample(bp) if cell_sample(bp) == cell_sample(ap)
                  else f"{cell_sample(bp)} → {cell_sample(ap)}")
        out.append(f"| {key} | {height(bd)} | {height(ad)} | {delta(bd, ad)} | {height(bp)} "
                   f"| {height(ap)} | {delta(bp, ap)} | {tables} | {sample} |")
    out.append("")
    aim = after.get("aim", AIM)
    for name, run in (("before", before), ("after", after)):
        over = [p["key"] for p in run["pages"]
                if phone in p["widths"] and p["widths"][phone]["height"] > aim]
        out.append(f"{name}: {len(over)} of {len(run['pages'])} pages over the ~{aim:,} px aim "
                   f"at {phone} px" + (": " + ", ".join(over) if over else ""))
    return out


def commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "Docs",
                                "Sources"], capture_output=True, text=True).stdout.strip()
        return head + (" with uncommitted changes to Docs or Sources" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="See the docstring at the top of the script for what is measured and how.")
    parser.add_argument("--no-build", action="store_true", help="use the archive already built")
    parser.add_argument("--light-only", action="store_true",
                        help="screenshots in the light appearance only (measurements unchanged)")
    parser.add_argument("--no-shots", action="store_true",
                        help="measure only: no screenshots (one appearance)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="print two --json files side by side, and nothing else")
    parser.add_argument("pages", nargs="*",
                        help="only pages whose path or name contains one of these words")
    args = parser.parse_args()

    if args.compare:
        before, after = (json.loads(Path(f).read_text()) for f in args.compare)
        print("\n".join(compare(before, after)))
        return 0

    started = time.time()
    if not args.no_build:
        subprocess.run([str(ROOT / "scripts" / "build-docs.sh")], check=True)
    if not (ARCHIVE / "index.html").exists():
        sys.exit(f"no archive at {ARCHIVE}: run scripts/build-docs.sh")
    pages = [p for p in catalog_pages() + reference_pages() if p.matches(args.pages)]
    if not pages:
        sys.exit("no page matches " + " ".join(args.pages))
    appearances = APPEARANCES[:1] if args.light_only or args.no_shots else APPEARANCES

    run = {"tool": "scripts/docs-screenshots.py", "commit": commit(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "widths": [{"name": w[0], "css": w[1], "scale": w[2], "mobile": w[3], "screen": w[4]}
                      for w in WIDTHS],
           "appearances": appearances, "screenshots": not args.no_shots, "aim": AIM,
           "pages": []}

    # What it looks at.
    print(f"Docs of {run['commit']}, archive {ARCHIVE.relative_to(ROOT)}")
    print(f"{len(pages)} pages:")
    for p in pages:
        print(f"  {p.key}" + (f"  ({p.title}, documentation/{p.path})"
                              if p.kind == "reference" else f"  ({p.kind}: {p.title})"))
    print("widths: " + "; ".join(
        f"{w[1]} px (device scale {w[2]}, {'phone, mobile emulation' if w[3] else 'desktop'}, "
        f"screen {w[4]} px high)" for w in WIDTHS))
    if args.no_shots:
        print("appearance: light only, no screenshots (--no-shots); the layout, and so every "
              "figure, is the same in the dark")
    else:
        print("appearances: " + ", ".join(appearances)
              + ("  (dark skipped: --light-only; the measurements are the same in the dark)"
                 if len(appearances) == 1 else "  (measured in the light; same layout in both)"))

    OUTPUT.mkdir(parents=True, exist_ok=True)
    if not args.pages and not args.no_shots:
        for old in OUTPUT.glob("*.png"):
            old.unlink()
    server, port = serve(ARCHIVE)
    browser = Chromium(find_chromium())
    print(f"browser: {browser.version}")
    sys.stdout.flush()
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = browser.call("Target.attachToTarget", {
            "targetId": target["targetId"], "flatten": True}, session=False)
        browser.session = attached["sessionId"]
        browser.call("Page.enable")
        problems = 0
        for page in pages:
            stem = re.sub(r"[^a-z0-9]+", "-", page.key.lower()).strip("-")
            url = f"http://127.0.0.1:{port}/documentation/{page.path}"
            entry = {"key": page.key, "path": page.path, "kind": page.kind, "title": page.title,
                     "widths": {}}
            print(f"{page.key}  ({page.title})")
            for width in WIDTHS:
                for appearance in appearances:
                    m = shoot(browser, url, stem, width, appearance, not args.no_shots)
                    if appearance != appearances[0]:
                        continue  # the layout is the same in both appearances
                    if len(run.setdefault("fonts", {})) < 2:  # once text and code are found
                        found = fonts_used(browser)
                        if len(found) > len(run["fonts"]):
                            run["fonts"] = found
                            print("  fonts drawn: " + "; ".join(
                                f"{k} in {v}" for k, v in found.items()))
                    entry["widths"][width[0]] = m
                    phone = width[0] == PHONE[0]
                    problems += sum(1 for o in m["overflow"]
                                    if not phone or o["tag"] != "code")
                    for line in describe(page, width[0], m):
                        print(line)
                    sys.stdout.flush()
            run["pages"].append(entry)
            if args.json:  # written as it goes: an interrupted run keeps its pages
                Path(args.json).write_text(json.dumps(run, indent=1) + "\n")
    finally:
        browser.close()
        server.shutdown()
    print()
    if not args.no_shots:
        print(f"screenshots in {OUTPUT.relative_to(ROOT)}")
    print(f"{problems} blocks wider than the column (code at {DESKTOP[0]} px; tables and "
          f"declarations at both widths); {time.time() - started:.0f} s")
    print()
    print("\n".join(summary(run)))
    if args.json:
        Path(args.json).write_text(json.dumps(run, indent=1) + "\n")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
