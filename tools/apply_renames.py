"""Rewrite imports and dotted names after modules of cgpredict moved (tools/rename_map.txt).

Usage: ``python tools/apply_renames.py [FILE ...]`` from the repository root, after the
``git mv``s (default files: every tracked ``.py``, ``.md``, ``Makefile`` and ``.ci/run``).
tools/moved_names.txt lists the names that moved between modules when modules were split
(``kernel.analysis.loop_unroll_at`` -> ``kernel.launch.loop_unroll_at``);
an import of a private name made public keeps its local name (``import x as _x``).

* Python imports (``from .tracefile import Trace``, ``from cgpredict import cache as c``,
  ``from . import sandbox, tempdirs``) are resolved, mapped and written back, relative ones
  relative to where the file is now. An import that already resolves in the current tree
  (the module exists and defines every imported name) is left alone, so the script can be run
  again, and on files that mix old and new imports (another branch's code merged in).
* Everywhere else (strings, comments, docs): ``cgpredict.old`` -> ``cgpredict.new`` and
  ``cgpredict/old.py`` -> ``cgpredict/new/path.py``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"cgpredict": "cgpredict", "instrument": "cgpredict.instrument",
            "runtime": "cgpredict.runtime"}


def read_map(name: str = "rename_map.txt") -> dict[str, str]:
    """old dotted name -> new dotted name, from a file of tools/ (modules: rename_map.txt;
    names moved between modules: moved_names.txt)."""
    path = ROOT / "tools" / name
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split() for line in lines if line.strip() and not line.startswith("#"))


def module_files() -> dict[str, Path]:
    """Every module of the package as it is now, by dotted name."""
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def top_names(path: Path) -> set[str]:
    """Names a module defines or imports at its top level (what ``from m import x`` finds)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        targets = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, (ast.If, ast.Try)):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for t in targets:
            names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


class Tree:
    """The modules of the current tree and the rename map."""

    def __init__(self) -> None:
        self.files = module_files()
        self.renames = read_map()
        self.moved = read_map("moved_names.txt")
        self.back = {new: old for old, new in self.renames.items()}
        self._names: dict[str, set[str]] = {}

    def defines(self, module: str, name: str) -> bool:
        """True when ``from module import name`` works in the current tree."""
        if module not in self.files:
            return False
        if f"{module}.{name}" in self.files or name == "*":
            return True
        if module not in self._names:
            self._names[module] = top_names(self.files[module])
        return name in self._names[module]

    def new_name(self, old: str) -> str:
        """The current dotted name of ``old`` (a module, or a name inside one): a module that
        exists now is kept, unless it is a package now where a module of the same name was
        (``cgpredict.memory``) and the rest of the name is not in it."""
        parts = old.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in self.files and head not in self.renames:
                return old
            if head in self.renames and (
                head not in self.files or i == len(parts) or not self.defines(head, parts[i])
            ):
                return ".".join([self.renames[head], *parts[i:]])
            if head in self.files:
                return old
        return old

    def moved_name(self, name: str) -> str:
        """``name`` (module.name[.attribute]) where its definition moved, else itself."""
        parts = name.split(".")
        for i in range(len(parts), 1, -1):
            head = ".".join(parts[:i])
            if head in self.moved:
                return ".".join([self.moved[head], *parts[i:]])
        return name


def resolve(package: str, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import`` inside ``package``."""
    if not level:
        return module or ""
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([module] if module else []))


def relative(package: str, target: str) -> str:
    """``target`` written relative to ``package`` (``..devices``, ``.lru``, ``.``)."""
    p, t = package.split("."), target.split(".")
    common = 0
    while common < min(len(p), len(t)) and p[common] == t[common]:
        common += 1
    return "." * (len(p) - common + 1) + ".".join(t[common:])


def _statement(indent: str, source: str, names: list[str]) -> str:
    """``from source import names`` at ``indent``, wrapped in parentheses past 100 columns."""
    one = f"{indent}from {source} import {', '.join(names)}"
    if len(one) <= 100:
        return one
    lines, line = [], f"{indent}from {source} import ("
    for i, name in enumerate(names):
        piece = name + ("," if i < len(names) - 1 else ")")
        if len(line) + len(piece) + 1 > 100:
            lines.append(line.rstrip())
            line = indent + "    "
        line += piece + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


def rewrite_import(tree: Tree, node: ast.ImportFrom, package: str, old_package: str,
                   indent: str) -> str | None:
    """The new text of one ``from ... import`` (None: it resolves as it is)."""
    now = resolve(package, node.level, node.module)
    if all(tree.defines(now, a.name) for a in node.names):
        return None
    was = resolve(old_package, node.level, node.module)
    groups: dict[str, list[str]] = {}
    for a in node.names:
        target = tree.new_name(f"{was}.{a.name}")
        moved = tree.moved_name(target)
        if moved != target:  # a name defined in another module now
            source, name = moved.rpartition(".")[0], moved.rpartition(".")[2]
        elif target in tree.files:  # a module imported by name
            source, name = target.rpartition(".")[0], target.rpartition(".")[2]
        else:
            source, name = tree.new_name(was), a.name
        alias = a.asname or (a.name if name != a.name else None)
        groups.setdefault(source, []).append(f"{name} as {alias}" if alias else name)
    out = []
    for source, names in groups.items():
        written = relative(package, source) if node.level else source
        out.append(_statement(indent, written, names))
    return "\n".join(out)


def package_of(tree: Tree, path: Path) -> tuple[str, str]:
    """The package of the file at ``path`` now, and the one its imports were written for."""
    for name, p in tree.files.items():
        if p == path:
            old = tree.back.get(name, name)
            if path.name == "__init__.py":
                return name, old
            return name.rpartition(".")[0], old.rpartition(".")[0]
    return "", ""  # tests, scripts: absolute imports only


def fix_python(tree: Tree, path: Path) -> str:
    """The text of the Python file at ``path`` with its imports mapped."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    package, old_package = package_of(tree, path)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.level or
                                                  (node.module or "").startswith("cgpredict")):
            indent = lines[node.lineno - 1][: node.col_offset]
            new = rewrite_import(tree, node, package, old_package, indent)
            if new is not None:
                edits.append((node.lineno, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        ending = "\n" if lines[end - 1].endswith("\n") else ""
        lines[start - 1 : end] = [new + ending]
    return "".join(lines)


def fix_text(tree: Tree, text: str) -> str:
    """Dotted names and file paths of moved modules, in any text."""
    def path(m: re.Match) -> str:
        new = tree.renames.get("cgpredict." + m.group(1))
        return new.replace(".", "/") + ".py" if new else m.group(0)

    text = re.sub(r"\bcgpredict(?:\.\w+)+",
                  lambda m: tree.moved_name(_longest(tree, m.group(0))), text)
    return re.sub(r"\bcgpredict/(\w+)\.py\b", path, text)


def _longest(tree: Tree, name: str) -> str:
    """Map the module part of a dotted name, leaving names that exist now as they are."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in tree.files:
            # a package now, the module it was before: rename only names it does not define
            if head in tree.renames and i < len(parts) and not tree.defines(head, parts[i]):
                return ".".join([tree.renames[head], *parts[i:]])
            return name
        if head in tree.renames:
            return ".".join([tree.renames[head], *parts[i:]])
    return name


def main(argv: list[str]) -> int:
    tree = Tree()
    if argv:
        paths = [Path(a).resolve() for a in argv]
    else:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.split()
        paths = [ROOT / p for p in listed
                 if p.endswith((".py", ".md", ".toml", ".txt")) or p in ("Makefile", ".ci/run")]
        paths = [p for p in paths if p.parts[len(ROOT.parts)] != "tools"
                 and not {"golden", "results"} & set(p.parts)]
    for p in paths:
        if not p.is_file():
            continue
        old = p.read_text()
        new = fix_python(tree, p) if p.suffix == ".py" else old
        new = fix_text(tree, new)
        if new != old:
            p.write_text(new)
            print(p.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
