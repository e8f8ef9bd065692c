#!/usr/bin/env python3
"""Compiles every Swift code example of the documentation against Tempo.

Examples are the ```swift blocks of README.md and Docs/**/*.md, and the ```swift blocks in
`///` doc comments under Sources/Tempo, Sources/TempoTesting and Sources/TempoRedis. The script
writes a scratch Swift package (.build/snippets, never committed) that depends on this
repository by path (products Tempo, TempoTesting and TempoRedis), puts every example in it,
builds it, and reports each failing example by its own file and line with the compiler's error.

How an example is compiled (see CONTRIBUTING.md, "Code examples compile"):

  * Statements (the usual case) become the body of a function of their own,
    `@MainActor private func snippet_…() async throws { ... }`, so `try`, `await` and
    main-actor code work, and declarations in it are local to it: two examples may declare the
    same name. An example that uses `self` becomes a method of `Screen` instead (a stub
    main-actor class).
  * Top-level declarations (`@Test`, `@Suite`, `protocol`, `extension`, an access modifier at
    column 0) stay at file scope, in a file of their own. They are visible to the other
    examples of the same document and to no other: a Markdown document that has any is a
    module of its own (the others share one).
  * Package.swift fragments (`.package(...)`, `.target(...)`, `.product(...)`, `platforms:`,
    a whole manifest) are type-checked as a manifest (`swift package dump-package`).
  * `@testable import App` in a test block stands for the app the page builds: a test target
    needs it, and here the page's own declarations are compiled in the same module, so the
    line is left out.
  * Names an example uses without declaring them (`api`, `store`, `draft`, `search(_:)`, ...)
    come from scripts/snippet-stubs.swift. A Markdown example sees only the names listed in an
    HTML comment right before its block, `<!-- snippet-context: api, draft -->`; a doc-comment
    example sees all of them (one under Sources/TempoRedis imports TempoRedis too). The same
    comment takes these words too:
      top-level | function | manifest   how to compile the block, when the guess is wrong
      import Foundation                 a module the example uses without importing it
      testable                          `@testable import Tempo`: internal API is visible
      excerpt Sources/Tempo/X.swift     the block quotes that file: each of its lines (but
                                        `...` and `// ...`) must appear there, in order
  * An example importing a Redis client (`import Valkey`, `import RediStack`, `import NIOCore`)
    gets that module from scripts/snippet-stubs-redis-clients.swift: stand-ins with the real
    packages' signatures and `fatalError()` bodies, one module each (`// snippet-module: Name`
    starts one), so that an adapter compiles as a user writes it, without fetching the clients.
  * An example importing a module that not every platform has (SwiftUI, UIKit, ...) is
    compiled under `#if canImport(...)`: only where the module exists.
  * Examples on a declaration that is not public (explicitly `package`, `internal`, `private`
    or `fileprivate`, or a top-level declaration without `public`) are not checked: they are
    not published and a client could not call what they show. They are listed.

Blocks that are not meant to compile (shell commands, printed output) take another language
tag: ```sh, ```text.

  scripts/check-snippets.py            generate, build, report (exit status 1 on a failure)
  scripts/check-snippets.py --list     list the examples and how each is compiled
  scripts/check-snippets.py --generate generate the scratch package only

Only the Python 3 standard library is used.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "scripts" / "snippet-stubs.swift"
# Stand-ins for the Redis clients an adapter example imports: a module per `// snippet-module:`.
CLIENT_STUBS = ROOT / "scripts" / "snippet-stubs-redis-clients.swift"
DEFAULT_SCRATCH = ROOT / ".build" / "snippets"
DOC_SOURCES = ["Sources/Tempo", "Sources/TempoTesting", "Sources/TempoRedis"]
HOST = "Screen"  # the stub type whose method an example that uses `self` becomes
# Modules every platform Tempo supports has; an example importing any other is compiled only
# where it exists. (The client stand-ins of CLIENT_STUBS are always there too.)
CORE_MODULES = {"Tempo", "TempoTesting", "TempoRedis", "Testing", "Foundation", "Synchronization",
                "Dispatch", "SnippetStubs", "_Concurrency", "Swift"}

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
DIRECTIVE = re.compile(r"<!--\s*snippet-context:(.*?)-->", re.S)
MODES = {"top-level", "function", "manifest"}
TOP_LEVEL_LINE = re.compile(
    r"^(@Test\b|@Suite\b|@main\b|protocol\s|extension\s|precedencegroup\b"
    r"|(public|open|package|internal|fileprivate|private)\s"
    r"|(prefix|postfix|infix)\s+operator\b)"
)
# A test block's import of the app it tests, as a separate test target writes it. The page's
# declarations are the app: they are compiled in the same module as its test blocks.
APP_IMPORT = "@testable import App"
IMPORT_LINE = re.compile(r"^\s*(@testable\s+|@_exported\s+)?import\s+\S")
MANIFEST_START = re.compile(r"^\s*(\.(package|target|testTarget|executableTarget|product|library|"
                            r"executable|macOS|iOS|tvOS|watchOS|visionOS)\(|"
                            r"(dependencies|targets|products|platforms|swiftLanguageModes):)")
DIAGNOSTIC = re.compile(r"^(.+?\.swift):(\d+):(\d+): (error|warning|note): (.*)$")
NON_PUBLIC_DECL = re.compile(
    r"^\s*((@\w+(\([^)]*\))?\s+)*)(package|internal|private|fileprivate)\b")
PUBLIC_DECL = re.compile(r"\b(public|open)\b")
STUB_DECL = re.compile(
    r"^(?:@\w+\s+)*public\s+(?:final\s+)?(let|var|func|struct|class|enum|protocol|actor|typealias)"
    r"\s+(\w+)", re.M)
ELISION = re.compile(r"^(\.\.\.|…|// *(\.\.\.|…))$")
# A type an example declares: `struct X`, `@MainActor final class X`, `actor X`, ...
TYPE_DECL = re.compile(
    r"^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|open|package|internal|fileprivate|private|final|nonisolated)\s+)*"
    r"(?:class|struct|enum|actor|protocol)\s+(\w+)")


@dataclass
class Block:
    source: str  # repository-relative path of the document or Swift file
    line: int  # 1-based line of the first line of code (after the opening fence)
    lines: list[str]  # the code, indentation of the fence (or the `/// `) removed
    columns: list[int]  # for each line, how many characters were removed before it
    kind: str  # "markdown" or "doc-comment"
    context: list[str] = field(default_factory=list)  # stub names listed in the directive
    imports: list[str] = field(default_factory=list)  # modules the directive imports
    testable: bool = False  # the directive says `testable`: internal API is visible
    excerpt: str = ""  # the directive says `excerpt <path>`: the block quotes that file
    mode: str = ""  # "function", "method", "top-level", "manifest", "excerpt"
    skip: str = ""  # why the block is not checked

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line - 1}"  # the opening fence's line

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


# MARK: Finding the examples


def markdown_files() -> list[Path]:
    files = [ROOT / "README.md"] if (ROOT / "README.md").exists() else []
    files += sorted((ROOT / "Docs").rglob("*.md")) if (ROOT / "Docs").exists() else []
    return files


def markdown_blocks(path: Path) -> list[Block]:
    rel = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = match.group(1), match.group(2), match.group(3).lower()
        start = i
        i += 1
        body: list[str] = []
        columns: list[int] = []
        while i < len(lines):
            stripped = lines[i].lstrip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            line = lines[i]
            cut = min(len(indent), len(line) - len(line.lstrip()))
            body.append(line[cut:])
            columns.append(cut)
            i += 1
        i += 1  # past the closing fence
        if language != "swift":
            continue
        block = Block(rel, start + 2, body, columns, "markdown")
        directive = directive_before(lines, start)
        if directive is not None:
            read_directive(block, directive)
        blocks.append(block)
    return blocks


def directive_before(lines: list[str], fence: int) -> str | None:
    """The text of a `<!-- snippet-context: ... -->` comment ending just above the fence."""
    j = fence - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    if j < 0 or not lines[j].rstrip().endswith("-->"):
        return None
    k = j
    while k >= 0 and "<!--" not in lines[k]:
        k -= 1
    match = DIRECTIVE.search("\n".join(lines[k:j + 1])) if k >= 0 else None
    return match.group(1) if match else None


def read_directive(block: Block, directive: str) -> None:
    words = [word for word in re.split(r"[\s,]+", directive.strip()) if word]
    while words:
        word = words.pop(0)
        if word in MODES:
            block.mode = word
        elif word == "testable":
            block.testable = True
        elif word == "import" and words:
            block.imports.append(words.pop(0))
        elif word == "excerpt" and words:
            block.mode, block.excerpt = "excerpt", words.pop(0)
        else:
            block.context.append(word)


def doc_comment_blocks(path: Path) -> list[Block]:
    rel = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    current: Block | None = None
    fence = ""
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        if not stripped.startswith("///"):
            if current is not None:  # the comment ended inside a block: take what there is
                if current.mode != "not swift":
                    blocks.append(current)
                current = None
            continue
        cut = len(line) - len(stripped) + 3
        if line[cut:cut + 1] == " ":
            cut += 1
        content = line[cut:]
        if current is None:
            match = FENCE.match(content)
            if match and match.group(1) == "":
                fence = match.group(2)
                current = Block(rel, number + 1, [], [], "doc-comment")
                current.mode = "" if match.group(3).lower() == "swift" else "not swift"
            continue
        if content.startswith(fence) and content.strip(fence[0]) == "":
            if current.mode != "not swift":
                blocks.append(current)
            current = None
            continue
        current.lines.append(content)
        current.columns.append(cut)
    for block in blocks:
        at = declaration_after(lines, block.line)
        if at is not None and not is_public(lines, at):
            block.skip = f"on a declaration that is not public: {lines[at].strip()}"
    return blocks


def declaration_after(lines: list[str], line: int) -> int | None:
    """The index of the first line of the declaration the doc comment holding `line` documents."""
    i = line - 1
    while i < len(lines) and lines[i].lstrip().startswith("///"):
        i += 1
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("@")
                              and not re.match(r"\s*@\w+(\([^)]*\))?\s+\w", lines[i])):
        i += 1
    return i if i < len(lines) else None


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def is_public(lines: list[str], at: int) -> bool:
    """Whether the declaration at `lines[at]` is public API (a rough reading, good enough for
    Tempo's formatting: one declaration per line, members indented under their type)."""
    declaration = lines[at]
    if NON_PUBLIC_DECL.match(declaration):
        return False
    if PUBLIC_DECL.search(declaration.split("{")[0]):
        return True
    if declaration.lstrip().startswith("extension"):
        return True
    if not declaration[:1].isspace():
        return False  # top level, no modifier: internal
    for i in range(at - 1, -1, -1):  # the enclosing type or extension
        line = lines[i]
        if line.strip() and indentation(line) < indentation(declaration) and re.search(
                r"\b(protocol|struct|class|enum|extension|actor)\s", line):
            encloser = line.split("{")[0]
            if re.search(r"\bprotocol\s", encloser) or re.match(r"\s*public\s+extension\b",
                                                                encloser):
                return bool(PUBLIC_DECL.search(encloser))
            if re.match(r"\s*(indirect\s+)?case\s", declaration):
                return bool(PUBLIC_DECL.search(encloser)) or encloser.lstrip().startswith(
                    "extension")
            return False
    return False


def all_blocks() -> list[Block]:
    blocks: list[Block] = []
    for path in markdown_files():
        blocks += markdown_blocks(path)
    for folder in DOC_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.swift")):
            blocks += doc_comment_blocks(path)
    for block in blocks:
        if not any(line.strip() for line in block.lines):
            block.skip = "empty"
            continue
        if not block.mode:
            block.mode = classify(block)
        if block.mode == "function" and re.search(r"\bself\b", block.text):
            block.mode = "method"
    return blocks


def classify(block: Block) -> str:
    code = [line for line in block.lines if line.strip() and not line.lstrip().startswith("//")]
    if code and (MANIFEST_START.match(code[0]) or any(
            "import PackageDescription" in line or re.match(r"\s*let package = Package\(", line)
            for line in code)):
        return "manifest"
    if any(TOP_LEVEL_LINE.match(line) for line in block.lines):
        return "top-level"
    # A Markdown example made of type declarations (a view model, a client) declares them for
    # the document: its other examples use those types, never a stub of the same name. One
    # that also has statements at column 0 (`let model = Model()`) stays a function body.
    outer = [line for line in code if not line[:1].isspace() and not IMPORT_LINE.match(line)
             and not re.match(r"^[})\]]", line) and not re.match(r"^@\w+(\([^)]*\))?$", line)]
    if block.kind == "markdown" and any(TYPE_DECL.match(line) for line in outer) and all(
            TYPE_DECL.match(line) or re.match(r"^(func|extension)\s", line) for line in outer):
        return "top-level"
    return "function"


def declared_types(block: Block) -> list[str]:
    """The types a block declares, at any depth."""
    names = []
    for line in block.lines:
        match = TYPE_DECL.match(line)
        if match and match.group(2) not in names:
            names.append(match.group(2))
    return names


def own_types_stubbed(group: list[Block]) -> Problems:
    """A document's examples use the document's own types: a stub of a type that the document
    declares would let an example compile against a model the reader never sees (a README test
    calling `model.textChanged` on a `SearchModel` whose README version has no such method)."""
    declared: dict[str, Block] = {}
    for block in group:
        for name in declared_types(block):
            declared.setdefault(name, block)
    problems: Problems = []
    for block in group:
        for name in block.context:
            if name in declared:
                problems.append((block, [
                    f"{block.where}: error: `{name}` is declared in this document, at "
                    f"{declared[name].where}: use that declaration, not the stub (drop `{name}` "
                    "from snippet-context)"]))
    return problems


# MARK: Excerpts


def check_excerpt(block: Block) -> list[str]:
    """What is wrong with a block that quotes a source file: each of its lines (elisions aside)
    must appear in the file, in the same order, whitespace at the ends aside."""
    path = ROOT / block.excerpt
    if not path.is_file():
        return [f"{block.where}: error: `excerpt {block.excerpt}`: no such file"]
    quoted = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    position = 0
    for index, line in enumerate(block.lines):
        wanted = line.strip()
        if not wanted or ELISION.match(wanted):
            continue
        try:
            position = quoted.index(wanted, position) + 1
        except ValueError:
            place = "at all" if wanted not in quoted else "after the lines quoted before it"
            return [f"{block.source}:{block.line + index}:1: error: this line is not in "
                    f"{block.excerpt} {place}", f"    {line}"]
    return []


# MARK: The scratch package


@dataclass
class ClientModule:
    """A stand-in for a Redis client's module (or one it exposes), from CLIENT_STUBS."""
    name: str
    settings: list[str] = field(default_factory=list)  # SwiftSetting expressions of its target
    lines: list[str] = field(default_factory=list)

    @property
    def dependencies(self) -> list[str]:
        """The other stand-ins it imports (`import NIOCore`, `import protocol Foundation.X`)."""
        others = {module.name for module in client_modules()} - {self.name}
        found = []
        for line in self.lines:
            if IMPORT_LINE.match(line):
                module = line.split("import", 1)[1].split()[-1].split(".")[0]
                if module in others and module not in found:
                    found.append(module)
        return found


CLIENT_MODULE = re.compile(r"^// snippet-module: (\w+)\s*$")
CLIENT_SETTING = re.compile(r"^// snippet-setting: (.+)$")


@functools.cache
def client_modules() -> tuple[ClientModule, ...]:
    """The modules of CLIENT_STUBS: `// snippet-module: Name` starts one (what comes before the
    first is the file's own comment), and each `// snippet-setting: <SwiftSetting>` line in it
    adds a setting to its target (`.swiftLanguageMode(.v5)`, as the real package builds it)."""
    if not CLIENT_STUBS.exists():
        return ()
    modules: list[ClientModule] = []
    for line in CLIENT_STUBS.read_text(encoding="utf-8").splitlines():
        start = CLIENT_MODULE.match(line)
        if start:
            modules.append(ClientModule(start.group(1)))
        elif modules:
            setting = CLIENT_SETTING.match(line)
            if setting:
                modules[-1].settings.append(setting.group(1).strip())
            modules[-1].lines.append(line)
    return tuple(modules)


def stub_kinds() -> dict[str, str]:
    """Each top-level name of the stubs file and its kind, for `import <kind> SnippetStubs.Name`."""
    kinds = {}
    for kind, name in STUB_DECL.findall(STUBS.read_text(encoding="utf-8")):
        kinds[name] = {"actor": "class"}.get(kind, kind)
    return kinds


def identifier(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")
    return name if not name[:1].isdigit() else "_" + name


@dataclass
class Generated:
    """A generated Swift file: its text, and for each of its lines the block and block line."""
    path: Path
    lines: list[str] = field(default_factory=list)
    origin: list[tuple[Block, int] | None] = field(default_factory=list)

    def add(self, line: str, origin: tuple[Block, int] | None = None) -> None:
        self.lines.append(line)
        self.origin.append(origin)

    def add_block(self, block: Block) -> None:
        for index, line in enumerate(block.lines):
            self.add("" if IMPORT_LINE.match(line) else line, (block, index))


def imports_of(blocks: list[Block]) -> list[str]:
    testable = "@testable " if any(b.testable for b in blocks) else ""
    found = [f"{testable}import Tempo", f"{testable}import TempoTesting"]
    if any(b.kind == "doc-comment" and b.source.startswith("Sources/TempoRedis/") for b in blocks):
        found.append(f"{testable}import TempoRedis")  # the module the example documents
    for block in blocks:
        for line in block.lines:
            statement = " ".join(line.split("//")[0].split())
            if statement == APP_IMPORT:
                continue  # the page's own module: its declarations are compiled with it
            if IMPORT_LINE.match(line) and statement not in found:
                found.append(statement)
        for module in block.imports:
            if f"import {module}" not in found:
                found.append(f"import {module}")
        if (re.search(r"#expect|#require|@Test\b|@Suite\b", block.text)
                and "import Testing" not in found):
            found.append("import Testing")
    return found


def platform_modules(blocks: list[Block]) -> list[str]:
    """Modules the examples import that not every platform has (SwiftUI, UIKit, ...)."""
    modules = []
    always = CORE_MODULES | {client.name for client in client_modules()}
    for line in imports_of(blocks):
        module = line.split("import", 1)[1].split()[-1].split(".")[0]
        if module not in always and module not in modules:
            modules.append(module)
    return modules


def header(file: Generated, blocks: list[Block], stub_imports: list[str]) -> None:
    sources = sorted({b.source for b in blocks})
    file.add(f"// Generated by scripts/check-snippets.py from {', '.join(sources)}. Do not edit.")
    guarded = platform_modules(blocks)
    if guarded:
        file.add("#if " + " && ".join(f"canImport({module})" for module in guarded))
    for line in imports_of(blocks) + stub_imports:
        file.add(line)
    file.add("")


def footer(file: Generated, blocks: list[Block]) -> None:
    if platform_modules(blocks):
        file.add("#endif")


def wrap(file: Generated, block: Block) -> None:
    name = f"snippet_{identifier(Path(block.source).stem)}_L{block.line - 1}"
    file.add(f"// {block.where}")
    first, last = (block, 0), (block, max(0, len(block.lines) - 1))
    if block.mode == "method":
        file.add(f"extension {HOST} {{ private func {name}() async throws {{", first)
    elif block.mode == "function":
        file.add(f"@MainActor private func {name}() async throws {{", first)
    file.add_block(block)
    if block.mode == "method":
        file.add("} }", last)
    elif block.mode == "function":
        file.add("}", last)
    file.add("")


def scoped_imports(block: Block, kinds: dict[str, str], problems: Problems) -> list[str]:
    names = list(block.context) + ([HOST] if block.mode == "method" else [])
    imports = []
    for name in names:
        if name not in kinds:
            problems.append((block, [f"{block.where}: error: `{name}` in snippet-context is not "
                                     f"declared in {STUBS.relative_to(ROOT)}"]))
            continue
        imports.append(f"import {kinds[name]} SnippetStubs.{name}")
    return imports


Problems = list[tuple[Block, list[str]]]  # what is wrong with a block, found before building


def generate(blocks: list[Block], scratch: Path) -> tuple[list[Generated], list[str], Problems]:
    """Writes the package; returns its files, its module names and the problems found."""
    kinds = stub_kinds()
    problems: Problems = []
    files: list[Generated] = []
    modules: list[str] = []
    sources = scratch / "Sources"
    checked = [b for b in blocks if not b.skip and b.mode not in ("manifest", "excerpt")]

    by_source: dict[str, list[Block]] = {}
    for block in checked:
        by_source.setdefault(block.source, []).append(block)

    def single(path: Path, block: Block, stub_imports: list[str]) -> None:
        file = Generated(path)
        header(file, [block], stub_imports)
        wrap(file, block)
        footer(file, [block])
        files.append(file)

    doc_comment_module = "DocComments"
    for source, group in by_source.items():
        if group[0].kind == "markdown":
            problems += own_types_stubbed(group)
            # A document with file-scope declarations is a module of its own, so that they
            # cannot clash with another document's; the others share one module (each module
            # costs a few seconds of compiler start-up).
            name = identifier(Path(source).with_suffix("").as_posix())
            own = any(b.mode == "top-level" for b in group)
            module = "Doc_" + name if own else "Docs"
            if module not in modules:
                modules.append(module)
            for block in group:  # a file each: each has its own scoped imports
                path = sources / module / f"{name}_L{block.line - 1:04d}.swift"
                single(path, block, scoped_imports(block, kinds, problems))
            continue
        base = identifier(Path(source).relative_to("Sources").with_suffix("").as_posix())
        alone = [b for b in group if b.mode == "top-level" or platform_modules([b])]
        shared = [b for b in group if b not in alone]
        if shared:
            file = Generated(sources / doc_comment_module / f"{base}.swift")
            header(file, shared, ["import SnippetStubs"])
            for block in shared:
                wrap(file, block)
            footer(file, shared)
            files.append(file)
        for block in alone:
            path = sources / doc_comment_module / f"{base}_L{block.line - 1:04d}.swift"
            single(path, block, ["import SnippetStubs"])
    if any(b.kind == "doc-comment" for b in checked):
        modules.append(doc_comment_module)

    write_package(scratch, modules)
    stub_file = Generated(sources / "SnippetStubs" / "Stubs.swift")
    for line in STUBS.read_text(encoding="utf-8").splitlines():
        stub_file.add(line)
    stub_files = [stub_file]
    for client in client_modules():
        client_file = Generated(sources / client.name / f"{client.name}.swift")
        client_file.add(f"// Generated by scripts/check-snippets.py from "
                        f"{CLIENT_STUBS.relative_to(ROOT)}. Do not edit.")
        for line in client.lines:
            client_file.add(line)
        stub_files.append(client_file)
    keep = {f.path for f in files + stub_files}
    for f in files + stub_files:
        write_if_changed(f.path, "\n".join(f.lines) + "\n")
    support = ["SnippetStubs"] + [client.name for client in client_modules()]
    if sources.exists():  # examples that are gone: their files and empty modules go too
        for path in sorted(sources.rglob("*.swift")):
            if path not in keep:
                path.unlink()
        for folder in sources.iterdir():
            if folder.is_dir() and folder.name not in modules + support:
                shutil.rmtree(folder)
    return files, modules, problems


def write_package(scratch: Path, modules: list[str]) -> None:
    tools = (ROOT / "Package.swift").read_text(encoding="utf-8").splitlines()[0]
    identity = ROOT.name.lower()
    products = ", ".join(f'.product(name: "{product}", package: "{identity}")'
                         for product in ["Tempo", "TempoTesting", "TempoRedis"])
    targets = [f'        .target(name: "SnippetStubs", dependencies: [{products}]),']
    clients = client_modules()
    for client in clients:  # the Redis clients' stand-ins: no Tempo, only each other
        dependencies = ", ".join(f'"{name}"' for name in client.dependencies)
        settings = ", ".join(client.settings)
        targets.append(f'        .target(name: "{client.name}", dependencies: [{dependencies}], '
                       f'swiftSettings: [{settings}]),')
    stand_ins = "".join(f'"{client.name}", ' for client in clients)
    for module in modules:
        targets.append(f'        .target(name: "{module}", '
                       f'dependencies: ["SnippetStubs", {stand_ins}{products}]),')
    manifest = "\n".join([
        tools,
        "// Generated by scripts/check-snippets.py: every code example of Tempo's documentation.",
        "import PackageDescription",
        "",
        "let package = Package(",
        '    name: "TempoSnippets",',
        "    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],",
        f"    dependencies: [.package(path: {swift_string(str(ROOT))})],",
        "    targets: [",
        *targets,
        "    ],",
        "    swiftLanguageModes: [.v6]",
        ")",
        "",
    ])
    write_if_changed(scratch / "Package.swift", manifest)


def swift_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_if_changed(path: Path, text: str) -> None:
    """Leaves an unchanged file alone, so that the next build is incremental."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# MARK: Package.swift fragments


def manifest_file(blocks: list[Block], scratch: Path) -> Generated:
    """One manifest holding every Package.swift fragment, each as a value of its own."""
    tools = (ROOT / "Package.swift").read_text(encoding="utf-8").splitlines()[0]
    file = Generated(scratch / "manifest" / "Package.swift")
    file.add(tools)
    file.add("import PackageDescription")
    file.add("")
    for number, block in enumerate(blocks):
        code = [line for line in block.lines if line.strip() and not line.lstrip().startswith("//")]
        first = code[0].lstrip() if code else ""
        whole = any("import PackageDescription" in line for line in block.lines) or any(
            re.match(r"\s*let package = Package\(", line) for line in block.lines)
        name = f"snippet{number}"
        file.add(f"// {block.where}")
        if whole:
            file.add(f"func {name}() {{")
            for index, line in enumerate(block.lines):
                line = re.sub(r"^(\s*)let package = ", r"\1_ = ", line)
                if "import PackageDescription" in line or line.startswith("// swift-tools-version"):
                    line = ""
                file.add(line, (block, index))
            file.add("}")
        else:
            kind = fragment_type(first)
            if kind:
                file.add(f"let {name}: [{kind}] = [")
                file.add_block(block)
                file.add("]")
            else:  # labelled arguments of Package(...)
                file.add(f'let {name} = Package(name: "Snippet{number}",')
                file.add_block(block)
                file.add(")")
        file.add("")
    file.add('let package = Package(name: "ManifestSnippets")')
    return file


def fragment_type(first: str) -> str:
    for prefixes, kind in [
        ((".package(",), "Package.Dependency"),
        ((".target(", ".testTarget(", ".executableTarget("), "Target"),
        ((".product(",), "Target.Dependency"),
        ((".library(", ".executable("), "Product"),
        ((".macOS(", ".iOS(", ".tvOS(", ".watchOS(", ".visionOS("), "SupportedPlatform"),
    ]:
        if first.startswith(prefixes):
            return kind
    return ""


# MARK: Building and reporting


def run(command: list[str], cwd: Path) -> tuple[int, str]:
    process = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    return process.returncode, process.stdout


Failures = dict[int, list[str]]  # by id(block): the lines to print


def build(scratch: Path, files: list[Generated], modules: list[str]
          ) -> tuple[Failures, list[str], dict[int, Block], bool]:
    """Builds the package. SwiftPM stops at the first module that fails, so a failing module is
    left out and the rest built again (incrementally) until every module is accounted for."""
    failures: Failures = {}
    failed: dict[int, Block] = {}
    other: list[str] = []
    remaining = list(modules)
    succeeded = False
    while True:
        status, output = run(["swift", "build", "--package-path", str(scratch),
                              "-Xswiftc", "-diagnostic-style=llvm"], ROOT)
        more, more_other, more_failed = report(output, files)
        failures.update(more)
        failed.update(more_failed)
        other += [line for line in more_other if line not in other]
        if status == 0:
            succeeded = True
            break
        broken = {module_of(f.path, scratch) for f in files
                  if any(o is not None and id(o[0]) in more for o in f.origin)}
        left = [m for m in remaining if m not in broken]
        if not broken or left == remaining:
            if not more and not more_other:
                other.append(output.strip()[-4000:])
            break
        remaining = left
        write_package(scratch, remaining)
    write_package(scratch, modules)
    return failures, other, failed, succeeded


def module_of(path: Path, scratch: Path) -> str:
    return path.relative_to(scratch / "Sources").parts[0]


def report(output: str, files: list[Generated]) -> tuple[Failures, list[str], dict[int, Block]]:
    """Compiler errors by block (with their notes), and the errors outside any block."""
    by_path = {str(f.path.resolve()): f for f in files}
    failures: Failures = {}
    blocks: dict[int, Block] = {}
    other: list[str] = []
    seen: set[str] = set()
    last: int | None = None  # the block of the previous error, for its notes
    expanded: str | None = None  # an error inside a macro expansion, placed by its next note
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line)
        if not match:
            continue
        path, row, column, severity, message = match.groups()
        if severity == "warning":
            last = None
            continue
        file = by_path.get(str(Path(path).resolve()))
        origin = file.origin[int(row) - 1] if file and 0 < int(row) <= len(file.origin) else None
        if expanded is not None and (origin is None or severity != "note"):
            other.append(expanded)  # no note placed it in an example
            expanded = None
        if origin is None:
            if severity == "error" and "swift-generated-sources" in path:
                expanded = line
            elif severity == "error" and line not in seen:
                seen.add(line)
                other.append(line)
            last = None
            continue
        block, index = origin
        if severity == "note" and expanded is not None:  # "in expansion of macro ... here"
            inner = DIAGNOSTIC.match(expanded).group(5)
            severity, message, expanded = "error", f"{inner} (in this macro's expansion)", None
        elif severity == "note" and last != id(block):
            continue
        doc_line = block.line + index
        doc_column = int(column) + block.columns[index]
        text = f"{block.source}:{doc_line}:{doc_column}: {severity}: {message}"
        if text in seen:
            continue
        seen.add(text)
        failures.setdefault(id(block), []).append(text)
        blocks[id(block)] = block
        if severity == "error":
            failures[id(block)].append(f"    {block.lines[index]}")
            failures[id(block)].append("    " + " " * max(0, int(column) - 1) + "^")
            hint = missing_stub_hint(block, message)
            if hint:
                failures[id(block)].append(f"    {hint}")
        last = id(block)
    if expanded is not None:
        other.append(expanded)
    return failures, other, blocks


def missing_stub_hint(block: Block, message: str) -> str:
    match = re.match(r"cannot find (?:type )?'(\w+)' in scope", message)
    if not match or block.kind != "markdown":
        return ""
    name = match.group(1)
    if name in stub_kinds():
        return (f"hint: `{name}` is a stub in scripts/snippet-stubs.swift: list it in "
                f"`<!-- snippet-context: ... -->` right before the block")
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument("--generate", action="store_true", help="only write the scratch package")
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH,
                        help="where the scratch package goes (default .build/snippets)")
    args = parser.parse_args()
    scratch = args.scratch.resolve()

    blocks = all_blocks()
    if args.list:
        for block in blocks:
            state = f"skipped ({block.skip})" if block.skip else block.mode
            if block.excerpt:
                state += f" of {block.excerpt}"
            extra = block.context + [f"import {m}" for m in block.imports] + (
                ["testable"] if block.testable else [])
            context = f"  [{', '.join(extra)}]" if extra else ""
            print(f"{block.where}  {state}{context}")
        return 0

    started = time.monotonic()
    checked = [b for b in blocks if not b.skip]
    files, modules, problems = generate(blocks, scratch)
    manifests = [b for b in checked if b.mode == "manifest"]
    excerpts = [b for b in checked if b.mode == "excerpt"]
    manifest = manifest_file(manifests, scratch)
    write_if_changed(manifest.path, "\n".join(manifest.lines) + "\n")
    counts: dict[str, int] = {}
    for block in checked:
        group = "README.md" if block.source == "README.md" else (
            "Docs" if block.kind == "markdown" else "doc comments")
        counts[group] = counts.get(group, 0) + 1
    summary = ", ".join(f"{counts.get(g, 0)} in {g}" for g in ["README.md", "Docs", "doc comments"])
    print(f"check-snippets: {len(checked)} Swift examples ({summary}); "
          f"{len(manifests)} of them Package.swift fragments, {len(excerpts)} source excerpts")
    for block in blocks:
        if block.skip:
            print(f"  not checked: {block.where}, {block.skip}")
    if sys.platform != "darwin":
        for block in checked:
            modules_needed = platform_modules([block]) if block.mode not in (
                "manifest", "excerpt") else []
            if modules_needed:
                print(f"  compiled only where {', '.join(modules_needed)} exist"
                      f"{'s' if len(modules_needed) == 1 else ''}: {block.where}")
    for block in excerpts:
        wrong = check_excerpt(block)
        if wrong:
            problems.append((block, wrong))
    if args.generate:
        print(f"generated {scratch}")
        return 0

    failures, other, failed, succeeded = build(scratch, files, modules)
    if manifests:
        manifest_status, manifest_output = run(
            ["swift", "package", "--package-path", str(manifest.path.parent), "dump-package"],
            ROOT)
        more, more_other, more_failed = report(manifest_output, [manifest])
        failures.update(more)
        failed.update(more_failed)
        other += more_other
        if manifest_status != 0 and not more and not more_other:
            other.append(manifest_output.strip()[-4000:])
        succeeded = succeeded and manifest_status == 0
    elapsed = time.monotonic() - started

    for block, lines in problems:
        failures.setdefault(id(block), [])[0:0] = lines
        failed[id(block)] = block
    if succeeded and not failures and not other:
        print(f"check-snippets: all {len(checked)} examples compile ({elapsed:.0f} s)")
        return 0
    for key, lines in sorted(failures.items(),
                             key=lambda item: (failed[item[0]].source, failed[item[0]].line)):
        print(f"\n✗ the example at {failed[key].where} fails:")
        for line in lines:
            print(f"  {line}")
    if other:
        place = scratch.relative_to(ROOT) if scratch.is_relative_to(ROOT) else scratch
        print("\nerrors outside the examples (in scripts/snippet-stubs.swift, "
              "scripts/snippet-stubs-redis-clients.swift or the generated code around them, "
              f"under {place}):")
        for line in other:
            print(f"  {line}")
    print(f"\ncheck-snippets: {len(failures)} of {len(checked)} examples fail ({elapsed:.0f} s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
