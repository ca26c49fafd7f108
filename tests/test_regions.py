"""Tests of cgpredict.frontend.regions: ``#pragma cgp`` parsing, the C statement scanner and the
line-preserving rewrite (SPEC §2.1). Pure text: no compiler needed."""

from __future__ import annotations

import re

import pytest

from cgpredict.errors import RegionError
from cgpredict.frontend.ctext import statement_end
from cgpredict.frontend.regions import PRELUDE, SharedHint, mark_regions


def src(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def begin_line(text: str, region: int) -> int:
    """1-based line of the ``__cgp_region_begin(region)`` marker in ``text``."""
    return _marker_line(text, f"__cgp_region_begin({region});")


def end_line(text: str, region: int) -> int:
    return _marker_line(text, f"__cgp_region_end({region});")


def _marker_line(text: str, marker: str) -> int:
    hits = [k + 1 for k, line in enumerate(text.split("\n")) if marker in line]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


GEMM_LIKE = src(
    "#include <stdio.h>",                      # 1
    "#pragma cgp trace NI=128 NJ=64",           # 2
    "float A[8][8], B[8][8];",                  # 3
    "int main(void) {",                         # 4
    "#pragma cgp kernel first",                 # 5
    "  for (int i = 0; i < 8; i++) {",          # 6
    "    for (int j = 0; j < 8; j++)",          # 7
    "      A[i][j] = 1.0f;",                    # 8
    "  }",                                      # 9
    "  printf(\"x\");",                          # 10
    "#pragma cgp kernel",                       # 11
    "  for (int i = 0; i < 8; i++)",            # 12
    "    B[i][0] = A[i][0];",                   # 13
    "  return 0;",                              # 14
    "}",                                        # 15
)


# --------------------------------------------------------------------------- pragma parsing


def test_kernel_names_lines_and_trace_sizes():
    m = mark_regions(GEMM_LIKE)
    assert [(r.index, r.name, r.line, r.end_line) for r in m.regions] == [
        (0, "first", 6, 9),
        (1, "kernel1", 12, 13),  # unnamed: kernel<index>
    ]
    assert m.trace_sizes == {"NI": 128, "NJ": 64}
    assert all(r.shared == () and r.function is None for r in m.regions)


def test_default_names_count_regions():
    m = mark_regions(src(
        "void f(int *a) {",
        "#pragma cgp kernel",
        "  for (int i = 0; i < 4; i++) a[i] = 0;",
        "#pragma cgp kernel",
        "  for (int i = 0; i < 4; i++) a[i] = 1;",
        "}",
    ))
    assert [r.name for r in m.regions] == ["kernel0", "kernel1"]


def test_rewrite_keeps_lines_and_places_markers():
    m = mark_regions(GEMM_LIKE)
    old, new = GEMM_LIKE.split("\n"), m.text.split("\n")
    assert len(new) == len(old)
    # the pragma lines become the begin markers (line 5 and 11), the trace pragma vanishes
    assert begin_line(m.text, 0) == 5
    assert begin_line(m.text, 1) == 11
    assert new[1] == ""
    assert "pragma cgp" not in m.text
    # end markers right after the closing brace / the statement's semicolon
    assert end_line(m.text, 0) == 9
    assert new[8] == "  } __cgp_region_end(0);"
    assert end_line(m.text, 1) == 13
    assert new[12] == "    B[i][0] = A[i][0]; __cgp_region_end(1);"
    # every other line is unchanged
    for k in set(range(len(old))) - {1, 4, 8, 10, 12}:
        assert new[k] == old[k]


def test_end_marker_inserted_mid_line():
    text = src(
        "void f(int *a) {",
        "#pragma cgp kernel k",
        "  for (int i = 0; i < 4; i++) { a[i] = 0; } a[0] = 1;",
        "}",
    )
    m = mark_regions(text)
    assert m.text.split("\n")[2] == (
        "  for (int i = 0; i < 4; i++) { a[i] = 0; } __cgp_region_end(0); a[0] = 1;")
    assert m.regions[0].line == m.regions[0].end_line == 3


def test_shared_hints():
    m = mark_regions(src(
        "void f(float A[64][64], float B[64][64]) {",
        "#pragma cgp kernel tiled",
        "#pragma cgp shared A tile 32x16",
        "#pragma cgp shared B tile 8x32",
        "  for (int i = 0; i < 64; i++) A[i][0] = B[0][i];",
        "}",
    ))
    (r,) = m.regions
    assert r.shared == (SharedHint("A", 32, 16), SharedHint("B", 8, 32))
    assert r.line == 5
    assert begin_line(m.text, 0) == 2
    assert m.text.split("\n")[2:4] == ["", ""]


def test_comment_between_pragma_and_loop():
    m = mark_regions(src(
        "void f(int *a) {",
        "#pragma cgp kernel k",
        "",
        "  // the loop",
        "  /* more */ for (int i = 0; i < 4; i++)",
        "    a[i] = 0;",
        "}",
    ))
    (r,) = m.regions
    assert (r.line, r.end_line) == (4, 6)  # region line: first non-blank line after the pragma
    assert end_line(m.text, 0) == 6


def test_crlf_source_keeps_line_count():
    text = ("int f(int s){\r\n#pragma cgp kernel k\r\n  for (int i=0;i<4;i++)\r\n    s+=i;\r\n"
            "return s;}\r\n")
    m = mark_regions(text)
    assert m.regions[0].name == "k"
    assert (m.regions[0].line, m.regions[0].end_line) == (3, 4)
    assert m.text.count("\n") == text.count("\n")


@pytest.mark.parametrize("bad, message", [
    (["#pragma cgp kernel a", "for (;;) ;", "#pragma cgp kernel a", "for (;;) ;"],
     "kernel names used twice: a"),
    (["#pragma cgp kernel kernel1", "for (;;) ;", "#pragma cgp kernel", "for (;;) ;"],
     "kernel names used twice: kernel1"),
    (["#pragma cgp kernel two-words", "for (;;) ;"], "not an identifier"),
    (["#pragma cgp kernel k grid=3", "for (;;) ;"], "want grid=1 or grid=2, got 'grid=3'"),
    (["#pragma cgp kernal k", "for (;;) ;"], "unknown '#pragma cgp kernal'"),
    (["#pragma cgp", "for (;;) ;"], "unknown '#pragma cgp"),
    (["#pragma cgp kernel k", "while (1) ;"], "must be followed by a for loop"),
    (["#pragma cgp kernel k", "x = 1;"], "must be followed by a for loop"),
    (["#pragma cgp kernel a", "#pragma cgp kernel b", "for (;;) ;"],
     "follows another with no loop between"),
    (["#pragma cgp shared A tile 32x32", "for (;;) ;"], "must follow '#pragma cgp kernel'"),
    (["#pragma cgp kernel k", "#pragma cgp shared A tile 32", "for (;;) ;"], "ROWSxCOLS"),
    (["#pragma cgp kernel k", "#pragma cgp shared A 32x32", "for (;;) ;"], "ROWSxCOLS"),
    (["#pragma cgp kernel k", "#pragma cgp shared A tile 0x0", "for (;;) ;"],
     "line 3: tile 0x0: want positive ROWSxCOLS"),
    (["#pragma cgp kernel k", "#pragma cgp shared A tile 32x0", "for (;;) ;"],
     "line 3: tile 32x0: want positive ROWSxCOLS"),
    (["#pragma cgp trace NI=abc"], "bad '#pragma cgp trace' item 'NI=abc'"),
    (["#pragma cgp trace NI"], "want NAME=INT"),
    (["#pragma cgp trace 1N=4"], "want NAME=INT"),
    (["#pragma cgp kernel k", "for (int i = 0; i < 4; i++) {", "  x;"],
     "line 3: unbalanced '{'"),
])
def test_bad_pragmas(bad, message):
    with pytest.raises(RegionError, match=re.escape(message)):
        mark_regions(src("void f(void) {", *bad, "}") if "unbalanced" not in message
                     else src("void f(void) {", *bad))


@pytest.mark.parametrize("args, name, grid", [
    ("", "kernel0", 0), ("mm", "mm", 0), ("mm grid=1", "mm", 1), ("grid=2 mm", "mm", 2),
    ("grid=2", "kernel0", 2),
])
def test_kernel_name_and_grid(args, name, grid):
    m = mark_regions(src("void f(int *a) {", f"#pragma cgp kernel {args}",
                         "  for (int i = 0; i < 4; i++) a[i] = 0;", "}"))
    assert [(r.name, r.grid) for r in m.regions] == [(name, grid)]


@pytest.mark.parametrize("args, bounds", [
    ("mm", "runtime"), ("mm bounds=runtime", "runtime"), ("mm grid=2 bounds=constant", "constant"),
])
def test_kernel_loop_bounds(args, bounds):
    m = mark_regions(src("void f(int *a) {", f"#pragma cgp kernel {args}",
                         "  for (int i = 0; i < 4; i++) a[i] = 0;", "}"))
    assert [r.bounds for r in m.regions] == [bounds]


def test_unknown_loop_bounds_are_one_line_errors():
    with pytest.raises(RegionError, match=r"^line 2: want bounds=runtime or bounds=constant, "
                                          r"got 'bounds=fixed'$"):
        mark_regions(src("void f(int *a) {", "#pragma cgp kernel mm bounds=fixed",
                         "  for (int i = 0; i < 4; i++) a[i] = 0;", "}"))


def test_two_kernel_names_are_rejected():
    with pytest.raises(RegionError):
        mark_regions(src("void f(int *a) {", "#pragma cgp kernel two words",
                         "  for (int i = 0; i < 4; i++) a[i] = 0;", "}"))


def test_kernel_pragma_at_end_of_file():
    with pytest.raises(RegionError,
                       match=r"^line 2: '#pragma cgp kernel' is not followed by a loop"):
        mark_regions(src("int x;", "#pragma cgp kernel k", "", ""))


def test_error_names_the_pragma_line():
    with pytest.raises(RegionError, match=r"^line 3: "):
        mark_regions(src("int x;", "", "#pragma cgp kernel k", "x = 1;"))


def test_similar_pragmas_are_not_ours():
    m = mark_regions(src("#pragma cgpx kernel", "#pragma omp parallel for", "int x;"))
    assert m.regions == () and m.trace_sizes == {}
    assert m.text == src("#pragma cgpx kernel", "#pragma omp parallel for", "int x;")


def test_pragma_inside_block_comment_is_ignored():
    m = mark_regions(src(
        "int main(void) {",
        "  int s = 0;",
        "/*",
        "#pragma cgp kernel old",
        "*/",
        "#pragma cgp kernel new",
        "  for (int i = 0; i < 4; i++) s += i;",
        "  return s;",
        "}",
    ))
    assert [r.name for r in m.regions] == ["new"]


def test_prelude_declares_the_markers():
    assert "void __cgp_region_begin(int region);" in PRELUDE
    assert "void __cgp_region_end(int region);" in PRELUDE


# --------------------------------------------------------------------------- statement scanner


@pytest.mark.parametrize("text, statement", [
    ("x = f(a, (b)); y;", "x = f(a, (b));"),
    ("{ a; { b; } } c;", "{ a; { b; } }"),
    ("for (i = 0; i < n; i++) a[i] = 0; b;", "for (i = 0; i < n; i++) a[i] = 0;"),
    ("for (i=0;i<n;i++) for (j=0;j<n;j++) { if (a) { b[i][j] = (c); } } rest;",
     "for (i=0;i<n;i++) for (j=0;j<n;j++) { if (a) { b[i][j] = (c); } }"),
    ("while (x) x--; q;", "while (x) x--;"),
    ("do { x++; } while (x < 3); y;", "do { x++; } while (x < 3);"),
    ("do x++; while (x < 3); y;", "do x++; while (x < 3);"),
    ("if (a) { b; } c;", "if (a) { b; }"),
    ("if (a) b; else c; d;", "if (a) b; else c;"),
    ("if (a) { b; } else if (c) d; else { e; } f;", "if (a) { b; } else if (c) d; else { e; }"),
    ("if (a) b; elsewhere = 1;", "if (a) b;"),
    ("switch (x) { case 1: { y; } break; default: ; } z;",
     "switch (x) { case 1: { y; } break; default: ; }"),
    ('for (;;) { s = "}{;"; c = \'}\'; d = \'\\\'\'; } t;',
     'for (;;) { s = "}{;"; c = \'}\'; d = \'\\\'\'; }'),
    ("for (;;) { /* } */ a; // }\n } t;", "for (;;) { /* } */ a; // }\n }"),
    ('x = "a;b"; y;', 'x = "a;b";'),
    ("int a[2] = {1, 2}; b;", "int a[2] = {1, 2};"),
    ("for (;;)\n#ifdef X\n  a;\n#endif\n b;", "for (;;)\n#ifdef X\n  a;"),
])
def test_statement_end(text, statement):
    assert text[:statement_end(text, 0)] == statement


def test_statement_end_skips_leading_space_and_comments():
    text = "  /* c */ // d\n  x; y;"
    assert text[:statement_end(text, 0)] == "  /* c */ // d\n  x;"


@pytest.mark.parametrize("text", ["", "   ", "x = 1", "for x", "{ a;"])
def test_statement_end_errors(text):
    with pytest.raises(RegionError):
        statement_end(text, 0)


def test_read_source_refuses_non_utf8(tmp_path):
    from cgpredict.frontend.regions import read_source

    good, bad = tmp_path / "g.c", tmp_path / "b.c"
    good.write_text("int x; /* \u00e9 */\n")
    bad.write_bytes(b"int x; \x93\xff\n")
    assert read_source(good).startswith("int x;")
    with pytest.raises(RegionError, match=re.escape(f"{bad}: not a UTF-8 text file")):
        read_source(bad)
    with pytest.raises(RegionError, match="cannot read"):
        read_source(tmp_path / "nope.c")
