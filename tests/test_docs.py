"""The documentation in docs/ against the code: every equation and method section the code
cites is documented with the same number, every device-file field the code reads is
explained, every link and path in the docs resolves, and nothing points outside the
repository. Pure text: no compiler, no GPU."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from cgpredict.devices import EnergyTable, GPUDevice, Provenance
from cgpredict.fpga.device import OP_CLASSES, FPGADevice, OperatorCost

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: where the code that cites the method lives
CODE_DIRS = ("cgpredict", "instrument", "runtime", "validation", "bench")
CODE_SUFFIXES = {".py", ".toml", ".md", ".c", ".h", ".cu", ".cuh"}

# ---- citations in the code ------------------------------------------------------------------

#: "eq. (16)", "Eq. 16", "eqs. (1)-(8)", "eqs. 12-18", "eq. T2", "eqs. T1-T5"
EQ = re.compile(r"\b[Ee]qs?(?:\.\s*\(?|\s*\(|\s+)(T?\d+)\)?(?:\s*[-\u2013]\s*\(?(T?\d+)\)?)?")
#: a trailing comment naming the equation a line implements: "# (13)", "# §3 (7)"
COMMENT = re.compile(r"#\s*(§\s*3\s*)?\((\d+)\)")
#: a model's case label, as the reports print it: "eq16"
CASE = re.compile(r"[\"'](eq\d+)[\"']")
#: a section of the method: "SPEC §2.3", "§2.2-2.6", "SPEC section 8", "(SPEC 6)"
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)?)(?:\s*[-\u2013]\s*(\d+(?:\.\d+)?))?")
SPEC_WORD = re.compile(r"\bSPEC (?:section )?(\d+(?:\.\d+)?)")

HONG_KIM = "cgpredict/models/hongkim.py"  # its bare numbers are §3's (module docstring)


def _code_files() -> list[Path]:
    """Every source and data file of the code, sorted."""
    out = []
    for top in CODE_DIRS:
        for p in (ROOT / top).rglob("*"):
            if p.suffix in CODE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts:
                out.append(p)
    return sorted(out)


def _scheme(text: str, start: int, rel: str, number: str) -> str:
    """Which numbering an equation number at ``start`` of ``text`` belongs to: "fpga" (T1-T5),
    "hk" (§3, Hong & Kim) or "cgp" (the CGPredict model)."""
    if number.startswith("T"):
        return "fpga"
    before = " ".join(text[max(start - 16, 0) : start].split())
    if before.endswith(("§3", "§3 (")):
        return "hk"
    if rel == HONG_KIM and not before.endswith("SPEC"):
        return "hk"
    return "cgp"


def code_equations() -> dict[tuple[str, str], set[str]]:
    """{(scheme, number): files citing it} over the code. A range cites its two ends."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(errors="replace")
        for m in EQ.finditer(text):
            for number in filter(None, m.groups()):
                found.setdefault((_scheme(text, m.start(), rel, number), number), set()).add(rel)
        if path.suffix == ".py":
            for m in COMMENT.finditer(text):
                hk = m.group(1) is not None or rel == HONG_KIM
                found.setdefault(("hk" if hk else "cgp", m.group(2)), set()).add(rel)
    return found


def code_cases() -> set[str]:
    """The case labels the models put in their results."""
    return {m.group(1) for p in (ROOT / "cgpredict" / "models").glob("*.py")
            for m in CASE.finditer(p.read_text())}  # fmt: skip


def code_sections() -> dict[str, set[str]]:
    """{section number: files citing it}: "§N" in the code (in device files only after
    "SPEC": they also cite datasheet sections) and "SPEC N" / "SPEC section N"."""
    found: dict[str, set[str]] = {}
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(errors="replace")
        for m in SECTION.finditer(text):
            if path.suffix == ".toml" and not text[max(m.start() - 5, 0) : m.start()].endswith(
                "SPEC "
            ):
                continue
            for number in filter(None, m.groups()):
                found.setdefault(number, set()).add(rel)
        for m in SPEC_WORD.finditer(text):
            found.setdefault(m.group(1), set()).add(rel)
    return found


# ---- what the docs define -------------------------------------------------------------------

LABEL = re.compile(r"\((T?\d+)\)\s*$")


def _docs_text() -> str:
    return "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))


def documented_equations() -> dict[str, set[str]]:
    """{scheme: labels} of the formulas in docs/models.md: the "(N)" ending a line inside a
    fenced block, in the §3 section for Hong & Kim, elsewhere for CGPredict, "(Tn)" for FPGA."""
    labels: dict[str, set[str]] = {"cgp": set(), "hk": set(), "fpga": set()}
    section, fenced = "", False
    for line in (DOCS / "models.md").read_text().splitlines():
        if line.startswith("## "):
            section = line
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = LABEL.search(line)
        if fenced and m:
            number = m.group(1)
            scheme = "fpga" if number.startswith("T") else "hk" if "§3" in section else "cgp"
            labels[scheme].add(number)
    return labels


# ---- the tests ------------------------------------------------------------------------------


def test_the_scanner_finds_what_the_code_cites():
    """The patterns see the citations they are meant to (else the next tests pass vacuously):
    a CGPredict number, a §3 number in a trailing comment, a §3 number in prose, a range end
    and an FPGA equation, each known from the source."""
    found = code_equations()
    assert ("cgp", "16") in found and "cgpredict/models/cgpredict_model.py" in found["cgp", "16"]
    assert "cgpredict/models/hongkim.py" in found["hk", "26"]  # "# (26)"
    assert "cgpredict/models/cgpredict_model.py" in found["hk", "24"]  # "§3 eq. (24)"
    assert "cgpredict/models/memlat.py" in found["cgp", "8"]  # "eqs. (1)-(8)"
    assert "cgpredict/models/hongkim.py" in found["cgp", "2"]  # "SPEC eq. (2)" there
    assert "cgpredict/fpga/tiling.py" in found["fpga", "T5"]
    assert {"eq16", "eq17", "eq22", "eq23", "eq24"} <= code_cases()
    assert {"2.3", "2.6", "3", "5"} <= set(code_sections())


def test_every_equation_the_code_cites_is_in_models_md():
    documented = documented_equations()
    missing = [
        f"{'§3 ' if scheme == 'hk' else ''}({n}) cited in {', '.join(sorted(files))}"
        for (scheme, n), files in sorted(code_equations().items())
        if n not in documented[scheme]
    ]
    assert not missing, "not in docs/models.md: " + "; ".join(missing)


def test_every_case_label_is_explained():
    text = (DOCS / "models.md").read_text()
    assert not [c for c in sorted(code_cases()) if f"`{c}`" not in text]


def test_every_section_the_code_cites_is_mapped():
    text = _docs_text()
    missing = [
        f"§{n} cited in {', '.join(sorted(files))}"
        for n, files in sorted(code_sections().items())
        if not re.search(rf"§{re.escape(n)}(?![\d]|\.\d)", text)
    ]
    assert not missing, "not in docs/: " + "; ".join(missing)


def _toml_keys(path: Path) -> set[str]:
    """Every key of a device file: a table as ``[name]``, any other key (an operator's inline
    table too) as its name. The remarks of ``[provenance.notes]`` are free text, left out."""
    keys: set[str] = set()

    def walk(table: dict, where: str) -> None:
        for k, v in table.items():
            keys.add(f"[{k}]" if isinstance(v, dict) and not where else k)
            if isinstance(v, dict) and (where, k) != ("provenance", "notes"):
                walk(v, k)

    walk(tomllib.loads(path.read_text()), "")
    return keys


def _undocumented(names: set[str], doc: Path) -> list[str]:
    """The names that ``doc`` does not explain: a key in backticks, a table as its heading."""
    text = doc.read_text()
    ticked = set(re.findall(r"`([^`]+)`", text))
    headed = {
        n for n in names if n.startswith("[") and re.search(rf"^#+ {re.escape(n)}", text, re.M)
    }
    return sorted(names - ticked - headed)


def test_every_gpu_device_field_is_documented():
    names = {f.name for f in fields(GPUDevice)} - {"name", "source_path", "energy", "provenance"}
    names |= {f.name for f in fields(EnergyTable)} | {f.name for f in fields(Provenance)}
    for p in (ROOT / "cgpredict" / "devices").glob("*.toml"):
        names |= _toml_keys(p)
    assert len(names) > 60
    missing = _undocumented(names, DOCS / "device-files.md")
    assert not missing, f"GPU device fields not in docs/device-files.md: {missing}"


def test_every_fpga_device_field_is_documented():
    internal = {"name", "source_path", "operators", "provenance"}
    names = {f.name for f in fields(FPGADevice)} - internal
    names |= {f.name for f in fields(OperatorCost)} | set(OP_CLASSES)
    for p in (ROOT / "cgpredict" / "fpga" / "devices").glob("*.toml"):
        names |= _toml_keys(p)
    assert len(names) > 40
    missing = _undocumented(names, DOCS / "device-files.md")
    assert not missing, f"FPGA device fields not in docs/device-files.md: {missing}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
DOCUMENTS = ["README.md", "CHANGELOG.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_relative_links_resolve(name):
    doc = ROOT / name
    broken = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor of the same page
        if not (doc.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{name}: links to nothing: {broken}"


PATH = re.compile(
    r"`((?:cgpredict|validation|tests|runtime|instrument|bench|polybench_c)/[^`\s:<>*(),]*)"
)


@pytest.mark.parametrize("name", [d for d in DOCUMENTS if d.startswith("docs/")])
def test_paths_named_in_docs_exist(name):
    """A file or folder the docs name in backticks exists (a renamed module must take its
    documentation along)."""
    missing = [p for p in PATH.findall((ROOT / name).read_text()) if not (ROOT / p).exists()]
    assert not missing, f"{name}: no such path: {missing}"


def _repo_files() -> list[Path]:
    """The repository's files: git's tracked and untracked-but-not-ignored ones."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files are not known")
    return [ROOT / n for n in out.decode().split("\0") if n]


def test_no_file_refers_outside_the_repository():
    outside = "../" + "shared/"  # spelt apart so that this file does not match itself
    hits = []
    for p in _repo_files():
        if not p.is_file() or p.stat().st_size > 5_000_000:
            continue
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue  # binary
        if outside in text:
            hits.append(p.relative_to(ROOT).as_posix())
    assert not hits, f"refer to {outside}: {hits}"
