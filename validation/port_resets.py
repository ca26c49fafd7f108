"""Record in a measurement file how each port's repetition ends its re-upload (issue 24).

The ports (validation/cuda/common.cuh, ``run_bench``) re-upload their inputs before each timed
repetition with a ``reset`` lambda: ``buf.upload(host)`` (a pageable ``cudaMemcpy``) and
``buf.zero()`` (``cudaMemset``). The first launch call after a large pageable copy returns
late (validation/measured/h100-session-2026-11-27/README.md, "Single launches": 19.9 us
instead of 5.2-5.4); a ``cudaMemset`` or a kernel in between takes that cost before the timed
launches. ``cgpredict validate`` charges it (device field ``upload_launch_us``) to the first
launch of an entry whose ``"reset"`` is ``"upload"`` and whose ``"reset_bytes"`` (the bytes of
that last copy) reach ``upload_launch_min_bytes`` (models/event_timing.py).

A ``cudaMemset`` leaves dirty lines in the L2 (at most ``l2_dirty_max_bytes``), which the
timed launch writes back as it reads (eq. (E5), models/dirty_l2.py): each entry also records
``"memset_bytes"``, the bytes of every ``zero()`` call of the reset (absent when there is none,
or when a buffer's size is not followed: ``validate`` then takes a memset reset as large),
and ``"upload_bytes"``, the bytes of every ``upload()`` call: copies of at least
``upload_launch_min_bytes`` in all still leave the first launch call late by
``upload_memset_launch_us`` when a memset follows them (eq. (E6), models/event_timing.py).

For every entry this reads the port's reset lambda, takes its last call, and for an upload
evaluates the buffer's size (its ``DevBuf<T> name(expr)``, ``expr`` possibly ``v.size()`` of a
``std::vector<T> v(expr)``) at the entry's work sizes, the port's ``#define`` defaults for
the others. Needs no GPU:

    python validation/port_resets.py validation/measured/nvidia-h100-80gb-hbm3.json
    python validation/port_resets.py validation/measured/nvidia-h100-80gb-hbm3-user.json \\
        --src validation/cuda/user
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# element bytes; "part" and "particle" are the user ports' structs
SIZEOF = {"float": 4, "double": 8, "int": 4, "unsigned int": 4, "part": 24, "particle": 16}
_RESET = re.compile(r"auto reset = \[&\] \{(.*?)\};", re.S)
_CALL = re.compile(r"(\w+)\.(upload|zero)\(")


def _defaults(src: str) -> dict[str, int]:
    """The port's ``#define NAME value`` defaults that evaluate to integers."""
    out = {}
    for name, expr in re.findall(r"#define\s+(\w+)\s+([^\n]+)", src):
        try:
            out[name] = int(eval(expr, {"__builtins__": {}}, {}))  # noqa: S307 - own sources
        except Exception:  # noqa: BLE001 - not a plain number
            continue
    return out


def _first_arg(args: str) -> str:
    """The first of a constructor's comma-separated arguments (commas inside parentheses
    kept): ``std::vector<float> L((size_t)N * N, 0.0f)`` has the size ``(size_t)N * N``."""
    depth = 0
    for i, ch in enumerate(args):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            return args[:i]
    return args


def _eval(expr: str, src: str, env: dict[str, int]) -> int | None:
    """Elements of a buffer's size expression: ``(size_t)`` casts dropped, ``v.size()``
    replaced by the ``std::vector`` ``v``'s own size expression."""
    expr = expr.replace("(size_t)", "")
    for v in re.findall(r"(\w+)\.size\(\)", expr):
        m = re.search(rf"std::vector<\w+>[^;]*?\b{v}\(([^()]*(?:\([^()]*\)[^()]*)*)\)", src)
        if not m:
            return None
        inner = _eval(_first_arg(m.group(1)), src, env)  # (n, value): the size n
        if inner is None:
            return None
        expr = expr.replace(f"{v}.size()", str(inner))
    try:
        return int(eval(expr, {"__builtins__": {}}, dict(env)))  # noqa: S307 - own sources
    except Exception:  # noqa: BLE001 - an expression this reader does not follow
        return None


def _calls(src: str) -> list[tuple[str, str]]:
    """(buffer, "upload" or "zero") of every call of the port's reset lambda, in order."""
    m = _RESET.search(src)
    return _CALL.findall(m.group(1)) if m else []


def _buffer_bytes(src: str, buf: str, sizes: dict[str, int]) -> int | None:
    """Bytes of the port's ``DevBuf<T> buf(expr)`` at ``sizes``; None when not followed."""
    d = re.search(rf"DevBuf<(\w+(?: \w+)?)>[^;]*?\b{buf}\(([^()]*(?:\([^()]*\)[^()]*)*)\)", src)
    if not d or d.group(1) not in SIZEOF:
        return None
    n = _eval(d.group(2), src, {**_defaults(src), **sizes})
    return None if n is None else n * SIZEOF[d.group(1)]


def reset_state(src: str, sizes: dict[str, int]) -> tuple[str, int | None]:
    """("upload" or "memset", bytes of the last upload or None) of a port's reset lambda."""
    calls = _calls(src)
    if not calls:
        return "none", None
    buf, op = calls[-1]
    if op == "zero":
        return "memset", None
    return "upload", _buffer_bytes(src, buf, sizes)


def memset_bytes(src: str, sizes: dict[str, int]) -> int | None:
    """Bytes the port's reset lambda sets with ``zero()`` (cudaMemset) in all, the dirty
    lines it can leave in the L2 (eq. (E5)); None when it has none or a size is not
    followed."""
    sets = [_buffer_bytes(src, buf, sizes) for buf, op in _calls(src) if op == "zero"]
    if not sets or None in sets:
        return None
    return sum(sets)


def upload_bytes(src: str, sizes: dict[str, int]) -> int | None:
    """Bytes the port's reset lambda copies with ``upload()`` (pageable cudaMemcpy) in all:
    what makes the next launch call late, partly through a memset after them (eq. (E6));
    None when it has none or a size is not followed."""
    ups = [_buffer_bytes(src, buf, sizes) for buf, op in _calls(src) if op == "upload"]
    if not ups or None in ups:
        return None
    return sum(ups)


#: what a measured file's ``reset_from`` says of its entries' reset fields
RESET_FROM = ("the last call of each port's reset lambda (upload: pageable cudaMemcpy, with its "
              "bytes; memset), the bytes of all its zero() calls (memset_bytes) and of all its "
              "upload() calls (upload_bytes): validation/port_resets.py")


def reset_fields(src: str, sizes: dict[str, int]) -> dict[str, object]:
    """A measured entry's reset fields from its port's source: ``reset``, and ``reset_bytes``
    (the last upload's), ``memset_bytes`` (eq. (E5)) and ``upload_bytes`` (eq. (E6)) where
    they are known."""
    reset, nbytes = reset_state(src, sizes)
    fields: dict[str, object] = {"reset": reset}
    for key, value in (("reset_bytes", nbytes), ("memset_bytes", memset_bytes(src, sizes)),
                       ("upload_bytes", upload_bytes(src, sizes))):
        if value is not None:
            fields[key] = value
    return fields


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measured", type=Path)
    ap.add_argument("--src", type=Path, default=ROOT / "cuda", help="folder of the ports")
    args = ap.parse_args()
    data = json.loads(args.measured.read_text())
    for e in data["results"]:
        fields = reset_fields((args.src / f"{e['kernel']}.cu").read_text(),
                              e.get("work_sizes", {}))
        for key in ("reset_bytes", "memset_bytes", "upload_bytes"):
            e.pop(key, None)
        e.update(fields)
        print(f"{e['kernel']:16s} {e['config']:6s} {fields['reset']:7s} "
              f"{fields.get('reset_bytes')} {fields.get('memset_bytes')} "
              f"{fields.get('upload_bytes')}")
    data["reset_from"] = RESET_FROM
    args.measured.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
