#!/usr/bin/env python3
"""Where a whole run's time goes, stage by stage, against a baseline binary in the same session
(issue 32's 4·10^6 waters: msm at 0.5 Å with the HDF5 map written, whole process ≤ 1.2 s).

Writes (or reuses) a TIP3P water box of ATOMS atoms with tools/waterbox.py, then runs, ROUNDS
times, one after the other (the baseline first in each round when given):
  dcsgrid BOX.pqr -o OUT/stages.h5 --method METHOD --spacing S --json
and reads each run's --json timeline: the parse, the atom checks and grid, the plan and the outputs
opened (older binaries lack these two), when the pass began, the pass's set-up, compute and write,
when the input's hash ended, and the job's total, against the whole process's wall time. The first
round warms the page cache and the driver (a fresh machine's first msm run loads cuFFT from disk);
its rows are kept but marked. With --baseline, the last round's two maps are compared point by
point (`dcsgrid compare`): the stages may move, the map may not. Prints a table and writes JSON.

usage: bench_job_stages.py --dcsgrid BUILD/dcsgrid [--baseline OLD/dcsgrid] [--atoms 4000000]
          [--method msm] [--spacing 0.5] [--rounds 5] [--work DIR] [--out-dir /dev/shm]
          [--json bench_job_stages.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timed_run import run_json  # noqa: E402


def water_box(atoms, work):
    path = os.path.join(work, "water%d.pqr" % atoms)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "waterbox.py"), "--atoms", str(atoms),
                        "-o", path], check=True, stdout=subprocess.DEVNULL)
    return path


def run(binary, structure, out, a):
    command = [binary, structure, "-o", out, "--method", a.method, "--spacing", str(a.spacing), "--json", "-q"]
    wall, report = run_json(command)
    span = {t["stage"]: (t["begin"], t["end"]) for t in report["timeline"]}
    passes = [p for p in report["timeline"] if p["stage"].endswith("(compute and write)")]
    seconds = report["passes"][0]["seconds"]
    return {"wall_s": wall, "total_s": report["seconds"]["total"],
            "parse_end": span["parse"][1],
            "checks_end": span.get("atom checks and grid", (None, None))[1],
            "backend_ready": span["backend start-up"][1],
            "plan_end": span.get("plan and outputs opened", (None, None))[1],
            "pass_begin": passes[0]["begin"], "hash_end": span["input hash"][1],
            "setup_s": seconds["setup"], "compute_s": seconds["compute"], "write_s": seconds["write"],
            "device": report["device"], "dims": report["grid"]["dims"], "atoms": report["atoms"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--baseline")
    p.add_argument("--atoms", type=int, default=4000000)
    p.add_argument("--method", default="msm")
    p.add_argument("--spacing", type=float, default=0.5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--work", default=tempfile.gettempdir())
    p.add_argument("--out-dir", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    p.add_argument("--json", default=os.path.join(os.environ.get("DCSGRID_BENCH_OUT", "."), "bench_job_stages.json"))
    a = p.parse_args()
    structure = water_box(a.atoms, a.work)
    binaries = ([("baseline", a.baseline)] if a.baseline else []) + [("dcsgrid", a.dcsgrid)]
    rows = []
    for round_ in range(1, a.rounds + 1):
        for name, binary in binaries:
            out = os.path.join(a.out_dir, "stages_%s.h5" % name)
            row = run(binary, structure, out, a)
            row.update({"round": round_, "warm_up": round_ == 1, "binary": name, "path": binary})
            rows.append(row)
            if round_ < a.rounds:
                for f in (out, out[:-3] + ".xmf"):
                    if os.path.exists(f):
                        os.remove(f)
    identical = None
    if a.baseline:
        maps = [os.path.join(a.out_dir, "stages_%s.h5" % n) for n in ("baseline", "dcsgrid")]
        done = subprocess.run([a.dcsgrid, "compare", maps[0], maps[1], "--json"], capture_output=True, text=True,
                              check=True)
        overall = json.loads(done.stdout)["overall"]
        identical = overall["max_abs_error"] == 0.0
        print("maps of the last round: %d points, largest difference %g" % (overall["points"], overall["max_abs_error"]))
    for name, _ in binaries:
        for f in ("stages_%s.h5" % name, "stages_%s.xmf" % name):
            if os.path.exists(os.path.join(a.out_dir, f)):
                os.remove(os.path.join(a.out_dir, f))

    first = rows[-1]
    print("%s, %d atoms, grid %s at %g Å, %s on %s; seconds from the job's start, then each stage's seconds" % (
        os.path.basename(structure), first["atoms"], "x".join(map(str, first["dims"])), a.spacing, a.method,
        first["device"]))
    print("%-6s %-9s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s" % (
        "round", "binary", "wall", "total", "parse", "checks", "backend", "plan", "pass", "hash", "setup", "compute",
        "write"))
    fmt = lambda v: "%7.3f" % v if v is not None else "%7s" % "-"
    for r in rows:
        print("%-6s %-9s %s" % ("%d%s" % (r["round"], "*" if r["warm_up"] else ""), r["binary"], " ".join(
            fmt(r[k]) for k in ("wall_s", "total_s", "parse_end", "checks_end", "backend_ready", "plan_end",
                                "pass_begin", "hash_end", "setup_s", "compute_s", "write_s"))))
    for name, _ in binaries:
        warm = [r["wall_s"] for r in rows if r["binary"] == name and not r["warm_up"]]
        if warm:
            print("%s: whole process over the warm rounds %.3f-%.3f s" % (name, min(warm), max(warm)))
    print("(* warm-up round; parse .. pass: when each ended or began; setup, compute, write: the pass's seconds)")
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_job_stages", "structure": os.path.basename(structure), "method": a.method,
                   "spacing": a.spacing, "maps_identical": identical, "rows": rows}, f, indent=2)
    print("(written %s)" % a.json)


if __name__ == "__main__":
    main()
