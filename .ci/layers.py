#!/usr/bin/env python3
"""Checks the layering ARCHITECTURE.md states: a module imports (`use
crate::…`, or a `crate::…::` path) only modules of its own layer or lower
ones, and imports an item from the module that defines it, not through the
crate root's re-exports; and the router's request time (`router/request/`)
imports nothing of its setup time (`router/setup/`). Exits 1, naming each import that breaks a rule,
when one does."""

import pathlib
import re
import sys

# The layers, lowest first: each module of `src/` by its first path segment.
LAYERS = [
    ("vocabulary", {"step", "body", "head", "params", "clock", "panic", "log", "hook", "shares", "shutdown", "upgrade"}),
    # A WebSocket route's handler and socket are a step, as a handler is:
    # the router registers and runs them.
    ("steps", {"handler", "ws"}),
    ("layers", {"prefix", "postfix", "monitor", "error_handling", "middleware"}),
    ("router", {"router"}),
    ("serving", {"serve", "sse", "__private", "private"}),
    # Documentation only.
    ("guides", {"from_axum"}),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
# What the crate root re-exports, by the module that defines it.
ROOT = {
    "Body": "body", "BoxError": "body", "Step": "step", "RequestHead": "head",
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
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
