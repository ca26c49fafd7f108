"""Reading C source text without a parser (SPEC §2.1): white space, comments and literals
skipped, brackets matched, where a statement ends, the lines inside comments, a function's body
and its top-level loop nests: what the pragma marking and the --function kernels need.
"""

from __future__ import annotations

import re

from ..errors import RegionError

IDENT = re.compile(r"[A-Za-z_]\w*")


def skip_space(src: str, pos: int) -> int:
    """Skip white space, comments and preprocessor lines."""
    n = len(src)
    while pos < n:
        if src[pos].isspace():
            pos += 1
        elif src.startswith("//", pos):
            nl = src.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        elif src.startswith("/*", pos):
            end = src.find("*/", pos + 2)
            pos = n if end < 0 else end + 2
        elif src[pos] == "#" and (pos == 0 or src.rfind("\n", 0, pos) >= src.rfind("#", 0, pos)):
            line_start = src.rfind("\n", 0, pos) + 1
            if src[line_start:pos].strip():
                return pos
            nl = src.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            return pos
    return pos


def _skip_literal(src: str, pos: int) -> int:
    """Position after the string or char literal starting at ``pos``."""
    quote = src[pos]
    pos += 1
    while pos < len(src) and src[pos] != quote:
        pos += 2 if src[pos] == "\\" else 1
    return pos + 1


def bracket_end(src: str, pos: int, open_ch: str, close_ch: str) -> int:
    """Position after the bracket matching the one at ``pos``."""
    start, depth = pos, 0
    while pos < len(src):
        pos = skip_space(src, pos)
        if pos >= len(src):
            break
        ch = src[pos]
        if ch in "\"'":
            pos = _skip_literal(src, pos)
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    line = src.count("\n", 0, start) + 1
    raise RegionError(f"line {line}: unbalanced '{open_ch}' in the marked region")


def word_at(src: str, pos: int) -> str:
    m = IDENT.match(src, pos)
    return m.group(0) if m else ""


def statement_end(src: str, pos: int) -> int:
    """Position just after the C statement that starts at or after ``pos``."""
    pos = skip_space(src, pos)
    if pos >= len(src):
        raise RegionError("the marked region ends before its statement")
    if src[pos] == "{":
        return bracket_end(src, pos, "{", "}")
    word = word_at(src, pos)
    if word in ("for", "while", "switch"):
        paren = skip_space(src, pos + len(word))
        if paren >= len(src) or src[paren] != "(":
            raise RegionError(f"expected '(' after '{word}'")
        return statement_end(src, bracket_end(src, paren, "(", ")"))
    if word == "if":
        paren = skip_space(src, pos + 2)
        end = statement_end(src, bracket_end(src, paren, "(", ")"))
        nxt = skip_space(src, end)
        if word_at(src, nxt) == "else":
            return statement_end(src, nxt + 4)
        return end
    if word == "do":
        body_end = statement_end(src, pos + 2)
        return statement_end(src, body_end)  # `while (...);` ends with ';'
    depth = 0
    while pos < len(src):
        pos = skip_space(src, pos)
        ch = src[pos] if pos < len(src) else ""
        if ch in "\"'":
            pos = _skip_literal(src, pos)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ";" and depth == 0:
            return pos + 1
        pos += 1
    raise RegionError("unterminated statement in the marked region")


def comment_lines(source: str, offsets: list[int]) -> set[int]:
    """Indices of lines that start inside a /* */ comment."""
    inside: set[int] = set()
    pos = 0
    while True:
        pos = source.find("/*", pos)
        if pos < 0:
            return inside
        line_start = source.rfind("\n", 0, pos) + 1
        if "//" in source[line_start:pos] or source[line_start:pos].count('"') % 2:
            pos += 2
            continue
        end = source.find("*/", pos + 2)
        end = len(source) if end < 0 else end
        first = source.count("\n", 0, pos) + 1
        last = source.count("\n", 0, end)
        inside.update(range(first, last + 1))
        pos = end + 2


def in_spans(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def function_nests(source: str, name: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the top-level ``for`` statements of the body of function
    ``name`` (its definition): loops not inside another loop. Empty when the function is not
    defined in ``source`` or a top-level loop of its body is a ``while`` or ``do``, which is
    kept whole."""
    body = function_body(source, name)
    if body is None:
        return []
    pos, stop = body
    nests = []
    while pos < stop:
        pos = skip_space(source, pos)
        if pos >= stop:
            break
        ch = source[pos]
        if ch in "\"'":
            pos = _skip_literal(source, pos)
            continue
        word = word_at(source, pos)
        if word in ("for", "while", "do") and (pos == 0 or not _is_ident(source[pos - 1])):
            end = statement_end(source, pos)
            if word != "for":
                return []
            nests.append((pos, end))
            pos = end
        else:
            pos += max(len(word), 1)
    return nests


def _is_ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def function_body(source: str, name: str) -> tuple[int, int] | None:
    """(offset after the opening brace, offset of the closing brace) of the definition of
    ``name``, or None."""
    for m in re.finditer(rf"(?<![\w.>]){re.escape(name)}\s*\(", source):
        after = skip_space(source, bracket_end(source, m.end() - 1, "(", ")"))
        while source.startswith("__attribute__", after):
            after = skip_space(source, bracket_end(source, source.index("(", after), "(", ")"))
        if after < len(source) and source[after] == "{":
            return after + 1, bracket_end(source, after, "{", "}") - 1
    return None
