#!/usr/bin/env python3
"""Batch frames/s where the writer sets the pace, beside the disk's own bandwidth (issue 16).

Writes (or reuses, as bench_batch_trajectory.py does) a CHARMM DCD of FRAMES frames of 1HPV
(3,368 atoms) jiggled by 0.3 Å, then runs, REPEATS times each, in the same session:
  writer-bound: dcsgrid batch protein.pqr traj.dcd -o OUT --spacing 1 --device cpu
                --method cutoff --cutoff 1 --json   (compute almost free: 1 Å cutoff)
  default:      dcsgrid batch protein.pqr traj.dcd -o OUT --spacing 1 --json
                (direct on the GPU where there is one; skipped with --no-default)
and, between the runs, `dd if=/dev/zero of=WORK/dd.bin bs=1M count=N conv=fsync` writing as many
bytes as one batch file holds, to the same folder. Every batch file is deleted after its run.
Prints per case the best and median frames/s, the stages' busy shares as batch's --json
reports them (read, compute, stats, write), the map data written per second of the pipeline and
per second the writer was busy (what the writer alone could sustain), against dd's MB/s; writes
the table's rows and every run as JSON. With --baseline OTHER_DCSGRID the same cases run with that
binary too (an older build: before/after in one session).

The grid is 70×62×79 points at 1 Å (1.37 MB a frame) for the default 2,000 frames (the union box
of the jiggled frames).

usage: bench_batch_write.py --dcsgrid BUILD/dcsgrid [--baseline OLD/dcsgrid] [--frames 2000]
          [--repeats 3] [--work DIR] [--no-default] [--json bench_batch_write.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_batch_trajectory import prepare_trajectory  # noqa: E402  (the same DCD and topology)
from timed_run import run_json  # noqa: E402

CASES = {
    "writer-bound": ["--device", "cpu", "--method", "cutoff", "--cutoff", "1"],
    "default": [],
}
STAGES = ("read", "compute", "stats", "write")


def dd_bandwidth(work, megabytes):
    """MB/s (1e6 B) of dd writing zeros ending with fsync, as dd reports it."""
    target = os.path.join(work, "dd.bin")
    done = subprocess.run(["dd", "if=/dev/zero", "of=" + target, "bs=1M", "count=%d" % megabytes,
                           "conv=fsync"], capture_output=True, text=True)
    os.remove(target)
    if done.returncode != 0:
        raise SystemExit("dd failed: " + done.stderr[-500:])
    m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", done.stderr)
    return int(m.group(1)) / float(m.group(2)) / 1e6


def run_batch(binary, case, topology, dcd, work):
    out = os.path.join(work, "batch.h5")
    command = [binary, "batch", topology, dcd, "-o", out, "--spacing", "1", "--json", "-q",
               "--overwrite"] + CASES[case]
    wall, r = run_json(command)
    file_bytes = os.path.getsize(out)
    os.remove(out)
    dims = r["grid"]["dims"]
    frame_mb = dims[0] * dims[1] * dims[2] * 4 / 1e6
    pipeline = r["seconds"]["pipeline"]
    share = r["stage_busy_share"]
    write_busy = share["write"] * pipeline
    return {"binary": binary, "case": case, "frames": r["computed"], "grid_dims": dims,
            "frame_MB": frame_mb, "file_GB": file_bytes / 1e9, "process_s": wall, "scan_s": r["seconds"]["scan"],
            "pipeline_s": pipeline, "frames_per_s": r["frames_per_second"],
            "shares": {s: share.get(s, 0.0) for s in STAGES},
            "MB_per_s": r["computed"] * frame_mb / pipeline,
            "writer_MB_per_s": r["computed"] * frame_mb / write_busy if write_busy > 0 else float("nan"),
            "device": r["device"]}


def summarise(runs):
    best = max(runs, key=lambda r: r["frames_per_s"])
    return {"binary": best["binary"], "case": best["case"], "runs": len(runs),
            "frames_per_s_best": best["frames_per_s"],
            "frames_per_s_median": statistics.median(r["frames_per_s"] for r in runs),
            "MB_per_s_best": best["MB_per_s"], "writer_MB_per_s_best": best["writer_MB_per_s"],
            "shares_of_best": best["shares"], "device": best["device"], "frame_MB": best["frame_MB"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--baseline", default="", help="another dcsgrid binary run on the same cases")
    p.add_argument("--protein", default="data/1hpv_pdb2pqr_amber.pqr.gz")
    p.add_argument("--frames", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--work", default="")
    p.add_argument("--no-default", action="store_true", help="only the writer-bound case")
    p.add_argument("--json", default="bench_batch_write.json")
    a = p.parse_args()
    a.work = a.work or tempfile.mkdtemp(prefix="dcsgrid-batchwrite-")
    os.makedirs(a.work, exist_ok=True)
    topology, dcd, _ = prepare_trajectory(a.work, a.protein, a.frames)
    binaries = [a.dcsgrid] + ([a.baseline] if a.baseline else [])
    cases = ["writer-bound"] + ([] if a.no_default else ["default"])
    runs, dd = [], []
    for k in range(a.repeats):  # interleaved, so that a change in the machine's load hits every row
        for case in cases:
            for binary in binaries:
                runs.append(run_batch(binary, case, topology, dcd, a.work))
                print("%-12s %-40s %8.1f frames/s" % (case, binary, runs[-1]["frames_per_s"]), flush=True)
        megabytes = max(1, int(runs[-1]["file_GB"] * 1e3 / 1.048576))
        dd.append(dd_bandwidth(a.work, megabytes))
        print("dd conv=fsync, %d MiB: %.0f MB/s" % (megabytes, dd[-1]), flush=True)
    rows = [summarise([r for r in runs if r["case"] == c and r["binary"] == b]) for c in cases for b in binaries]
    dd_best = max(dd)
    print()
    print("%-12s %-28s %9s %9s %9s %9s %6s %6s %6s %6s %8s" % (
        "case", "binary", "best f/s", "median", "MB/s", "writer", "read", "comp", "stats", "write", "vs dd"))
    for r in rows:
        s = r["shares_of_best"]
        print("%-12s %-28s %9.1f %9.1f %9.0f %9.0f %6.2f %6.2f %6.2f %6.2f %8.2f" % (
            r["case"], r["binary"][-28:], r["frames_per_s_best"], r["frames_per_s_median"], r["MB_per_s_best"],
            r["writer_MB_per_s_best"], s["read"], s["compute"], s["stats"], s["write"],
            r["MB_per_s_best"] / dd_best))
    print("dd conv=fsync to the same folder: best %.0f MB/s, runs %s" % (dd_best, ", ".join("%.0f" % v for v in dd)))
    print("(MB/s: map data over the pipeline's time; writer: over the write stage's busy time; "
          "vs dd: MB/s / dd's best)")
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_batch_write", "frames": a.frames, "repeats": a.repeats,
                   "dd_MB_per_s": dd, "rows": rows, "runs": runs}, f, indent=2)
    print("(written %s)" % a.json)


if __name__ == "__main__":
    main()
