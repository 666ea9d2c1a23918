# SPDX-License-Identifier: MIT
"""tessera.serve answers GET /docs as `tessera serve` does: the component's
docs page as UTF-8 HTML, every field with its kind, and 405 for POST."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

import tessera

DOCUMENTED = Path(__file__).resolve().parents[1] / "pycomponents" / "documented"


def test_tessera_serve_answers_the_docs_page():
    with tessera.load(DOCUMENTED) as comp, tessera.serve(comp) as server:
        with urllib.request.urlopen(server.url + "/docs", timeout=60) as r:
            assert r.status == 200
            assert r.headers["Content-Type"] == "text/html; charset=utf-8"
            page = r.read().decode("utf-8")
        assert "<h1>documented" in page
        for field in comp.schema.inputs + comp.schema.outputs:
            assert f"<code>{field.name}</code>" in page, field.name
        assert '<td class="kind">JSON</td>' in page and '<td class="kind">text</td>' in page
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(urllib.request.Request(server.url + "/docs", data=b"{}"),
                                   timeout=60)
        assert info.value.code == 405
        assert info.value.headers["Allow"] == "GET, HEAD"
