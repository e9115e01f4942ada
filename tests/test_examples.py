"""The worked examples in ``examples/`` (docs/guides/examples.md): they import only ropeproof's public names,
each runs end to end with its numbers checked against independent references (mpmath closed forms, the
softmax link), its claims file runs through ``ropeproof check --claims`` with the deliberately false claim
reported violated and its witness naming the competitor, its property tests pass, and the guide shows
what the examples really print and hold."""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import itertools
import json
import math
import re
import sys
from pathlib import Path
from types import ModuleType

import mpmath
import numpy as np
import pytest

import ropeproof

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GUIDE = ROOT / "docs" / "guides" / "examples.md"
THIRD_PARTY = frozenset({"numpy", "sympy", "torch", "hypothesis", "transformers", "scipy"})
"""What an example may import besides the standard library, ropeproof's public names and its own folder."""
PACKAGES = (
    "ropeproof",
    "ropeproof.machinery",
    "ropeproof.theory",
    "ropeproof.constructions",
    "ropeproof.verify",
    "ropeproof.verify.kernel",
    "ropeproof.verify.measure",
    "ropeproof.verify.measure.exact",
    "ropeproof.verify.measure.ps",
    "ropeproof.verify.sweep_runs",
    "ropeproof.verify.interop",
    "ropeproof.verify.interop.hf",
    "ropeproof.verify.interop.tl",
    "ropeproof.verify.studies",
    "ropeproof.verify.studies.beyond",
    "ropeproof.verify.studies.errata",
    "ropeproof.verify.studies.training",
    "ropeproof.verify.studies.llm_eval",
    "ropeproof.verify.testing",
    "ropeproof.paper_figures",
    "ropeproof.claims",
    "ropeproof.commands",
)
"""The public packages (tests/test_public_api.py: every package whose dotted name has no ``_`` part)."""
PUBLIC = {name: frozenset(importlib.import_module(name).__all__) for name in PACKAGES}
"""The public modules and their public names: ``from ropeproof import ...``, ``from ropeproof.<layer>
import ...``."""


# ------------------------------------------------------------------------------------ public names only


def private_imports(
    source: str, siblings: set[str], third_party: frozenset[str] | None = THIRD_PARTY
) -> list[str]:
    """Every import in ``source`` outside ropeproof's public names, the standard library,
    ``third_party`` and the ``siblings`` (the example's own modules), one line each. With
    ``third_party=None`` only ropeproof's imports are judged (the docs use other libraries freely)."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                bad.append(f"line {node.lineno}: relative import from {'.' * node.level}{module}")
            elif module in PUBLIC:
                bad += [
                    f"line {node.lineno}: {module}.{a.name} is not public"
                    for a in node.names
                    if a.name not in PUBLIC[module] and f"{module}.{a.name}" not in PUBLIC
                ]
            elif not _allowed(module, siblings, third_party):
                bad.append(f"line {node.lineno}: from {module} import ...")
        elif isinstance(node, ast.Import):
            bad += [
                f"line {node.lineno}: import {a.name}"
                for a in node.names
                if not _allowed(a.name, siblings, third_party)
            ]
        elif isinstance(node, ast.Attribute) and _dotted(node).startswith("ropeproof."):
            *package, attr = _dotted(node).split(".")
            module = ".".join(package)
            if module in PUBLIC and attr not in PUBLIC[module] and f"{module}.{attr}" not in PUBLIC:
                bad.append(f"line {node.lineno}: {module}.{attr} is not public")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("import_module", "__import__"):
                bad.append(f"line {node.lineno}: {name}(...) (imports must be static to be checked)")
    return bad


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for an attribute chain on a name, else ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def _allowed(module: str, siblings: set[str], third_party: frozenset[str] | None = THIRD_PARTY) -> bool:
    top = module.split(".")[0]
    if top == "ropeproof":  # a package: only the public ones (their names are checked above)
        return module in PUBLIC
    if third_party is None:
        return True
    return top in sys.stdlib_module_names or top in third_party or module in siblings


def example_files() -> list[Path]:
    return sorted(EXAMPLES.rglob("*.py"))


def test_the_scan_knows_every_public_package(package_modules: dict[str, Path]) -> None:
    public = {m for m, path in package_modules.items() if path.name == "__init__.py" and "._" not in m}
    assert set(PACKAGES) == public


def test_the_examples_import_only_public_names() -> None:
    files = example_files()
    assert {p.parent.name for p in files} >= {"previous_token", "semantic_channel"}
    problems = {}
    for path in files:
        siblings = {p.stem for p in path.parent.glob("*.py")}
        bad = private_imports(path.read_text(), siblings)
        if bad:
            problems[str(path.relative_to(ROOT))] = bad
    assert not problems, f"imports outside ropeproof's public API: {problems}"


CODE_BLOCK = re.compile(r"^```(?:python|py)\n(.*?)^```", flags=re.S | re.M)
IMPORT_LINE = re.compile(
    r"^[ \t]*(?:>>> )?((?:from ropeproof[\w.]* import (?:\([^)]*\)|[^\n]*))"
    r"|(?:import ropeproof[\w.]*[^\n]*))$",
    flags=re.M,
)
"""An import of ropeproof on a line of its own: in a code block, in a string a block writes to a file, in a
docstring's example (``::`` blocks and ``>>>`` lines)."""
INLINE_IMPORT = re.compile(r"``((?:from ropeproof[\w.]* import|import ropeproof)[^`]*)``")
"""An import written inline in a docstring: ````from ropeproof import X````."""
LIBRARY = ("ropeproof", "machinery", "theory", "constructions", "verify", "paper_figures")


def imports_in_text(text: str, inline: bool = False) -> list[str]:
    """Every ropeproof import statement written in ``text`` (each on its own line, or inline between
    double backquotes when ``inline``), one statement each, parenthesised lists joined."""
    found = [m.group(1) for m in IMPORT_LINE.finditer(text)]
    if inline:
        found += [" ".join(m.group(1).split()).rstrip(",. ") for m in INLINE_IMPORT.finditer(text)]
    return [" ".join(s.replace("(", " ").replace(")", " ").split()).rstrip(",") for s in found]


def private_in_code(code: str) -> list[str]:
    """The private imports of a piece of code, one message each: every ropeproof import line found in it
    (strings included), and, when it parses, attribute paths such as ``ropeproof.verify.kernel._rope``."""
    bad = [problem for statement in imports_in_text(code) for problem in _statement_problems(statement)]
    with contextlib.suppress(SyntaxError):  # an excerpt (``py`` blocks may be fragments): lines read above
        bad += private_imports(code, set(), third_party=None)
    return sorted({problem.split(": ", 1)[1] for problem in bad})


def _statement_problems(statement: str) -> list[str]:
    try:
        return private_imports(statement, set(), third_party=None)
    except SyntaxError:
        return [f"line 1: {statement} does not parse"]


def docstrings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, kinds))]
    return [doc for doc in map(ast.get_docstring, nodes) if doc]


def docs_problems() -> dict[str, list[str]]:
    """Every private import in the README's and the docs' code blocks, the tutorial notebook and the
    library's docstrings, by file."""
    problems: dict[str, list[str]] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        bad = [b for block in CODE_BLOCK.findall(page.read_text()) for b in private_in_code(block)]
        if bad:
            problems[str(page.relative_to(ROOT))] = bad
    for script in sorted((ROOT / "docs").glob("*.py")):
        if bad := private_in_code(script.read_text()):
            problems[str(script.relative_to(ROOT))] = bad
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            bad = [
                f"{s}: {p.split(': ', 1)[1]}"
                for doc in docstrings(path)
                for s in imports_in_text(doc, inline=True)
                for p in _statement_problems(s)
            ]
            if bad:
                problems[str(path.relative_to(ROOT))] = bad
    return problems


def test_the_docs_and_docstrings_import_only_public_names() -> None:
    """Every page of ``docs/``, the README, the tutorial notebook and every docstring's example import
    ropeproof's public names only (``from ropeproof import ...``, ``from ropeproof.<layer> import ...``)."""
    problems = docs_problems()
    assert not problems, f"imports of private names: {problems}"


def test_the_docs_scan_finds_private_imports() -> None:
    page = (
        '```python\nimport textwrap\nfrom ropeproof import sweep_index\ncode = textwrap.dedent("""\n'
        '    from ropeproof.verify.measure.exact._index_sweep import index_sweep\n""")\n```\n'
        "```py\nfrom ropeproof.theory import (\n    RopeSpec,\n    _private_name,\n)\n```\n"
    )
    bad = [b for block in CODE_BLOCK.findall(page) for b in private_in_code(block)]
    assert len(bad) == 2 and "ropeproof.verify.measure.exact._index_sweep" in bad[0]
    assert bad[1] == "ropeproof.theory._private_name is not public"
    doc = "Use ``from ropeproof.theory._family import Family``::\n\n    >>> from ropeproof import RopeSpec"
    assert imports_in_text(doc, inline=True) == [
        "from ropeproof import RopeSpec",
        "from ropeproof.theory._family import Family",
    ]
    assert private_in_code("from ropeproof import RopeSpec\nfrom ropeproof.commands import main\n") == []


@pytest.mark.parametrize(
    "source",
    [
        "from ropeproof.verify.interop.hf._export import export_head",
        "import ropeproof.verify.measure.exact._head_sweep",
        "from ropeproof import _EXPORTS",
        "from ropeproof.claims._registry import Claim",
        "from ropeproof.claims import builtin_topics_private",
        "from . import sibling",
        "import ropeproof\nropeproof.verify.kernel.rope",
        "import ropeproof.verify.kernel\nropeproof.verify.kernel._rope.apply_rope",
        "from ropeproof._cli import main",
        "from ropeproof.verify.measure.exact import sweep_tables_private",
        "import importlib\nimportlib.import_module('ropeproof.theory._family')",
        "import pandas",
    ],
)
def test_the_scan_finds_a_private_import(source: str) -> None:
    assert private_imports(source, {"sibling"}), source


def test_the_scan_accepts_what_a_user_may_import() -> None:
    source = (
        "import sys\nfrom pathlib import Path\nimport numpy as np\nfrom hypothesis import given\n"
        "from ropeproof import check_bound, family_inputs, export_head\n"
        "from ropeproof.claims import ClaimSet\n"
        "import ropeproof\nropeproof.sweep_head\nfrom my_head import thing\n"
        "from ropeproof.verify.measure.exact import index_sweep\nimport ropeproof.verify.interop.hf\n"
        "ropeproof.verify.interop.hf.export_model\nfrom ropeproof.commands import main\n"
    )
    assert private_imports(source, {"my_head"}) == []


# ------------------------------------------------------------------------------------ helpers


def example_module(folder: str, name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The example's module ``name``, imported as a user's script would (its folder on ``sys.path``)."""
    monkeypatch.syspath_prepend(str(EXAMPLES / folder))
    return importlib.import_module(name)


def run_quietly(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


def transcripts(guide: Path = GUIDE) -> dict[str, list[str]]:
    """The guide's ```text blocks that begin with ``$ python examples/...``: the script's name -> the lines
    the guide says it prints."""
    out = {}
    for block in re.findall(r"^```text\n(.*?)^```", guide.read_text(), flags=re.S | re.M):
        first, *rest = block.rstrip("\n").split("\n")
        m = re.match(r"\$ python examples/\w+/(\w+)\.py", first)
        if m:
            out[m.group(1)] = rest
    return out


def check_report(path: str, pattern: str, tmp_path: Path, guide: Path = GUIDE) -> dict[str, dict]:
    """``ropeproof check --claims PATH --only PATTERN --strict``: exit 0, and every claim by id."""
    from ropeproof._cli import main

    out = tmp_path / "report"
    argv = ["check", "--claims", str(EXAMPLES / path), "--only", pattern, "--no-figures", "--no-progress"]
    with contextlib.redirect_stdout(io.StringIO()):
        # --jobs 1: one process (tests/ropeproof/test_check_pool.py runs two)
        code = main([*argv, "--strict", "--jobs", "1", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["unexpected"] == [] and report["regressions"] == []
    found = {c["id"]: c for c in report["claims"]}
    assert found and all(c["origin"] == "user" for c in found.values())  # listed under "Your claims"
    assert "### Your claims" in (out / "report.md").read_text()
    guide_bullets = [line for line in _guide_block(f"report.md for {path}", guide) if line.startswith("- **")]
    md = (out / "report.md").read_text().splitlines()
    missing = [line for line in guide_bullets if line not in md]
    assert guide_bullets and not missing, missing  # the guide shows the report as it is
    return found


def _guide_block(title: str, guide: Path = GUIDE) -> list[str]:
    for block in re.findall(r"^```text\n(.*?)^```", guide.read_text(), flags=re.S | re.M):
        first, *rest = block.rstrip("\n").split("\n")
        if first == f"# {title}":
            return rest
    raise AssertionError(f"the guide has no block titled {title!r}")


def assert_false_claim_reported(found: dict[str, dict], claim_id: str, n: int, competitor: str) -> dict:
    """The deliberately false claim: expected violated, got violated, pinned at its first violation, with
    the competitor named in its counterexample."""
    c = found[claim_id]
    assert c["expected"] == "violated" and c["verdict"] == "violated" and c["certified"] is True
    assert c["status"] == "expected violated, got violated" and c["pins"] == {"first_violation_n": n}
    w = c["counterexample"]
    assert w["n"] == n and w["competitor_token"] == competitor
    assert f"winning competitor '{competitor}'" in w["witness"]
    return w


def run_property_tests(module: ModuleType) -> list[str]:
    names = [n for n in dir(module) if n.startswith("test_") and callable(getattr(module, n))]
    for name in names:
        getattr(module, name)()
    return names


# ------------------------------------------------------------------------------------ previous token


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_previous_token_example_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    walk = example_module("previous_token", "previous_token_walkthrough", monkeypatch)
    heads = example_module("previous_token", "previous_token_head", monkeypatch)
    results = run_quietly(walk.main, tmp_path)

    # the margins against mpmath: flat at the n = 2 value sum_k (1 - cos theta_k) over the kept planes
    with mpmath.workdps(40):
        for p in (1.0, 0.75, 0.5):
            exact = float(sum(1 - mpmath.cos(mpmath.mpf(t)) for t in heads.frequencies(p) if t))
            m = results["sweeps"][p].columns["margin_inf"]
            assert np.abs(m - exact).max() < 1e-12, p
        assert (results["sweeps"][0.0].columns["margin_inf"] == 0).all()  # NoPE: every offset ties
        # the false bound: the witness's logits from the closed form sum_k cos((d - 1) theta_k)
        first = results["bounds"]["keeps_half"].summary()["first_violation"]
        w = first["witness"]
        assert first["n"] == 460 and (w["target_offset"], w["competitor_offset"]) == (-1, -459)
        rival = float(sum(mpmath.cos(458 * mpmath.mpf(t)) for t in heads.frequencies(0.25)))
        assert abs(w["competitor_logit"] - rival) < 1e-12 and w["target_logit"] == 16.0
        full = sum(1 - mpmath.cos(mpmath.mpf(t)) for t in heads.frequencies(1.0))
        assert 16 - rival < float(heads.HALF) <= full / 2  # below the bound, which is about half of RoPE's
    assert results["bounds"]["costs_little"].holds and results["bounds"]["nope"].holds

    names = {p.name for p in results["figures"]}
    for stem in ("previous_token_margins", "previous_token_keeps_half"):
        assert {f"{stem}.{ext}" for ext in ("png", "pdf", "csv")} | {f"{stem}.caption.txt"} <= names
    assert ropeproof.load_head(results["head_dir"]).family == heads.PREVIOUS

    ex = results["export"]
    assert math.isclose(ex["scale"], math.log(255 * 0.99 / 0.01) / ex["margin"], rel_tol=1e-12)
    replay = ex["replay"]
    assert (
        replay.lengths == "every n in 2..256" and replay.first_wrong_n is None and replay.exact_horizon == 256
    )
    assert ex["answer"] == "sat"  # 'the cat sat on': the word one back from the query

    assert transcripts()["previous_token_walkthrough"] == results["lines"]


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_previous_token_claims_file(tmp_path: Path) -> None:
    found = check_report("previous_token/previous_token_claims.py", "examples.previous-token.*", tmp_path)
    assert set(found) == {
        "examples.previous-token.p075-costs-under-1e-6",
        "examples.previous-token.nope-cannot",
        "examples.previous-token.p025-keeps-half",
        "examples.previous-token.spectrum-first-violation",
        "examples.previous-token.spectrum-margins-agree",
        "examples.previous-token.fraction-scan",
    }
    spectral = found["examples.previous-token.spectrum-first-violation"]
    assert spectral["status"] == "expected holds, got holds" and spectral["certified"]
    assert (
        spectral["figures"]["first_violation_n"]
        == spectral["figures"]["check_bound_first_violation_n"]
        == 460
    )
    scan = found["examples.previous-token.fraction-scan"]
    assert scan["status"] == "expected holds, got holds" and scan["figures"]["runs"] == [[0.3125, 1.0]]
    assert scan["figures"]["check_bound_disagrees"] == {}
    assert found["examples.previous-token.spectrum-margins-agree"]["status"] == "expected holds, got holds"
    for claim_id in ("examples.previous-token.p075-costs-under-1e-6", "examples.previous-token.nope-cannot"):
        assert found[claim_id]["status"] == "expected holds, got holds" and found[claim_id]["certified"]
    w = assert_false_claim_reported(found, "examples.previous-token.p025-keeps-half", 460, "the")
    assert (w["target_offset"], w["competitor_offset"]) == (-1, -459)
    assert (
        json.loads("\n".join(_guide_block("counterexample of examples.previous-token.p025-keeps-half"))) == w
    )


def test_previous_token_spectrum_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spectrum view against mpmath: the lead L(m) = sum_k (1 - cos(m theta_k)) of 0.25-RoPE first falls
    below HALF at m = 458 (its enclosure holds the 40-digit value; every earlier m >= 1 is above), and the
    example's exact sweep's margin at n = 460 lies in that enclosure; offset 0 (the target) is not checked."""
    spec = example_module("previous_token", "previous_token_spectrum", monkeypatch)
    heads = example_module("previous_token", "previous_token_head", monkeypatch)
    swept = spec.margin_sweep(0.25, heads.HALF, 2000)
    assert swept.first_violation == 458 and swept.exact_first and swept.start == 1
    assert spec.first_failing_length(swept.first_violation) == 460 and spec.first_failing_length(1) == 2
    half = mpmath.mpf(heads.HALF)
    with mpmath.workdps(40):
        thetas = [mpmath.mpf(t) for t in heads.frequencies(0.25) if t]

        def lead(m: int) -> mpmath.mpf:
            return mpmath.fsum(1 - mpmath.cos(m * t) for t in thetas)

        lo, hi = swept.witness
        assert lo <= lead(458) <= hi and lead(458) < half
        assert all(lead(m) >= half for m in range(1, 458))
    margins, errors = spec.margins_from_spectrum(0.25, 500)
    head = ropeproof.sweep_head(ropeproof.compile_construction(heads.previous_token_head(0.25)), 500)
    assert lo <= head.columns["margin_inf"][460 - 2] <= hi
    assert np.abs(margins - head.columns["margin_inf"]).max() <= errors.max()


def test_previous_token_property_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = run_property_tests(example_module("previous_token", "test_previous_token_head", monkeypatch))
    assert len(ran) == 5


# ------------------------------------------------------------------------------------ semantic channel


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_semantic_example_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    walk = example_module("semantic_channel", "semantic_walkthrough", monkeypatch)
    heads = example_module("semantic_channel", "semantic_head", monkeypatch)
    results = run_quietly(walk.main, tmp_path)
    swept = results["sweeps"]
    lowest = heads.frequencies("lowest")  # the guide: "theta from 1e-3 down to 1.8e-4"
    assert math.isclose(lowest[0], 1e-3, rel_tol=1e-12) and round(lowest[-1], 5) == 1.8e-4

    with mpmath.workdps(40):
        content = float(4 * (1 - mpmath.cos(mpmath.pi / 4)))  # 4 - 2 sqrt(2)
        assert np.abs(swept["p-RoPE"].columns["margin_inf"][1:] - content).max() < 1e-12
        # the first failure on the lowest planes: 'a' 767 back against 'b' (one code on) 766 back
        first = results["bounds"]["never_fails"].summary()["first_violation"]
        w = first["witness"]
        assert first["n"] == 768 and (w["target_token"], w["competitor_token"]) == ("a", "b")
        thetas = [mpmath.mpf(t) for t in heads.frequencies("lowest")]
        target = sum(mpmath.cos(767 * t) for t in thetas)
        rival = sum(mpmath.cos(mpmath.pi / 4 - 766 * t) for t in thetas)
        assert (
            abs(w["target_logit"] - float(target)) < 1e-12
            and abs(w["competitor_logit"] - float(rival)) < 1e-12
        )
        assert rival > target
    m = swept["lowest"].columns["margin_inf"]
    assert (m[: 767 - 1] > 0).all() and m[768 - 2] < 0
    assert swept["highest"].columns["margin_inf"][1] < 0  # the highest planes fail at n = 3
    assert results["bounds"]["p_rope"].holds and results["bounds"]["horizon"].holds

    for label, estimates in results["du"].items():  # every sampled interval holds its exact reference
        assert all(e.low <= e.reference <= e.high for e in estimates), label
    rope = results["du"]["RoPE"]
    assert all(b.low > a.high for a, b in itertools.pairwise(rope)) and rope[-1].low > 0.48
    assert results["du"]["0.75-RoPE"][-1].high < 0.45

    ex = results["export"]
    dense, sparse = ex["lowest"]["replays"]
    assert dense.first_wrong_n is None and dense.lengths == "every n in 2..256"
    wrong = sparse.first_wrong  # positive exact margin, wrong answer: the scale chosen for n = 256 is short
    assert wrong["n"] < sparse.exact_horizon == 767 and wrong["margin"] > 0
    assert wrong["required_scale"] > ex["lowest"]["scale"]
    assert math.isclose(
        ex["lowest"]["scale"], math.log(255 * 0.99 / 0.01) / ex["lowest"]["margin"], rel_tol=1e-12
    )
    assert math.isclose(ex["p-RoPE"]["margin"], content, rel_tol=1e-12)
    assert ex["p-RoPE"]["replays"][0].first_wrong_n is None and ex["answer"] == "h"

    assert transcripts()["semantic_walkthrough"] == results["lines"]


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_semantic_claims_file(tmp_path: Path) -> None:
    found = check_report("semantic_channel/semantic_claims.py", "examples.semantic.*", tmp_path)
    holds = ("examples.semantic.p-rope-is-robust", "examples.semantic.lowest-planes-horizon")
    for claim_id in holds:
        assert found[claim_id]["status"] == "expected holds, got holds" and found[claim_id]["certified"]
    du = found["examples.semantic.du-token-consistency"]
    assert du["status"] == "expected holds, got holds" and not du["certified"]  # sampled, not certified
    assert all(du["figures"]["decided"].values())
    spectral = {
        "examples.semantic.spectrum-signal-bound": ("wrong_by_n", 1349),
        "examples.semantic.spectrum-p-rope-flat": ("at_least_4", "holds"),
        "examples.semantic.spectrum-base-scan": ("good_runs", 1),
    }
    for claim_id, (figure, value) in spectral.items():
        c = found[claim_id]
        assert c["status"] == "expected holds, got holds" and c["certified"] and c["figures"][figure] == value
    assert found["examples.semantic.spectrum-signal-bound"]["figures"]["check_bound_first_violation_n"] == 768
    w = assert_false_claim_reported(found, "examples.semantic.lowest-planes-never-fail", 768, "b")
    assert (w["target_offset"], w["competitor_offset"]) == (-767, -766)
    assert (
        json.loads("\n".join(_guide_block("counterexample of examples.semantic.lowest-planes-never-fail")))
        == w
    )


def test_semantic_spectrum_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spectrum view against mpmath: on the lowest planes the target's logit B(d) first falls below the
    near rival's R = sum_k cos(pi/4 - theta_k) at d = 1348 (its enclosure holds the 40-digit B(d) - R; every
    d in 2..1347 is above), and the example's exact sweep is already wrong at n = 1349, by at least that."""
    spec = example_module("semantic_channel", "semantic_spectrum", monkeypatch)
    heads = example_module("semantic_channel", "semantic_head", monkeypatch)
    swept = spec.signal_sweep("lowest", 2000)
    assert swept.first_violation == 1348 and swept.exact_first and swept.start == 2
    with mpmath.workdps(40):
        thetas = [mpmath.mpf(t) for t in heads.frequencies("lowest")]
        rival = mpmath.fsum(mpmath.cos(mpmath.pi / 4 - t) for t in thetas)
        assert spec.rival_level(heads.frequencies("lowest")) < rival

        def lead(d: int) -> mpmath.mpf:
            return mpmath.fsum(mpmath.cos(d * t) for t in thetas) - rival

        lo, hi = swept.witness
        assert lead(1348) < 0 and lo - 1e-15 <= lead(1348) <= hi  # the sweep's R is rounded down
        assert all(lead(d) >= 0 for d in range(2, 1348))
    head = ropeproof.sweep_head(
        ropeproof.compile_construction(heads.semantic_head("lowest")), 1349, gap_inf_limit=0
    )
    assert head.columns["margin_inf"][1349 - 2] <= float(lead(1348)) + 1e-12
    assert spec.signal_sweep("p-RoPE", 2000).holds


def test_semantic_property_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    ran = run_property_tests(example_module("semantic_channel", "test_semantic_head", monkeypatch))
    assert len(ran) == 7


def test_the_saved_heads_sweep_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's ``ropeproof sweep --head DIR --bound ... --certified`` lines on the heads the examples
    save: the recorded family; the semantic head's first violation and competitor as in Python; the
    0.75-RoPE previous-token head's bound holding at every length."""
    from ropeproof._cli import main

    semantic = example_module("semantic_channel", "semantic_head", monkeypatch)
    previous = example_module("previous_token", "previous_token_head", monkeypatch)
    assert previous.PREVIOUS.max_length() is None  # one fixed offset: complete at every length
    runs = {
        "lowest": (semantic.semantic_head("lowest"), ["2:2000:400", "--bound", "0"]),
        "p0.75": (previous.previous_token_head(0.75), ["2:2000:500", "--bound", "0.686"]),
    }
    summaries = {}
    for name, (construction, args) in runs.items():
        path = ropeproof.compile_construction(construction).save(tmp_path / name)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            argv = [
                "sweep",
                "--head",
                str(path),
                "--lengths",
                *args,
                "--relation",
                ">=",
                "--certified",
                "--json",
            ]
            assert main(argv) == 0
        summaries[name] = json.loads(out.getvalue())["summary"]
        assert summaries[name]["family_source"] == "recorded"
    first = summaries["lowest"]["first_violation"]
    assert summaries["lowest"]["family"] == "find-the-word"
    assert first["n"] == 768 and first["witness"]["competitor_token"] == "b"
    assert summaries["p0.75"]["verdict"] == "holds" and summaries["p0.75"]["rows"] == {"holds": 1999}
    for line in ("--bound 0 --relation '>=' --certified --json", "--bound 0.686 --relation '>=' --certified"):
        assert line in GUIDE.read_text()


# ------------------------------------------------------------------------------------ the guide


def test_the_guide_shows_the_examples_code_as_it_is() -> None:
    """Every ```py block of the guide is an excerpt of a file under examples/ (so it cannot drift)."""
    text = GUIDE.read_text()
    blocks = re.findall(r"^```py\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 4
    sources = [p.read_text() for p in example_files()]
    stale = [b.splitlines()[0] for b in blocks if not any(b in s for s in sources)]
    assert not stale, f"guide excerpts not found in examples/: {stale}"
    for needed in ("second-hand", "check_bound", "certified=True", "plot_sweeps", "replay_worst_cases"):
        assert needed in text, needed


# ------------------------------------------------------------------------------------ checks of other papers

ROFORMER_GUIDE = ROOT / "docs" / "guides" / "roformer-decay.md"
BASE_GUIDE = ROOT / "docs" / "guides" / "base-bounds.md"


def _mp_roformer(m: int) -> mpmath.mpf:
    """RoFormer's relative upper bound at offset m for d = 128, base 10^4, in mpmath (40 digits)."""
    with mpmath.workdps(40):
        s, total = mpmath.mpc(0), mpmath.mpf(0)
        for k in range(64):
            s += mpmath.expj(m * mpmath.mpf(10000.0 ** (-2.0 * k / 128)))
            total += abs(s)
        return total / 64


def _mp_men(base: float, m: int) -> mpmath.mpf:
    """Men et al.'s B_m(b) for d = 128 at the float frequencies b ** (-2i/128), in mpmath."""
    with mpmath.workdps(40):
        return mpmath.fsum(mpmath.cos(m * mpmath.mpf(base ** (-2.0 * i / 128))) for i in range(64))


def test_roformer_example_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walk = example_module("roformer_decay", "roformer_walkthrough", monkeypatch)
    results = run_quietly(walk.main, tmp_path)
    decay = results["decay"]
    # the first rise against mpmath: f decreases at every step before m = 18 and rises at 18 -> 19
    exact = [_mp_roformer(m) for m in range(20)]
    assert (
        decay.first_rise == 18 and all(exact[m + 1] < exact[m] for m in range(18)) and exact[19] > exact[18]
    )
    assert all(abs(mpmath.mpf(decay.values[m]) - exact[m]) <= decay.errors[m] for m in range(20))
    # the windows' maxima at their offsets, and the first window whose maximum rises
    for w in results["maxima"][7:10]:
        assert abs(mpmath.mpf(w["max"]) - _mp_roformer(w["at"])) <= w["error"]
    assert results["rise"]["window"] == [256, 512]
    assert {p.name for p in results["figures"]} >= {"roformer_decay.png", "roformer_decay.csv"}
    assert transcripts(ROFORMER_GUIDE)["roformer_walkthrough"] == results["lines"]


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_roformer_claims_file(tmp_path: Path) -> None:
    found = check_report("roformer_decay/roformer_claims.py", "examples.roformer.*", tmp_path, ROFORMER_GUIDE)
    assert {c: found[c]["status"] for c in found} == {
        "examples.roformer.decays-monotonically": "expected violated, got violated",
        "examples.roformer.halves-by-16": "expected holds, got holds",
        "examples.roformer.decay-is-long-term": "expected violated, got violated",
    }
    assert all(c["certified"] for c in found.values())
    assert found["examples.roformer.decays-monotonically"]["counterexample"]["m"] == 18


@pytest.mark.e2e  # a whole walkthrough (four scans of ~900 bases each): CI's second pass (-m e2e)
def test_base_bounds_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walk = example_module("base_bounds", "base_bounds_walkthrough", monkeypatch)
    results = run_quietly(walk.main, tmp_path)
    first = results["first"]
    assert first.first_violation == 12223 and first.exact_first and first.certified
    lo, hi = first.witness
    assert lo <= _mp_men(3.1e5, 12223) <= hi < 0
    assert all(_mp_men(3.1e5, m) >= 0 for m in range(12123, 12223))  # the hundred rows before it
    # every grid verdict of the first two rows against an independent float64 brute force (no grid base
    # is within 1e-9 of 0 there)
    for label in ("1k", "2k"):
        scan, length = results["scans"][label], {"1k": 1024, "2k": 2048}[label]
        m = np.arange(length + 1, dtype=np.float64)
        for base, verdict in zip(scan.values, scan.verdicts, strict=True):
            low = np.cos(np.multiply.outer(m, base ** (-np.arange(64) / 64.0))).sum(axis=1).min()
            assert abs(low) > 1e-9 and verdict == ("good" if low >= 0 else "bad"), (label, base)
    assert len(results["scans"]["1k"].intervals) == 3 and not results["scans"]["1k"].is_interval
    assert transcripts(BASE_GUIDE)["base_bounds_walkthrough"] == results["lines"]


@pytest.mark.e2e  # a whole command run from outside: CI's second pass (-m e2e)
def test_base_bounds_claims_file(tmp_path: Path) -> None:
    found = check_report("base_bounds/base_bounds_claims.py", "examples.base-bounds.*", tmp_path, BASE_GUIDE)
    assert all(c["certified"] for c in found.values())
    w = found["examples.base-bounds.row-16k-1000"]["counterexample"]
    assert w["m"] == 12223 and w["exact_first"] and w["B_m"][1] < 0
    assert found["examples.base-bounds.row-32k-1000"]["counterexample"]["m"] == 27685
    assert found["examples.base-bounds.good-bases-form-an-interval-1k"]["figures"]["good_runs"] == 3
    table = found["examples.base-bounds.table-brackets"]
    assert table["status"] == "expected holds, got holds" and table["figures"]["wrong"] == []
