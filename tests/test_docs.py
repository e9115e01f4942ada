"""The documentation: every ```python block of the README and of the pages in ``docs/`` runs, the site
builds in strict mode (a broken link or reference fails), the README stays short and names what each
dependency is for, and the API reference lists every public name.

Blocks fenced as ```python run; blocks meant to be read, not run (a cluster address, a shell
session), are fenced as ```py, ```bash or ```text. The README's blocks each run in a fresh namespace;
a page's blocks run in order in one namespace, as a reader following the page would run them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ropeproof
from ropeproof import claims

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
OWN_TEST = {DOCS / "guides" / "own-construction.md": "tests/test_own_construction.py"}
"""Pages whose blocks a test of their own runs (with more than the blocks), not run twice here."""
PAGES = sorted(p for p in DOCS.rglob("*.md") if BLOCK.search(p.read_text()) and p not in OWN_TEST)


def python_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text())


def test_readme_python_blocks_run() -> None:
    blocks = python_blocks(README)
    assert blocks, "the README has its one example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme_block"})


E2E_PAGES = {"guides/your-claims.md"}
"""Pages whose blocks run whole checks with claims processes of their own: run in CI's second pass
(``-m e2e``), like the other slowest end-to-end runs."""
TL_PAGES = {"guides/exports.md", "guides/interop.md"}
"""Pages whose blocks use TransformerLens: run by the pytest worker that runs the other TransformerLens
tests (its import takes seconds)."""


def test_the_marked_pages_exist() -> None:
    assert {str(p.relative_to(DOCS)) for p in PAGES} >= E2E_PAGES | TL_PAGES
    for name in TL_PAGES:  # they still use TransformerLens
        assert any(word in (DOCS / name).read_text() for word in ("transformer_lens", "HookedTransformer"))


def _page_marks(page: Path) -> list[pytest.MarkDecorator]:
    name = str(page.relative_to(DOCS))
    return [pytest.mark.e2e] * (name in E2E_PAGES) + [pytest.mark.xdist_group("tl")] * (name in TL_PAGES)


@pytest.mark.parametrize(
    "page",
    [pytest.param(p, marks=_page_marks(p)) for p in PAGES],
    ids=[str(p.relative_to(DOCS)) for p in PAGES],
)
def test_page_python_blocks_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ropeproof.commands import _check as check

    # a page's `check` runs in one process: under the test workers every core already runs one, and a
    # second process costs seconds to start (tests/ropeproof/test_check_pool.py shows that two processes
    # write the report one writes)
    monkeypatch.setattr(check, "DEFAULT_JOBS", 1)
    before = {c.id for c in claims.USER_CLAIMS}
    namespace: dict = {"__name__": "docs_block"}
    try:
        for block in python_blocks(page):
            exec(compile(block, str(page), "exec"), namespace)
    finally:  # a page may register an example claim; keep the registry as it was
        for claim_id in {c.id for c in claims.USER_CLAIMS} - before:
            claims.USER_CLAIMS.remove(claim_id)


def test_the_pages_with_code_are_found() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"guides/tour.md", "guides/sweeps.md", "guides/claims.md"} <= names
    for page, test in OWN_TEST.items():
        assert page.is_file() and (ROOT / test).is_file()


def test_the_claims_guide_registers_a_claim_that_holds() -> None:
    namespace: dict = {"__name__": "docs_block"}
    page = DOCS / "guides" / "claims.md"
    first = python_blocks(page)[0]
    try:
        exec(compile(first, str(page), "exec"), namespace)
        example = claims.USER_CLAIMS["my.index-margin-positive"]
        ctx = claims.CheckContext(device=__import__("torch").device("cpu"), dtype=__import__("torch").float64)
        assert claims.run_claim(example, ctx).outcome.verdict == "holds"
    finally:
        if "my.index-margin-positive" in claims.USER_CLAIMS:
            claims.USER_CLAIMS.remove("my.index-margin-positive")


def test_sweeps_guide_lists_every_sweep_status() -> None:
    from ropeproof.verify.measure.exact._bound_checks import STATUSES

    text = (DOCS / "guides" / "sweeps.md").read_text()
    missing = [s for s in STATUSES if f"`{s}`" not in text]
    assert not missing, f"the sweeps guide does not name the statuses {missing}"


def test_readme_is_the_door() -> None:
    """About 200 lines: what it is, set-up, one example, the flow, layout, tests, dependencies."""
    text = README.read_text()
    assert len(text.splitlines()) < 300
    for heading in ("## Set-up: two commands", "## One example", "## Where the flow begins", "## Tests"):
        assert heading in text


def test_readme_says_what_every_dependency_is_for() -> None:
    """Each requirement of pyproject.toml (the core and every extra) has a row in the README's table of
    dependencies, and the table names no package the project does not require."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = list(project["dependencies"])
    required += [r for extra in project["optional-dependencies"].values() for r in extra]
    names = {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in required}
    table = README.read_text().split("## Dependencies, and what each is for", 1)[1].split("\n## ", 1)[0]
    first_cells = [
        row.split("|")[1] for row in table.splitlines() if row.startswith("| ") and "---" not in row
    ]
    listed = {
        re.sub(r"\[.*?\]", "", name).strip().lower()
        for cell in first_cells[1:]  # the header row names the columns
        for name in re.sub(r"\(.*?\)", "", cell).split(",")
    }
    assert names - listed == set(), "required but not in the README's table"
    assert listed - names == set(), "in the README's table but not required"


HOOKS = DOCS / "hooks"
API_MARKER = re.compile(r"^<!-- api: ([\w.]+) -->$", flags=re.M)


def _hook(name: str):
    """A module of ``docs/hooks`` (the hooks import each other by name, as MkDocs loads them)."""
    import importlib

    sys.path.insert(0, str(HOOKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(HOOKS))


def test_the_reference_is_generated_from_every_public_package(package_modules: dict[str, Path]) -> None:
    """Each public package is named by exactly one reference page, which the hook fills from its
    ``__all__`` (no ``show_submodules`` dumps); the index lists every name of ``ropeproof.__all__`` with a
    link to its one entry, in the layer package that defines it."""
    public = {m for m, path in package_modules.items() if path.name == "__init__.py" and "._" not in m}
    pages = sorted((DOCS / "reference").glob("*.md"))
    named = [m for page in pages for m in API_MARKER.findall(page.read_text())]
    assert sorted(named) == sorted(public), "each public package on one reference page"
    assert not any("show_submodules" in page.read_text() for page in pages)
    api = _hook("public_api")
    assert set(api.public_packages()) == public
    homes, top = api.homes(), api.exports()["ropeproof"]
    index = (DOCS / "reference" / "index.md").read_text()
    missing = [n for n in ropeproof._EXPORTS if f"[`{n}`][{ropeproof._EXPORTS[n]}.{n}]" not in index]
    assert not missing, f"docs/reference/index.md does not list {missing}"
    assert all(homes[top[n]] == f"{ropeproof._EXPORTS[n]}.{n}" for n in ropeproof._EXPORTS)
    entries = {p: api.entries(p)[0] for p in public}
    documented = [f"{p}.{n}" for p, names in entries.items() for n in names]
    assert len(documented) == len(set(homes.values()) - public)  # one entry per public object
    assert "RopeSpec" in entries["ropeproof.theory"] and "RopeSpec" not in entries["ropeproof"]


def test_the_api_pages_name_each_object_once() -> None:
    pages = _hook("api_pages")
    text = pages.package_markdown("ropeproof.verify.interop.hf")
    assert "::: ropeproof.verify.interop.hf.export_head\n" in text
    assert "::: ropeproof.verify.interop.hf.ExportError" not in text  # at home in verify.interop
    assert "[`ExportError`][ropeproof.verify.interop.ExportError]" in text
    with pytest.raises(ValueError, match="not a public package"):
        pages.package_markdown("ropeproof.verify.kernel._rope")


@pytest.fixture(scope="module")
def sphinx_roles(tmp_path_factory: pytest.TempPathFactory):
    """The roles extension, run on the whole package as the site build runs it (on a source tree of its
    own: a site build in another worker rebuilds ``build/api-src``)."""
    pytest.importorskip("griffe")
    import griffe

    sources = _hook("api_sources").build_tree(dest=tmp_path_factory.mktemp("api-src"))
    extension = _hook("sphinx_roles").SphinxRoles()
    loader = griffe.GriffeLoader(search_paths=[str(sources)], extensions=griffe.load_extensions(extension))
    package = loader.load("ropeproof", try_relative_path=False)
    return extension, package


@pytest.mark.parametrize(
    ("where", "role", "markdown"),
    [
        # absolute, private path -> the public entry; ~ shows the last part
        (
            "ropeproof.paper_figures",
            ":func:`~ropeproof.paper_figures._style.save_figure`",
            "[`save_figure`][ropeproof.paper_figures.save_figure]",
        ),
        # a name of the module's own namespace
        ("ropeproof.paper_figures", ":func:`make_all`", "[`make_all`][ropeproof.paper_figures.make_all]"),
        # re-exported from a layer: linked where it is defined, not at ropeproof's re-export
        (
            "ropeproof.verify.kernel",
            ":class:`~ropeproof.RopeSpec`",
            "[`RopeSpec`][ropeproof.theory.RopeSpec]",
        ),
        # relative to a package; a public package links to its own entry
        ("ropeproof.verify.interop", ":mod:`.hf`", "[`hf`][ropeproof.verify.interop.hf]"),
        # a module renamed private is found under its old name, and shown as code: it has no entry
        ("ropeproof.verify.kernel", ":mod:`.rope`", "`rope`"),
        # a private helper, another library, a title
        (
            "ropeproof.machinery",
            ":func:`ropeproof.machinery._validate.integer`",
            "`ropeproof.machinery._validate.integer`",
        ),
        ("ropeproof.paper_figures", ":class:`matplotlib.figure.Figure`", "`matplotlib.figure.Figure`"),
        (
            "ropeproof.theory",
            ":func:`the bound <ropeproof.theory._bounds.index_bound>`",
            "[`the bound`][ropeproof.theory.index_bound]",
        ),
        # a documented method of a public class
        (
            "ropeproof.theory",
            ":meth:`~ropeproof.theory._rope_spec.RopeSpec.to_layout`",
            "[`to_layout`][ropeproof.theory.RopeSpec.to_layout]",
        ),
        # a member without a docstring has no entry of its own: shown as code
        ("ropeproof.theory", ":meth:`RopeSpec.__post_init__`", "`RopeSpec.__post_init__`"),
    ],
)
def test_roles_become_links_or_code(sphinx_roles, where: str, role: str, markdown: str) -> None:
    extension, package = sphinx_roles
    out = extension.rewrite(
        role,
        package.get_member(where.removeprefix("ropeproof").lstrip(".")) if where != "ropeproof" else package,
    )
    assert out == markdown
    assert not re.search(r":(func|class|mod|meth):`", out)


def test_no_role_is_left_in_the_docstrings(sphinx_roles) -> None:
    extension, package = sphinx_roles
    left = [
        obj.path
        for obj in extension._objects(package)
        if obj.docstring and extension.ROLE.search(obj.docstring.value)
    ]
    assert not left, left[:10]


PLANTED = '''
"""A planted module."""

from dataclasses import dataclass

from hypothesis import strategies as st


def scale_rows(n: int, scale: float = 1.0, *rest: str, flag: bool = False) -> list[float]:
    """Scale the rows. ``n`` is the number of rows. Each is multiplied by ``scale`` (e.g. ``2.0``).

    ```python
    scale_rows(n=3, flag=True)  # ``flag`` here is code, not prose
    ```
    """


def documented(width: int) -> int:
    """Already documented.

    Parameters
    ----------
    width : int
        The width, as written here.
    """


def listed(alpha: int, beta: int) -> None:
    """Two knobs.

    - ``alpha``: the first, e.g. ``1``.
    - ``beta``: the second (``0 .. 9``, or ``x. Y``). Then more.
    """


def nothing() -> None:
    """Takes nothing; returns nothing."""


def raising(limit: int = 3) -> str:
    """Checks ``limit=3`` style values.

    Raises
    ------
    ValueError
        When it is negative.
    """


class Box:
    """A box of ``width`` cells."""

    def __init__(self, width: int) -> None:
        self.width = width

    def grow(self, by: int) -> "Box":
        """A box ``by`` cells wider."""

    @staticmethod
    def make(size: int) -> "Box":
        """A box."""

    @property
    def area(self) -> int:
        """The cells."""


class Plain:
    """No ``__init__`` of its own."""


@dataclass
class Point:
    """A point at ``x``, ``y``."""

    x: float
    y: float = 0.0


class Failed(ValueError):
    """Raised with ``Exception``'s arguments."""


@st.composite
def points(draw, bound: float = 1.0) -> Point:
    """Points within ``bound``."""


def _private(a: int) -> int:
    """Private."""
'''


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory):
    """The parameters extension run on a planted package, as the site build runs it (after griffe's
    dataclasses extension, which writes a dataclass's ``__init__``)."""
    griffe = pytest.importorskip("griffe")
    root = tmp_path_factory.mktemp("planted")
    (root / "planted.py").write_text(PLANTED)
    extension = _hook("parameter_sections").ParameterSections()
    module = griffe.load(
        "planted",
        search_paths=[str(root)],
        docstring_parser="numpy",
        extensions=griffe.load_extensions("dataclasses", extension),
    )
    return module


def _section(obj, kind: str):
    return next((s for s in obj.docstring.parse("numpy") if s.kind.value == kind), None)


def test_a_parameters_section_is_written_from_the_signature(
    planted, caplog: pytest.LogCaptureFixture
) -> None:
    fn = planted["scale_rows"]
    params = _section(fn, "parameters").value
    assert [p.name for p in params] == ["n", "scale", "*rest", "flag"]
    assert [str(p.annotation) for p in params] == ["int", "float", "str", "bool"]
    assert [p.default for p in params] == [None, "1.0", "()", "False"]
    # the sentence naming each as code, whole (an abbreviation does not end it); none in a code block
    assert [p.description for p in params] == [
        "``n`` is the number of rows.",
        "Each is multiplied by ``scale`` (e.g. ``2.0``).",
        "",
        "",
    ]
    assert str(_section(fn, "returns").value[0].annotation) == "list[float]"
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_description_is_the_whole_sentence(planted) -> None:
    """A list item is a sentence of its own; no sentence ends inside code."""
    assert [p.description for p in _section(planted["listed"], "parameters").value] == [
        "``alpha``: the first, e.g. ``1``.",
        "``beta``: the second (``0 .. 9``, or ``x. Y``).",
    ]


def test_a_written_section_is_kept_and_the_rest_placed_around_it(planted) -> None:
    kept = planted["documented"]
    assert kept.docstring.value.count("Parameters\n---") == 1
    assert _section(kept, "parameters").value[0].description == "The width, as written here."
    assert str(_section(kept, "returns").value[0].annotation) == "int"
    # before an existing section: Parameters, then Returns, then Raises; ``limit=3`` names ``limit``
    raising = planted["raising"]
    assert [s.kind.value for s in raising.docstring.parse("numpy")] == [
        "text",
        "parameters",
        "returns",
        "raises",
    ]
    assert _section(raising, "parameters").value[0].description == "Checks ``limit=3`` style values."
    assert _section(raising, "parameters").value[0].default == "3"


def test_callables_without_parameters_say_so(planted) -> None:
    ext = _hook("parameter_sections")
    assert planted["nothing"].docstring.value.endswith(ext.NO_PARAMETERS)
    assert _section(planted["nothing"], "returns") is None  # -> None: no Returns section
    assert planted["Plain"].docstring.value.endswith(ext.NO_PARAMETERS)  # object's __init__


def test_classes_methods_and_what_is_left(planted) -> None:
    box = planted["Box"]
    assert [(p.name, p.description) for p in _section(box, "parameters").value] == [
        ("width", "A box of ``width`` cells.")
    ]
    assert [p.name for p in _section(box["grow"], "parameters").value] == ["by"]  # no self
    assert [p.name for p in _section(box["make"], "parameters").value] == ["size"]  # a staticmethod
    assert box["area"].docstring.value == "The cells."  # a property
    point = _section(planted["Point"], "parameters").value
    assert [(p.name, str(p.annotation), p.default) for p in point] == [
        ("x", "float", None),
        ("y", "float", "0.0"),
    ]
    # a composite strategy's draw is hypothesis's to pass; an exception's __init__ is Exception's
    assert [p.name for p in _section(planted["points"], "parameters").value] == ["bound"]
    assert planted["Failed"].docstring.value == "Raised with ``Exception``'s arguments."
    assert planted["_private"].docstring.value == "Private."


def test_a_second_pass_adds_no_section(planted) -> None:
    ext = _hook("parameter_sections")
    for name in ("scale_rows", "documented", "nothing", "raising", "Box", "Plain", "Point", "Failed"):
        obj = planted[name]
        assert ext.with_sections(obj.docstring.value, obj) == obj.docstring.value


ENTRY = re.compile(r'<div class="doc doc-object doc-(\w+)">\s*<h\d[^>]*\bid="([\w.]+)"')
PARAMETERS = re.compile(r'class="field-name">Parameters:</th>(.*?)</td>', flags=re.S)
PARAMETER = re.compile(r"<b><code>([\w*]+)</code></b>")


def _runtime(ident: str):
    """The object a reference entry's identifier names (``ropeproof.theory.RopeSpec.to_layout``)."""
    import importlib

    parts = ident.split(".")
    for k in range(len(parts), 0, -1):  # the longest module prefix, then its attributes
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for part in parts[k:]:
            obj = getattr(obj, part)
        return obj
    raise LookupError(ident)


def _documented_parameters(site: Path) -> tuple[dict[str, tuple[list[str], list[str] | None]], list[str]]:
    """Each function, method and class entry of the built reference -> (the parameters its callers pass,
    by Python's signature; those its entry lists, ``[]`` where it says it takes none, ``None`` where it
    says nothing); and the exceptions that take ``Exception``'s arguments, which are left out."""
    import inspect

    none = _hook("parameter_sections").NO_PARAMETERS
    found, left = {}, []
    for page in sorted((site / "reference").rglob("index.html")):
        html = page.read_text()
        heads = list(ENTRY.finditer(html))
        for head, following in zip(heads, [*heads[1:], None], strict=True):
            kind, ident = head.groups()
            if kind not in ("function", "class"):
                continue
            obj = _runtime(ident)
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and not inspect.isfunction(obj.__init__)
            ):
                left.append(ident)
                continue
            want = list(inspect.signature(obj).parameters)
            if not isinstance(obj, type) and "." in obj.__qualname__ and want[:1] == ["self"]:
                want = want[1:]
            entry = html[head.end() : following.start() if following else len(html)]
            table = PARAMETERS.search(entry)
            shown = [n.lstrip("*") for n in PARAMETER.findall(table.group(1))] if table else None
            found[ident] = (want, [] if shown is None and none in entry else shown)
    return found, left


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.mark.e2e  # the slowest end-to-end runs: CI's second pass (-m e2e)
def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    result = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-4000:]
    site = tmp_path / "site"
    assert (site / "reference" / "verify-kernel" / "index.html").is_file()
    # every Sphinx role became a link or code: none is printed as text on any page (code listings, which
    # show a source file as it is written, aside)
    literal = re.compile(r":(?:func|class|mod|meth|attr|data|exc):`?")
    listing = re.compile(r"<pre\b.*?</pre>", flags=re.S)
    prose = {str(page.relative_to(site)): listing.sub("", page.read_text()) for page in site.rglob("*.html")}
    printed = {name: literal.findall(text) for name, text in prose.items() if literal.search(text)}
    assert len(prose) > 30 and "reference/theory/index.html" in prose
    assert not printed, printed
    # one entry per public object, with its annotated signature and parameters, and the links land
    theory = (site / "reference" / "theory" / "index.html").read_text()
    assert 'id="ropeproof.theory.RopeSpec"' in theory and 'id="ropeproof.theory.index_bound"' in theory
    assert "Parameters:" in theory and "doc-signature" in theory
    figures = (site / "reference" / "paper-figures" / "index.html").read_text()
    assert 'href="#ropeproof.paper_figures.save_figure"' in figures
    # every documented function, method and class lists the parameters its callers pass, as Python's
    # signature has them, in a parameters table, or says it takes none; only exceptions that take
    # Exception's arguments say nothing
    callables, left = _documented_parameters(site)
    assert len(callables) > 250 and "ropeproof.theory.RopeSpec.to_layout" in callables
    wrong = {ident: pair for ident, pair in callables.items() if pair[0] != pair[1]}
    assert not wrong, list(wrong.items())[:10]
    assert sum(want == [] for want, _ in callables.values()) < len(callables) / 2
    assert all(issubclass(_runtime(ident), Exception) for ident in left) and len(left) < 20


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The site's own link checking, planted: the same validation settings reject a dead link."""
    pytest.importorskip("mkdocs")
    text = (ROOT / "mkdocs.yml").read_text()
    validation = text[text.index("validation:") : text.index("not_in_nav:")]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# t\n\nSee [the guide](guides/missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\nstrict: true\n{validation}")
    result = _mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0 and "missing.md" in result.stderr
    shutil.rmtree(tmp_path / "site", ignore_errors=True)


def test_a_broken_reference_fails_the_strict_build(tmp_path: Path) -> None:
    """A cross-reference to an entry the site does not have (what a role would become if it linked to
    an object the reference does not document) fails the strict build; one to an entry it has passes."""
    pytest.importorskip("mkdocs_autorefs")
    (tmp_path / "docs").mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\nstrict: true\nmarkdown_extensions: [attr_list]\nplugins: [autorefs]\n")
    (tmp_path / "docs" / "index.md").write_text(
        "# t\n\n## Entry {#ropeproof.theory.RopeSpec}\n\n[`RopeSpec`][ropeproof.theory.RopeSpec]\n"
    )
    assert _mkdocs(config, tmp_path / "site").returncode == 0
    (tmp_path / "docs" / "index.md").write_text("# t\n\n[`RopeSpec`][ropeproof.theory._rope_spec.RopeSpec]\n")
    result = _mkdocs(config, tmp_path / "site")
    assert result.returncode != 0 and "ropeproof.theory._rope_spec.RopeSpec" in result.stderr
