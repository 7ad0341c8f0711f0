#!/usr/bin/env python3
"""Writes a box of TIP3P water as PQR: a large, realistic input for end-to-end runs and benchmarks.

    tools/waterbox.py --atoms 100000 -o box.pqr        # about 10^5 atoms (whole molecules)
    tools/waterbox.py --edge 40 -o box.pqr             # a 40 Å cube

TIP3P geometry (O–H 0.9572 Å, H–O–H 104.52°, charges O −0.834 e, H +0.417 e) at the liquid
density, 0.0334 molecules/Å³: oxygens on a cubic lattice, each moved by up to ±0.15 of the site
spacing and turned to a uniformly random orientation. The same seed gives the same file.
Only the Python standard library is needed.
"""
import argparse
import math
import random
import sys

OH = 0.9572
HOH = math.radians(104.52)
CHARGE_O, CHARGE_H = -0.834, 0.417
RADIUS_O, RADIUS_H = 1.7683, 0.0001  # the TIP3P radii pdb2pqr writes
DENSITY = 0.0334


def random_rotation(rng):
    """A uniformly random rotation matrix (from a uniform random unit quaternion)."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    w, x = a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2)
    y, z = b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def water_sites(molecules, rng):
    """The oxygen sites of `molecules` waters: a cubic lattice at the liquid density, jittered."""
    spacing = DENSITY ** (-1.0 / 3.0)
    n = max(1, math.ceil(round(molecules ** (1.0 / 3.0), 9)))
    sites = [(i, j, k) for k in range(n) for j in range(n) for i in range(n)]
    rng.shuffle(sites)  # an evenly filled box when molecules < n³
    for i, j, k in sorted(sites[:molecules], key=lambda s: (s[2], s[1], s[0])):
        yield [spacing * (c + 0.5 + rng.uniform(-0.15, 0.15)) for c in (i, j, k)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--atoms", type=int, help="about this many atoms (rounded up to whole molecules)")
    size.add_argument("--edge", type=float, help="edge of the cube, Å")
    parser.add_argument("-o", "--output", required=True, help="PQR file to write")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.atoms is not None and args.atoms < 1:
        sys.exit("waterbox.py: --atoms must be at least 1")
    if args.edge is not None and args.edge <= 0:
        sys.exit("waterbox.py: --edge must be positive")
    molecules = -(-args.atoms // 3) if args.atoms else max(1, round(DENSITY * args.edge ** 3))
    rng = random.Random(args.seed)
    # The two hydrogens in the molecule's own frame, O at the origin, in the xz plane.
    half = HOH / 2
    hydrogens = [(OH * math.sin(half), 0.0, OH * math.cos(half)),
                 (-OH * math.sin(half), 0.0, OH * math.cos(half))]
    serial = 0
    with open(args.output, "w") as out:
        out.write("REMARK   TIP3P water box written by dcsgrid tools/waterbox.py (seed %d)\n" % args.seed)
        for residue, oxygen in enumerate(water_sites(molecules, rng), start=1):
            rot = random_rotation(rng)
            atoms = [("OH2", oxygen, CHARGE_O, RADIUS_O)]
            for name, h in zip(("H1", "H2"), hydrogens):
                pos = [oxygen[r] + sum(rot[r][c] * h[c] for c in range(3)) for r in range(3)]
                atoms.append((name, pos, CHARGE_H, RADIUS_H))
            for name, (x, y, z), q, radius in atoms:
                serial += 1
                out.write("ATOM  %6d %-4s TIP3 %5d    %9.3f %9.3f %9.3f %7.4f %7.4f\n"
                          % (serial, name, residue, x, y, z, q, radius))
        out.write("END\n")
    print("waterbox.py: wrote %s: %d molecules, %d atoms" % (args.output, molecules, serial))


if __name__ == "__main__":
    main()
