#!/usr/bin/env python3
"""Checks that every public symbol of Tempo and TempoTesting has the reference docs its page needs.

Reads the symbol graphs `scripts/build-docs.sh` emits (.build/docs/symbol-graphs/*.symbols.json,
one per module, and one per module a module extends) and, for every public symbol declared in
this package:

- it has a doc comment (a summary at least): types, properties, enum cases, everything;
- a function, method, initializer, subscript or operator documents each of its parameters,
  under `- Parameters:` or as `- Parameter name:`, with some text (a parameter counts by its
  internal name or its argument label; `fileID`, `line`, `column`, `isolation` and `clock`
  count like any other);
- one that `throws` or `rethrows` has `- Throws:`;
- one that returns something other than `Void` has `- Returns:` (initializers return nothing);
- it documents no parameter it does not have.

It prints one line per symbol that lacks something, with its file and line, and what it lacks,
then the counts; the exit status is 1 when anything is missing.

    scripts/check-reference-docs.py                     after scripts/build-docs.sh
    scripts/check-reference-docs.py --graphs DIR        symbol graphs from elsewhere
    scripts/check-reference-docs.py --examples          also require a code example on each
    scripts/check-reference-docs.py --allow 'Tempo/Debouncer/cancel()' ...
    TEMPO_REFERENCE_DOCS_ALLOW='Tempo/Debouncer/cancel() ...' scripts/check-reference-docs.py

A symbol is named `Module/Path/title`, as in the report (overloads share the name).
`--allow` and TEMPO_REFERENCE_DOCS_ALLOW (names separated by whitespace) list symbols whose
gaps are reported but not counted as failures: a way to land a branch while another branch
fixes those symbols. CI passes neither; an allowed name that matches nothing, or a symbol that
no longer lacks anything, is reported so the list can be emptied.

Not checked, each for a reason:

- Symbols Swift synthesizes from another module's protocol extension (their precise
  identifier contains `::SYNTHESIZED::`: `!=` from Equatable, `...` from Comparable,
  `Clock.measure`, `Actor.assertIsolated`...): they are declared, and documented, in the
  standard library; DocC shows that documentation, and this package has no source to put a
  comment on.
- Symbols the compiler declares implicitly (no source location in the graph: a raw-value
  enum's `init(rawValue:)`, `hashValue`, `hash(into:)`): there is no declaration to comment
  either; their meaning is the protocol's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GRAPHS = ROOT / ".build" / "docs" / "symbol-graphs"
MODULES = ("Tempo", "TempoTesting")

# Kinds whose declarations take parameters and may return or throw.
CALLABLE_KINDS = {
    "swift.func",
    "swift.func.op",
    "swift.method",
    "swift.type.method",
    "swift.init",
    "swift.subscript",
    "swift.type.subscript",
}
VOID_RETURNS = {"", "()", "Void"}

FENCE = re.compile(r"^\s*(```|~~~)")
BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
PARAMETERS_HEADER = re.compile(r"^parameters\s*:\s*$", re.IGNORECASE)
PARAMETER_SINGLE = re.compile(r"^parameter\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", re.IGNORECASE)
NAMED_ITEM = re.compile(r"^`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:\s*(.*)$")
RETURNS = re.compile(r"^returns\s*:\s*(.*)$", re.IGNORECASE)
THROWS = re.compile(r"^throws\s*:\s*(.*)$", re.IGNORECASE)


class DocComment:
    """What a doc comment documents: its summary, parameters, Returns and Throws."""

    def __init__(self, lines: list[str]):
        self.has_summary = False
        self.parameters: dict[str, bool] = {}  # name -> has text
        self.returns = False
        self.throws = False
        self.has_example = any(FENCE.match(line) for line in lines)
        self._parse(lines)

    def _parse(self, lines: list[str]) -> None:
        in_fence = False
        # Inside `- Parameters:`: the header's indentation, and the parameter whose text
        # continues on the next lines.
        block_indent: int | None = None
        current: str | None = None
        for raw in lines:
            if FENCE.match(raw):
                in_fence = not in_fence
                current = None
                continue
            if in_fence:
                continue
            text = raw.rstrip()
            if not text.strip():
                current = None
                continue
            if not self.has_summary and not BULLET.match(text):
                self.has_summary = True
            bullet = BULLET.match(text)
            if bullet:
                indent, body = len(bullet.group(1)), bullet.group(2).strip()
                if block_indent is not None and indent > block_indent:
                    item = NAMED_ITEM.match(body)
                    if item:
                        current = item.group(1)
                        self.parameters[current] = bool(item.group(2).strip())
                        continue
                block_indent = None
                current = None
                if PARAMETERS_HEADER.match(body):
                    block_indent = indent
                    continue
                single = PARAMETER_SINGLE.match(body)
                if single:
                    current = single.group(1)
                    self.parameters[current] = bool(single.group(2).strip())
                    continue
                returns = RETURNS.match(body)
                if returns:
                    self.returns = True
                    continue
                if THROWS.match(body):
                    self.throws = True
                continue
            # A continuation line: it gives text to a parameter whose bullet had none.
            if current is not None:
                self.parameters[current] = True
            elif block_indent is not None and len(text) - len(text.lstrip()) <= block_indent:
                block_indent = None


def symbol_name(module: str, symbol: dict) -> str:
    return "/".join([module] + symbol["pathComponents"])


def source_location(symbol: dict) -> str | None:
    location = symbol.get("location")
    if not location:
        return None
    path = Path(unquote(urlparse(location["uri"]).path))
    try:
        path = path.relative_to(ROOT)
    except ValueError:
        pass
    return f"{path}:{location['position']['line'] + 1}"


def source_order(symbol: dict) -> tuple[str, int]:
    location = symbol.get("location")
    if not location:
        return ("", 0)
    return (location["uri"], location["position"]["line"])


def exemption(symbol: dict) -> str | None:
    if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
        return "synthesized from another module's protocol extension"
    if not symbol.get("location"):
        return "declared implicitly by the compiler"
    return None


def parameter_names(parameter: dict) -> set[str]:
    names = {parameter["name"]}
    if parameter.get("internalName"):
        names.add(parameter["internalName"])
    return names - {"_"}


def fragments_text(fragments: list[dict]) -> str:
    return "".join(fragment["spelling"] for fragment in fragments).strip()


def gaps(symbol: dict, examples: bool = False) -> list[str]:
    """What the symbol's page lacks; empty when it lacks nothing."""
    doc_lines = [line["text"] for line in symbol.get("docComment", {}).get("lines", [])]
    doc = DocComment(doc_lines)
    if not doc.has_summary:
        return ["a doc comment"] if not doc_lines else ["a summary"]
    missing: list[str] = []
    if examples and not doc.has_example:
        missing.append("an example")
    if symbol["kind"]["identifier"] not in CALLABLE_KINDS:
        return missing
    signature = symbol.get("functionSignature", {})
    parameters = signature.get("parameters", [])
    undocumented = []
    known: set[str] = set()
    for parameter in parameters:
        names = parameter_names(parameter)
        known |= names
        if not any(doc.parameters.get(name) for name in names):
            undocumented.append(parameter.get("internalName") or parameter["name"])
    if undocumented:
        missing.append("parameter docs for " + ", ".join(undocumented))
    unknown = sorted(set(doc.parameters) - known)
    if unknown:
        missing.append("no docs for parameters it does not have: " + ", ".join(unknown))
    declaration = symbol.get("declarationFragments", [])
    throws = any(
        fragment["kind"] == "keyword" and fragment["spelling"] in ("throws", "rethrows")
        # A `throws` inside a closure parameter's type is not the function's own.
        for fragment in top_level_fragments(declaration)
    )
    if throws and not doc.throws:
        missing.append("Throws")
    returns = fragments_text(signature.get("returns", []))
    if symbol["kind"]["identifier"] != "swift.init" and returns not in VOID_RETURNS:
        if not doc.returns:
            missing.append("Returns")
    return missing


def top_level_fragments(fragments: list[dict]) -> list[dict]:
    """The declaration's fragments outside its parameter list's parentheses."""
    depth = 0
    kept = []
    for fragment in fragments:
        if fragment["kind"] == "text":
            for char in fragment["spelling"]:
                if char == "(":
                    depth += 1
                elif char == ")":
                    depth -= 1
            continue
        if depth == 0:
            kept.append(fragment)
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=Path, default=DEFAULT_GRAPHS)
    parser.add_argument("--allow", nargs="*", default=[], metavar="NAME")
    parser.add_argument("--examples", action="store_true", help="require a code example too")
    args = parser.parse_args()

    allowed = set(args.allow) | set(os.environ.get("TEMPO_REFERENCE_DOCS_ALLOW", "").split())
    allowed_seen: set[str] = set()
    failures: list[str] = []
    allowed_reports: list[str] = []
    exempt = 0
    checked = 0
    for module in MODULES:
        path = args.graphs / f"{module}.symbols.json"
        if not path.exists():
            print(f"error: {path} is missing; run scripts/build-docs.sh first", file=sys.stderr)
            return 2
        # Public extensions of other modules' types go to `Module@Other.symbols.json`.
        extensions = sorted(args.graphs.glob(f"{module}@*.symbols.json"))
        symbols = [s for p in [path, *extensions] for s in json.loads(p.read_text())["symbols"]]
        for symbol in symbols:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if exemption(symbol):
                exempt += 1
                continue
            checked += 1
            name = symbol_name(module, symbol)
            missing = gaps(symbol, examples=args.examples)
            if name in allowed:
                allowed_seen.add(name)
            if not missing:
                continue
            line = f"{source_location(symbol)}: {name} lacks " + "; ".join(missing)
            report = (source_order(symbol), name, line)
            (allowed_reports if name in allowed else failures).append(report)

    for _, _, line in sorted(failures):
        print(f"error: {line}")
    for _, _, line in sorted(allowed_reports):
        print(f"allowed: {line}")
    allowed_names = {name for _, name, _ in allowed_reports}
    for name in sorted(allowed - allowed_names):
        reason = "matches no symbol" if name not in allowed_seen else "lacks nothing now"
        print(f"note: allowed name {name} {reason}; take it off the list")
    print(
        f"{checked} public symbols checked ({exempt} exempt), {len(failures)} lacking docs"
        + (f", {len(allowed_reports)} more allowed for now" if allowed_reports else "")
    )
    if failures:
        print(
            "Document every parameter (`- Parameters:`), `- Returns:` for a non-Void result and"
            " `- Throws:` for a throwing one, and give every public symbol a summary.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
