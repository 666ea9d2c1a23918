# SPDX-License-Identifier: MIT
"""FMUs through the command line: `tessera schema` names the FMU's
variables with their start values as defaults; `tessera docs` writes a
well-formed page whose example request `tessera apply` takes; `tessera
apply` of a JSON payload gives FMPy's trajectory; `tessera check-gradients`
passes on the spring, Van der Pol's right-hand side and (where this build
has it) its '#simulate' form; `tessera serve` of the spring answers
tesseract-core's client with the trajectory tessera computes in-process.
A payload naming no field and an unknown form fail with their exit status
and a message naming what is wrong."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import tessera
from fmu_util import SPRING, TESSERA, fmpy_simulate, fmu_path, grid, vdp_rhs
from test_cli_docs import Structure
from test_serve import Served

CLI_CALL_FAILED, CLI_LOAD_FAILED, CLI_PAYLOAD = 1, 3, 4


def cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    run = subprocess.run([str(TESSERA), *map(str, args)], capture_output=True, text=True,
                         timeout=300)
    if ok:
        assert run.returncode == 0, (args, run.returncode, run.stderr, run.stdout)
    return run


def array_of(value: dict) -> np.ndarray:
    """A result as `tessera apply` writes it (JSON encoding)."""
    assert value["object_type"] == "array" and value["data"]["encoding"] == "json", value
    return np.asarray(value["data"]["buffer"], dtype=value["dtype"]).reshape(value["shape"])


def spring_payload(t: np.ndarray, force: np.ndarray | None = None, **params: float) -> str:
    inputs = {"t": t.tolist(), **params}
    if force is not None:
        inputs["F"] = force.tolist()
    return json.dumps({"inputs": inputs})


# ---- schema ---------------------------------------------------------------------------


def test_schema_names_the_springs_variables_with_their_start_values():
    schema = json.loads(cli("schema", fmu_path("spring")).stdout)
    inputs = {f["name"]: f for f in schema["inputs"]}
    outputs = {f["name"]: f for f in schema["outputs"]}
    assert set(inputs) == {"t", "k", "c", "m", "x0", "v0", "F"}
    assert set(outputs) == {"x", "v"}
    # start values from modelDescription.xml as defaults
    assert {n: inputs[n].get("default") for n in ("k", "c", "m", "x0", "v0")} == {
        "k": 1.0, "c": 0.2, "m": 1.0, "x0": 1.0, "v0": 0.0}
    assert inputs["k"]["shape"] == [] and inputs["k"]["differentiable"]
    assert inputs["t"]["shape"] == inputs["F"]["shape"] == outputs["x"]["shape"]
    assert inputs["F"]["required"] is False
    # the variable's own description, after what it is in the FMU
    assert inputs["k"]["doc"].endswith("Spring constant") and "parameter" in inputs["k"]["doc"]
    # the default grid: DefaultExperiment 0..10 in steps of 0.1
    np.testing.assert_allclose(inputs["t"]["default"], np.linspace(0, 10, 101), atol=1e-12)
    assert "apply" in schema["endpoints"]


def test_schema_of_the_rhs_form_has_states_and_derivatives():
    schema = json.loads(cli("schema", f"{fmu_path('vanderpol')}#rhs").stdout)
    inputs = {f["name"]: f for f in schema["inputs"]}
    outputs = {f["name"]: f for f in schema["outputs"]}
    assert {"t", "x", "mu"} <= set(inputs)
    assert {"dx", "y"} <= set(outputs)
    assert inputs["x"]["default"] == [2.0, 0.0] and inputs["mu"]["default"] == 1.0
    assert {"jvp", "vjp"} <= set(schema["endpoints"])


def test_an_unknown_form_fails_to_load_naming_the_forms():
    run = cli("schema", f"{fmu_path('spring')}#trajectory", ok=False)
    assert run.returncode == CLI_LOAD_FAILED, run
    assert "'#trajectory' names no form" in run.stderr and "spring.fmu" in run.stderr


# ---- docs -----------------------------------------------------------------------------


def test_docs_page_is_well_formed_and_its_example_runs(tmp_path):
    page = cli("docs", fmu_path("spring"))
    assert page.stderr == ""
    parser = Structure()
    parser.feed(page.stdout)
    parser.close()
    assert parser.problems == [] and parser.open == []
    assert len(parser.ids) == len(set(parser.ids))
    for link in parser.links:
        assert link.startswith("#") and link[1:] in parser.ids, link
    assert "Spring constant" in page.stdout and "Damped spring-mass" in page.stdout
    request = tmp_path / "apply.json"
    request.write_text(parser.example)
    out = json.loads(cli("apply", fmu_path("spring"), f"@{request}").stdout)
    assert set(out) == {"x", "v"}


# ---- apply ----------------------------------------------------------------------------


def test_apply_of_a_json_payload_is_fmpys_trajectory():
    t = grid(0.0, 3.0, 0.1)
    params = {**SPRING, "k": 2.5, "c": 0.35}
    out = json.loads(cli("apply", fmu_path("spring"), spring_payload(t, **params)).stdout)
    ref = fmpy_simulate(fmu_path("spring"), t, params, ["x", "v"])
    for name in ("x", "v"):
        np.testing.assert_allclose(array_of(out[name]), ref[name], rtol=0, atol=1e-9)


def test_apply_of_the_rhs_is_the_closed_form():
    payload = json.dumps({"inputs": {"t": 0.0, "x": [0.7, -1.3], "mu": 2.5}})
    out = json.loads(cli("apply", f"{fmu_path('vanderpol')}#rhs", payload).stdout)
    np.testing.assert_allclose(array_of(out["dx"]), vdp_rhs(np.array([0.7, -1.3]), 2.5),
                               rtol=1e-14)


def test_apply_of_a_payload_naming_no_field_fails_naming_it():
    run = cli("apply", fmu_path("spring"), '{"inputs": {"spring_constant": 3}}', ok=False)
    assert run.returncode == CLI_PAYLOAD, run
    assert "spring_constant" in run.stderr


def test_apply_of_a_grid_that_goes_back_fails_naming_t():
    run = cli("apply", fmu_path("spring"), '{"inputs": {"t": [0, 0.2, 0.1]}}', ok=False)
    assert run.returncode == CLI_CALL_FAILED, run
    assert "'t'" in run.stderr and "strictly increasing" in run.stderr


# ---- check-gradients ------------------------------------------------------------------

SPRING_GRADIENT_PAYLOAD = (
    # check-gradients wants every optional input given: the force too
    lambda: spring_payload(grid(0.0, 1.0, 0.1), np.linspace(0.0, 1.0, 11), **SPRING))

# name -> (the component, the payload, check-gradients' options, the
# endpoints it must have checked)
GRADIENT_CASES = {
    # the Co-Simulation form's derivatives are the library's central
    # differences of whole simulations: checked only when named
    "spring": (lambda: fmu_path("spring"), SPRING_GRADIENT_PAYLOAD,
               ("--endpoints", "jvp,vjp,jacobian"), ("jvp", "vjp", "jacobian")),
    "vanderpol_rhs": (lambda: f"{fmu_path('vanderpol')}#rhs",
                      lambda: json.dumps({"inputs": {"t": 0.0, "x": [0.7, -1.3], "mu": 1.5}}),
                      (), ("jvp", "vjp")),
    # an adaptive integrator's own error over the step must stay below the
    # check's tolerance: a larger step, and the integrator's rtol tight
    "vanderpol_simulate": (lambda: f"{fmu_path('vanderpol')}#simulate",
                           lambda: json.dumps({"inputs": {
                               "t": np.linspace(0.0, 1.5, 7).tolist(), "x0": [1.2, -0.3],
                               "mu": 1.3}}),
                           ("--config", "rtol=1e-12", "--eps", "1e-4", "--endpoints", "jvp,vjp"),
                           ("jvp", "vjp")),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_check_gradients_passes(case):
    make_path, make_payload, options, checked = GRADIENT_CASES[case]
    path, payload = make_path(), make_payload()
    if case == "vanderpol_simulate":
        probe = cli("schema", path, ok=False)
        if probe.returncode != 0 and "not available in this build" in probe.stderr:
            pytest.skip(probe.stderr.strip())
        assert probe.returncode == 0, probe.stderr
    run = cli("check-gradients", *options, path, payload, ok=False)
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert "result: passed" in run.stdout, run.stdout
    for endpoint in checked:
        line = next(row for row in run.stdout.splitlines() if row.startswith(endpoint + " "))
        assert "not checked" not in line and line.split()[-4] == "0", line


def test_check_gradients_of_the_spring_without_endpoints_says_nothing_was_checked():
    run = cli("check-gradients", fmu_path("spring"), SPRING_GRADIENT_PAYLOAD(), ok=False)
    assert run.returncode == CLI_CALL_FAILED, run
    assert "result: NOTHING CHECKED" in run.stdout, run.stdout


def test_check_gradients_without_the_optional_force_names_it():
    run = cli("check-gradients", "--endpoints", "jvp", fmu_path("spring"),
              spring_payload(grid(0.0, 1.0, 0.1), **SPRING), ok=False)
    assert run.returncode == CLI_PAYLOAD, run
    assert "'F'" in run.stderr, run.stderr


# ---- serve ----------------------------------------------------------------------------


def test_served_spring_answers_tesseract_cores_client_apply_and_jvp():
    from tesseract_core import Tesseract
    t = grid(0.0, 2.0, 0.1)
    params = {**SPRING, "k": 3.0}
    served = Served(fmu_path("spring"), "--option", "log_level=off")
    try:
        client = Tesseract.from_url(served.url)
        remote = client.apply({"t": t, **{k: np.array(v) for k, v in params.items()}})
        inputs = {"t": t, **params}
        tangent = {"k": np.array(1.0)}
        remote_jvp = client.jacobian_vector_product(
            {"t": t, **{k: np.array(v) for k, v in params.items()}}, jvp_inputs=["k"],
            jvp_outputs=["x"], tangent_vector=tangent)
        with tessera.load(str(fmu_path("spring"))) as local:
            want = local.apply(inputs)
            want_jvp = local.jvp(inputs, ["k"], ["x"], tangent)
        for name in ("x", "v"):
            np.testing.assert_array_equal(remote[name], want[name])
        # d x / d k by the library's central differences, on either side of HTTP
        np.testing.assert_allclose(remote_jvp["x"], want_jvp["x"], rtol=1e-12, atol=1e-14)
        assert np.max(np.abs(want_jvp["x"])) > 1e-2
    finally:
        code, output = served.stop()
    assert code == 0, output
