#!/usr/bin/env python3
"""`dcsgrid batch` of one MD trajectory on one GPU, on every GPU, and with several frame workers.

The trajectory is bench_batch_trajectory.py's (a protein jiggled frame by frame, a DCD beside its
PQR topology, made once in --work). Each configuration runs the same command with other hardware
options:
  dcsgrid batch PROTEIN.pqr TRAJ.dcd -o OUT.h5 --spacing S --json --gpus G --frame-workers W
and its frames/s is set against the first row (one GPU, one worker: the baseline, measured in the
same run). Every run's file is compared with the baseline's (the /potential dataset, bit for bit,
through h5py when present) before it is deleted. Prints a table and writes JSON.

usage: bench_batch_gpus.py --dcsgrid BUILD/dcsgrid [--protein data/1hpv_pdb2pqr_amber.pqr.gz]
          [--frames 2000] [--spacing 1] [--work DIR] [--out-dir /dev/shm] [--json OUT.json]
          [--configs "0:1,0:2,all:1,all:2"]
A config is GPUS:PER_GPU, GPUS "0" or "all" (every visible GPU), PER_GPU the workers each GPU gets.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_batch_trajectory import prepare_trajectory  # noqa: E402  (the same trajectory maker)


def gpu_count():
    """The GPUs dcsgrid sees: CUDA_VISIBLE_DEVICES's list when set (nvidia-smi lists every GPU)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                          capture_output=True, text=True)
    return len([line for line in done.stdout.splitlines() if line.strip()]) if done.returncode == 0 else 0


def potential_digest(path):
    """SHA-256 of the /potential dataset's values (None without h5py)."""
    try:
        import h5py
    except ImportError:
        return None
    with h5py.File(path, "r") as f:
        return hashlib.sha256(f["potential"][...].tobytes()).hexdigest()


def run(a, topology, dcd, gpus, per_gpu, ngpus):
    out = os.path.join(a.out_dir, "bench_batch_gpus_%s_%d.h5" % (gpus, per_gpu))
    used = ngpus if gpus == "all" else len(gpus.split(","))
    command = [a.dcsgrid, "batch", topology, dcd, "-o", out, "--spacing", str(a.spacing), "--json", "-q",
               "--overwrite", "--device", "gpu", "--gpus", gpus, "--frame-workers", str(used * per_gpu)]
    print(" ".join(command), flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit("dcsgrid batch failed (status %d): %s" % (done.returncode, done.stderr[-2000:]))
    r = json.loads(done.stdout)
    share = r["stage_busy_share"]
    row = {"gpus": gpus, "gpu_count": used, "workers": used * per_gpu, "frames": r["computed"],
           "grid_dims": r["grid"]["dims"], "process_s": wall, "pipeline_s": r["seconds"]["pipeline"],
           "frames_per_s": r["frames_per_second"], "read_share": share["read"],
           "compute_share": share["compute"], "stats_share": share["stats"], "write_share": share["write"],
           "engine_kernels_s": r["engine_seconds"]["kernels"], "device": r["device"],
           "potential_sha256": potential_digest(out)}
    os.remove(out)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--protein", default="data/1hpv_pdb2pqr_amber.pqr.gz")
    p.add_argument("--frames", type=int, default=2000)
    p.add_argument("--spacing", type=float, default=1.0)
    p.add_argument("--work", default="")
    p.add_argument("--out-dir", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    p.add_argument("--configs", default="0:1,0:2,all:1,all:2")
    p.add_argument("--json", default="bench_batch_gpus.json")
    a = p.parse_args()
    ngpus = gpu_count()
    if ngpus == 0:
        raise SystemExit("bench_batch_gpus: no GPU (nvidia-smi lists none)")
    a.work = a.work or tempfile.mkdtemp(prefix="dcsgrid-gpus-")
    os.makedirs(a.work, exist_ok=True)
    topology, dcd, meta = prepare_trajectory(a.work, a.protein, a.frames)
    rows = []
    for config in a.configs.split(","):
        gpus, per_gpu = config.split(":")
        rows.append(run(a, topology, dcd, gpus, int(per_gpu), ngpus))
    base = rows[0]
    print("\n%-6s %5s %8s %10s %9s %8s %8s %8s %8s  %s" % ("gpus", "work", "frames", "frames/s", "speedup",
                                                         "read", "compute", "stats", "write", "same file"))
    for r in rows:
        r["speedup"] = r["frames_per_s"] / base["frames_per_s"]
        r["same_file_as_baseline"] = (None if r["potential_sha256"] is None
                                      else r["potential_sha256"] == base["potential_sha256"])
        print("%-6s %5d %8d %10.1f %8.2fx %8.2f %8.2f %8.2f %8.2f  %s" % (
            r["gpus"], r["workers"], r["frames"], r["frames_per_s"], r["speedup"], r["read_share"],
            r["compute_share"], r["stats_share"], r["write_share"], r["same_file_as_baseline"]))
    setup = {"protein": os.path.basename(a.protein), "atoms": meta["atoms"], "frames": a.frames,
             "spacing": a.spacing, "visible_gpus": ngpus, "device": rows[-1]["device"]}
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_batch_gpus", "setup": setup, "rows": rows}, f, indent=2)
    print("(written %s)" % a.json)
    if any(r["same_file_as_baseline"] is False for r in rows):
        raise SystemExit("bench_batch_gpus: a run's /potential differs from the one-GPU baseline")


if __name__ == "__main__":
    main()
