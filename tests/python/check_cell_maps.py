#!/usr/bin/python3
"""Reads the maps on a triclinic cell's own lattice (`--grid cell`) that tests/test_cli_periodic.cpp
wrote into DIR with other people's readers, and checks that each places the map where the cell
says: h5py (the `axes` attribute), gemmi (the CCP4 cell and angles, values interpolated at
Cartesian positions), ASE (the cube's axis vectors) and a plain parse of the OpenDX delta lines.

DIR holds cell.h5, cell.ccp4, cell.cube, cell.dx and expect.txt: the cell's lengths and angles on
its first line, then lines "i j k" of grid points to check. The cell's lattice vectors are made
here from lengths and angles (a along x, b in the xy plane), independently of dcsgrid.

Usage: /usr/bin/python3 check_cell_maps.py DIR
Exit status: 0 all checks passed, 1 a check failed, 77 a reader is missing (the test skips).
"""
import math
import os
import sys

try:
    import numpy as np
    import h5py
    import gemmi
    import ase.io.cube
except ImportError as e:
    print(f"skip: {e} (tools/setup.sh installs python3-numpy, python3-h5py, python3-gemmi, python3-ase)")
    sys.exit(77)

BOHR = 0.529177210903  # Å


def lattice(a, b, c, alpha, beta, gamma):
    ca, cb, cg = (math.cos(math.radians(t)) for t in (alpha, beta, gamma))
    sg = math.sin(math.radians(gamma))
    cx = c * cb
    cy = c * (ca - cb * cg) / sg
    return np.array([[a, 0, 0], [b * cg, b * sg, 0], [cx, cy, math.sqrt(c * c - cx * cx - cy * cy)]])


def main(folder):
    with open(os.path.join(folder, "expect.txt")) as f:
        cell = [float(v) for v in f.readline().split()]
        points = [tuple(int(v) for v in line.split()) for line in f if line.strip()]
    vectors = lattice(*cell)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with h5py.File(os.path.join(folder, "cell.h5"), "r") as h5:
        pot = h5["potential"]
        values = pot[()]  # z, y, x
        nz, ny, nx = values.shape
        origin = np.array(pot.attrs["origin"])
        axes = np.array(pot.attrs["axes"])
        dims = np.array([nx, ny, nz])
        check(np.allclose(axes * dims[:, None], vectors, atol=1e-9), f"h5 axes {axes} times {dims} is not the cell {vectors}")

    def position(i, j, k):
        return origin + (np.array([i, j, k]) / dims) @ vectors

    def value(i, j, k):
        return values[k, j, i]

    scale = float(np.sqrt(np.mean(values.astype(np.float64) ** 2)))

    # gemmi: the CCP4 cell, and the map interpolated at each point's Cartesian position.
    m = gemmi.read_ccp4_map(os.path.join(folder, "cell.ccp4"))
    uc = m.grid.unit_cell
    check(np.allclose([uc.a, uc.b, uc.c, uc.alpha, uc.beta, uc.gamma], cell, atol=1e-3),
          f"gemmi reads the cell {uc} for {cell}")
    m.setup(float("nan"))
    for p in points:
        got = m.grid.interpolate_value(gemmi.Position(*position(*p)))
        check(abs(got - value(*p)) <= 1e-5 * scale, f"gemmi: point {p} holds {got}, the h5 file {value(*p)}")

    # ASE: the cube's origin and axis vectors.
    with open(os.path.join(folder, "cell.cube")) as f:
        cube = ase.io.cube.read_cube(f)
    check(np.allclose(np.array(cube["atoms"].cell), vectors, atol=1e-4), f"ASE's cube cell {cube['atoms'].cell}")
    check(np.allclose(cube["origin"], origin, atol=1e-5), f"ASE's cube origin {cube['origin']}")
    check(cube["data"].shape == (nx, ny, nz), f"ASE's cube data {cube['data'].shape}")
    for p in points:
        check(abs(cube["data"][p] - value(*p)) <= 1e-5 * scale, f"cube: point {p}")

    # OpenDX: origin and delta lines, data in x-slowest order.
    with open(os.path.join(folder, "cell.dx")) as f:
        lines = f.read().splitlines()
    deltas = [[float(v) for v in l.split()[1:]] for l in lines if l.startswith("delta")]
    dx_origin = [float(v) for v in next(l for l in lines if l.startswith("origin")).split()[1:]]
    check(np.allclose(np.array(deltas) * dims[:, None], vectors, atol=1e-6), f"dx deltas {deltas}")
    check(np.allclose(dx_origin, origin, atol=1e-9), f"dx origin {dx_origin}")
    start = next(n for n, l in enumerate(lines) if "data follows" in l) + 1
    numbers = []
    for l in lines[start:]:
        if l.startswith("attribute") or l.startswith("object"):
            break
        numbers.extend(float(v) for v in l.split())
    dx = np.array(numbers).reshape(nx, ny, nz)
    for p in points:
        check(abs(dx[p] - value(*p)) <= 1e-5 * scale, f"dx: point {p}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(points)} points in 4 formats, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
