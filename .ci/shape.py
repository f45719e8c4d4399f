#!/usr/bin/env python3
"""Checks the shape ARCHITECTURE.md asks of `src/`: no function longer than
80 lines (a message table excepted); no two public or crate-visible
types of one name (those named by their module excepted, as each layer's
`ResponseFuture`); the types with one owner keep their fields private
to the module that owns them, so that every read and write of them goes
through that module's own code; and a field, a tuple struct's too, is
visible to the whole crate only in what the router hands a handler; and
ARCHITECTURE.md names every file of `src/`, and only files that are there;
and the fields visible beyond their type stay within their budget.
Exits 1, naming what breaks a rule."""

import collections
import pathlib
import re
import sys

LONGEST = 80
# (file, function): long by nature.
LONG_ALLOWED = {("router/setup/error.rs", "fmt")}  # RouteError's messages, one arm each
# Named in their modules: each layer's `ResponseFuture` (as tower-http
# names them), and a module's `Error` (`de::Error`, `ws::Error`, as std's
# `io::Error` and `fmt::Error`).
SAME_NAME_ALLOWED = {"ResponseFuture", "Error"}

# (file, type): data with one owner, read and written only by its module
# and the modules below it.
OWNED = {
    ("router/request/compiled/mod.rs", "CompiledRouter"),
    ("router/request/compiled/mod.rs", "Tables"),
    ("router/request/compiled/mod.rs", "ModuleState"),
    ("router/request/compiled/change.rs", "ModuleParts"),
    ("router/request/pipeline/mod.rs", "Pipeline"),
    ("router/request/table/mod.rs", "Table"),
}

# Files whose fields may be visible to the whole crate: what the router
# hands a handler and its extractors (`RouteContext`, `Extraction`,
# `Needs`, `RouteInfo`), a service mounted as a handler, a handler's
# error for the monitors. Any other field is visible no wider than the
# modules that read it (`pub(super)`, `pub(in crate::router)`).
CRATE_FIELDS_ALLOWED = {
    "handler/extract/mod.rs",
    "handler/layered.rs",
    "handler/mounted.rs",
    "handler/response.rs",
}

src = pathlib.Path(__file__).resolve().parent.parent / "src"
failures = []
# Every field visible beyond its type (`pub(super)`, `pub(in …)`,
# `pub(crate)`), a tuple struct's too: (file, line, what, visibility).
visible_fields = []
for path in sorted(src.rglob("*.rs")):
    name = str(path.relative_to(src))
    for number, line in enumerate(path.read_text().split("\n"), 1):
        field = re.match(r"\s+(pub\([^)]*\)) (?:r#)?(\w+):", line)
        if field:
            visible_fields.append((name, number, f"field `{field.group(2)}`", field.group(1)))
        # A tuple struct's fields, on the line that declares it.
        tuple_struct = re.match(r"\s*(?:pub(?:\([^)]*\))? )?struct (\$?\w+)\b[^({;]*\((.*)\)", line)
        if tuple_struct:
            for visibility in re.findall(r"pub\([^)]*\)", tuple_struct.group(2)):
                visible_fields.append((name, number, f"a field of `{tuple_struct.group(1)}`", visibility))
for name, number, what, visibility in visible_fields:
    if visibility == "pub(crate)" and name not in CRATE_FIELDS_ALLOWED:
        failures.append(f"src/{name}:{number}: {what} is visible to the whole crate: narrow it to its readers")
for name, type_name in sorted(OWNED):
    text = (src / name).read_text()
    found = re.search(r"^(?:pub(?:\([^)]*\))? )?struct " + type_name + r"\b[^{;]*\{(.*?)^\}", text, re.S | re.M)
    if found is None:
        failures.append(f"src/{name}: `{type_name}` is not defined here any more: update OWNED")
        continue
    for field in re.finditer(r"^\s+pub(?:\([^)]*\))? (\w+):", found.group(1), re.M):
        failures.append(f"src/{name}: `{type_name}.{field.group(1)}` is visible outside its module: its owner reads and writes it")
visible = collections.defaultdict(set)
for path in sorted(src.rglob("*.rs")):
    name = str(path.relative_to(src))
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        found = re.match(r"(?:pub|pub\(crate\)) (?:struct|enum|trait|type) (\w+)", line.lstrip())
        if found:
            visible[found.group(1)].add(name)
        function = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)", line)
        if not function or line.rstrip().endswith(";"):
            continue
        depth, started, end = 0, False, i
        while end < len(lines):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', lines[end])
            code = re.sub(r"'(\\.|[^'\\])'", "''", code).split("//")[0]
            for ch in code:
                if ch == "{":
                    depth, started = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if (started and depth == 0) or (not started and code.rstrip().endswith(";")):
                break
            end += 1
        length = end - i + 1
        if started and length > LONGEST and (name, function.group(1)) not in LONG_ALLOWED:
            failures.append(f"src/{name}:{i + 1}: `{function.group(1)}` is {length} lines (at most {LONGEST})")
for type_name, files in sorted(visible.items()):
    if len(files) > 1 and type_name not in SAME_NAME_ALLOWED:
        failures.append(f"`{type_name}` is defined in {', '.join(sorted(files))}: one name, one thing")

# Fields visible beyond their type (`pub(super)`, `pub(in …)`,
# `pub(crate)`; a tuple struct's too), counted over the crate: a record
# read by other modules is built and read through its own functions where
# it can be, so the count only falls. A change that must add one raises
# the budget in the same commit, saying why.
VISIBLE_FIELDS_AT_MOST = 69
if len(visible_fields) > VISIBLE_FIELDS_AT_MOST:
    failures.append(
        f"{len(visible_fields)} fields are visible beyond their type, over the budget of "
        f"{VISIBLE_FIELDS_AT_MOST}: build and read the new ones through their type's functions"
    )

# ARCHITECTURE.md names every file of `src/`, and only files that are there:
# by a path ending in its folder and name (`setup/builder.rs`), by its name
# in a table row whose first cells name its folder (`ws/` … `codec.rs`), or,
# for a file at the top of `src/`, by its name alone.
architecture = (src.parent / "ARCHITECTURE.md").read_text()
files = {str(path.relative_to(src)) for path in src.rglob("*.rs")}
folders = {str(path.relative_to(src)) + "/" for path in src.rglob("*") if path.is_dir()}
OUTSIDE = ("tests/", "fuzz/", "benches/", "examples/", "macros/", ".ci/")
named = set()
for line in architecture.split("\n"):
    cells = line.split(" | ") if line.startswith("|") else [line]
    row_folders = [
        folder
        for token in re.findall(r"`([\w/]+/)`", " ".join(cells[:2]))
        for folder in folders
        if ("/" + folder).endswith("/" + token)
    ]
    for token in re.findall(r"`([\w/.]+\.rs)`", line):
        token = token.removeprefix("src/")
        if token.startswith(OUTSIDE):
            continue
        if "/" in token:
            found = {f for f in files if ("/" + f).endswith("/" + token)}
        elif token == "mod.rs" and not row_folders:
            continue  # any module's
        elif row_folders:
            found = ({folder + token for folder in row_folders} & files) or ({token} & files)
        else:
            found = {token} & files
        if not found:
            failures.append(f"ARCHITECTURE.md names `{token}`, which is no file of src/ (in: {line[:60]}…)")
        named |= found
for name in sorted(files - named):
    failures.append(f"src/{name} is named nowhere in ARCHITECTURE.md: give it a row")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
