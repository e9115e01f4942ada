"""The converter registry: every built-in converter's keys and module paths are those of the real model,
every entry point reports an unknown architecture from the registry, a third converter registered from
here (Mistral, outside the package) works through export, model export, import, runs, the layer swap,
checkpoint solvers and the CLI with no other file touched, and no module outside the converters and
the architecture facts compares a value with an architecture name or loops over a literal list of them."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ropeproof._cli import main  # noqa: E402
from ropeproof.constructions._multihop_compile import compile_program  # noqa: E402
from ropeproof.constructions._multihop_programs import checkpoint_program  # noqa: E402
from ropeproof.machinery._errors import InputError  # noqa: E402
from ropeproof.theory._architectures import ARCHITECTURES, Architecture, architecture  # noqa: E402
from ropeproof.verify.interop._errors import ExportError, HeadImportError  # noqa: E402
from ropeproof.verify.interop.hf._converter import ROLES, HFConverter  # noqa: E402
from ropeproof.verify.interop.hf._converters import (  # noqa: E402
    CONVERTERS,
    converter,
    model_converter,
    register_converter,
)
from ropeproof.verify.interop.hf._export import export_head  # noqa: E402
from ropeproof.verify.interop.hf._head_import import import_head  # noqa: E402
from ropeproof.verify.interop.hf._layer_swap import HFLayerSwap  # noqa: E402
from ropeproof.verify.interop.hf._llama import LlamaConverter  # noqa: E402
from ropeproof.verify.interop.hf._model_export import export_model  # noqa: E402
from ropeproof.verify.interop.hf._model_head import compiled_from_hf_model, load_hf_model  # noqa: E402
from ropeproof.verify.interop.hf._run import attention_module, hf_attention_forward  # noqa: E402
from ropeproof.verify.kernel._compiled import head_module  # noqa: E402
from ropeproof.verify.measure._tasks import number_task  # noqa: E402
from ropeproof.verify.studies.beyond._checkpoint_solvers import checkpoint_spec  # noqa: E402

BUILT_IN_NAMES = ("gptj", "llama")
CONVERTER_MODULES = frozenset(
    {
        "ropeproof.theory._architectures",
        "ropeproof.verify.interop.hf._converter",
        "ropeproof.verify.interop.hf._converters",
        "ropeproof.verify.interop.hf._gptj",
        "ropeproof.verify.interop.hf._llama",
    }
)
"""The only modules allowed to branch on an architecture's name."""


def test_the_built_in_converters_are_registered_with_their_facts() -> None:
    assert tuple(CONVERTERS) == BUILT_IN_NAMES
    for name, conv in CONVERTERS.items():
        assert conv.name == name and architecture(name) is conv.facts
        assert converter(name.upper()) is conv  # case-insensitive, as the lookup always was


@pytest.mark.parametrize("arch", BUILT_IN_NAMES)
def test_keys_and_module_paths_are_the_models_own(arch: str, random_model) -> None:
    """Every key an export writes exists in the model's state dict, and the module accessors return the
    modules that hold those keys."""
    conv = converter(arch)
    model = random_model(arch)
    state = model.state_dict()
    zero = torch.zeros(1)
    keys = set(conv.export_weights(zero, [(zero,) * 4] * 2, zero, zero))
    assert keys <= set(state), sorted(keys - set(state))
    # embedding, final norm, LM head; per layer four projections and every norm's gain
    assert len(keys) == 3 + 2 * (4 + len(conv.norm_keys(0)))
    named = dict(model.named_modules())
    for layer in (0, 1):
        block = conv.block(model, layer)
        assert block is conv.layers(model)[layer]
        attention, norm = conv.attention(block), conv.input_norm(block)
        assert attention is attention_module(model, arch, layer)
        prefix = conv.attention_key(layer, "q").removesuffix(".q_proj.weight")
        assert named[prefix] is attention
        assert named[conv.norm_keys(layer)[0].removesuffix(".weight")] is norm
        for role in ROLES:
            key = conv.attention_key(layer, role)
            assert torch.equal(state[key], attention.state_dict()[conv.projection_key(role)])
        full, base_only, bare = conv.attention_prefixes(layer)
        assert conv.attention_key(layer, "q") == full + conv.projection_key("q")
        assert full == f"{conv.base_attribute}.{base_only}" and bare == ""
    assert named[conv.embedding_key.removesuffix(".weight")] is model.get_input_embeddings()
    assert named[conv.lm_head_key.removesuffix(".weight")] is model.get_output_embeddings()
    geometry = conv.head_geometry(model.config)
    assert geometry.spec == import_head(arch, state, model.config, layer=1, device="cpu").spec
    assert (geometry.hidden, geometry.n_heads) == (conv.width(model.config), conv.heads(model.config))
    assert conv.inner(model.config) == 8
    assert model_converter(model) is conv and HFLayerSwap(model).converter is conv


def test_unknown_architecture(compiled) -> None:
    with pytest.raises(ExportError, match=r"arch='gpt2' is unknown; accepted: \['gptj', 'llama'\]"):
        export_head(compiled("reflexive"), "gpt2")
    with pytest.raises(HeadImportError, match="arch='neox' is unknown"):
        import_head("neox", {}, {})
    with pytest.raises(HeadImportError, match="does not match arch"):
        import_head("gptj", {}, transformers.LlamaConfig())


def test_unknown_architecture_everywhere(compiled) -> None:
    """Every other entry point names the registered architectures too."""
    accepted = r"accepted: \['gptj', 'llama'\]"
    with pytest.raises(ExportError, match=accepted):
        export_model(compile_program(checkpoint_program("number", hops=1, layers=2)), "neox")
    with pytest.raises(HeadImportError, match=accepted):
        hf_attention_forward(torch.nn.Linear(2, 2), "neox", torch.zeros(1, 2, 2))
    with pytest.raises(HeadImportError, match=r"pass arch='gptj' or arch='llama'"):
        model_converter(torch.nn.Linear(2, 2))
    with pytest.raises(ExportError, match="HFConverter"):
        register_converter("mistral")  # type: ignore[arg-type]


class MistralConverter(LlamaConverter):
    """A third architecture, written where a user would write it: Mistral keeps LLaMA's names and layout
    (half layout, free ``rope_theta``, RMSNorm, ``model.layers.N.self_attn.q_proj``), so its converter
    only names its facts and classes."""

    facts = Architecture(
        "mistral",
        "Mistral",
        "half",
        fixed_base=None,
        partial_rotary=False,
        separate_head_dim=True,
        norm="rmsnorm",
    )

    def model_class(self, tf):
        return tf.MistralForCausalLM

    def config_class(self, tf):
        return tf.MistralConfig


@pytest.fixture
def mistral() -> Iterator[HFConverter]:
    """The Mistral converter, registered for one test and removed afterwards."""
    conv = MistralConverter()
    assert conv.name not in CONVERTERS and conv.name not in ARCHITECTURES
    try:
        yield register_converter(conv)
    finally:
        CONVERTERS.pop(conv.name, None)
        ARCHITECTURES.pop(conv.name, None)


def test_a_third_converter_needs_no_other_file(mistral, compiled, tmp_path: Path, capsys) -> None:
    assert converter("mistral") is mistral and architecture("mistral") is mistral.facts
    # one head: export, parity of the attention layer, import back onto the compiled head
    head = compiled("reflexive")
    ex = export_head(head, "mistral", dtype="float64", max_positions=64)
    assert type(ex.model).__name__ == "MistralForCausalLM" and ex.info.arch == "mistral"
    assert ex.info.placement.target_spec().layout == "half" and ex.info.spare_dim is None
    x = torch.randn(2, 9, head.d_model, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    ours = head_module(head, "cpu", torch.float64)(x)
    hf = hf_attention_forward(ex.model, "mistral", ex.info.embed(x))
    assert (ex.info.read_output(hf.output) - ours.output).abs().max().item() < 1e-5  # float32 rotary
    state, config = ex.model.state_dict(), ex.config
    back = ex.info.to_source(import_head("mistral", state, config, device="cpu", **ex.info.import_kwargs()))
    assert (back.W_Q - torch.as_tensor(head.W_Q)).abs().max().item() <= 1e-15
    # a multi-hop model: export and answer [A]'s number task; the layer swap finds the converter itself
    model = compile_program(checkpoint_program("number", hops=1, layers=2))
    insts = number_task(4, hops=(1,), seed=0)
    checkpoint = export_model(model, "mistral", dtype="float64", certify=False)
    assert checkpoint.answer([i.tokens for i in insts]) == [i.answer for i in insts]
    assert HFLayerSwap(checkpoint.model).arch == "mistral"
    # the checkpoint solvers read the facts: a free base, a head_dim apart from the width
    options = checkpoint_spec("number", "smallest", "mistral", width=8, max_length=16).export_options()
    assert set(options) == {"max_positions", "hidden_size", "head_dim", "rope_theta"}
    # the command line: export, then import through load_hf_model
    out = tmp_path / "m"
    assert main(["export", "mistral", "reflexive", "--out", str(out)]) == 0
    assert "as mistral" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["model_type"] == "mistral"
    imported = compiled_from_hf_model(load_hf_model(out), 0, 0)
    assert imported.metadata["imported"]["arch"] == "mistral" and imported.spec.layout == "half"


def test_a_converter_with_other_facts_under_a_taken_name_is_refused() -> None:
    class Wrong(MistralConverter):
        facts = Architecture("llama", "LLaMA", "interleaved", None, False, True, "rmsnorm")

    with pytest.raises(InputError, match="already registered with other facts"):
        register_converter(Wrong())
    assert converter("llama").facts.layout == "half"


# --------------------------------------------------------------------------------------------------
# no architecture branch outside the converters


def architecture_branches(source: str, names: frozenset[str]) -> list[int]:
    """Lines comparing a value with an architecture name (``==``, ``!=``, ``in``/``not in`` a literal
    holding one), matching one in a ``case``, or keying a dict literal by one."""

    def named(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.lower() in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(named(n) for n in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and named(node.value):
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Dict) and any(named(k) for k in node.keys):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_scan_sees_every_kind_of_branch() -> None:
    planted = """
if arch == "gptj": pass
if "LLAMA" != model_type: pass
ok = arch in ("gptj", "llama")
no = kind not in ["llama"]
match arch:
    case "gptj": pass
table = {"gptj": 1}
for arch in ("gptj", "llama"): pass
export_model(model, "gptj", arch="llama")
if kind == "tl": pass
"""
    assert architecture_branches(planted, frozenset(BUILT_IN_NAMES)) == [2, 3, 4, 5, 7, 8]


def test_no_architecture_branch_outside_the_converters(package_modules: dict[str, Path]) -> None:
    names = frozenset(BUILT_IN_NAMES) | frozenset(ARCHITECTURES)
    found = [
        f"{path}:{line}"
        for module, path in sorted(package_modules.items())
        if module not in CONVERTER_MODULES
        for line in architecture_branches(path.read_text(), names)
    ]
    assert found == [], "architecture branches outside the converters (ask converters.converter(arch)):\n" + (
        "\n".join(found)
    )
    assert set(package_modules) >= CONVERTER_MODULES  # the allowed modules exist under these names


def architecture_loops(source: str, names: frozenset[str]) -> list[int]:
    """Lines of a ``for`` loop or comprehension over a literal tuple, list or set holding an architecture
    name (instead of the registry, :data:`~ropeproof.verify.interop.hf._converters.CONVERTERS`)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        it = node.iter if isinstance(node, ast.For | ast.comprehension) else None
        if isinstance(it, ast.Tuple | ast.List | ast.Set) and any(
            isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.lower() in names
            for e in it.elts
        ):
            lines.append(it.lineno)
    return sorted(lines)


def test_no_loop_over_a_literal_list_of_architectures(package_modules: dict[str, Path]) -> None:
    """A loop over "every architecture" reads the registry, so a registered converter joins it."""
    planted = """
for arch in ("gptj", "llama"): pass
rows = [f(a) for a in ["LLAMA"]]
for arch in CONVERTERS: pass
for kind in ("tl", "hf"): pass
"""
    names = frozenset(BUILT_IN_NAMES) | frozenset(ARCHITECTURES)
    assert architecture_loops(planted, names) == [2, 3]
    found = [
        f"{path}:{line}"
        for module, path in sorted(package_modules.items())
        if module not in CONVERTER_MODULES
        for line in architecture_loops(path.read_text(), names)
    ]
    assert found == [], "loops over a literal list of architectures (loop over CONVERTERS):\n" + "\n".join(
        found
    )
