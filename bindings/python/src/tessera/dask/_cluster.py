# SPDX-License-Identifier: MIT
"""ClusterComponent: a component opened on every worker of a Dask cluster,
called one item per task (``map``) or one chunk of a batch per task
(``batch``, in _batch)."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from distributed import Client, Future, as_completed

from .. import _errors, _nesting
from .._component import Component, _names, _spec
from . import _batch, _progress
from ._failures import explained
from ._plugin import ComponentPlugin, plugin_state
from ._spec import ComponentSpec
from ._tasks import abstract_eval_of, call_item, schema_of

ENDPOINTS = ("apply", "jvp", "vjp", "jacobian")
# Names of each endpoint's arguments after the inputs, as the Component's.
_ARGS = {"apply": (), "jvp": ("jvp_inputs", "jvp_outputs", "tangent_vector"),
         "vjp": ("vjp_inputs", "vjp_outputs", "cotangent_vector"),
         "jacobian": ("jac_inputs", "jac_outputs")}


def check_endpoint(label: str, endpoint: str, args: tuple) -> None:
    if endpoint not in ENDPOINTS:
        raise _errors.UnsupportedError(
            _errors.TSR_E_UNSUPPORTED,
            f"component '{label}': endpoint '{endpoint}' does not run over a cluster "
            f"(endpoints: {', '.join(ENDPOINTS)}; abstract_eval: ClusterComponent.abstract_eval)")
    want = _ARGS[endpoint]
    if len(args) != len(want):
        raise TypeError(f"component '{label}', endpoint '{endpoint}': after the inputs it takes "
                        f"{len(want)} arguments ({', '.join(want) or 'none'}), {len(args)} given")


class ClusterComponent:
    """A component on a Dask cluster. Make one with :func:`tessera.dask.load`.

    Every Dask worker process opens it once, at its first task, and keeps
    it until it retires or :meth:`close` is called. Calls:

    * ``map(endpoint, inputs, *args)``: one task per item, a list of futures;
    * ``apply(inputs)``, ``jvp``, ``vjp``, ``jacobian``: the same, gathered;
    * ``batch(endpoint, inputs, *args)``: a leading batch axis split into
      chunks, one task each;
    * ``tessera.jax.apply(cluster_component, ...)``: ``jax.vmap`` sends its
      batch here (unbatched calls run in :meth:`local`).

    Arguments after ``inputs`` are the Component's (``jvp_inputs``,
    ``jvp_outputs``, ``tangent_vector``, ...). A failed task is run again
    up to ``retries`` times (Dask's ``retries=``, on the worker Dask's
    scheduler picks); a component that crashed in worker mode starts its
    process again at its next call (``restart="auto"``).
    """

    def __init__(self, client: Client, spec: ComponentSpec, *, retries: int = 2) -> None:
        self.client = client
        self.spec = spec
        self.retries = retries
        self._closed = False
        self._local: Component | None = None
        self._schema = None
        self._shapes: dict = {}
        client.register_plugin(ComponentPlugin(spec), name=spec.plugin_name)

    def __repr__(self) -> str:
        state = "closed" if self._closed else self.spec.mode
        return f"<tessera.dask.ClusterComponent {self.spec.label!r} ({state}) on {self.client}>"

    def __enter__(self) -> ClusterComponent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- description --------------------------------------------------------

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def schema(self):
        """The component's schema, as a worker opened it (asked once)."""
        if self._schema is None:
            self._schema = (self._local.schema if self._local is not None else
                            self.client.submit(schema_of, self.spec, pure=False).result())
        return self._schema

    def abstract_eval(self, inputs: Mapping[str, Any]) -> dict:
        """``{output: (shape, dtype name)}`` for inputs given as arrays or by
        shape and dtype (as ``Component.abstract_eval`` takes them), asked
        of a worker once per distinct set of shapes; nested as apply's
        outputs are."""
        inputs = _nesting.flatten(self.schema.input_names, inputs,
                                  label=f"component '{self.spec.label}', endpoint "
                                        "'abstract_eval': ")
        specs = tuple(sorted((n, _spec(v)) for n, v in inputs.items()))
        if specs not in self._shapes:
            self._shapes[specs] = self.client.submit(abstract_eval_of, self.spec, dict(specs),
                                                     pure=False).result()
        return _nesting.nest(self._shapes[specs])

    def local(self) -> Component:
        """The same component opened in this process (once): where
        ``tessera.jax`` traces and runs unbatched calls."""
        self._check_open()
        if self._local is None:
            self._local = self.spec.open()
        return self._local

    def _jax_target(self) -> tuple[Component, ClusterComponent]:
        return self.local(), self

    def opens(self) -> dict[str, int]:
        """``{worker address: times the component was opened there}``: 1
        on every worker that ran a task, however many tasks it ran."""
        return {w: s["opens"] for w, s in self.worker_states().items() if s is not None}

    def worker_states(self) -> dict[str, dict | None]:
        """Per worker: ``opens``, whether it is ``open``, and the
        component's ``stats()`` there (calls, worker starts, deaths, ...)."""
        return self.client.run(plugin_state, name=self.spec.plugin_name)

    # ---- one task per item --------------------------------------------------

    def map(self, endpoint: str, inputs: Sequence[Mapping[str, Any]], *args: Any,
            retries: int | None = None, progress: bool = False,
            **submit: Any) -> list[Future]:
        """One task per input dict: ``component.<endpoint>(inputs[i], *args)``
        on a worker. A tangent or cotangent may be one dict for every item
        or a sequence of dicts, one per item. ``submit`` goes to
        ``Client.map`` (``workers=``, ``priority=``, ``resources=``, ...).
        ``progress=True`` shows Dask's own progress bar
        (``distributed.progress``: in a console a text bar on stdout, and
        map returns when the tasks have finished; in a notebook a widget).
        Returns the futures, in the order of ``inputs``."""
        self._check_open()
        check_endpoint(self.spec.label, endpoint, args)
        if isinstance(inputs, Mapping) or not isinstance(inputs, Sequence):
            raise TypeError(f"component '{self.spec.label}', endpoint '{endpoint}': map takes "
                            "a sequence of input dicts, one per task (for one leading batch "
                            "axis in arrays, use batch)")
        items = self._item_args(endpoint, inputs, args)
        token = uuid.uuid4().hex[:12]
        keys = [f"tessera-{self.spec.label}-{endpoint}-{token}-{i}" for i in range(len(items))]
        futures = self.client.map(functools.partial(call_item, self.spec, endpoint), items,
                                  range(len(items)), key=keys, pure=False,
                                  retries=self.retries if retries is None else retries,
                                  **submit)
        _progress.follow(futures, progress)
        return futures

    def _item_args(self, endpoint: str, inputs: Sequence, args: tuple) -> list[tuple]:
        n = len(inputs)
        if endpoint == "apply":
            return [(dict(x),) for x in inputs]
        fixed = tuple(_names(a, name) for a, name in zip(args[:2], _ARGS[endpoint]))
        if endpoint == "jacobian":
            return [(dict(x), *fixed) for x in inputs]
        seeds = args[2]
        if isinstance(seeds, Mapping):
            seeds = [seeds] * n
        elif len(seeds) != n:
            raise ValueError(f"component '{self.spec.label}', endpoint '{endpoint}': "
                             f"{_ARGS[endpoint][2]} has {len(seeds)} entries for {n} inputs "
                             "(give one dict for every item, or one per item)")
        return [(dict(x), *fixed, dict(s)) for x, s in zip(inputs, seeds)]

    def gather(self, futures: Sequence[Future]) -> list:
        """The results of ``futures``, in order. A failure raises the
        component's error class, naming the item and the Dask worker."""
        try:
            return self.client.gather(list(futures))
        except Exception as exc:
            raise explained(exc, self.spec.label) from None

    def as_completed(self, futures: Sequence[Future]) -> Iterator[tuple[int, Any]]:
        """``(index, result)`` as each task finishes, each result gathered
        to this process at once, so that a worker lost later loses none
        of them (Dask recomputes what it held that was not gathered)."""
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut, result in as_completed(futures, with_results=True, raise_errors=True):
                yield index[fut.key], result
        except Exception as exc:
            raise explained(exc, self.spec.label) from None

    def apply(self, inputs: Sequence[Mapping[str, Any]], **submit: Any) -> list[dict]:
        return self.gather(self.map("apply", inputs, **submit))

    def jvp(self, inputs, jvp_inputs, jvp_outputs, tangent_vector, **submit) -> list[dict]:
        return self.gather(self.map("jvp", inputs, jvp_inputs, jvp_outputs, tangent_vector,
                                    **submit))

    def vjp(self, inputs, vjp_inputs, vjp_outputs, cotangent_vector, **submit) -> list[dict]:
        return self.gather(self.map("vjp", inputs, vjp_inputs, vjp_outputs, cotangent_vector,
                                    **submit))

    def jacobian(self, inputs, jac_inputs, jac_outputs, **submit) -> list[dict]:
        return self.gather(self.map("jacobian", inputs, jac_inputs, jac_outputs, **submit))

    # ---- a batch axis split into chunks ---------------------------------------

    def batch(self, endpoint: str, inputs: Mapping[str, Any], *args: Any,
              chunks: int | None = None, retries: int | None = None,
              progress: bool = False) -> dict:
        """``endpoint`` over a leading batch axis, the cluster's
        ``tsr_call_run_batch``: an input (or tangent, cotangent) with one
        more dimension than its field is split along it, one of the
        field's rank is the same for every item, and one with a default or
        an optional one may be left out. The items go in
        ``chunks`` contiguous chunks (default: two per worker thread of the
        cluster), one task each, run as one library batch on the worker.

        NumPy inputs give ``{name: array}`` with the leading axis (jacobian:
        ``{output: {input: array}}``). If an input is a ``dask.array``, its
        chunks along the axis are the tasks and the result is dask arrays,
        lazy: reduce them on the cluster (``.sum(axis=0)``) and compute.

        ``progress=True`` shows Dask's progress bar over the chunks' tasks,
        as map does. Lazy results run when computed: show their progress
        there (``distributed.progress(client.persist(x))``, or
        ``dask.diagnostics.ProgressBar()`` around a local scheduler's
        compute)."""
        self._check_open()
        check_endpoint(self.spec.label, endpoint, args)
        return _batch.run(self, endpoint, dict(inputs), args, chunks,
                          self.retries if retries is None else retries, progress)

    def default_chunks(self) -> int:
        """Two chunks per worker thread: one each, and one more to even out
        a slow worker or a late one."""
        return 2 * max(1, sum(self.client.nthreads().values()))

    # ---- closing --------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise _errors.ArgumentError(_errors.TSR_E_ARGUMENT,
                                        f"component '{self.spec.label}': the cluster component "
                                        "is closed")

    def close(self) -> None:
        """Close it on every worker (the plugin's teardown) and here."""
        if self._closed:
            return
        self._closed = True
        if self._local is not None:
            self._local.close()
        if self.client.status == "running":
            try:
                self.client.unregister_worker_plugin(self.spec.plugin_name)
            except ValueError:  # already gone (another client of it closed it)
                pass


def load(client: Client, path: str | os.PathLike[str], mode: str = "inproc", *,
         workers: int | None = None, timeout_ms: int | None = None,
         config: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
         retries: int = 2, **options: Any) -> ClusterComponent:
    """Make the component at ``path`` available on every worker of
    ``client``'s cluster, as ``tessera.load(path, mode, ...)`` would open
    it (each worker opens it at its first task; ``path`` must be readable
    there: a shared file system on a real cluster). In worker mode
    ``restart`` defaults to ``"auto"``. ``retries``: how many times Dask
    runs a failed task again before reporting it."""
    spec = ComponentSpec.make(path, mode, config=config, env=env, workers=workers,
                              timeout_ms=timeout_ms, owner=uuid.uuid4().hex[:8], **options)
    return ClusterComponent(client, spec, retries=retries)
