#!/usr/bin/env python3
"""Puts back the closure types the compiler's symbol graphs leave out.

Swift 6.3 writes a parameter whose type is a `nonisolated(nonsending)` function type as the
attribute alone: `operation: nonisolated(nonsending)) async throws -> Value`, the type that
follows the attribute missing from the declaration, the topic lists' subheadings and the
parameter list alike. DocC renders what the graph holds, so a reader would see no type for the
parameter that matters most. This script reads each such parameter's type from the source
line the graph names and puts it back after the attribute, as fragments (attributes, keywords,
type names, text), in every graph of a directory, in place. A fragment already followed by its
type is left alone, so a second run changes nothing.

    scripts/fix-symbol-graphs.py DIR           # every *.symbols.json in DIR, in place
    scripts/fix-symbol-graphs.py DIR OUT       # mended copies in OUT (DIR left as it is)

Exit status: 0 when every broken parameter was mended (it says how many), 1 when one could
not be (its symbol and source line named), 2 on bad usage.
"""

import glob
import json
import os
import re
import sys
from urllib.parse import unquote, urlparse

ATTRIBUTE = "nonisolated(nonsending)"
KEYWORDS = {"async", "throws", "rethrows", "any", "some", "sending", "inout", "isolated"}
TOKEN = re.compile(r"@\w+(?:\([^)]*\))?|->|[A-Za-z_][A-Za-z0-9_]*|\s+|.")


def source_text(uri, line, cache):
    """The source from `line` (0-based, as the graph counts) on, or None."""
    path = unquote(urlparse(uri).path)
    if path not in cache:
        try:
            with open(path, encoding="utf-8") as file:
                cache[path] = file.read().splitlines()
        except OSError:
            cache[path] = None
    lines = cache[path]
    return None if lines is None else "\n".join(lines[line:])


def type_after(text, label):
    """The type written after `label: ... nonisolated(nonsending) ` in a declaration's source:
    up to the `,` or `)` that ends it, at the depth it started (`<>`, `()`, `[]` nested, `->`
    not a bracket)."""
    pattern = re.compile(
        r"\b" + re.escape(label) + r"(?:\s+\w+)?\s*:\s*\(?\s*" + re.escape(ATTRIBUTE) + r"\s*")
    match = pattern.search(text)
    if not match:
        return None
    depth, index, start = 0, match.end(), match.end()
    while index < len(text):
        if text.startswith("->", index):
            index += 2
            continue
        char = text[index]
        if char in "(<[":
            depth += 1
        elif char in ")>]":
            if depth == 0:
                break
            depth -= 1
        elif char in ",=" and depth == 0:
            break
        index += 1
    spelled = " ".join(text[start:index].split())
    return spelled or None


def fragments_for(spelled):
    """`spelled` as symbol-graph fragments."""
    fragments = []
    for token in TOKEN.findall(spelled):
        if token.startswith("@"):
            kind = "attribute"
        elif token in KEYWORDS:
            kind = "keyword"
        elif re.fullmatch(r"[A-Z][A-Za-z0-9_]*", token):
            kind = "typeIdentifier"
        else:
            kind = "text"
        if kind == "text" and fragments and fragments[-1]["kind"] == "text":
            fragments[-1]["spelling"] += token
        else:
            fragments.append({"kind": kind, "spelling": token})
    return fragments


def label_before(fragments, index):
    """The parameter label the attribute at `index` is the type of: the name before `: `
    (the internal name where there is one, which the source spells after the label)."""
    for back in range(index - 1, max(index - 6, -1), -1):
        fragment = fragments[back]
        if fragment["kind"] in ("externalParam", "internalParam", "identifier"):
            return fragment["spelling"]
    return None


def mend(fragments, source, where, problems):
    """Mends `fragments` in place; returns how many parameters it mended."""
    mended = 0
    index = 0
    while index < len(fragments):
        fragment = fragments[index]
        following = fragments[index + 1]["spelling"] if index + 1 < len(fragments) else ""
        if (
            fragment["kind"] == "keyword"
            and fragment["spelling"] == ATTRIBUTE
            and index > 0
            and re.match(r"\s*[),]|$", following)
            and re.search(r"(:\s*\(?|\(|,\s*)$", fragments[index - 1]["spelling"])
        ):
            # A subheading leaves an unlabeled parameter's name out: its source spells `_ name:`.
            label = label_before(fragments, index) if ":" in fragments[index - 1][
                "spelling"] else "_"
            spelled = type_after(source or "", label) if label else None
            if not spelled:
                problems.append(f"{where}: no type found for parameter {label!r}")
                index += 1
                continue
            inserted = [{"kind": "text", "spelling": " "}] + fragments_for(spelled)
            fragments[index + 1:index + 1] = inserted
            mended += 1
            index += len(inserted)
        index += 1
    return mended


def main():
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[2] if len(sys.argv) == 3 else sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cache, problems, mended = {}, [], 0
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.symbols.json"))):
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        before = mended
        for symbol in graph.get("symbols", []):
            location = symbol.get("location")
            source = None
            if location:
                source = source_text(location["uri"], location["position"]["line"], cache)
            where = f"{symbol['names']['title']} ({location['uri'] if location else '?'})"
            lists = [symbol.get("declarationFragments", []),
                     symbol.get("names", {}).get("subHeading", [])]
            for parameter in symbol.get("functionSignature", {}).get("parameters", []):
                lists.append(parameter.get("declarationFragments", []))
            for fragments in lists:
                mended += mend(fragments, source, where, problems)
        target = os.path.join(out, os.path.basename(path))
        if mended != before or target != path:
            with open(target, "w", encoding="utf-8") as file:
                json.dump(graph, file)
    for problem in problems:
        print("error: " + problem, file=sys.stderr)
    print(f"symbol graphs: {mended} parameter types put back after `{ATTRIBUTE}`")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
