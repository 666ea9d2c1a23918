#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Line and branch coverage per folder, judged against the floors.

Reads gcovr's JSON summary (one entry per source file) and the floors file
(scripts/coverage_floors.txt), sums the files of each folder (a file counts
in the longest folder of the floors file that holds it: core/gradcheck/x.c
in core/gradcheck, not core), prints a table of folder, lines %, branches %,
floors and verdict, and writes it to --out. Exits 1 if a folder is below
one of its floors or has no measured file at all (its counters were lost),
2 on unreadable input.

    coverage_table.py SUMMARY.json FLOORS.txt [--out coverage.txt]
"""
import argparse
import json
import sys


def read_floors(path):
    """[(folder, lines_floor, branches_floor)] in the file's order."""
    floors = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 3:
                raise ValueError(f"{path}:{number}: want 'folder lines% branches%', got {raw.strip()!r}")
            folder, lines, branches = fields
            floors.append((folder.rstrip("/"), float(lines), float(branches)))
    return floors


def folder_of(filename, folders):
    """The longest folder holding filename, or None."""
    best = None
    for folder in folders:
        if filename.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def percent(covered, total):
    return 100.0 * covered / total if total else 100.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("summary")
    ap.add_argument("floors")
    ap.add_argument("--out")
    args = ap.parse_args()
    try:
        floors = read_floors(args.floors)
        with open(args.summary, encoding="utf-8") as f:
            files = json.load(f)["files"]
    except (OSError, ValueError, KeyError) as e:
        print(f"coverage: {e}", file=sys.stderr)
        return 2

    folders = [folder for folder, _, _ in floors]
    sums = {folder: [0, 0, 0, 0, 0] for folder in folders + ["(other)"]}
    for entry in files:
        s = sums[folder_of(entry["filename"], folders) or "(other)"]
        s[0] += entry["line_covered"]
        s[1] += entry["line_total"]
        s[2] += entry["branch_covered"]
        s[3] += entry["branch_total"]
        s[4] += 1

    rows = [("folder", "files", "lines %", "branches %", "floor l/b", "verdict")]
    failed = []
    for folder, lines_floor, branches_floor in floors:
        lc, lt, bc, bt, n = sums[folder]
        lp, bp = percent(lc, lt), percent(bc, bt)
        if n == 0 or lt == 0:
            verdict = "FAIL (nothing measured)"
        elif lp < lines_floor or bp < branches_floor:
            verdict = "FAIL (below floor)"
        else:
            verdict = "ok"
        if verdict != "ok":
            failed.append(folder)
        measured = n > 0 and lt > 0
        rows.append((folder, str(n), f"{lp:5.1f} ({lc}/{lt})" if measured else "-",
                     f"{bp:5.1f} ({bc}/{bt})" if measured else "-",
                     f"{lines_floor:g}/{branches_floor:g}", verdict))
    lc, lt, bc, bt, n = sums["(other)"]
    if n:  # files outside every folder: shown, not judged
        rows.append(("(other)", str(n), f"{percent(lc, lt):5.1f} ({lc}/{lt})",
                     f"{percent(bc, bt):5.1f} ({bc}/{bt})", "-", "not judged"))

    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
    verdict = f"coverage: FAILED ({' '.join(failed)})" if failed else "coverage: every folder at or above its floors"
    text += "\n" + verdict + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
