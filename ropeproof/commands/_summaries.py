"""Each subcommand's one-line help, apart from the subcommands' modules, so that ``ropeproof --help``
lists them without importing them (their modules import torch, sympy and the claims)."""

SUMMARIES: dict[str, str] = {
    "check": "verify every registered claim; write report.md/json and figures",
    "findings": "render the findings page (docs/findings.md) from a report.json",
    "errata": "the corrected statements of the refuted paper statements (errata.md, errata.json)",
    "derive": "print a construction's closed-form logits, discrepancy and bounds",
    "compile": "compile a construction to explicit weights (head.json + weights.safetensors)",
    "sweep": "exact gap_sup / gap_inf / margin_inf vs length, with Theorem 3.2's bound and a verdict per row",
    "scan": "scan a spectrum's base, scale or angle: per value the first offset where B(m) breaks a "
    "relation, the good set as runs, both thresholds",
    "ps-score": "positional/symbolic scores of a construction or a random head, and the exclusion principle",
    "figures": "regenerate the paper figures (PNG, PDF, CSV data, caption)",
    "export": "export a construction as a one-layer HF GPT-J / LLaMA model (hf extra) or a TransformerLens "
    "HookedTransformer (tl extra)",
    "import": "write one head of a local HF (GPT-J/LLaMA) or TransformerLens checkpoint as a head directory",
    "export-model": "export a compiled multi-hop model as a GPT-J / LLaMA checkpoint with a tokenizer "
    "(hf extra)",
    "train": "train [A]'s GPT-J model on the number or letter task, with checkpoints and resume (hf extra)",
    "llm-eval": "run [A]'s frontier-LLM 1-hop protocol on a model (endpoint, Anthropic, HF directory, "
    "callable)",
    "cache": "show (info) or empty (clear) the cache of earlier runs' results that check reads and fills",
}
"""Each subcommand's one-line help (``ropeproof --help``; the first line of ``ropeproof NAME --help``)."""
