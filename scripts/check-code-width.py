#!/usr/bin/env python3
"""Fails when a line of a code block is wider than the documentation's text column.

DocC draws code blocks in the 820 px text column without wrapping: a longer line is cut at the
right edge and the reader has to scroll the block sideways to see its end (usually the comment
that explains it). Measured in Chromium at a 1400 px window (scripts/docs-screenshots.py prints
it), a code block holds 87 characters of DocC's monospace font; the limit keeps one in reserve
for fonts a little wider than the one measured.

Checked: every fenced block (any language: shell commands and output are cut the same way) of
README.md and Docs/**/*.md, and every fenced block of the `///` doc comments of Sources/Tempo,
Sources/TempoTesting and Sources/TempoRedis, whose examples the reference pages show. A character counts
one column (tabs four).

  scripts/check-code-width.py              report each line over the limit; exit 1 if any
  scripts/check-code-width.py --limit 80   another limit (e.g. to see what is close)

Only the Python 3 standard library is used.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 86
DOC_SOURCES = ["Sources/Tempo", "Sources/TempoTesting", "Sources/TempoRedis"]
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def code_lines(lines: list[str]) -> list[tuple[int, str]]:
    """The (1-based line number, text) of every line inside a fenced block, fence indent off."""
    found: list[tuple[int, str]] = []
    fence = ""
    indent = 0
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not fence:
            if match:
                fence = match.group(1)
                indent = len(line) - len(line.lstrip())
            continue
        stripped = line.strip()
        if match and stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            fence = ""
            continue
        cut = min(indent, len(line) - len(line.lstrip()))
        found.append((number, line[cut:]))
    return found


def doc_comment_lines(path: Path) -> list[str]:
    """The file with every `///` line reduced to its comment text and every other line blank,
    so that line numbers stay those of the file and a block ends where its comment ends."""
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if stripped.startswith("///"):
            text = stripped[3:]
            out.append(text[1:] if text.startswith(" ") else text)
        else:
            out.append("")
    return out


def blocks_of_doc_comments(path: Path) -> list[tuple[int, str]]:
    # A fence left open when a comment ends is closed there: split the file into comments.
    found: list[tuple[int, str]] = []
    lines = doc_comment_lines(path)
    raw = path.read_text(encoding="utf-8").splitlines()
    start = 0
    for index in range(len(raw) + 1):
        in_comment = index < len(raw) and raw[index].lstrip().startswith("///")
        if not in_comment:
            if index > start:
                for number, text in code_lines(lines[start:index]):
                    found.append((start + number, text))
            start = index + 1
    return found


def width(text: str) -> int:
    return len(text.rstrip().expandtabs(4))


# MARK: - The first sample of a page, on a phone

# At a phone's width (390 px) DocC's code column is 348 px: 35 characters of its monospace font
# (scripts/docs-screenshots.py measures it). A page's first code sample is what a reader on a
# phone sees first; it must read without scrolling sideways, so its lines are held to one
# character less than that.
PHONE_LIMIT = 34

# The reference pages whose first sample is held to the phone's width: those of the helpers and
# of the types a reader meets first (every overload of each name). Other symbols' pages are
# measured by scripts/docs-screenshots.py but not held to it.
PHONE_SYMBOLS = {
    "debounce", "throttle", "delay", "execute", "sleep", "repeat", "timeout", "time", "retry",
    "rateLimit", "concurrencyLimit", "circuitBreaker", "hedge", "debounceResult",
    "HedgingError", "RetryBudget", "Debouncer", "Throttler", "TempoRegistry", "DrainReport",
    "ManualClock",
}
DECLARED = re.compile(r"\b(?:func|class|struct|enum|actor|protocol)\s+`?(\w+)`?")


def first_samples() -> list[tuple[str, list[tuple[int, str]]]]:
    """(where, lines) of the first code block of every article and symbol extension page of
    Docs/Tempo.docc, and of the doc comment of every declaration named in PHONE_SYMBOLS."""
    found: list[tuple[str, list[tuple[int, str]]]] = []
    for path in sorted((ROOT / "Docs").rglob("*.md")):
        block = first_fenced(path.read_text(encoding="utf-8").splitlines())
        if block:
            found.append((str(path.relative_to(ROOT)), block))
    for folder in DOC_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.swift")):
            raw = path.read_text(encoding="utf-8").splitlines()
            comment = doc_comment_lines(path)
            start = 0
            for index in range(len(raw) + 1):
                if index < len(raw) and raw[index].lstrip().startswith("///"):
                    continue
                if index > start:
                    # The declaration: the first line after the comment that declares a name
                    # (attributes such as `@discardableResult` come before it).
                    name = ""
                    for line in raw[index:index + 4]:
                        match = DECLARED.search(line)
                        if match:
                            # A function only at the top level: a method of the same name
                            # (`RetryBackoff.delay(forRetry:)`) is another page.
                            top = not line[:1].isspace()
                            name = match.group(1) if top or "func" not in line else ""
                            break
                    if name in PHONE_SYMBOLS:
                        block = first_fenced(comment[start:index])
                        if block:
                            found.append((f"{path.relative_to(ROOT)} ({name})",
                                          [(start + n, t) for n, t in block]))
                start = index + 1
    return found


def first_fenced(lines: list[str]) -> list[tuple[int, str]]:
    """The (1-based line number, text) of the lines of the first fenced block in `lines`: the
    first run of consecutive lines `code_lines` finds (two blocks are apart by their fences)."""
    block: list[tuple[int, str]] = []
    for number, text in code_lines(lines):
        if block and number != block[-1][0] + 1:
            break
        block.append((number, text))
    return block


def check_first_samples() -> int:
    """Reports every first sample with a line wider than PHONE_LIMIT; returns how many."""
    samples = first_samples()
    over = 0
    for where, block in samples:
        wide = [(number, text) for number, text in block if width(text) > PHONE_LIMIT]
        if wide:
            over += 1
            number, text = wide[0]
            file, _, symbol = where.partition(" ")
            print(f"{file}:{number}: first sample of {symbol or 'the page'}: "
                  f"{len(wide)} of {len(block)} lines wider than {PHONE_LIMIT} "
                  f"characters (a phone shows 35): {text.strip()[:60]}")
    if over:
        print(f"{over} page(s) whose first code sample scrolls sideways on a phone: wrap its "
              f"lines at {PHONE_LIMIT} characters (break the arguments, put comments above)")
    else:
        print(f"first samples: all {len(samples)} fit a phone's {PHONE_LIMIT + 1} characters "
              "(articles, extension pages, and the reference pages of "
              f"{len(PHONE_SYMBOLS)} names)")
    return over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=LIMIT, help=f"default {LIMIT}")
    parser.add_argument("--first-samples", action="store_true",
                        help="only check the first samples at a phone's width")
    args = parser.parse_args()
    if args.first_samples:
        return 1 if check_first_samples() else 0

    checked: list[tuple[str, list[tuple[int, str]]]] = []
    markdown = [ROOT / "README.md"] + sorted((ROOT / "Docs").rglob("*.md"))
    for path in markdown:
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            checked.append((str(path.relative_to(ROOT)), code_lines(lines)))
    for folder in DOC_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.swift")):
            checked.append((str(path.relative_to(ROOT)), blocks_of_doc_comments(path)))

    over = 0
    total = 0
    for name, lines in checked:
        for number, text in lines:
            total += 1
            if width(text) > args.limit:
                over += 1
                print(f"{name}:{number}: {width(text)} characters (limit {args.limit}): "
                      f"{text.strip()[:72]}")
    if over:
        print(f"{over} code line(s) wider than the {args.limit} characters a DocC code block "
              "shows: break the line, or move an end-of-line comment onto its own line above it")
        return 1
    print(f"code width: all {total} code lines fit in {args.limit} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
