# SPDX-License-Identifier: MIT
"""The ways the study reaches its two components, each opened as a pair
(geometry, solver) with the ``apply`` function the JAX pipeline uses and
the eager calls the timing table uses:

  tessera inproc     both in this process (the geometry in this interpreter)
  tessera worker     both in worker processes; the geometry in the
                     environment Tessera builds from its requirements
  tessera worker pool  as tessera worker, the geometry on a pool of two
                     workers whose vjp is the library's finite differences
                     of its apply (fd_method=central, fd_endpoints=all):
                     the columns split across the pool, one apply each
  tessera serve      both behind `tessera serve` (HTTP, one server each),
                     reached as URLs
  tesseract-core     Tesseract.from_tesseract_api for both, with tesseract-jax
  tesseract-core HTTP  tesseract-runtime serve for both, Tesseract.from_url

tesseract-core's solver is compliance_tesseract/, which calls the same C
plugin, so every row does the same numerical work. RESOURCES says, for
each mode, where the two components run and how they are reached."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
GEOMETRY = ROOT / "plugins" / "python" / "bar_geometry"
SOLVER = BUILD / "plugins" / "compliance.so"
SOLVER_TESSERACT = HERE / "compliance_tesseract"

# The repository's tests/support/servers.py starts a server and waits until
# it is healthy, for the tests, the benchmarks and this study alike.
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import runtime_serve_argv, serving  # noqa: E402

MODES = ("tessera inproc", "tessera worker", "tessera worker pool", "tessera serve",
         "tesseract-core", "tesseract-core HTTP")

# The geometry's pool: workers, and the options that hand its vjp to the
# library's parallel finite differences (its own sequential ones unused).
POOL_WORKERS = 2


def pool_options(fd_step: float) -> dict:
    """The geometry's own differences, the same points: central, h = fd_step
    in the bars' units (fd_step_rule=absolute), as its vjp takes them."""
    return {"workers": POOL_WORKERS, "fd_method": "central", "fd_endpoints": "all",
            "fd_step": repr(float(fd_step)), "fd_step_rule": "absolute"}


from split import CALLS as ENDPOINTS  # noqa: E402


# What each mode gives the two components: the same for both sides of
# every comparison the study prints (float64 arrays throughout, one call
# at a time, the same geometry file and the same C solver).
RESOURCES = {
    "tessera inproc": "both in the study's process (the geometry in its interpreter)",
    "tessera worker": "each in its own worker process (workers=1), shared-memory arena",
    "tessera worker pool": f"the geometry on {POOL_WORKERS} worker processes, its vjp the "
                           "library's central differences of apply split across them "
                           "(fd_method=central, fd_endpoints=all, the geometry's step: "
                           "fd_step_rule=absolute); the solver as in tessera "
                           "worker",
    "tessera serve": "each behind its own `tessera serve` (inproc, 4 request threads), "
                     "HTTP on localhost, json+base64 answers",
    "tesseract-core": "both in the study's process (Tesseract.from_tesseract_api)",
    "tesseract-core HTTP": "each behind its own `tesseract-runtime serve` (1 worker), "
                           "HTTP on localhost, json+base64 answers",
}


@dataclass
class Pair:
    mode: str
    geometry: object
    solver: object
    apply: object          # apply(component, inputs) -> outputs, for JAX
    timers: dict | None = None   # tesseract-core: seconds per endpoint, from wrappers

    def endpoint_seconds(self) -> dict:
        """Seconds spent so far in each endpoint (ENDPOINTS), however
        called: Tessera's own per-endpoint timing (Component.stats), or
        for tesseract-core, which has none, the wrappers timed_endpoints
        put around its methods."""
        if self.timers is not None:
            return dict(self.timers)
        out = {}
        for which, label in (("geometry", "geometry"), ("solver", "solver")):
            eps = getattr(self, which).stats()["endpoints"]
            out[f"{label} apply"] = eps.get("apply", {}).get("total_s", 0.0)
            vjp = "geometry vjp (FD)" if which == "geometry" else "solver vjp (adjoint)"
            out[vjp] = eps.get("vjp", {}).get("total_s", 0.0)
        return out

    def eager_apply(self, which: str, inputs: dict) -> dict:
        comp = getattr(self, which)
        return comp.apply(inputs)

    def eager_vjp(self, which: str, inputs: dict, wrt: str, out: str, cotangent) -> dict:
        comp = getattr(self, which)
        if self.mode.startswith("tesseract"):
            return comp.vector_jacobian_product(inputs, [wrt], [out], {out: cotangent})
        return comp.vjp(inputs, [wrt], [out], {out: cotangent})


def timed_endpoints(pair: Pair) -> Pair:
    """Wrap the apply and vector_jacobian_product methods of tesseract-core's
    two Tesseract objects (what tesseract-jax calls inside the jitted step)
    with a clock, so that Pair.endpoint_seconds can answer as Tessera's
    stats do."""
    import time
    pair.timers = dict.fromkeys(ENDPOINTS, 0.0)

    def wrap(obj, method, label):
        inner = getattr(obj, method)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                pair.timers[label] += time.perf_counter() - t0
        setattr(obj, method, timed)

    wrap(pair.geometry, "apply", "geometry apply")
    wrap(pair.geometry, "vector_jacobian_product", "geometry vjp (FD)")
    wrap(pair.solver, "apply", "solver apply")
    wrap(pair.solver, "vector_jacobian_product", "solver vjp (adjoint)")
    return pair


@contextlib.contextmanager
def server(argv: list[str], env: dict | None = None, what: str = "server") -> Iterator[str]:
    """Run a server process on a free port (argv's "{port}") in a scratch
    folder, wait until it answers /health, yield its URL, stop it."""
    with tempfile.TemporaryDirectory(prefix="shape-opt-") as scratch, \
         serving(argv, env=env, cwd=scratch, what=what,
                 limit_s=600) as s:   # a first start may build an environment
        yield s.url


@contextlib.contextmanager
def environ_kept(*names: str) -> Iterator[None]:
    """Put the named environment variables back as they were on leaving."""
    kept = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in kept.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def open_pair(mode: str, fd_step: float = 1e-4) -> Iterator[Pair]:
    if mode.startswith("tessera "):
        import tessera
        import tessera.jax

        def apply(comp, inputs):
            return tessera.jax.apply(comp, inputs)

        with contextlib.ExitStack() as stack:
            if mode == "tessera inproc":
                geometry = tessera.load(GEOMETRY, python_env="none")
                solver = tessera.load(SOLVER)
            elif mode == "tessera worker":
                geometry = tessera.load(GEOMETRY, "worker")
                solver = tessera.load(SOLVER, "worker")
            elif mode == "tessera worker pool":
                geometry = tessera.load(GEOMETRY, "worker", **pool_options(fd_step))
                solver = tessera.load(SOLVER, "worker")
            elif mode == "tessera serve":
                # Both served, as in the tesseract-core HTTP row.
                serve = [str(BUILD / "bin" / "tessera"), "serve", "--quiet", "--port", "{port}"]
                g_url = stack.enter_context(server(serve + [str(GEOMETRY)],
                                                   what="tessera serve (geometry)"))
                s_url = stack.enter_context(server(serve + [str(SOLVER)],
                                                   what="tessera serve (solver)"))
                geometry = tessera.load(g_url)
                solver = tessera.load(s_url)
            else:
                raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
            stack.callback(geometry.close)
            stack.callback(solver.close)
            yield Pair(mode, geometry, solver, apply)
        return

    from tesseract_core import Tesseract
    from tesseract_jax import apply_tesseract

    def apply(tess, inputs):
        return apply_tesseract(tess, inputs)

    env = dict(os.environ, TESSERA_BUILD_DIR=str(BUILD))
    with tempfile.TemporaryDirectory(prefix="shape-opt-runs-") as runs, \
         environ_kept("TESSERACT_OUTPUT_PATH"):
        # tesseract-core writes a folder per call under its output path.
        os.environ.setdefault("TESSERACT_OUTPUT_PATH", runs)
        if mode == "tesseract-core":
            # from_tesseract_api sets PYTHONPATH to this Python's sys.path,
            # which workers started later would inherit: put it back.
            with environ_kept("PYTHONPATH"):
                pair = Pair(mode, Tesseract.from_tesseract_api(GEOMETRY / "tesseract_api.py"),
                            Tesseract.from_tesseract_api(SOLVER_TESSERACT / "tesseract_api.py"),
                            apply)
            yield timed_endpoints(pair)
        elif mode == "tesseract-core HTTP":
            env.pop("TESSERACT_OUTPUT_PATH", None)
            argv = runtime_serve_argv()
            with server(argv, dict(env, TESSERACT_API_PATH=str(GEOMETRY / "tesseract_api.py")),
                        "tesseract-runtime serve (geometry)") as g_url, \
                 server(argv, dict(env, TESSERACT_API_PATH=str(SOLVER_TESSERACT /
                                                               "tesseract_api.py")),
                        "tesseract-runtime serve (solver)") as s_url:
                yield timed_endpoints(Pair(mode, Tesseract.from_url(g_url),
                                           Tesseract.from_url(s_url), apply))
        else:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
