"""Baselines for benchmarks/bench_io_trajectory.cpp, run with /usr/bin/python3.

  make-xtc PATH ATOMS FRAMES   an XTC by MDAnalysis' writer (water-like triples, 0.001 nm)
  time FORMAT PATH REPEATS     best wall time of reading every frame with MDAnalysis' low-level
                               file classes (XTCFile: the C xdrfile library; DCDFile: libdcd),
                               printed as JSON {"seconds": s, "frames": n}
"""
import json
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def make_xtc(path, atoms, frames):
    import MDAnalysis as mda
    rng = np.random.default_rng(1)
    molecules = (atoms + 2) // 3
    centres = rng.uniform(0, 80, size=(molecules, 3))
    u = mda.Universe.empty(atoms, trajectory=True)
    u.dimensions = [80, 80, 80, 90, 90, 90]
    with mda.Writer(path, atoms) as w:
        for f in range(frames):
            centres += rng.normal(0, 0.3, size=centres.shape)
            xyz = (centres[:, None, :] + rng.normal(0, 0.6, size=(molecules, 3, 3))).reshape(-1, 3)
            u.atoms.positions = xyz[:atoms]
            w.write(u)


def time_reading(fmt, path, repeats):
    from MDAnalysis.lib.formats.libdcd import DCDFile
    from MDAnalysis.lib.formats.libmdaxdr import XTCFile
    opener = {"xtc": XTCFile, "dcd": DCDFile}[fmt]
    best, frames = float("inf"), 0
    for _ in range(repeats + 1):  # the first is a warm-up
        t0 = time.perf_counter()
        with opener(path) as f:
            frames = sum(1 for _ in f)
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"seconds": best, "frames": frames}))


if __name__ == "__main__":
    if sys.argv[1] == "make-xtc":
        make_xtc(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "time":
        time_reading(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit("unknown command " + sys.argv[1])
