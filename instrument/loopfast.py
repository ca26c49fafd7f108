"""The loop-header probe inline (SPEC §2.1): an iteration that continues its loop's current entry
and writes no marker costs a few loads and stores, not a call of the runtime's ``__cgp_loop``.

The probe updates the runtime's loop state (per loop: the serial of the entry it iterates in,
of its latest iteration, its iteration index and count, whether it is open; per helper
function: the tick of its latest call) through the pointers ``runtime/cgp_runtime.c`` exports;
the arrays stay the runtime's own allocations, so the program's heap and globals keep their
addresses. Any other iteration (a new entry, or one that writes a marker to a recorded
launch's stream) calls ``__cgp_loop``, which does everything, so the counts and the events are
the same whichever path an iteration takes.
"""

from __future__ import annotations

PROBE = "__cgp_loop_fast"
_PARENT_LOOP, _PARENT_LAUNCH, _PARENT_CALL = 0, 1, 2


def probe_call(lid: int, parent: int, marked: bool) -> str:
    """The call at a loop header: the loop, its parent (a loop; -1: the region launch; <= -2:
    a call of helper function -2-parent) and whether it writes iteration markers."""
    kind, index = (
        (_PARENT_LOOP, parent) if parent >= 0
        else (_PARENT_LAUNCH, 0) if parent == -1
        else (_PARENT_CALL, -2 - parent)
    )  # fmt: skip
    return f"  call void @{PROBE}(i64 {lid}, i32 {kind}, i64 {index}, i1 {str(marked).lower()})"


def _slot(array: str, ty: str, index: str, name: str) -> list[str]:
    """``%name`` = the address of element ``index`` of the runtime's array ``@array``."""
    return [
        f"  %{name}.b = load ptr, ptr @{array}",
        f"  %{name} = getelementptr inbounds {ty}, ptr %{name}.b, i64 {index}",
    ]


def _bump(array: str, name: str) -> list[str]:
    """Increment element %l of the runtime's i64 array ``@array``."""
    return [
        *_slot(array, "i64", "%l", f"{name}.p"),
        f"  %{name}.o = load i64, ptr %{name}.p",
        f"  %{name} = add i64 %{name}.o, 1",
        f"  store i64 %{name}, ptr %{name}.p",
    ]


def _parent_serial() -> list[str]:
    """%ps = the serial the loop's current entry must carry (runtime's __cgp_loop, parent)."""
    return [
        *_slot("__cgp_lserial", "i64", "%pi", "lp"),
        *_slot("__cgp_fserial", "i64", "%pi", "fp"),
        f"  %isloop = icmp eq i32 %kind, {_PARENT_LOOP}",
        f"  %iscall = icmp eq i32 %kind, {_PARENT_CALL}",
        "  %other = select i1 %iscall, ptr %fp, ptr @__cgp_launch_tick",
        "  %psp = select i1 %isloop, ptr %lp, ptr %other",
        "  %ps = load i64, ptr %psp",
    ]


def state_globals() -> list[str]:
    """The declarations of the runtime's loop state and the inline probe, whose fast path is
    the else-branch of ``__cgp_loop``: same entry (stamp == parent's serial), no marker."""
    return [
        *(f"@{n} = external dso_local global ptr" for n in
          ("__cgp_lstamp", "__cgp_lserial", "__cgp_liters", "__cgp_lidx", "__cgp_lopen",
           "__cgp_fserial")),
        "@__cgp_tick = external dso_local global i64",
        "@__cgp_launch_tick = external dso_local global i64",
        f"define internal void @{PROBE}(i64 %l, i32 %kind, i64 %pi, i1 %marked) alwaysinline {{",
        "entry:",
        *_parent_serial(),
        *_slot("__cgp_lstamp", "i64", "%l", "sp"),
        "  %st = load i64, ptr %sp",
        "  %same = icmp eq i64 %st, %ps",
        "  %rec = load i32, ptr @__cgp_recording",
        "  %r = icmp ne i32 %rec, 0",
        "  %emit = and i1 %r, %marked",
        "  %noemit = xor i1 %emit, true",
        "  %fast = and i1 %same, %noemit",
        "  br i1 %fast, label %inl, label %call",
        "inl:",
        *_bump("__cgp_lidx", "idx"),
        "  %t0 = load i64, ptr @__cgp_tick",
        "  %t = add i64 %t0, 1",
        "  store i64 %t, ptr @__cgp_tick",
        *_slot("__cgp_lserial", "i64", "%l", "sep"),
        "  store i64 %t, ptr %sep",
        *_bump("__cgp_liters", "it"),
        *_slot("__cgp_lopen", "i8", "%l", "op"),
        "  store i8 1, ptr %op",
        "  ret void",
        "call:",
        "  %l32 = trunc i64 %l to i32",
        "  call void @__cgp_loop(i32 %l32)",
        "  ret void",
        "}",
    ]  # fmt: skip
