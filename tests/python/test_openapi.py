# SPDX-License-Identifier: MIT
"""`tessera schema --openapi` (what `tessera serve` answers at /openapi.json)
against tesseract-core's own generation for the same tesseract_api.py:
what its client and tesseract-jax read must agree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT

TESSERA = BUILD / "bin" / "tessera"
EXAMPLES = BUILD / "third_party" / "tesseract-examples"


def tessera_doc(folder: Path) -> dict:
    out = subprocess.run([str(TESSERA), "schema", "--openapi", "--option", "python_env=none",
                          str(folder)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def tesseract_doc(folder: Path) -> dict:
    exe = shutil.which("tesseract-runtime")
    if not exe:
        pytest.skip("tesseract-runtime is not installed")
    env = dict(os.environ, TESSERACT_API_PATH=str(folder / "tesseract_api.py"))
    out = subprocess.run([exe, "openapi-schema"], capture_output=True, text=True, env=env,
                         check=True)
    return json.loads(out.stdout)


def resolve(doc: dict, node: dict) -> dict:
    while "$ref" in node:
        node = doc["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def arrays(doc: dict, model: dict, prefix: str = "") -> dict:
    """{dotted path: (rank, fixed sizes, dtype, differentiable)} of a model."""
    out = {}
    for name, prop in resolve(doc, model)["properties"].items():
        prop = resolve(doc, prop)
        if prop.get("properties", {}).get("object_type", {}).get("const") == "array":
            shape = prop["properties"]["shape"]
            fixed = tuple(max(i.get("enum", [-1])) for i in shape.get("prefixItems", []))
            out[prefix + name] = (shape["maxItems"], fixed,
                                  prop["properties"]["dtype"]["examples"][0],
                                  "DIFFERENTIABLE" in prop.get("array_flags", []))
        elif "properties" in prop:
            out.update(arrays(doc, prop, f"{prefix}{name}."))
    return out


def folders() -> list[Path]:
    found = [ROOT / "tests" / "pycomponents" / "affine", ROOT / "plugins" / "python" /
             "cumsum_numpy2"]
    for name in ("vectoradd_torch", "univariate"):
        if (EXAMPLES / name / "tesseract_api.py").exists():
            found.append(EXAMPLES / name)
    return found


@pytest.mark.parametrize("folder", folders(), ids=lambda p: p.name)
def test_the_document_agrees_with_tesseract_core(folder):
    if folder.name == "cumsum_numpy2":
        pytest.importorskip("numpy", minversion="2.1")
    ours, theirs = tessera_doc(folder), tesseract_doc(folder)
    # Routes besides Tesseract's API: /health and /docs, which its document
    # leaves out, and /hvp, Tessera's own (served here from the vjp).
    extra = {"/health", "/docs", "/hvp"}
    want_paths = {p for p in theirs["paths"] if p not in extra}
    assert {p for p in ours["paths"] if p not in extra} == want_paths
    s_ours, s_theirs = ours["components"]["schemas"], theirs["components"]["schemas"]
    for model in ("Apply_InputSchema", "Apply_OutputSchema"):
        assert arrays(ours, s_ours[model]) == arrays(theirs, s_theirs[model]), model
    for model in ("ApplyInputSchema", "ApplyOutputSchema"):
        assert s_ours[model]["differentiable_arrays"] == s_theirs[model]["differentiable_arrays"]
        assert s_ours[model]["field_order"] == s_theirs[model]["field_order"]
