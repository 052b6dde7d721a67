#!/usr/bin/env python3
"""Fails when the modules of a crate (or of a module folder) import each other in a loop.

For each crate under crates/ and xtask/, every `.rs` file under `src/` is a module, named by its
path (`commands/hook.rs` is `commands::hook`, a `mod.rs` names its folder). A module depends on
the modules it names through `crate::` (or `super::`, resolved against its parent) in any form:
`use crate::a::b`, `crate::{a, b::c}`, `crate::a::f()`. The crate root (`lib.rs`, `main.rs`) only
declares modules and is left out. A cycle in this graph is printed and the exit code is 1.
"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return tuple(parts)


def named_paths(text: str, prefix: str):
    """Every path written after `prefix::`, braces expanded."""
    paths = []
    for match in re.finditer(re.escape(prefix) + r"::(\{[^;]*?\}|[A-Za-z_][\w:]*)", text):
        body = match.group(1)
        if body.startswith("{"):
            for item in re.split(r",(?![^{]*\})", body[1:-1]):
                item = item.strip()
                if item:
                    paths.append(re.split(r"::\{", item)[0].split("::"))
        else:
            paths.append(body.split("::"))
    return paths


def graph(src: Path):
    modules = {module_of(src, f): f for f in src.rglob("*.rs")}
    roots = {("lib",), ("main",)}
    edges = {m: set() for m in modules if m not in roots}
    for module in edges:
        text = modules[module].read_text()
        text = re.sub(r"//.*", "", text)
        for prefix, base in (("crate", ()), ("super", module[:-1])):
            for path in named_paths(text, prefix):
                path = [p.strip() for p in path if p.strip()]
                # The longest module path named.
                for length in range(len(path), 0, -1):
                    target = base + tuple(path[:length])
                    if target in edges and target != module:
                        # A module depends on its own submodules by declaring them: not an import.
                        if target[: len(module)] != module:
                            edges[module].add(target)
                        break
    return edges


def cycles(edges):
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def main() -> int:
    failed = False
    for src in sorted(list(ROOT.glob("crates/*/src")) + [ROOT / "xtask/src"]):
        for cycle in cycles(graph(src)):
            failed = True
            names = " -> ".join("::".join(m) for m in cycle)
            print(f"{src.parent.relative_to(ROOT)}: import cycle: {names}")
    if not failed:
        print("no import cycles")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
