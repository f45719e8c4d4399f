#!/usr/bin/env python3
"""Checks the layering ARCHITECTURE.md states: a module imports (`use
crate::…`, or a `crate::…::` path) only modules of its own layer or lower
ones, and imports an item from the module that defines it, not through the
crate root's re-exports; the router's request time (`router/request/`)
imports nothing of its setup time (`router/setup/`); and no two files
import each other, however far round (a file naming its own parent module,
which declares it, does not count; a re-export does not either); and a
file reaches one module's items by one path, where they are defined or
through a re-export, not both. Exits 1, naming each import that breaks a
rule, when one does."""

import pathlib
import re
import sys

# The layers, lowest first: each module of `src/` by its first path segment.
LAYERS = [
    ("vocabulary", {"step", "body", "head", "params", "clock", "panic", "log", "hook", "shares", "served", "shutdown", "upgrade_slots"}),
    # A WebSocket route's handler and socket are a step, as a handler is:
    # the router registers and runs them.
    ("steps", {"handler", "ws"}),
    ("layers", {"prefix", "postfix", "monitor", "error_handling", "middleware"}),
    # Serving runs any service: it imports nothing of routing, which tells
    # it what it must (`served.rs`).
    ("serving", {"serve", "sse", "__private", "private"}),
    ("router", {"router"}),
    # Documentation only.
    ("guides", {"from_axum"}),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
# What the crate root re-exports, by the module that defines it.
ROOT = {
    "Body": "body", "BoxError": "body", "Request": "body", "Response": "body", "Step": "step", "RequestHead": "head",
    "Exchange": "monitor", "Monitor": "monitor", "MonitorHook": "monitor",
    "MonitorLayer": "monitor", "IntoResponse": "handler", "Router": "router",
    "CompiledRouter": "router", "RouteError": "router", "Prefix": "prefix",
    "PrefixHook": "prefix", "PrefixLayer": "prefix", "Postfix": "postfix",
    "PostfixHook": "postfix", "PostfixLayer": "postfix", "HandleErrorLayer": "error_handling",
}

src = pathlib.Path(__file__).resolve().parent.parent / "src"
failures = []
for path in sorted(src.rglob("*.rs")):
    parts = path.relative_to(src).with_suffix("").parts
    if parts[0] in ("lib",):
        continue
    own = RANK.get(parts[0])
    if own is None:
        failures.append(f"{path.relative_to(src.parent)}: a module no layer lists")
        continue
    # Comments and docs may name any item: only code counts.
    text = "\n".join(
        "" if line.lstrip().startswith("//") else line for line in path.read_text().split("\n")
    )
    if parts[:2] == ("router", "request"):
        # Unit tests may build what they test.
        code = text.split("#[cfg(test)]\nmod tests")[0]
        for found in re.finditer(r"\bsetup::|\bsuper::super::", code):
            line = text[: found.start()].count("\n") + 1
            failures.append(
                f"{path.relative_to(src.parent)}:{line}: request time names setup time (`{found.group(0)}`)"
            )
    for root in re.finditer(r"crate::([A-Z][A-Za-z]*)\b(?!::)", text):
        line = text[: root.start()].count("\n") + 1
        failures.append(
            f"{path.relative_to(src.parent)}:{line}: `crate::{root.group(1)}` through the crate root: name its module"
        )
    for inline in re.finditer(r"crate::([A-Za-z_]+)::", text):
        name = inline.group(1)
        target = RANK.get(name)
        if target is not None and target > own:
            line = text[: inline.start()].count("\n") + 1
            failures.append(
                f"{path.relative_to(src.parent)}:{line}: `{parts[0]}` ({LAYERS[own][0]}) names `crate::{name}` ({LAYERS[target][0]})"
            )
    for block in re.finditer(r"^\s*(?:pub(?:\([a-z]+\))? )?use crate::(\{.*?\}|[^;]*);", text, re.S | re.M):
        body = block.group(1)
        names = re.findall(r"(?:^|[{,\s])([A-Za-z_]+)(?=::|\s*[,}]|$)", body.strip("{}"))
        top = body.strip("{}")
        depth, item, items = 0, "", []
        for ch in top:
            depth += ch == "{"
            depth -= ch == "}"
            if ch == "," and depth == 0:
                items.append(item.strip())
                item = ""
            else:
                item += ch
        items.append(item.strip())
        for item in items:
            if item.split(" as ")[0] in ROOT:
                line = text[: block.start()].count("\n") + 1
                failures.append(
                    f"{path.relative_to(src.parent)}:{line}: `{item}` through the crate root: name its module"
                )
        for name in set(names):
            target = RANK.get(name, RANK.get(ROOT.get(name, ""), None))
            if target is not None and target > own:
                line = text[: block.start()].count("\n") + 1
                failures.append(
                    f"{path.relative_to(src.parent)}:{line}: `{parts[0]}` ({LAYERS[own][0]}) imports `{name}` ({LAYERS[target][0]})"
                )


def module_of(path):
    """`handler/extract` for `src/handler/extract/mod.rs`."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts) if parts != ["lib"] else ()


MODULES = {module_of(path): path for path in src.rglob("*.rs")}


def file_named(own, path):
    """The file of the module `path` (`crate::…`, `super::…`, `self::…`)
    names from the module `own`: its longest prefix that is a file."""
    segments = [segment for segment in path.split("::") if segment]
    if not segments:
        return None
    if segments[0] == "crate":
        full = segments[1:]
    elif segments[0] in ("super", "self"):
        full = list(own)
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                full = full[:-1]
            segments = segments[1:]
        full += segments
    else:
        return None
    for length in range(len(full), -1, -1):
        if tuple(full[:length]) in MODULES:
            return tuple(full[:length])
    return None


def use_paths(tree):
    """Every path of a `use` tree: `a::{b, c::d}` gives `a::b`, `a::c::d`."""
    tree = " ".join(tree.split())
    nested = re.match(r"^([A-Za-z_0-9:]*?)(?:::)?\{(.*)\}$", tree)
    if not nested:
        return [tree.split(" as ")[0].strip()]
    prefix, depth, item, items = nested.group(1), 0, "", []
    for ch in nested.group(2):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(item)
            item = ""
        else:
            item += ch
    items.append(item)
    return [
        f"{prefix}::{path}" if prefix else path
        for item in items
        if item.strip()
        for path in use_paths(item)
    ]


def imports_of(path):
    """The files `path` imports: its `use`s (not its re-exports) and the
    paths it names inline, without its tests, its comments and its own
    ancestors."""
    own = module_of(path)
    text = path.read_text().split("#[cfg(test)]\nmod tests")[0]
    text = "\n".join("" if line.lstrip().startswith("//") else line for line in text.split("\n"))
    text = re.sub(r"^\s*pub(\([^)]*\))?\s+use\s+[^;]*;", "", text, flags=re.S | re.M)
    named = [p for m in re.finditer(r"^\s*use\s+((?:crate|super|self)[^;]*);", text, re.S | re.M) for p in use_paths(m.group(1))]
    named += [m.group(1) for m in re.finditer(r"(?<![A-Za-z_:])((?:crate|super)(?:::[A-Za-z_0-9]+)+)", text)]
    found = {file_named(own, p) for p in named}
    return {f for f in found if f is not None and f != own and own[: len(f)] != f}


GRAPH = {module: imports_of(path) for module, path in MODULES.items()}


def circles():
    """The groups of files that import each other (Tarjan's components)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for other in GRAPH[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


for group in circles():
    members = set(group)
    for module in sorted(group):
        others = ", ".join("/".join(o) for o in sorted(GRAPH[module] & members))
        failures.append(f"src/{'/'.join(module)}: in a circle of imports, importing {others}")

# A file reaches the items of one module by one path: the module that
# defines them, or a re-export of them, not both (`super::{IntoResponse,
# response::internal_error}` names `response` twice over).
DEFINED = {}
for path in src.rglob("*.rs"):
    for found in re.finditer(
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+)*(?:struct|enum|trait|fn|type|const|static|macro_rules!)\s+(\w+)",
        path.read_text(),
        re.M,
    ):
        DEFINED.setdefault(found.group(1), set()).add(module_of(path))
for path in sorted(src.rglob("*.rs")):
    own, direct, reexported = module_of(path), {}, {}
    # A unit test module's `super` is its file's module: left out, as in
    # `imports_of`.
    code = path.read_text().split("#[cfg(test)]\nmod tests")[0]
    for found in re.finditer(r"^\s*use\s+((?:crate|super|self)::[^;]*);", code, re.M):
        for used in use_paths(found.group(1)):
            module, _, item = used.rpartition("::")
            at = file_named(own, module)
            if item in ("self", "*") or at is None:
                continue
            defined = DEFINED.get(item, set())
            if at in defined:
                direct.setdefault(at, set()).add(item)
                continue
            below = [other for other in defined if other[: len(at)] == at and other != at]
            if len(below) == 1:
                reexported.setdefault(below[0], set()).add(item)
    for module in sorted(direct.keys() & reexported.keys()):
        failures.append(
            f"{path.relative_to(src.parent)}: imports `{'/'.join(module)}` by two paths: "
            f"{', '.join(sorted(direct[module]))} where defined, "
            f"{', '.join(sorted(reexported[module]))} through a re-export"
        )

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
