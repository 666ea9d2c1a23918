# SPDX-License-Identifier: MIT
"""`tessera docs` pages parsed as a browser would: every element opened is
closed, in order; ids are unique and every link lands on one; nothing
refers to a resource outside the page; the example request is JSON that
the component takes. For a C plugin, a manifest, a Python component of
this repository, a component served over HTTP and, when fetched,
tesseract-core's vectoradd_torch."""

from __future__ import annotations

import html
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, plugin_path

TESSERA = BUILD / "bin" / "tessera"
EXAMPLES = BUILD / "third_party" / "tesseract-examples"

# Elements that have no end tag.
VOID = {"meta", "br", "wbr", "hr", "img", "input", "link", "col", "area", "base", "source"}
# What a page needs, and nothing that loads or runs anything.
ALLOWED = {"html", "head", "meta", "title", "style", "body", "main", "header", "nav", "a",
           "section", "h1", "h2", "h3", "p", "div", "span", "table", "thead", "tbody", "tr",
           "th", "td", "code", "var", "pre", "dl", "dt", "dd", "br", "wbr", "footer"}


class Structure(HTMLParser):
    """Checks nesting as it parses; collects ids, links and the example."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.ids: list[str] = []
        self.links: list[str] = []
        self.tags: set[str] = set()
        self.in_example = False
        self.example = ""

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if "href" in attrs:
            self.links.append(attrs["href"])
        for name, value in attrs.items():
            if name in ("src", "srcset", "action", "formaction") or (
                    value and re.search(r"(https?:|//|url\()", value)):
                self.problems.append(f"<{tag} {name}={value!r}> refers outside the page")
        if tag == "pre" and attrs.get("class") == "json":
            self.in_example = True
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)
        if tag not in VOID:
            self.problems.append(f"<{tag}/> is not an element that closes itself")

    def handle_endtag(self, tag):
        if tag in VOID:
            self.problems.append(f"</{tag}> closes a void element")
        elif not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()
        if tag == "pre":
            self.in_example = False

    def handle_data(self, data):
        if self.in_example:
            self.example += data


def page_of(component: str | Path, *options: str) -> str:
    run = subprocess.run([str(TESSERA), "docs", *options, str(component)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    return run.stdout


def markup_manifest(tmp_path: Path) -> Path:
    """A manifest whose texts hold markup, beside a link to its library."""
    (tmp_path / "libmanifest_fixture.so").symlink_to(
        BUILD / "tests" / "manifests" / "libmanifest_fixture.so")
    manifest = {
        "tessera_manifest": 1, "name": "markup",
        "description": 'Sums <script>alert("x")</script> & more.\n\nA second </p> paragraph.',
        "library": "libmanifest_fixture.so", "convention": "c",
        "inputs": [{"name": "x", "dtype": "float64", "shape": ["n"], "differentiable": True,
                    "doc": "a <b>bold</b> claim & <!-- a comment -->"}],
        "outputs": [{"name": "s", "dtype": "float64", "shape": [], "differentiable": True}],
        "fd": {"method": "central"},
        "endpoints": {"apply": {"symbol": "fx_sum", "returns": {"out": "s"},
                                "args": [{"dim": "x"}, {"in": "x", "readonly": True}]}},
    }
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(manifest))
    return path


def components(tmp_path: Path) -> list[tuple[Path, tuple[str, ...]]]:
    found = [(plugin_path("contract"), ()), (plugin_path("heat"), ()),
             (plugin_path("echo_dtypes"), ()), (markup_manifest(tmp_path), ()),
             (ROOT / "tests" / "pycomponents" / "nested", ())]
    if (BUILD / "tests" / "plugins" / "defaults.so").exists():
        found.append((plugin_path("defaults"), ()))
    if (EXAMPLES / "vectoradd_torch" / "tesseract_api.py").exists():
        # this interpreter's torch, not an environment built from the network
        found.append((EXAMPLES / "vectoradd_torch", ("--option", "python_env=none")))
    return found


def test_pages_are_well_formed_and_self_contained(tmp_path):
    for component, options in components(tmp_path):
        text = page_of(component, *options)
        assert text.startswith("<!DOCTYPE html>\n"), component
        parser = Structure()
        parser.feed(text)
        parser.close()
        assert parser.problems == [], (component, parser.problems)
        assert parser.open == [], (component, f"left open: {parser.open}")
        assert parser.tags <= ALLOWED, (component, parser.tags - ALLOWED)
        assert len(parser.ids) == len(set(parser.ids)), (component, parser.ids)
        for link in parser.links:
            assert link.startswith("#") and link[1:] in parser.ids, (component, link)
        assert "@import" not in text and "url(" not in text, component
        json.loads(parser.example)


def test_markup_in_the_schema_stays_text(tmp_path):
    text = page_of(markup_manifest(tmp_path))
    parser = Structure()
    parser.feed(text)
    parser.close()
    assert parser.problems == [] and parser.open == []
    assert "script" not in parser.tags and "b" not in parser.tags
    assert html.escape('Sums <script>alert("x")</script> & more.') in text
    assert html.escape("a <b>bold</b> claim & <!-- a comment -->") in text
    assert "<p>A second &lt;/p&gt; paragraph.</p>" in text


def test_a_tesseract_examples_request_runs(tmp_path):
    folder = EXAMPLES / "vectoradd_torch"
    if not (folder / "tesseract_api.py").exists():
        pytest.skip("no tesseract-core examples: scripts/fetch_tesseract_examples.sh")
    pytest.importorskip("torch")
    option = ("--option", "python_env=none")
    parser = Structure()
    parser.feed(page_of(folder, *option))
    request = tmp_path / "apply.json"
    request.write_text(parser.example)
    run = subprocess.run([str(TESSERA), "apply", *option, str(folder), f"@{request}"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert set(out) == {"vector_add", "vector_min"}


def test_a_served_components_page_and_example(tmp_path):
    from test_serve import Served
    served = Served(plugin_path("heat"), "--option", "log_level=off")
    try:
        text = page_of(served.url)
        parser = Structure()
        parser.feed(text)
        parser.close()
        assert parser.problems == [] and parser.open == []
        assert f"tessera apply {served.url} @apply.json" in text
        request = tmp_path / "apply.json"
        request.write_text(parser.example)
        run = subprocess.run([str(TESSERA), "apply", served.url, f"@{request}"],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert set(json.loads(run.stdout)) == {"temperature", "misfit"}
    finally:
        served.stop()
