# SPDX-License-Identifier: MIT
"""The Python component backend's glue (backends/python/tessera_pycomponent.py)
on its own, without the C bridge: schemas, calls, errors.

Real Tesseracts come from tesseract-core's examples, fetched by
scripts/fetch_tesseract_examples.sh into
$TESSERA_BUILD_DIR/third_party/tesseract-examples (build/ by default); each
endpoint is compared with tesseract-core's own in-process Tesseract
(Tesseract.from_tesseract_api) on the same inputs. Small tesseract_api.py
files written into tmp_path cover the rest.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import paths_kept

ROOT = Path(__file__).resolve().parents[2]
GLUE = ROOT / "backends" / "python" / "tessera_pycomponent.py"
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
EXAMPLES = BUILD / "third_party" / "tesseract-examples"

tesseract_core = pytest.importorskip("tesseract_core")


def _import_glue():
    # As the bridge does: by path, not as a package.
    spec = importlib.util.spec_from_file_location("tessera_pycomponent", GLUE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


glue = _import_glue()

# Examples that need only what is installed here. Those that are not
# (equinox for vectoradd_jax, cupy, pyvista, qpax, ...) are skipped by
# their failed import, as are the ones whose schema Tessera cannot represent
# (str fields, dicts, lists: see test_unrepresentable_examples).
COMPARED = ["vectoradd", "vectoradd_jax", "vectoradd_torch", "univariate",
            "univariate_gradient_fallbacks", "_gpu_jax", "pylock", "empty", "package_data",
            "helloworld", "pip_custom_step"]


@pytest.fixture(autouse=True)
def _restore_sys_path():
    """load() puts each component's folder first on sys.path, and
    tesseract-core's from_tesseract_api appends it and sets PYTHONPATH:
    undo both, so that no other test imports from an example's folder."""
    with paths_kept():
        yield


def example(name: str) -> Path:
    path = EXAMPLES / name / "tesseract_api.py"
    if not path.is_file():
        pytest.skip(f"tesseract-core's examples are not in {EXAMPLES}: "
                    "run scripts/fetch_tesseract_examples.sh")
    return path


def load_example(name: str):
    path = example(name)
    try:
        return glue.load(str(path)), path
    except ModuleNotFoundError as e:
        pytest.skip(f"example {name} needs {e.name}, which is not installed here")


def ro(x, dtype=None) -> np.ndarray:
    """A read-only array, as the bridge's views of shared memory are."""
    a = np.array(x, dtype=dtype)
    a.flags.writeable = False
    return a


def write_api(tmp_path: Path, source: str, folder: str = "comp", config: str | None = None) -> Path:
    d = tmp_path / folder
    d.mkdir()
    (d / "tesseract_api.py").write_text(textwrap.dedent(source))
    if config is not None:
        (d / "tesseract_config.yaml").write_text(textwrap.dedent(config))
    return d / "tesseract_api.py"


# --------------------------------------------------------------------------
# Against tesseract-core


def json_value(comp, name: str):
    """A value a TEXT or JSON input takes: its default, else the first of a
    few that its field accepts."""
    if name in comp.defaults:
        return comp.defaults[name]
    leaf = next(f for f in comp._in.leaves if f.name == name)
    for candidate in (1.25, 2, True, "x", None):
        try:
            return glue._encode(leaf, candidate)
        except ValueError:
            continue
    raise AssertionError(f"no sample value for {name}")


def js(text: str) -> np.ndarray:
    return text_view(text.encode())


def text_view(raw: bytes) -> np.ndarray:
    """A TEXT or JSON value as the bridge gives it: a read-only uint8 view."""
    return np.frombuffer(raw, dtype=np.uint8)


def sample_inputs(comp, rng, n=5) -> list[np.ndarray]:
    """Inputs for every field: n for each free axis, values near 1."""
    out = []
    for name, code, dims, _diff, _doc, kind, _choices in comp.inputs:
        if kind != glue.KIND_ARRAY:
            out.append(text_view(json_value(comp, name)))
            continue
        dtype = np.dtype(glue.DTYPE_NAMES[code])
        shape = tuple(n if d is None else d for d in dims)
        if dtype == np.bool_:
            value = np.ones(shape, dtype=bool)
        elif dtype.kind in "iu":
            value = rng.integers(1, 4, size=shape).astype(dtype)
        else:
            value = (rng.uniform(0.5, 1.5, size=shape)).astype(dtype)
        out.append(ro(value))
    return out


def plain(comp, name: str, a):
    """The Python value tesseract-core is given for an input or output."""
    kind = glue_kind(comp, name)
    if kind == "json":
        return json.loads(bytes(a))
    return bytes(a).decode() if kind == "text" else a


def nested(comp, arrays) -> dict:
    """The tesseract-core payload of the same inputs: a nested dict."""
    tree: dict = {}
    for (name, *_r), a in zip(comp.inputs, arrays):
        *parents, leaf = name.split(".")
        node = tree
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = plain(comp, name, a)
    return tree


def glue_kind(comp, name: str) -> str:
    leaf = next(f for f in (*comp._in.leaves, *comp._out.leaves) if f.name == name)
    return {glue._ARRAY: "array", glue._SCALAR: "scalar", glue._TEXT: "text",
            glue._JSON: "json"}[leaf.kind]


def at(tree, dotted: str):
    for key in dotted.split("."):
        tree = tree[key]
    return tree


def close(ours: np.ndarray, ref) -> None:
    ref = np.asarray(ref)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=0)


@pytest.fixture(scope="module")
def tesseract_cls():
    from tesseract_core import Tesseract

    return Tesseract


@pytest.mark.parametrize("name", COMPARED)
def test_endpoints_match_tesseract_core(name, tesseract_cls):
    comp, path = load_example(name)
    ref = tesseract_cls.from_tesseract_api(path)
    rng = np.random.default_rng(7)
    arrays = sample_inputs(comp, rng)
    payload = nested(comp, arrays)

    out = comp.apply(arrays)
    ref_out = ref.apply(payload)
    assert len(out) == len(comp.outputs)
    for a, (oname, code, dims, _d, _doc, kind, _c) in zip(out, comp.outputs):
        if kind != glue.KIND_ARRAY:
            assert plain(comp, oname, a) == json.loads(
                json.dumps(at(ref_out, oname), default=float)) if kind == glue.KIND_JSON \
                else plain(comp, oname, a) == at(ref_out, oname)
            continue
        assert a.dtype == np.dtype(glue.DTYPE_NAMES[code]) and a.flags.c_contiguous
        assert a.ndim == len(dims)
        close(a, at(ref_out, oname))
        assert a.dtype == np.asarray(at(ref_out, oname)).dtype

    diff_in = [i for i, f in enumerate(comp.inputs) if f[3]]
    diff_out = [o for o, f in enumerate(comp.outputs) if f[3]]
    # Reversed: results must follow the order of the indices, not the schema's.
    wrt_in, wrt_out = diff_in[::-1], diff_out[::-1]
    in_names = [comp.inputs[i][0] for i in wrt_in]
    out_names = [comp.outputs[o][0] for o in wrt_out]

    if "jacobian" in comp.endpoints:
        jac = comp.jacobian(arrays, wrt_in, wrt_out)
        ref_jac = ref.jacobian(payload, in_names, out_names)
        assert len(jac) == len(wrt_in) * len(wrt_out)
        for o, (oi, oname) in enumerate(zip(wrt_out, out_names)):
            for i, (ii, iname) in enumerate(zip(wrt_in, in_names)):
                block = jac[o * len(wrt_in) + i]
                assert block.shape == out[oi].shape + arrays[ii].shape
                close(block, ref_jac[oname][iname])

    if "jvp" in comp.endpoints:
        tangents = [ro(rng.uniform(-1, 1, arrays[i].shape), arrays[i].dtype) for i in wrt_in]
        jvp = comp.jvp(arrays, wrt_in, wrt_out, tangents)
        ref_jvp = ref.jacobian_vector_product(payload, in_names, out_names,
                                              dict(zip(in_names, tangents)))
        assert len(jvp) == len(wrt_out)
        for a, oi, oname in zip(jvp, wrt_out, out_names):
            assert a.shape == out[oi].shape and a.dtype == out[oi].dtype
            close(a, ref_jvp[oname])

    if "vjp" in comp.endpoints:
        cotangents = [ro(rng.uniform(-1, 1, out[o].shape), out[o].dtype) for o in wrt_out]
        vjp = comp.vjp(arrays, wrt_in, wrt_out, cotangents)
        ref_vjp = ref.vector_jacobian_product(payload, in_names, out_names,
                                              dict(zip(out_names, cotangents)))
        assert len(vjp) == len(wrt_in)
        for a, ii, iname in zip(vjp, wrt_in, in_names):
            assert a.shape == arrays[ii].shape and a.dtype == arrays[ii].dtype
            close(a, ref_vjp[iname])

    if "abstract_eval" in comp.endpoints:
        shapes = [(a.shape, code, bytes(a)) if kind != glue.KIND_ARRAY else (a.shape, code)
                  for a, (_n, code, _d, _f, _doc, kind, _c) in zip(arrays, comp.inputs)]
        ref_payload = {}
        for (iname, code, *_r), a in zip(comp.inputs, arrays):
            value = ({"shape": a.shape, "dtype": glue.DTYPE_NAMES[code]}
                     if glue_kind(comp, iname) in ("array", "scalar")
                     else plain(comp, iname, a))
            *parents, leaf = iname.split(".")
            node = ref_payload
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = value
        try:
            ref_abstract = ref.abstract_eval(ref_payload)
        except Exception as ref_error:  # noqa: BLE001
            # univariate's abstract_eval says dtype="Float32", which
            # tesseract-core refuses: it must fail here as well, in its own
            # line, raising the endpoint's own exception (tesseract-core's
            # in-process Tesseract wraps that one in a RuntimeError).
            original = ref_error.__cause__ or ref_error.__context__ or ref_error
            with pytest.raises(Exception) as e:
                comp.abstract_eval(shapes)
            assert type(e.value) is type(original), (type(e.value), type(original), e.value)
            assert str(e.value) == str(original)
            assert "tesseract_api.py:" in glue.format_error(e.value)
            return
        abstract = comp.abstract_eval(shapes)
        assert len(abstract) == len(comp.outputs)
        for (shape, code), (oname, *_r), a in zip(abstract, comp.outputs, out):
            r = at(ref_abstract, oname)
            assert shape == tuple(r["shape"]) == a.shape
            assert code == glue.DTYPE_CODES[r["dtype"]]


# --------------------------------------------------------------------------
# Schema


def test_vectoradd_schema():
    comp, _ = load_example("vectoradd")
    assert (comp.name, comp.version) == ("vectoradd", "1.2.3")
    assert comp.description == "Simple tesseract that adds two vectors."
    assert [f[:4] for f in comp.inputs] == [
        ("a", 11, [None], True), ("b", 11, [None], True),
        ("s", 11, [], True), ("normalize", 6, [None], False)]
    assert comp.inputs[3][5:] == (glue.KIND_JSON, [])
    assert [f[:4] for f in comp.outputs] == [("result", 12, [None], True)]
    assert comp.inputs[0][4] == "An arbitrary vector."
    assert comp.endpoints == {"apply", "jacobian"}
    assert set(comp.defaults) == {"s", "normalize"}
    assert comp.defaults["s"].dtype == np.float32 and comp.defaults["s"] == 1
    assert comp.defaults["normalize"] == b"false"  # a JSON field's default is its JSON text
    assert comp.input_build == "model_construct"


def test_vectoradd_validator_runs_in_fast_path(monkeypatch):
    comp, _ = load_example("vectoradd")
    # The fast path must not reach pydantic validation at all.
    monkeypatch.setattr(comp.module.InputSchema, "model_validate",
                        classmethod(lambda *a, **k: pytest.fail("model_validate called")))
    args = [ro([1, 2, 3], np.float32), ro([1, 2, 3, 4], np.float32),
            ro(2, np.float32), js("false")]
    with pytest.raises(ValueError, match=r"same shape.*\(3,\).*\(4,\)"):
        comp.apply(args)
    args[1] = ro([1, 1, 1], np.float32)
    np.testing.assert_array_equal(comp.apply(args)[0], [3, 5, 7])


NESTED = '''
    """A nested test component."""
    from typing import Optional
    import numpy as np
    from pydantic import BaseModel, Field
    from tesseract_core.runtime import Array, Differentiable, Float64, Int32

    SEEN = []

    class Mesh(BaseModel):
        nodes: Differentiable[Array[(None, 3), Float64]] = Field(description="node coordinates")
        cells: Array[(None, 4), Int32]

    class InputSchema(BaseModel):
        mesh: Mesh
        scale: float = 2.0
        weight: Optional[Differentiable[Float64]] = None
        flag: bool = False

    class Stats(BaseModel):
        centroid: Differentiable[Array[(3,), Float64]]
        n_cells: int

    class OutputSchema(BaseModel):
        stats: Stats
        nodes: Array[(None, 3), Float64]

    def apply(inputs: InputSchema) -> OutputSchema:
        SEEN.append(inputs)
        c = inputs.mesh.nodes.mean(axis=0) * inputs.scale * inputs.weight
        return OutputSchema(stats=Stats(centroid=c, n_cells=len(inputs.mesh.cells)),
                            nodes=inputs.mesh.nodes)
'''


def test_nested_schema_and_call(tmp_path):
    comp = glue.load(str(write_api(tmp_path, NESTED, folder="nestedcomp")))
    assert comp.name == "nestedcomp" and comp.version == "0"
    assert comp.description == "A nested test component."
    assert [f[:4] for f in comp.inputs] == [
        ("mesh.nodes", 12, [None, 3], True), ("mesh.cells", 4, [None, 4], False),
        ("scale", 6, [None], False), ("weight", 12, [], True), ("flag", 6, [None], False)]
    assert comp.inputs[0][4] == "node coordinates"
    assert [f[:4] for f in comp.outputs] == [
        ("stats.centroid", 12, [3], True), ("stats.n_cells", 6, [None], False),
        ("nodes", 12, [None, 3], False)]
    assert comp.defaults["scale"] == b"2.0" and comp.defaults["weight"] is None
    assert comp.input_build == "model_construct"

    nodes = ro(np.arange(12.0).reshape(4, 3))
    cells = ro(np.zeros((2, 4)), np.int32)
    centroid, n_cells, nodes_out = comp.apply(
        [nodes, cells, js("3.0"), ro(0.5), js("true")])
    np.testing.assert_allclose(centroid, nodes.mean(axis=0) * 1.5)
    assert n_cells == b"2"
    seen = comp.module.SEEN[-1]
    assert isinstance(seen.mesh, comp.module.Mesh)
    assert type(seen.scale) is float and type(seen.flag) is bool
    assert isinstance(seen.weight, np.float64)
    # No copies: the component sees the given views, and passes one through.
    assert seen.mesh.nodes is nodes and seen.mesh.cells is cells
    assert np.shares_memory(nodes_out, nodes)


def test_inputs_not_copied_in_validated_path(tmp_path):
    src = '''
        from pydantic import BaseModel, field_validator
        from tesseract_core.runtime import Array, Float64

        class InputSchema(BaseModel):
            x: Array[(None,), Float64]

            @field_validator("x")
            @classmethod
            def positive(cls, v):
                if (v <= 0).any():
                    raise ValueError("x must be positive")
                return v

        class OutputSchema(BaseModel):
            y: Array[(None,), Float64]

        def apply(inputs):
            return {"y": inputs.x}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    assert comp.input_build == "model_validate"
    x = ro([1.0, 2.0])
    (y,) = comp.apply([x])
    assert np.shares_memory(y, x)
    with pytest.raises(ValueError, match="x must be positive"):
        comp.apply([ro([1.0, -2.0])])


@pytest.mark.parametrize("annotation, kind, choices, differentiable", [
    ("str", "TEXT", [], False),
    ("Literal['a', 'b']", "TEXT", ["a", "b"], False),
    ("Colour", "TEXT", ["red", "green"], False),
    ("int", "JSON", [], False),
    ("Optional[str]", "JSON", [], False),
    ("list[Differentiable[Array[(None,), Float64]]]", "JSON", [], True),
    ("dict[str, Array[(None,), Float64]]", "JSON", [], False),
    ("Union[int, float]", "JSON", [], False),
    ("Literal[1, 2]", "JSON", [], False),
    ("Array[(3,), None]", "JSON", [], False),
    ("Array[..., Float64]", "ARRAY", [], False),
])
def test_each_annotation_maps_to_its_kind(tmp_path, annotation, kind, choices, differentiable):
    src = f'''
        import enum
        from typing import Literal, Optional, Union
        from pydantic import BaseModel
        from tesseract_core.runtime import Array, Differentiable, Float64

        class Colour(str, enum.Enum):
            RED = "red"
            GREEN = "green"

        class Inner(BaseModel):
            ok: Float64
            field: {annotation}

        class InputSchema(BaseModel):
            inner: Inner

        class OutputSchema(BaseModel):
            y: Float64

        def apply(inputs):
            return {{"y": 0.0}}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    name, code, dims, diff, _doc, k, ch = comp.inputs[1]
    assert name == "inner.field"
    assert k == getattr(glue, f"KIND_{kind}") and ch == choices and diff == differentiable
    if kind == "ARRAY":
        assert dims is None  # TSR_RANK_ANY
    else:
        assert (code, dims) == (glue.DTYPE_CODES["uint8"], [None])


def test_a_literal_outside_its_values_and_a_bound_violated_name_their_place(tmp_path):
    src = '''
        from typing import Literal
        from pydantic import BaseModel, Field
        from tesseract_core.runtime import Float64

        class Opts(BaseModel):
            mode: Literal["fast", "slow"]
            size: int = Field(ge=1)

        class InputSchema(BaseModel):
            opts: Opts

        class OutputSchema(BaseModel):
            y: Float64

        def apply(inputs):
            return {"y": float(inputs.opts.size)}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    assert comp.apply([js("fast"), js("3")])[0] == 3.0
    with pytest.raises(glue.InvalidInput) as e:
        comp.apply([js("fast"), js("0")])
    assert e.value.loc == ("inputs", "opts", "size")
    assert e.value.type == "greater_than_equal"
    # the last line of the text the host gets is tsr_ctx_invalid's
    assert glue.format_error(e.value).splitlines()[-1] == (
        "invalid: greater_than_equal inputs.opts.size")
    with pytest.raises(glue.InvalidInput) as e:
        comp.apply([js("medium"), js("3")])
    assert e.value.loc == ("inputs", "opts", "mode")
    assert e.value.type == "literal_error"
    # not JSON at all
    with pytest.raises(glue.InvalidInput) as e:
        comp.apply([js("fast"), js("{nope")])
    assert (e.value.loc, e.value.type) == (("inputs", "opts", "size"), "json_invalid")


def test_a_long_invalid_message_keeps_its_last_line():
    err = glue.InvalidInput("x" * 5000, ("inputs", "a\nb"), "Not A Type")
    text = glue.format_error(err)
    assert len(text.encode()) < 800
    # an unusable type becomes value_error, a control character in the loc '?'
    assert text.splitlines()[-1] == "invalid: value_error inputs.a?b"


def test_unrepresentable_field(tmp_path):
    with pytest.raises(TypeError) as e:
        glue.load(str(ROOT / "tests" / "pycomponents" / "badschema" / "tesseract_api.py"))
    assert "'label'" in str(e.value) and "InputSchema" in str(e.value)


DIFF_JSON = '''
    from pydantic import BaseModel
    from tesseract_core.runtime import Array, Differentiable, Float64

    class Layer(BaseModel):
        k: Differentiable[Array[(None,), Float64]]
        name: str

    class InputSchema(BaseModel):
        weights: dict[str, Differentiable[Array[(None,), Float64]]]
        layers: list[Layer]

    class OutputSchema(BaseModel):
        y: Differentiable[Float64]

    def apply(inputs):
        return {"y": sum(float((w ** 2).sum()) for w in inputs.weights.values())
                + sum(float(l.k.sum()) for l in inputs.layers)}

    def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
        out = {}
        for p in vjp_inputs:
            if p.startswith("weights."):
                out[p] = 2 * inputs.weights[p[9:-1]] * cotangent_vector["y"]
            else:
                out[p] = inputs.layers[int(p[8:-3])].k * 0 + cotangent_vector["y"]
        return out

    def jacobian(inputs, jac_inputs, jac_outputs):
        return {"y": {p: 2 * inputs.weights[p[9:-1]] for p in jac_inputs}}
'''


def enc(a) -> dict:
    import base64
    a = np.asarray(a, dtype=np.float64)
    return {"object_type": "array", "shape": list(a.shape), "dtype": "float64",
            "data": {"buffer": base64.b64encode(a.tobytes()).decode(), "encoding": "base64"}}


def test_derivatives_at_paths_inside_json_fields(tmp_path):
    comp = glue.load(str(write_api(tmp_path, DIFF_JSON)))
    assert [f[3] for f in comp.inputs] == [True, True]
    weights = js(json.dumps({"a": enc([1.0, 2.0]), "b": enc([3.0])}))
    layers = js(json.dumps([{"k": enc([1.0, 1.0, 1.0]), "name": "l0"}]))
    args = [weights, layers]
    assert comp.apply(args)[0] == 1 + 4 + 9 + 3
    g_a, g_k = comp.vjp(args, [0, 1], [0], [ro(2.0)], ["weights.{a}", "layers.[0].k"], ["y"])
    np.testing.assert_allclose(g_a, [4.0, 8.0])
    np.testing.assert_allclose(g_k, [2.0, 2.0, 2.0])
    (jac,) = comp.jacobian(args, [0], [0], ["weights.{b}"], ["y"])
    assert jac.shape == (1,) and jac.dtype == np.float64 and jac[0] == 6.0
    # a dict key that is not there, a text leaf, a path outside the field
    with pytest.raises(glue.InvalidInput) as e:
        comp.vjp(args, [0], [0], [ro(1.0)], ["weights.{zz}"], ["y"])
    assert e.value.loc == ("vjp_inputs", 0)
    with pytest.raises(glue.InvalidInput, match="str, not a differentiable array"):
        comp.vjp(args, [1], [0], [ro(1.0)], ["layers.[0].name"], ["y"])
    with pytest.raises(glue.InvalidInput, match="not inside field"):
        comp.jacobian(args, [0], [0], ["layers.[0].k"], ["y"])


def test_metrics_writes_what_tesseract_runtime_writes(tmp_path):
    api = example("metrics")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    env = {**os.environ, "TESSERACT_API_PATH": str(api), "TESSERACT_OUTPUT_PATH": str(theirs)}
    subprocess.run(["tesseract-runtime", "apply", '{"inputs": {}}'], env=env, check=True,
                   capture_output=True, cwd=tmp_path)
    code = (f"import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('g', {str(GLUE)!r})\n"
            f"g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)\n"
            f"assert g.load({str(api)!r}).apply([]) == []\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, cwd=tmp_path,
                   env={**os.environ, "TESSERACT_OUTPUT_PATH": str(ours)})
    names = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*"))  # noqa: E731
    assert names(ours) == names(theirs)
    for rel in ("logs/parameters.json", "logs/artifacts/artifact.txt", "logs/tesseract.log"):
        assert (ours / rel).read_text() == (theirs / rel).read_text(), rel
    drop_time = lambda p: [r.split(",", 1)[1] for r in p.read_text().splitlines()]  # noqa: E731
    assert drop_time(ours / "logs/metrics.csv") == drop_time(theirs / "logs/metrics.csv")


def test_config_line_reader_matches_yaml():
    yaml = pytest.importorskip("yaml")
    text = (example("vectoradd").parent / "tesseract_config.yaml").read_text()
    want = {k: str(v).strip() for k, v in yaml.safe_load(text).items()
            if k in ("name", "version", "description")}
    got = glue._read_top_keys(text)
    assert {k: got[k] for k in want} == want


# --------------------------------------------------------------------------
# Outputs


CASTS = '''
    import numpy as np
    from pydantic import BaseModel
    from tesseract_core.runtime import Array, Float32, Int32

    MODE = ["ok"]

    class InputSchema(BaseModel):
        n: int

    class OutputSchema(BaseModel):
        f: Array[(None, 2), Float32]
        i: Int32
        b: bool
        x: float

    def apply(inputs):
        f = np.arange(2.0 * inputs.n).reshape(2, inputs.n).T  # float64, not contiguous
        if MODE[0] == "float_to_int":
            return {"f": f, "i": 1.5, "b": True, "x": 1}
        if MODE[0] == "rank":
            return {"f": f[0], "i": 3, "b": True, "x": 1}
        if MODE[0] == "missing":
            return {"f": f, "b": True}
        return {"f": f, "i": 3, "b": np.bool_(True), "x": 1}
'''


def test_outputs_cast_to_field_dtype(tmp_path):
    comp = glue.load(str(write_api(tmp_path, CASTS)))
    f, i, b, x = comp.apply([js("3")])
    assert f.dtype == np.float32 and f.flags.c_contiguous and f.shape == (3, 2)
    np.testing.assert_array_equal(f, np.arange(6.0).reshape(2, 3).T)
    assert (i.dtype, i.shape, i) == (np.int32, (), 3)
    assert (b, x) == (b"true", b"1.0")  # JSON fields, as pydantic validates and dumps them


@pytest.mark.parametrize("mode, exc, pattern", [
    ("float_to_int", ValueError, r"apply of comp: output 'i' is float64.*int32"),
    ("rank", ValueError, r"apply of comp: output 'f' has shape \(2,\), expected \(any, 2\)"),
    ("missing", KeyError, r"apply of comp.*'i', 'x'"),
])
def test_bad_outputs(tmp_path, mode, exc, pattern):
    comp = glue.load(str(write_api(tmp_path, CASTS)))
    comp.module.MODE[0] = mode
    with pytest.raises(exc) as e:
        comp.apply([js("3")])
    assert __import__("re").search(pattern, glue.format_error(e.value))


def test_gradient_arguments_checked():
    comp, _ = load_example("vectoradd")
    args = [ro([1.0], np.float32), ro([2.0], np.float32), ro(1, np.float32), js("false")]
    with pytest.raises(ValueError, match="'normalize' is not differentiable"):
        comp.jacobian(args, [3], [0])
    with pytest.raises(NotImplementedError, match="no vjp"):
        comp.vjp(args, [0], [0], [ro([1.0])])


# --------------------------------------------------------------------------
# Errors and loading


def test_format_error_shows_component_lines(tmp_path):
    src = '''
        from pydantic import BaseModel
        from tesseract_core.runtime import Float64

        class InputSchema(BaseModel):
            x: Float64

        class OutputSchema(BaseModel):
            y: Float64

        def helper(x):
            raise ZeroDivisionError(f"cannot divide {x} by zero")

        def apply(inputs):
            return {"y": helper(inputs.x)}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    with pytest.raises(ZeroDivisionError) as e:
        comp.apply([ro(4.0)])
    text = glue.format_error(e.value)
    lines = text.splitlines()
    assert lines[0] == "ZeroDivisionError: cannot divide 4.0 by zero"
    assert lines[1] == '  tesseract_api.py:15 in apply: return {"y": helper(inputs.x)}'
    assert lines[2] == ('  tesseract_api.py:12 in helper: '
                        'raise ZeroDivisionError(f"cannot divide {x} by zero")')
    assert "tessera_pycomponent" not in text and "pydantic" not in text


def test_exit_at_import_is_an_import_error(tmp_path):
    src = '''
        import sys
        sys.exit(1)
    '''
    with pytest.raises(ImportError, match=r"tesseract-core\[runtime\]"):
        glue.load(str(write_api(tmp_path, src)))


def test_glue_import_without_runtime_extras_is_an_import_error():
    # Without tesseract-core[runtime] (fastapi here) tesseract_core.runtime
    # calls sys.exit(1): importing the glue must raise ImportError instead.
    code = textwrap.dedent(f"""
        import importlib.util, sys
        sys.modules["fastapi"] = None
        spec = importlib.util.spec_from_file_location("g", {str(GLUE)!r})
        try:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        except ImportError as e:
            print("ImportError:", e)
            sys.exit(3)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert "tesseract-core[runtime]" in r.stdout


def test_alias_in_validated_path(tmp_path):
    src = '''
        from pydantic import BaseModel, Field
        from tesseract_core.runtime import Float64

        class InputSchema(BaseModel):
            x: Float64 = Field(alias="X", gt=0)

        class OutputSchema(BaseModel):
            y: Float64

        def apply(inputs):
            return {"y": 2 * inputs.x}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    assert comp.input_build == "model_validate"
    assert comp.apply([ro(3.0)])[0] == 6.0
    with pytest.raises(ValueError, match="greater than 0"):
        comp.apply([ro(-3.0)])


def test_abstract_eval_needs_values_of_json_fields(tmp_path):
    src = '''
        from pydantic import BaseModel
        from tesseract_core.runtime import Array, Float64, ShapeDType

        class InputSchema(BaseModel):
            x: Array[(None,), Float64]
            k: int

        class OutputSchema(BaseModel):
            y: Array[(None,), Float64]

        def apply(inputs):
            return {"y": inputs.x * inputs.k}

        def abstract_eval(abstract_inputs):
            return {"y": ShapeDType(shape=abstract_inputs.x.shape, dtype="float64")}
    '''
    comp = glue.load(str(write_api(tmp_path, src)))
    with pytest.raises(ValueError, match="'k' is text or JSON and was given no value"):
        comp.abstract_eval([((4,), 12), ((1,), 6)])
    # given its value (the host passes TEXT/JSON values to abstract_eval), it runs
    assert comp.abstract_eval([((4,), 12), ((1,), 6, b"3")]) == [((4,), 12)]


def test_model_validate_holds_no_input_after_the_call():
    # A cycle holding the inputs' views until the collector runs would make
    # the bridge warn that the component kept them.
    comp = glue.load(str(ROOT / "tests" / "pycomponents" / "kinds" / "tesseract_api.py"))
    assert comp.input_build == "model_validate"
    field = np.arange(6.0).reshape(2, 3)
    field.flags.writeable = False
    before = sys.getrefcount(field)
    out = comp.apply([js("Ozzy"), js("sum"), js("2"), js("{}"), field])
    assert out[0] == b"Hello Ozzy!" and out[1] == b"{}"
    np.testing.assert_array_equal(out[2], 2 * field)
    assert sys.getrefcount(field) == before
