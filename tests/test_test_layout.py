"""Tests mirror modules: every library module ``<folder>/<sub>/<module>.py`` (the folders of pyproject's
``package-dir``) has ``tests/<folder>/<sub>/test_<module>.py``, or an entry in :data:`COVERED_ELSEWHERE`
naming the test file that covers it, which must exist and import the module. An entry whose module has
since gained its own test module (or is gone) must leave the list, so the list only shrinks."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COVERED_ELSEWHERE: dict[str, str] = {
    # ---- the application: claims are exercised through the registry and the reports, commands
    # through the command line (their tests read the command's output, not the module's functions)
    "ropeproof.claims._corrections": "tests/ropeproof/test_errata.py",  # the corrections and `errata`
    "ropeproof.claims._letter_codes": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.claims._many_plane": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.claims._partial_induction": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.claims._ps": "tests/verify/measure/ps/test_scores.py",  # the PS claims next to the scores
    "ropeproof.claims._remark31": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.claims._rope": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.claims._thm31": "tests/ropeproof/claims/test_registry.py",
    "ropeproof.commands._cache": "tests/machinery/test_result_cache.py",  # `cache info` and `cache clear`
    "ropeproof.commands._check": "tests/ropeproof/test_cli.py",
    "ropeproof.commands._summaries": "tests/ropeproof/test_cli.py",
    "ropeproof.commands._compile": "tests/ropeproof/test_commands.py",
    "ropeproof.commands._derive": "tests/ropeproof/test_commands.py",
    "ropeproof.commands._errata": "tests/ropeproof/test_errata.py",
    "ropeproof.commands._export_model": "tests/ropeproof/test_commands.py",
    "ropeproof.commands._figures": "tests/ropeproof/test_commands.py",
    "ropeproof.commands._findings": "tests/ropeproof/test_findings.py",
    "ropeproof.commands._head_dir": "tests/ropeproof/commands/test_head_commands.py",  # import-head and
    "ropeproof.commands._import_head": "tests/ropeproof/commands/test_head_commands.py",  # --head DIR
    "ropeproof.commands._ps_score": "tests/ropeproof/test_commands.py",
    "ropeproof.commands._sweep": "tests/ropeproof/test_commands.py",
    "ropeproof._errata_report": "tests/ropeproof/test_errata.py",
    "ropeproof._findings_page": "tests/ropeproof/test_findings.py",  # the findings page, rendered and kept
    "ropeproof._report_markdown": "tests/ropeproof/test_report.py",  # report.md beside report.json
    "ropeproof._json_values": "tests/ropeproof/test_report.py",  # the report's JSON encoding
    # ---- theory: facts checked where they are used against independent references
    "ropeproof.theory._bounds": "tests/verify/measure/exact/test_bounds_and_sweep.py",  # bounds vs the sweep
    "ropeproof.theory._construction": "tests/constructions/test_construction_api.py",
    "ropeproof.theory._derive": "tests/constructions/test_construction_api.py",
    "ropeproof.theory._dirichlet": "tests/verify/studies/beyond/test_many_plane.py",  # Theorems D and R
    "ropeproof.machinery._errors": "tests/machinery/test_validate.py",  # the errors the checks raise
    # ---- constructions
    "ropeproof.constructions._compile": "tests/constructions/test_construction_api.py",
    "ropeproof.constructions._counterexamples": "tests/verify/studies/beyond/test_remark31.py",  # Remark 3.1
    # ---- verify: one test per concern where a concern spans modules; every errata row against mpmath
    **dict.fromkeys(
        (
            "ropeproof.verify.studies.errata._index",
            "ropeproof.verify.studies.errata._partial_induction",
            "ropeproof.verify.studies.errata._readout",
            "ropeproof.verify.studies.errata._retrieval",
        ),
        "tests/verify/studies/errata/test_rows_against_mpmath.py",
    ),
    "ropeproof.verify.measure.exact._families": "tests/verify/measure/exact/test_discrepancy.py",
    "ropeproof.verify.measure.exact._readout_margin": "tests/verify/studies/beyond/test_remark31.py",
    "ropeproof.verify.measure.exact._mp_reference": "tests/constructions/test_paper.py",  # mpmath reference
    "ropeproof.verify.measure.exact._retrieval_gap_inf": "tests/verify/measure/exact/test_retrieval_codes.py",
    "ropeproof.verify.studies.llm_eval._choose_provider": "tests/verify/studies/llm_eval/test_providers.py",
    "ropeproof.verify.studies.llm_eval._harness": "tests/verify/studies/llm_eval/test_run_log.py",
    "ropeproof.verify.studies.llm_eval._local_models": "tests/verify/studies/llm_eval/test_local.py",
    "ropeproof.verify.studies.llm_eval._plan": "tests/verify/studies/llm_eval/test_protocol.py",
    "ropeproof.verify.studies.llm_eval._remote": "tests/verify/studies/llm_eval/test_providers.py",
    "ropeproof.verify.studies.llm_eval._results": "tests/verify/studies/llm_eval/test_run_log.py",
    "ropeproof.verify.studies.llm_eval._runner": "tests/verify/studies/llm_eval/test_run_log.py",
    "ropeproof.verify.studies.llm_eval._sequences": "tests/verify/studies/llm_eval/test_protocol.py",
    "ropeproof.verify.measure.ps._rows": "tests/verify/measure/ps/test_exact.py",  # the key-logit table
    "ropeproof.verify.kernel._devices": "tests/verify/kernel/test_devices_and_resolution.py",
    "ropeproof.verify.kernel._random_heads": "tests/verify/kernel/test_attention.py",
    "ropeproof.verify.kernel._reference": "tests/verify/kernel/test_devices_and_resolution.py",
    "ropeproof.verify.kernel._resolution": "tests/verify/kernel/test_devices_and_resolution.py",
    # the heads the scores are read on
    "ropeproof.verify.measure._subjects": "tests/verify/measure/ps/test_scores.py",
    "ropeproof.verify.testing._strategies": "tests/verify/testing/test_properties.py",
    "ropeproof.verify.studies.training._evaluation": "tests/verify/studies/training/test_trainer.py",
    "ropeproof.verify.studies.training._model": "tests/verify/studies/training/test_dynamics.py",
    # ---- verify/interop: the HF and TransformerLens tests are being split per module (issue 23 item 7)
    "ropeproof.verify.interop._imported": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._checkpoint": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._export": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._head_import": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._library": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._model_head": "tests/verify/interop/tl/test_tl_interop.py",
    "ropeproof.verify.interop.tl._placement": "tests/verify/interop/tl/test_tl_interop.py",
    # ---- paper figures: the figures drawn together in one test of the report's figure files
    "ropeproof.paper_figures._accuracy": "tests/paper_figures/test_figures.py",
    "ropeproof.paper_figures._discrepancy": "tests/paper_figures/test_figures.py",
    "ropeproof.paper_figures._geometry": "tests/paper_figures/test_figures.py",
    "ropeproof.paper_figures._many_plane": "tests/paper_figures/test_figures.py",
    # drawn from its rows
    "ropeproof.paper_figures._ps_plane": "tests/verify/measure/ps/test_per_frequency.py",
    "ropeproof.paper_figures._style": "tests/paper_figures/test_figures.py",
}
"""Module (installed name) -> the test file (from the repository root) that covers it, for modules
without a test module of their own; the comment says why where the file's name does not."""


def mirrored_test(module_path: Path, root: Path = ROOT) -> Path:
    """``verify/measure/ps/_scores.py`` -> ``tests/verify/measure/ps/test_scores.py`` (paths from
    ``root``)."""
    rel = module_path.relative_to(root)
    return root / "tests" / rel.parent / f"test_{rel.stem.removeprefix('_')}.py"


def imported_modules(path: Path) -> set[str]:
    """Every module a Python file imports by name (``from a.b import c`` counts ``a.b`` and ``a.b.c``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def layout_problems(modules: Mapping[str, Path], covered: Mapping[str, str], root: Path = ROOT) -> list[str]:
    """What breaks the rule for ``modules`` (installed name -> file) with the list ``covered``: a module
    with neither its test module nor an entry; an entry whose file is missing or does not import its
    module; an entry for a module that is gone or now has its own test module."""
    problems = []
    for name, path in sorted(modules.items()):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        if not mirrored_test(path, root).exists() and name not in covered:
            problems.append(f"{name}: no {mirrored_test(path, root).relative_to(root)} and no entry")
    for name, test in sorted(covered.items()):
        if name not in modules:
            problems.append(f"{name}: listed, but no such module")
        elif mirrored_test(modules[name], root).exists():
            problems.append(f"{name}: listed, but it has its own test module now; remove the entry")
        elif not (root / test).is_file():
            problems.append(f"{name}: its cover {test} does not exist")
        elif name not in imported_modules(root / test):
            problems.append(f"{name}: its cover {test} does not import it")
    return problems


def test_every_module_has_its_test_module_or_a_named_cover(package_modules: dict[str, Path]) -> None:
    problems = layout_problems(package_modules, COVERED_ELSEWHERE)
    assert not problems, "\n".join(problems)


def test_the_rule_catches_each_kind_of_break(tmp_path: Path) -> None:
    (tmp_path / "verify" / "measure" / "ps").mkdir(parents=True)
    (tmp_path / "tests" / "verify" / "measure" / "ps").mkdir(parents=True)
    modules = {
        f"ropeproof.verify.measure.ps.{m}": tmp_path / "verify" / "measure" / "ps" / f"{m}.py" for m in "abcd"
    }
    for path in modules.values():
        path.write_text("")
    (tmp_path / "tests" / "verify" / "measure" / "ps" / "test_a.py").write_text("")  # a: its own test module
    (tmp_path / "tests" / "verify" / "measure" / "ps" / "test_other.py").write_text(
        "from ropeproof.verify.measure.ps import b\nimport ropeproof.verify.measure.ps.c\n"
    )
    good = {"ropeproof.verify.measure.ps.b": "tests/verify/measure/ps/test_other.py"}
    assert layout_problems(
        modules, {**good, "ropeproof.verify.measure.ps.c": "tests/verify/measure/ps/test_other.py"}, tmp_path
    ) == ["ropeproof.verify.measure.ps.d: no tests/verify/measure/ps/test_d.py and no entry"]
    bad = {
        **good,
        "ropeproof.verify.measure.ps.a": "tests/verify/measure/ps/test_other.py",  # has its own now
        "ropeproof.verify.measure.ps.c": "tests/verify/measure/ps/test_missing.py",
        "ropeproof.verify.measure.ps.d": "tests/verify/measure/ps/test_a.py",  # does not import d
        "ropeproof.verify.measure.ps.e": "tests/verify/measure/ps/test_other.py",  # no such module
    }
    assert layout_problems(modules, bad, tmp_path) == [
        "ropeproof.verify.measure.ps.a: listed, but it has its own test module now; remove the entry",
        "ropeproof.verify.measure.ps.c: its cover tests/verify/measure/ps/test_missing.py does not exist",
        "ropeproof.verify.measure.ps.d: its cover tests/verify/measure/ps/test_a.py does not import it",
        "ropeproof.verify.measure.ps.e: listed, but no such module",
    ]
