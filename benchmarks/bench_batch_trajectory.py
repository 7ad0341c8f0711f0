#!/usr/bin/env python3
"""A long MD trajectory through `dcsgrid batch`: frames/s and the stage split.

Writes a CHARMM-flavour DCD (little-endian, 4-byte record markers, from the format's published
layout) of FRAMES frames of a protein jiggled by 0.3 Å per coordinate, with a PQR of the protein as
the topology, then runs
  dcsgrid batch PROTEIN.pqr TRAJ.dcd -o frames.h5 --spacing 1 --json
and prints frames/s, the busy share of the read, compute and write stages and the disk's size of
the batch file, as a table and JSON.

usage: bench_batch_trajectory.py --dcsgrid BUILD/dcsgrid --protein data/1hpv_pdb2pqr_amber.pqr.gz
                                 [--frames 10000] [--work DIR] [--json OUT.json]
"""
import argparse
import gzip
import json
import os
import struct
import subprocess
import tempfile
import time

import numpy as np


def read_pqr(path):
    opener = gzip.open if path.endswith(".gz") else open
    xyz, lines = [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                fields = line.split()
                xyz.append([float(v) for v in fields[-5:-2]])
                lines.append(line)
    return np.asarray(xyz), lines


def record(payload):
    """One Fortran unformatted record: 4-byte length, payload, the length again."""
    return struct.pack("<i", len(payload)) + payload + struct.pack("<i", len(payload))


def write_dcd(path, reference, frames, seed=1):
    n = len(reference)
    icntrl = [frames, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24]  # 20 ints, CHARMM 24
    header = b"CORD" + struct.pack("<9i", *icntrl[:9]) + struct.pack("<f", 0.002) + struct.pack("<10i", *icntrl[10:])
    title = struct.pack("<i", 1) + b"dcsgrid benchmark trajectory".ljust(80)
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        f.write(record(header) + record(title) + record(struct.pack("<i", n)))
        for _ in range(frames):
            xyz = (reference + rng.normal(scale=0.3, size=reference.shape)).astype("<f4")
            for axis in range(3):
                f.write(record(xyz[:, axis].tobytes()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--protein", default="data/1hpv_pdb2pqr_amber.pqr.gz")
    p.add_argument("--frames", type=int, default=10000)
    p.add_argument("--work", default="")
    p.add_argument("--json", default="bench_batch_trajectory.json")
    a = p.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="dcsgrid-traj-")
    reference, lines = read_pqr(a.protein)
    topology = os.path.join(work, "protein.pqr")
    with open(topology, "w") as f:
        f.writelines(lines)
    dcd = os.path.join(work, "traj.dcd")
    t0 = time.perf_counter()
    write_dcd(dcd, reference, a.frames)
    made = time.perf_counter() - t0
    out = os.path.join(work, "frames.h5")
    t0 = time.perf_counter()
    done = subprocess.run([a.dcsgrid, "batch", topology, dcd, "-o", out, "--spacing", "1", "--json",
                           "-q", "--overwrite"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit("dcsgrid batch failed: " + done.stderr[-2000:])
    r = json.loads(done.stdout)
    share = r["stage_busy_share"]
    row = {"atoms": len(reference), "frames": a.frames, "dcd_MB": os.path.getsize(dcd) / 1e6,
           "batch_file_MB": os.path.getsize(out) / 1e6, "process_s": wall, "scan_s": r["seconds"]["scan"],
           "pipeline_s": r["seconds"]["pipeline"], "frames_per_s": r["frames_per_second"],
           "read_share": share["read"], "compute_share": share["compute"], "write_share": share["write"],
           "device": r["device"], "dcd_written_s": made}
    print("%8s %7s %8s %9s %8s %10s %6s %8s %6s  %s" % ("atoms", "frames", "DCD MB", "file MB", "scan s",
                                                       "frames/s", "read", "compute", "write", "device"))
    print("%8d %7d %8.0f %9.0f %8.2f %10.1f %6.2f %8.2f %6.2f  %s" % (
        row["atoms"], row["frames"], row["dcd_MB"], row["batch_file_MB"], row["scan_s"],
        row["frames_per_s"], row["read_share"], row["compute_share"], row["write_share"], row["device"]))
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_batch_trajectory", "rows": [row]}, f, indent=2)
    print("(written %s)" % a.json)
    os.remove(out)
    os.remove(dcd)


if __name__ == "__main__":
    main()
