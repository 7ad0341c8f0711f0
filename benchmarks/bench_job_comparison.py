#!/usr/bin/env python3
"""What comparing the fast methods with direct summation costs a whole run (issue 32's first target).

Each round runs two whole processes on the same structure and grid, one after the other:
  dcsgrid STRUCTURE -o OUT.h5 --spacing S --method direct --json            (the baseline)
  dcsgrid STRUCTURE -o OUT.h5 --spacing S --method direct,msm,cutoff --json
and sets the second's wall time against the first's of the same round. The table gives each
round's two times, their ratio and, from the second run's --json, each pass's set-up, compute,
comparison and write. The first round also warms the page cache and the driver; its row is kept
but marked. Prints a table and writes JSON.

usage: bench_job_comparison.py --dcsgrid BUILD/dcsgrid [--structure /usr/share/apbs/examples/misc/achbp.pqr]
          [--spacing 0.5] [--methods direct,msm,cutoff] [--rounds 5] [--device auto]
          [--out-dir /dev/shm] [--json bench_job_comparison.json]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timed_run import run_json  # noqa: E402


def run(a, methods, out):
    command = [a.dcsgrid, a.structure, "-o", out, "--spacing", str(a.spacing), "--method", methods,
               "--device", a.device, "--json", "-q"]
    wall, report = run_json(command)
    os.remove(out)
    return wall, report


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--structure", default="/usr/share/apbs/examples/misc/achbp.pqr")
    p.add_argument("--spacing", type=float, default=0.5)
    p.add_argument("--methods", default="direct,msm,cutoff", help="the run set against --method direct")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--device", default="auto")
    p.add_argument("--out-dir", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    p.add_argument("--json", default=os.path.join(os.environ.get("DCSGRID_BENCH_OUT", "."), "bench_job_comparison.json"))
    a = p.parse_args()
    if not os.path.exists(a.structure):
        raise SystemExit("bench_job_comparison: no structure at %s (Debian's apbs ships achbp.pqr)" % a.structure)
    out = os.path.join(a.out_dir, "bench_job_comparison.h5")
    rows = []
    for round_ in range(1, a.rounds + 1):
        base_wall, base = run(a, "direct", out)
        wall, report = run(a, a.methods, out)
        passes = {p["method"]: p["seconds"] for p in report["passes"]}
        rows.append({"round": round_, "warm_up": round_ == 1, "direct_s": base_wall, "methods_s": wall,
                     "ratio": wall / base_wall, "direct_in_process_s": base["seconds"]["total"],
                     "methods_in_process_s": report["seconds"]["total"], "passes": passes,
                     "device": report["device"]})
    setup = {"structure": os.path.basename(a.structure), "atoms": report["atoms"],
             "grid_dims": report["grid"]["dims"], "spacing": a.spacing, "methods": a.methods,
             "device": report["device"]}
    print("%s, %d atoms, grid %s, %s against direct alone, on %s" % (
        setup["structure"], setup["atoms"], "x".join(map(str, setup["grid_dims"])), a.methods, setup["device"]))
    print("%-6s %10s %12s %7s   %s" % ("round", "direct s", "methods s", "ratio", "passes: set-up/compute/compare/write s"))
    for r in rows:
        detail = "  ".join("%s %.3f/%.3f/%.3f/%.3f" % (m, s["setup"], s["compute"], s["compare"], s["write"])
                           for m, s in r["passes"].items())
        print("%-6s %10.3f %12.3f %7.2f   %s" % ("%d%s" % (r["round"], "*" if r["warm_up"] else ""), r["direct_s"],
                                              r["methods_s"], r["ratio"], detail))
    warm = [r["ratio"] for r in rows if not r["warm_up"]] or [rows[0]["ratio"]]
    print("(* warm-up round) ratio over the other rounds: %.2f-%.2f" % (min(warm), max(warm)))
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_job_comparison", "setup": setup, "rows": rows}, f, indent=2)
    print("(written %s)" % a.json)


if __name__ == "__main__":
    main()
