#!/usr/bin/env python3
"""The worker's layers, held against its imports: a module may use the modules of the
layers below its own, never one above or beside it; only the composition root sees
`Worker`. Exits 1 with each import that breaks a rule (file, line, what it names).

Reads `use crate::…` and `crate::…` paths in worker/src, test code left out (files named
*_tests.rs and what follows a `#[cfg(test)]` module). docs/architecture.md draws the same
layers.
"""

import re
import sys
from pathlib import Path

# From the ground up. A top-level module of worker/src (a file or a folder) is one room.
LAYERS = [
    ["time_fmt", "uri", "digest", "background", "errors", "paths", "question"],
    ["stores"],
    ["config", "events"],
    ["models"],
    ["shared"],
    ["index"],
    ["retrieval", "status"],
    ["reads"],
    ["evidence", "write", "model_api"],
    ["answer"],
    ["app"],
    ["dispatch", "server"],
]
# The rooms that may name the whole worker.
ROOT = {"app", "dispatch", "server", "lib"}

SRC = Path(__file__).resolve().parent.parent / "worker" / "src"
LEVEL = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


def room_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".rs")


def code_of(text: str) -> str:
    """The text without its test module and comments (a doc comment may name anything)."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\(crate\))?\s+)?mod \w+\s*\{", text, re.M)
    if cut:
        text = text[: cut.start()]
    return re.sub(r"//[^\n]*", "", text)


def used_rooms(code: str):
    """(line, room) for each `crate::room` path and each room of a `use crate::{…}` group."""
    for m in re.finditer(r"\bcrate::(\{[^;]*?\}|\w+)", code):
        line = code.count("\n", 0, m.start()) + 1
        target = m.group(1)
        if target.startswith("{"):
            depth, name, names = 0, "", []
            for ch in target[1:-1]:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    names.append(name)
                    name = ""
                    continue
                if depth == 0 and ch not in "{}":
                    name += ch
            names.append(name)
            for n in names:
                head = n.strip().split("::")[0].split(" ")[0]
                if head:
                    yield line, head
        else:
            yield line, target


def main() -> int:
    broken = []
    for path in sorted(SRC.rglob("*.rs")):
        if path.name.endswith("_tests.rs"):
            continue
        room = room_of(path)
        if room == "lib":
            continue
        if room not in LEVEL:
            broken.append(f"{path.relative_to(SRC.parent.parent)}: the room `{room}` is on no layer (scripts/layers.py)")
            continue
        code = code_of(path.read_text(encoding="utf-8"))
        for line, used in used_rooms(code):
            where = f"{path.relative_to(SRC.parent.parent)}:{line}"
            if used in ("Worker", "WorkerError") and room not in ROOT:
                broken.append(f"{where}: `{room}` names the whole worker (`{used}`): only {sorted(ROOT)} may")
            elif used in LEVEL and used != room and LEVEL[used] >= LEVEL[room]:
                how = "beside" if LEVEL[used] == LEVEL[room] else "above"
                broken.append(f"{where}: `{room}` uses `{used}`, a layer {how} it")
    for b in broken:
        print(b)
    if broken:
        print(f"{len(broken)} import(s) break the worker's layers", file=sys.stderr)
        return 1
    print(f"worker layers: {sum(len(r) for r in LAYERS)} rooms on {len(LAYERS)} layers, no import runs up or sideways")
    return 0


if __name__ == "__main__":
    sys.exit(main())
