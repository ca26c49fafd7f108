"""Tests of instrument/irtext.py (``cgpredict.instrument.irtext``): the textual IR reader, on a
hand-written module in the style clang prints (multi-line switch, phi nodes, ``#dbg_value``
records, a constant-expression GEP, quoted names, debug locations through lexical blocks)."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from cgpredict.instrument.irtext import TERMINATORS, parse_module, split_operands

# Line numbers below are 0-based indexes into TINY_IR.split("\n").
TINY_IR = r"""; ModuleID = 'tiny.c'
source_filename = "tiny.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

@tab = dso_local global [4 x [8 x i32]] zeroinitializer, align 16
@"odd name" = dso_local global i32 0, align 4

; Function Attrs: nounwind uwtable
define dso_local i32 @pick(i32 noundef %n, ptr noundef %p) local_unnamed_addr #0 !dbg !10 {
entry:
    #dbg_value(i32 %n, !16, !DIExpression(), !18)
  br label %for.body, !dbg !19

for.body:                                         ; preds = %entry, %latch
  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]
  %acc = phi i32 [ 0, %entry ], [ %acc.next, %latch ]
    #dbg_value(i32 %i, !17, !DIExpression(), !18)
  %r = srem i32 %i, 3, !dbg !20
  switch i32 %r, label %sw.default [
    i32 0, label %sw.zero
    i32 1, label %"sw one"
  ], !dbg !21

sw.zero:                                          ; preds = %for.body
  %v0 = load i32, ptr getelementptr inbounds ([4 x [8 x i32]], ptr @tab, i64 0, i64 1, i64 2), align 8, !dbg !22
  br label %latch, !dbg !23

"sw one":                                         ; preds = %for.body
  %v1 = load i32, ptr %p, align 4, !dbg !24
  br label %latch, !dbg !23

sw.default:                                       ; preds = %for.body
  store i32 %i, ptr @"odd name", align 4, !dbg !25
  br label %latch, !dbg !23

latch:                                            ; preds = %sw.default, %"sw one", %sw.zero
  %add = phi i32 [ %v0, %sw.zero ], [ %v1, %"sw one" ], [ 0, %sw.default ]
  %acc.next = add nsw i32 %acc, %add, !dbg !26
  %i.next = add nuw nsw i32 %i, 1, !dbg !27
  %done = icmp eq i32 %i.next, %n, !dbg !28
  br i1 %done, label %exit, label %for.body, !dbg !29

exit:                                             ; preds = %latch
  %f = tail call float @expf(float noundef 1.000000e+00), !dbg !30
  ret i32 %acc.next, !dbg !31
}

define dso_local void @noop(ptr noundef %q) local_unnamed_addr #0 {
  store i32 0, ptr %q, align 4
  ret void
}

declare float @expf(float noundef) local_unnamed_addr #1

attributes #0 = { nounwind uwtable }
attributes #1 = { nounwind }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang version 22.1.8", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "tiny.c", directory: "/src")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DIFile(filename: "inc/helper, v2.h", directory: "/src")
!10 = distinct !DISubprogram(name: "pick", scope: !1, file: !1, line: 3, type: !11, scopeLine: 3, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !14, keyInstructions: true)
!11 = !DISubroutineType(types: !12)
!12 = !{!13, !13, null}
!13 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!14 = !{!16, !17}
!15 = distinct !DILexicalBlock(scope: !10, file: !1, line: 5, column: 3)
!16 = !DILocalVariable(name: "n", arg: 1, scope: !10, file: !1, line: 3, type: !13)
!17 = !DILocalVariable(name: "i", scope: !15, file: !1, line: 5, type: !13)
!18 = !DILocation(line: 0, scope: !10)
!19 = !DILocation(line: 5, column: 3, scope: !15)
!20 = !DILocation(line: 6, column: 15, scope: !40)
!21 = !DILocation(line: 6, column: 5, scope: !40)
!22 = !DILocation(line: 7, column: 22, scope: !40)
!23 = !DILocation(line: 10, column: 5, scope: !40)
!24 = !DILocation(line: 8, column: 22, scope: !40)
!25 = !DILocation(line: 2, column: 9, scope: !41)
!26 = !DILocation(line: 11, column: 9, scope: !40)
!27 = !DILocation(line: 5, column: 28, scope: !40)
!28 = !DILocation(line: 5, column: 21, scope: !40)
!29 = !DILocation(line: 5, column: 3, scope: !15, atomGroup: 3, atomRank: 1)
!30 = !DILocation(line: 12, column: 3, scope: !10)
!31 = !DILocation(line: 13, column: 3, scope: !10)
!40 = distinct !DILexicalBlock(scope: !15, file: !1, line: 5, column: 31)
!41 = !DILexicalBlockFile(scope: !40, file: !4, discriminator: 0)
"""

LINES = TINY_IR.split("\n")


def line_of(text: str) -> int:
    """0-based index of the only line of TINY_IR that contains ``text``."""
    hits = [k for k, line in enumerate(LINES) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


@pytest.fixture(scope="module")
def mod():
    return parse_module(TINY_IR)


def test_fixture_is_valid_ir():
    llvm.parse_assembly(TINY_IR).verify()


def test_functions_and_declarations(mod):
    assert set(mod.functions) == {"pick", "noop"}
    assert mod.declared == {"expf"}
    pick = mod.functions["pick"]
    assert pick.define_line == line_of("define dso_local i32 @pick(")
    assert LINES[pick.end_line] == "}"
    assert pick.end_line < mod.functions["noop"].define_line
    assert mod.lines == LINES


def test_blocks_and_labels(mod):
    pick = mod.functions["pick"]
    assert [b.label for b in pick.blocks] == [
        "entry", "for.body", "sw.zero", "sw one", "sw.default", "latch", "exit"]
    assert pick.blocks[0].label_line == line_of("entry:")
    assert pick.block("sw one").label_line == line_of('"sw one":')
    with pytest.raises(KeyError):
        pick.block("nowhere")
    (entry,) = mod.functions["noop"].blocks  # no label printed: the implicit entry block
    assert (entry.label, entry.label_line) == ("<entry>", None)
    assert [i.opcode for i in entry.instrs] == ["store", "ret"]


def test_dbg_records_and_comments_are_not_instructions(mod):
    pick = mod.functions["pick"]
    every = [i for b in pick.blocks for i in b.instrs]
    assert not any(i.text.startswith(("#dbg", ";")) for i in every)
    assert [i.opcode for i in pick.block("for.body").instrs] == ["phi", "phi", "srem", "switch"]
    assert [i.opcode for i in pick.block("latch").instrs] == ["phi", "add", "add", "icmp", "br"]
    assert len(every) == 1 + 4 + 2 + 2 + 2 + 5 + 2  # instruction lines per block


def test_instruction_fields(mod):
    latch = mod.functions["pick"].block("latch")
    add = latch.instrs[1]
    assert add.line == line_of("%acc.next = add nsw")
    assert (add.result, add.opcode, add.dbg) == ("%acc.next", "add", "!26")
    assert add.text == "add nsw i32 %acc, %add, !dbg !26"
    assert add.callee is None
    phi = latch.instrs[0]
    assert (phi.result, phi.opcode, phi.dbg) == ("%add", "phi", None)
    call = mod.functions["pick"].block("exit").instrs[0]
    assert (call.opcode, call.callee, call.result) == ("call", "expf", "%f")  # `tail` skipped
    store = mod.functions["pick"].block("sw.default").instrs[0]
    assert store.result is None and store.opcode == "store"


def test_multi_line_switch_is_one_instruction(mod):
    sw = mod.functions["pick"].block("for.body").instrs[-1]
    assert sw.opcode == "switch"
    assert sw.line == line_of("switch i32 %r, label %sw.default [")  # the first of its 4 lines
    assert sw.dbg == "!21"
    assert "i32 1, label %\"sw one\"" in sw.text and sw.text.rstrip().endswith("!dbg !21")
    assert sw.opcode in TERMINATORS


def test_successors(mod):
    pick = mod.functions["pick"]
    succ = {b.label: b.successors for b in pick.blocks}
    assert succ == {
        "entry": ["for.body"],
        "for.body": ["sw.default", "sw.zero", "sw one"],
        "sw.zero": ["latch"],
        "sw one": ["latch"],
        "sw.default": ["latch"],
        "latch": ["exit", "for.body"],
        "exit": [],
    }


def test_first_non_phi(mod):
    pick = mod.functions["pick"]
    assert [b.first_non_phi for b in pick.blocks] == [0, 2, 0, 0, 0, 1, 0]


def test_debug_locations(mod):
    # DILocation -> DILexicalBlock !40 -> (file: !1) DIFile "tiny.c"
    assert mod.location("!20") == ("tiny.c", 6, 15)
    # DILocation -> DILexicalBlockFile !41 -> (file: !4): a header, name with a comma
    assert mod.location("!25") == ("inc/helper, v2.h", 2, 9)
    # DILocation -> DISubprogram !10 -> DIFile; line 0 and no column
    assert mod.location("!18") == ("tiny.c", 0, 0)
    # extra fields (atomGroup, atomRank) do not disturb the parse
    assert mod.location("!29") == ("tiny.c", 5, 3)
    sw_zero = mod.functions["pick"].block("sw.zero").instrs[0]
    assert mod.location(sw_zero.dbg) == ("tiny.c", 7, 22)


@pytest.mark.parametrize("ref", [None, "!99", "!10", "!1"])
def test_unknown_locations(mod, ref):
    assert mod.location(ref) == ("", 0, 0)  # missing, or not a DILocation


def test_metadata_fields(mod):
    kind, fields = mod.metadata["!10"]
    assert kind == "DISubprogram"
    assert fields["name"] == '"pick"' and fields["file"] == "!1" and fields["line"] == "3"
    assert mod.metadata["!4"] == ("DIFile", {"filename": '"inc/helper, v2.h"',
                                             "directory": '"/src"'})


# --------------------------------------------------------------------------- split_operands


@pytest.mark.parametrize("text, parts", [
    ("i32 %a, i32 %b", ["i32 %a", "i32 %b"]),
    ("i32 %i, ptr @\"odd name\", align 4, !dbg !25",
     ["i32 %i", "ptr @\"odd name\"", "align 4", "!dbg !25"]),
    ("i32, ptr getelementptr inbounds ([4 x [8 x i32]], ptr @tab, i64 0, i64 1, i64 2), align 8",
     ["i32", "ptr getelementptr inbounds ([4 x [8 x i32]], ptr @tab, i64 0, i64 1, i64 2)",
      "align 8"]),
    # a constant-expression GEP nested inside another one
    (("float, ptr getelementptr (i8, ptr getelementptr inbounds ([4 x float], ptr @g, i64 0, "
     "i64 1), i64 4), align 4"),
     ["float", ("ptr getelementptr (i8, ptr getelementptr inbounds ([4 x float], ptr @g, i64 0, "
      "i64 1), i64 4)"), "align 4"]),
    ("<2 x float> <float 1.0, float 2.0>, ptr %p", ["<2 x float> <float 1.0, float 2.0>", "ptr %p"]),
    ("{ i32, float } { i32 1, float 2.0 }, ptr %p", ["{ i32, float } { i32 1, float 2.0 }", "ptr %p"]),
    ("i32 %r, label %d [ i32 0, label %a ]", ["i32 %r", "label %d [ i32 0, label %a ]"]),
    ('ptr @.str, i8 c"a,b"', ["ptr @.str", 'i8 c"a,b"']),
    ("i32 0", ["i32 0"]),
    ("", []),
])
def test_split_operands(text, parts):
    assert split_operands(text) == parts
