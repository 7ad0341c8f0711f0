#!/usr/bin/env python3
"""Writes a large assembly for benchmarks: translated copies of one PQR's atoms on a lattice.

    make_assembly.py IN.pqr[.gz] OUT.pqr --copies N [--gap Å]

The copies fill an a×b×c lattice (the most cubic one holding N), each slot the input's bounding
box plus --gap (default 4 Å, about two water layers), so neighbouring copies come close but do not
overlap. Residue numbers continue from copy to copy; chains cycle A–Z.
"""
import argparse
import gzip
import math
import sys


def read_atoms(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                fields = line.split()
                # name, residue name, residue number, x, y, z, charge, radius (the last seven fields)
                yield fields[2], fields[3], int(fields[-6]), *map(float, fields[-5:])


def lattice(copies):
    a = math.ceil(copies ** (1 / 3))
    b = math.ceil(math.sqrt(copies / a))
    c = math.ceil(copies / (a * b))
    return a, b, c


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--copies", type=int, required=True)
    p.add_argument("--gap", type=float, default=4.0)
    args = p.parse_args()
    atoms = list(read_atoms(args.input))
    if not atoms:
        sys.exit(f"{args.input}: no ATOM or HETATM records")
    low = [min(a[3 + d] for a in atoms) for d in range(3)]
    size = [max(a[3 + d] for a in atoms) - low[d] + args.gap for d in range(3)]
    residues = max(a[2] for a in atoms)
    dims = lattice(args.copies)
    serial = 0
    with open(args.output + ".tmp", "w") as out:
        for copy in range(args.copies):
            slot = (copy % dims[0], copy // dims[0] % dims[1], copy // (dims[0] * dims[1]))
            shift = [slot[d] * size[d] - low[d] for d in range(3)]
            chain = chr(ord("A") + copy % 26)
            for name, resname, resnum, x, y, z, q, r in atoms:
                serial += 1
                out.write(f"ATOM  {serial % 100000:5d} {name:<4s} {resname:>3s} {chain}{(resnum + copy * residues) % 10000:4d}    "
                          f"{x + shift[0]:8.3f}{y + shift[1]:8.3f}{z + shift[2]:8.3f} {q:7.4f} {r:6.4f}\n")
        out.write("END\n")
    import os
    os.replace(args.output + ".tmp", args.output)
    print(f"{args.output}: {serial} atoms, {args.copies} copies on a {dims[0]}x{dims[1]}x{dims[2]} lattice")


if __name__ == "__main__":
    main()
