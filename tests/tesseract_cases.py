# SPDX-License-Identifier: MIT
"""Run Tesseract examples' test_cases/*.json through the tessera CLI.

    python3 tests/tesseract_cases.py [--tessera build/bin/tessera]
        [--mode inproc --mode worker] [--option KEY=VALUE] EXAMPLES_DIR [NAME ...]

Each case ({"endpoint", "payload", "expected_outputs", "expected_exception",
"expected_exception_regex", "atol", "rtol"}, tesseract-core's format) is
run as `tessera ENDPOINT --mode MODE FOLDER @payload.json`. A case with
expected_outputs passes when the call succeeds and every value agrees
(arrays to atol/rtol, after decoding Tesseract's encoded array objects on
both sides; numbers likewise; text, bools and null exactly; dicts with the
same keys); one with expected_exception when the call fails (exit 1 or 4)
and, when given, its message matches expected_exception_regex. Prints one
line per case and a table per example and mode; exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def decode_array(obj: dict) -> np.ndarray:
    """An encoded array object ({"object_type": "array", ...}) as NumPy."""
    shape = tuple(obj["shape"])
    dtype = np.dtype(obj["dtype"])
    data = obj["data"]
    if data["encoding"] == "base64":
        return np.frombuffer(base64.b64decode(data["buffer"]), dtype=dtype).reshape(shape)
    if data["encoding"] == "json":
        return np.asarray(data["buffer"], dtype=dtype).reshape(shape)
    raise ValueError(f"encoding {data['encoding']!r} is not compared")


def is_array(v: Any) -> bool:
    return isinstance(v, dict) and v.get("object_type") == "array"


def compare(got: Any, want: Any, atol: float, rtol: float, at: str = "") -> str | None:
    """None when got agrees with want, else where and how it does not."""
    if is_array(want) or is_array(got):
        g = decode_array(got) if is_array(got) else np.asarray(got)
        w = decode_array(want) if is_array(want) else np.asarray(want)
        if g.shape != w.shape:
            return f"{at}: shape {g.shape}, expected {w.shape}"
        if w.dtype.kind in "biufc" and g.dtype.kind in "biufc":
            if not np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=True):
                return f"{at}: {g.ravel()[:6]} differs from {w.ravel()[:6]}"
            return None
        return None if np.array_equal(g, w) else f"{at}: {g} is not {w}"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{at}: {type(got).__name__}, expected an object"
        if set(got) != set(want):
            return f"{at}: keys {sorted(got)}, expected {sorted(want)}"
        for k in want:
            why = compare(got[k], want[k], atol, rtol, f"{at}.{k}" if at else k)
            if why:
                return why
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{at}: {got!r:.80}, expected {len(want)} items"
        for i, (g, w) in enumerate(zip(got, want)):
            why = compare(g, w, atol, rtol, f"{at}.[{i}]")
            if why:
                return why
        return None
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return None if got == want and type(got) is type(want) else f"{at}: {got!r}, expected {want!r}"
    if isinstance(want, (int, float)):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"{at}: {got!r}, expected {want!r}"
        return None if math.isclose(got, want, rel_tol=rtol, abs_tol=atol) else (
            f"{at}: {got!r}, expected {want!r}")
    return None if got == want else f"{at}: {got!r}, expected {want!r}"


def run_case(tessera: str, folder: Path, case: Path, mode: str, timeout: int,
             options: list[str]) -> tuple[bool, str]:
    spec = json.loads(case.read_text())
    endpoint = spec["endpoint"].replace("_", "-")
    atol = spec.get("atol") or 1e-8
    rtol = spec.get("rtol") or 1e-5
    with tempfile.TemporaryDirectory() as tmp:
        payload = Path(tmp) / "payload.json"
        payload.write_text(json.dumps(spec["payload"]))
        # Relative binref paths of a case resolve from its folder, as in
        # tesseract-core's test runner; results go to the temporary folder.
        cmd = [tessera, endpoint, "--mode", mode, "--input-path", str(case.parent),
               "--output-path", tmp]
        for o in options:
            cmd += ["--option", o]
        cmd += [str(folder), f"@{payload}"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               cwd=tmp)
        except subprocess.TimeoutExpired:
            return False, f"no answer in {timeout} s"
    err = p.stderr.strip().splitlines()
    last = err[-1] if err else ""
    if spec.get("expected_exception"):
        if p.returncode not in (1, 4):
            return False, f"exit {p.returncode}, expected a refusal ({spec['expected_exception']})"
        regex = spec.get("expected_exception_regex")
        if regex and not re.search(regex, p.stderr):
            return False, f"message {last!r} does not match {regex!r}"
        return True, f"refused (exit {p.returncode}): {last[:100]}"
    if p.returncode != 0:
        return False, f"exit {p.returncode}: {last[:300]}"
    try:
        got = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        return False, f"the output is not JSON: {e}"
    why = compare(got, spec.get("expected_outputs"), atol, rtol)
    return (why is None), (why or "agrees")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples", type=Path)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--tessera", default=str(ROOT / "build" / "bin" / "tessera"))
    ap.add_argument("--mode", action="append", choices=["inproc", "isolated", "worker"])
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a library option for every call (python_env=none: the host's "
                         "Python, for requirements whose index cannot be reached)")
    a = ap.parse_args()
    modes = a.mode or ["inproc", "worker"]
    a.tessera = str(Path(a.tessera).resolve())
    names = a.names or sorted(d.name for d in a.examples.iterdir()
                              if (d / "test_cases").is_dir() and (d / "tesseract_api.py").exists())
    table: dict[str, dict[str, str]] = {}
    failed = 0
    for name in names:
        folder = (a.examples / name).resolve()  # the CLI runs in a temporary folder
        cases = sorted((folder / "test_cases").glob("*.json"))
        for mode in modes:
            ok = 0
            for case in cases:
                passed, why = run_case(a.tessera, folder, case, mode, a.timeout, a.option)
                ok += passed
                failed += not passed
                print(f"{'PASS' if passed else 'FAIL'} {mode:7} {name}/{case.name}: {why}",
                      flush=True)
            table.setdefault(name, {})[mode] = f"{ok}/{len(cases)}"
    print("\n| example | " + " | ".join(modes) + " |")
    print("|---|" + "---|" * len(modes))
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(row.get(m, "") for m in modes) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
