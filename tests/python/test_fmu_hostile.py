# SPDX-License-Identifier: MIT
"""Hostile FMUs, and FMUs that crash or hang.

Archives written here with Python's zipfile, each the project's spring.fmu
with one thing wrong: an entry '../escape.txt', an absolute entry, a
symbolic link, a name given twice, the archive cut short, a
modelDescription.xml that is not XML, one of FMI 2.0, one whose
modelIdentifier has no binary. Each open fails with a LoadError whose
message names the file and the cause; nothing is written outside the
library's scratch folder (TMPDIR points into tmp_path for the test, and
afterwards no tessera scratch folder is left there); and the process goes
on to load and run the good FMU.

In a worker, the faulty FMU's crash (fault=3) and hang (fault=4 under
timeout_ms) fail their calls clearly, the host lives on, and with
restart=auto the next call runs in a fresh worker.
"""

from __future__ import annotations

import re
import uuid
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tessera
from fmu_util import SPRING, fmu_path, grid

SYMLINK_MODE = 0o120777


def spring_entries() -> dict[str, bytes]:
    with zipfile.ZipFile(fmu_path("spring")) as z:
        return {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}


def write_archive(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of a duplicate name
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for info, data in entries:
                z.writestr(info, data)
    return path


def spring_plus(path: Path, *extra: tuple[zipfile.ZipInfo | str, bytes]) -> Path:
    """spring.fmu's entries, then the extra ones."""
    return write_archive(path, [*spring_entries().items(), *extra])


def spring_with_description(path: Path, xml: bytes) -> Path:
    entries = spring_entries()
    entries["modelDescription.xml"] = xml
    return write_archive(path, list(entries.items()))


def symlink_entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix: the high 16 bits of external_attr are st_mode
    info.external_attr = SYMLINK_MODE << 16
    return info


FMI2_DESCRIPTION = b"""<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="spring" guid="{0}">
  <CoSimulation modelIdentifier="spring"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs></ModelStructure>
</fmiModelDescription>
"""


def no_binary_description() -> bytes:
    """spring's own description, its modelIdentifier renamed to one that
    has no binary in the archive."""
    xml = spring_entries()["modelDescription.xml"].decode()
    assert 'modelIdentifier="spring"' in xml
    return xml.replace('modelIdentifier="spring"', 'modelIdentifier="nosuchbinary"').encode()


def truncated(path: Path) -> Path:
    data = fmu_path("spring").read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


# name -> (make the archive in a folder, what the message must also name)
HOSTILE = {
    "parent_entry": (lambda d: spring_plus(d / "parent.fmu", ("../escape.txt", b"out")),
                     ["../escape.txt"]),
    "deep_parent_entry": (lambda d: spring_plus(d / "deep.fmu",
                                                ("resources/../../../escape.txt", b"out")),
                          ["escape.txt"]),
    "absolute_entry": (None, []),  # made in the test: its name is unique
    "symlink_entry": (lambda d: spring_plus(d / "link.fmu",
                                            (symlink_entry("resources/link"), b"../../escape.txt")),
                      ["resources/link"]),
    "duplicate_name": (lambda d: spring_plus(d / "twice.fmu",
                                             ("modelDescription.xml", b"<fmiModelDescription/>")),
                       []),
    "truncated_archive": (lambda d: truncated(d / "cut.fmu"), []),
    "description_not_xml": (lambda d: spring_with_description(d / "notxml.fmu",
                                                              b"this is <not XML"),
                            ["modelDescription.xml"]),
    "fmi2_description": (lambda d: spring_with_description(d / "fmi2.fmu", FMI2_DESCRIPTION),
                         ["2.0"]),
    "identifier_without_binary": (lambda d: spring_with_description(d / "nobinary.fmu",
                                                                    no_binary_description()),
                                  ["nosuchbinary"]),
}

# the cause, in the library's words (fmu.h's refusals), one pattern per case
CAUSES = {
    "parent_entry": r"leaves|outside|escapes",
    "deep_parent_entry": r"leaves|outside|escapes",
    "absolute_entry": r"absolute",
    "symlink_entry": r"symbolic link|symlink",
    "duplicate_name": r"twice|duplicate|already exists",
    "truncated_archive": r"not a (usable )?zip|truncated|damaged",
    "description_not_xml": r"not well-formed|not XML",
    "fmi2_description": r"FMI 2\.0",
    "identifier_without_binary": r"no binary",
}


def run_spring() -> np.ndarray:
    """The good FMU, opened and run: the process still works."""
    with tessera.load(str(fmu_path("spring"))) as spring:
        return spring.apply({"t": grid(0.0, 1.0, 0.1), **SPRING})["x"]


def scratch_left(tmpdir: Path) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir())


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """TMPDIR for the library's scratch folders, empty, inside tmp_path."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    return tmpdir


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_naming_the_file_and_the_cause(tmp_path, scratch, case):
    archives = tmp_path / "archives"
    archives.mkdir()
    outside = Path("/tmp") / f"tessera-hostile-{uuid.uuid4().hex}"
    if case == "absolute_entry":
        path = spring_plus(archives / "absolute.fmu", (str(outside), b"out"))
        extra = [str(outside)]
    else:
        make, extra = HOSTILE[case]
        path = make(archives)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(str(path))
    message = str(info.value)
    assert str(path) in message or path.name in message, message
    for word in extra:
        assert word in message, (word, message)
    assert re.search(CAUSES[case], message, re.IGNORECASE), (CAUSES[case], message)
    # nothing written: not beside the archive, not above TMPDIR, no scratch folder left
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert after == before, set(after) ^ set(before)
    assert scratch_left(scratch) == []
    assert not outside.exists()
    assert not list(tmp_path.parent.glob("escape.txt"))
    np.testing.assert_allclose(run_spring()[0], SPRING["x0"])


def test_a_good_fmu_leaves_no_scratch_folder_after_close(scratch):
    with tessera.load(str(fmu_path("spring"))) as spring:
        made = scratch_left(scratch)
        assert made, "the archive is unpacked into a folder under TMPDIR"
        spring.apply({"t": grid(0.0, 1.0, 0.1), **SPRING})
    assert scratch_left(scratch) == []


def test_a_hostile_archive_in_a_worker_is_refused_the_same_way(tmp_path, scratch):
    path = spring_plus(tmp_path / "parent.fmu", ("../escape.txt", b"out"))
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(str(path), "worker")
    assert "../escape.txt" in str(info.value)
    assert scratch_left(scratch) == []
    assert not list(tmp_path.rglob("escape.txt"))


# ---- a crash and a hang in a worker ---------------------------------------------------

FAULT_T = grid(0.0, 0.4, 0.1)


def faulty_apply(comp, fault: float):
    return comp.apply({"t": FAULT_T, "fault": fault})


def test_a_crashing_fmu_fails_the_call_and_the_next_runs_in_a_fresh_worker():
    with tessera.load(str(fmu_path("faulty")), "worker", restart="auto") as faulty:
        with pytest.raises(tessera.WorkerError) as info:
            faulty_apply(faulty, 3.0)
        assert "'faulty'" in str(info.value) and "died" in str(info.value)
        assert "signal 11" in str(info.value) or "Segmentation" in str(info.value)
        out = faulty_apply(faulty, 0.0)
        np.testing.assert_allclose(out["y"], FAULT_T, atol=1e-9)
    np.testing.assert_allclose(run_spring()[0], SPRING["x0"])


def test_a_hanging_fmu_times_out_and_the_next_call_runs_in_a_fresh_worker():
    with tessera.load(str(fmu_path("faulty")), "worker", timeout_ms=3000,
                      restart="auto") as faulty:
        with pytest.raises(tessera.CallTimeoutError) as info:
            faulty_apply(faulty, 4.0)
        assert "did not answer within 3000 ms" in str(info.value), str(info.value)
        out = faulty_apply(faulty, 0.0)
        np.testing.assert_allclose(out["y"], FAULT_T, atol=1e-9)
    np.testing.assert_allclose(run_spring()[0], SPRING["x0"])


def test_without_restart_auto_the_next_call_names_the_crash_until_restart():
    with tessera.load(str(fmu_path("faulty")), "worker") as faulty:
        with pytest.raises(tessera.WorkerError):
            faulty_apply(faulty, 3.0)
        with pytest.raises(tessera.WorkerError, match="died earlier") as info:
            faulty_apply(faulty, 0.0)
        assert "restart" in str(info.value)
        faulty.restart()
        np.testing.assert_allclose(faulty_apply(faulty, 0.0)["y"], FAULT_T, atol=1e-9)


def test_an_error_status_fails_the_call_with_the_fmus_words_and_the_instance_runs_again():
    with tessera.load(str(fmu_path("faulty"))) as faulty:
        with pytest.raises(tessera.PluginError, match="fmi3DoStep returned Error"):
            faulty_apply(faulty, 1.0)
        with pytest.raises(tessera.PluginError, match="fmi3ExitInitializationMode returned Error"):
            faulty_apply(faulty, 5.0)
        np.testing.assert_allclose(faulty_apply(faulty, 0.0)["y"], FAULT_T, atol=1e-9)
