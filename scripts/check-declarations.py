#!/usr/bin/env python3
"""Fails when a rendered declaration shows a parameter without a type.

Reads every page of a built DocC archive (its render JSON under data/) and, in each
declaration a reader sees (the page's own declarations, its title, and the one-line
declarations of the symbols its topics and See Also list), splits the parameter clause into
its parameters and checks that each names at least one type. A parameter spelled
`operation: nonisolated(nonsending))`, a label and an attribute with the closure type lost,
fails; so would any other fragment that leaves a type out.

    scripts/check-declarations.py .build/docs/Tempo.doccarchive

Exit status: 0 when every parameter has a type (it says how many declarations it read), 1
when one does not (each named with its page), 2 on bad usage.
"""

import glob
import json
import os
import sys

OPEN, CLOSE = "(<[", ")>]"


def parameters(tokens):
    """The parameters of a declaration's first parameter clause, each as the list of its
    tokens' kinds and its text; [] when it has none (a property, a type, a case)."""
    chars = []  # (character, kind of its token)
    for token in tokens:
        chars.extend((char, token.get("kind")) for char in token.get("text", ""))
    # The clause opens at the first `(` at depth 0 after the name: generic parameters come
    # first, in `<>`.
    depth, start, seen_name = 0, None, False
    for index, (char, kind) in enumerate(chars):
        if kind in ("identifier", "keyword") and char.isalnum():
            seen_name = True
        if char == "<":
            depth += 1
        elif char == ">" and depth > 0 and (index == 0 or chars[index - 1][0] != "-"):
            depth -= 1
        elif char == "(" and depth == 0 and seen_name:
            start = index
            break
    if start is None:
        return []
    result, current, depth = [], [], 0
    for index in range(start + 1, len(chars)):
        char, kind = chars[index]
        arrow = char == ">" and chars[index - 1][0] == "-"
        if char in OPEN:
            depth += 1
        elif char in CLOSE and not arrow:
            if depth == 0:
                result.append(current)
                break
            depth -= 1
        elif char == "," and depth == 0:
            result.append(current)
            current = []
            continue
        current.append((char, kind))
    return [
        ({kind for _, kind in parameter}, "".join(char for char, _ in parameter).strip())
        for parameter in result
        if "".join(char for char, _ in parameter).strip()
    ]


def untyped(tokens):
    """The parameters of `tokens` that name no type."""
    return [text for kinds, text in parameters(tokens) if "typeIdentifier" not in kinds]


def main():
    if len(sys.argv) != 2 or not os.path.isdir(os.path.join(sys.argv[1], "data")):
        print(__doc__, file=sys.stderr)
        return 2
    problems, read = [], 0
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "data", "**", "*.json"),
                                 recursive=True)):
        with open(path, encoding="utf-8") as file:
            page = json.load(file)
        name = os.path.relpath(path, os.path.join(sys.argv[1], "data"))
        shown = []
        for section in page.get("primaryContentSections", []):
            for declaration in section.get("declarations", []):
                shown.append(("declaration", declaration.get("tokens", [])))
        shown.append(("title", page.get("metadata", {}).get("fragments", [])))
        for reference in page.get("references", {}).values():
            shown.append((f"listed {reference.get('title', '?')}", reference.get("fragments", [])))
        for where, tokens in shown:
            if not tokens:
                continue
            read += 1
            for text in untyped(tokens):
                line = "".join(token.get("text", "") for token in tokens)
                problems.append(f"{name}: {where}: parameter `{text}` has no type in `{line}`")
    for problem in sorted(set(problems)):
        print("error: " + problem, file=sys.stderr)
    if problems:
        print(f"declarations: {len(set(problems))} parameters without a type", file=sys.stderr)
        return 1
    print(f"declarations: every parameter has a type ({read} declarations read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
