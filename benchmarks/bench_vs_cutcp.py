#!/usr/bin/env python3
"""The whole dcsgrid process against Parboil's cutcp on the same water boxes.

Tiles a PQR water box N×N×N times (the same density: each copy shifted by the box's extent plus
1 Å), then for each size runs, REPEAT times each,
  cutcp -i BOX.pqr -o LATTICE            (its own "Timer Wall Time" and /usr/bin/time's)
  dcsgrid BOX.pqr -o out.h5 --method cutoff --cutoff 12 --padding 0.5 --json
(0.5 Å grid, 12 Å shifted cutoff: cutcp's published setting) and prints a table of wall times,
dcsgrid's stage split and the ratio, and writes the rows as JSON. Before every timed run the
previous outputs are deleted and the page cache's dirty pages flushed (sync), so that no run
writes while the one before is still being written back.

usage: bench_vs_cutcp.py --dcsgrid BUILD/dcsgrid --water watbox.pqr [--cutcp PATH/cutcp]
                         [--tiles 1,3,5,8] [--repeat 3] [--work DIR] [--json OUT.json]
Without --cutcp (or when it does not exist) only dcsgrid runs, and the ratio column is empty.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def read_atoms(path):
    atoms = []
    with open(path) as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                fields = line.split()
                atoms.append([float(v) for v in fields[-5:]])  # x y z q r
    return atoms


def tile(atoms, n, out):
    lo = [min(a[k] for a in atoms) for k in range(3)]
    hi = [max(a[k] for a in atoms) for k in range(3)]
    step = [hi[k] - lo[k] + 1.0 for k in range(3)]
    serial = 0
    with open(out, "w") as f:
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    shift = (i * step[0], j * step[1], k * step[2])
                    for x, y, z, q, r in atoms:
                        serial += 1
                        f.write("ATOM  %5d  OH2 WAT  %4d    %8.3f%8.3f%8.3f %7.4f %6.4f\n" % (
                            serial % 100000, (serial // 3) % 10000, x + shift[0], y + shift[1],
                            z + shift[2], q, r))
    return serial


def timed(command, output):
    """Runs command, which writes output, from a clean start (output deleted, dirty pages written
    back); returns (wall seconds, stdout, stderr)."""
    if os.path.exists(output):
        os.remove(output)
    os.sync()
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (command[0], done.returncode, done.stderr[-2000:]))
    return wall, done.stdout, done.stderr


def run_cutcp(cutcp, box, lattice):
    wall, out, err = timed([cutcp, "-i", box, "-o", lattice], lattice)
    found = re.search(r"Timer Wall Time:\s*([0-9.eE+-]+)", out + err)
    return wall, float(found.group(1)) if found else float("nan")


def run_dcsgrid(dcsgrid, box, out):
    wall, stdout, _ = timed([dcsgrid, box, "-o", out, "--method", "cutoff", "--cutoff", "12",
                             "--padding", "0.5", "--json", "-q"], out)
    return wall, json.loads(stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--water", required=True, help="PQR water box to tile")
    p.add_argument("--cutcp", default="")
    p.add_argument("--tiles", default="1,3,5,8")
    p.add_argument("--tiler", default="", help="a script TILER IN.pqr N OUT.pqr to tile with instead")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", default="")
    p.add_argument("--json", default="bench_vs_cutcp.json")
    a = p.parse_args()
    have_cutcp = bool(a.cutcp) and os.path.exists(a.cutcp)
    if not have_cutcp:
        print("cutcp not given or not found: dcsgrid alone", file=sys.stderr)
    work = a.work or tempfile.mkdtemp(prefix="dcsgrid-vs-cutcp-")
    base = read_atoms(a.water)
    rows = []
    header = "%9s %9s %9s %9s %7s  %s" % ("atoms", "cutcp s", "dcsgrid s", "best", "ratio",
                                          "dcsgrid stages (read/setup/compute/overflow/write)")
    print(header)
    for n in [int(t) for t in a.tiles.split(",")]:
        box = os.path.join(work, "water%d.pqr" % n)
        if a.tiler:
            subprocess.run([sys.executable, a.tiler, a.water, str(n), box], check=True, capture_output=True)
            atoms = len(read_atoms(box))
        else:
            atoms = tile(base, n, box)
        cut, ours, stages = [], [], None
        for _ in range(a.repeat):
            if have_cutcp:
                cut.append(run_cutcp(a.cutcp, box, os.path.join(work, "lattice.dat"))[0])
            wall, summary = run_dcsgrid(a.dcsgrid, box, os.path.join(work, "out.h5"))
            ours.append(wall)
            if wall == min(ours):
                stages = summary["seconds"]
        best_cut = min(cut) if cut else float("nan")
        ratio = best_cut / min(ours) if cut else float("nan")
        stage_text = "%.3f/%.3f/%.3f/%.3f/%.3f" % (stages["read"], stages["setup"], stages["compute"],
                                                   stages["overflow_cpu"], stages["write"])
        print("%9d %9s %9s %9.3f %7s  %s" % (
            atoms, "-" if not cut else "%.3f" % best_cut, "%.3f" % min(ours), min(ours),
            "-" if not cut else "%.2fx" % ratio, stage_text))
        rows.append({"atoms": atoms, "cutcp_wall_s": cut, "dcsgrid_wall_s": ours,
                     "dcsgrid_stages_s": stages, "speedup_vs_cutcp": ratio if cut else None})
        os.remove(box)
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_vs_cutcp", "rows": rows}, f, indent=2)
    print("(written %s)" % a.json)


if __name__ == "__main__":
    main()
