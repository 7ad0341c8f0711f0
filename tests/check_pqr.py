"""Independent checks of `dcsgrid convert`'s PQR output (run by tests/test_cli_convert.cpp), by a
reader of its own: fields counted from the line's end, names from PDB's columns. (MDAnalysis's
PQR reader takes one layout a file, and pdb2pqr's own files mix atoms with and without a chain.)

    check_pqr.py same IN.pqr OUT.pqr       same atoms, names, residues, positions, charges, radii
    check_pqr.py totals PDB2PQR.pqr OUT.pqr  OUT's total charge and each residue's net charge
                                           equal pdb2pqr's; OUT's atoms are pdb2pqr's heavy atoms
    check_pqr.py radii PDB2PQR.pqr OUT.pqr   every radius of OUT is positive, and each heavy atom of
                                           pdb2pqr's residues has pdb2pqr's radius
Prints "ok" or what differs (and exits 1).
"""
import collections
import gzip
import sys


def records(path):
    """(chain, residue number, residue name, atom name, xyz, charge, radius) per atom: the
    numbers counted from the line's end, chain from column 22."""
    opener = gzip.open if path.endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        for line in f:
            if not line.startswith(("ATOM", "HETATM")):
                continue
            fields = line.split()
            x, y, z, q, r = map(float, fields[-5:])
            out.append((line[21].strip(), line[22:27].strip(), line[17:20].strip(), line[12:16].strip(),
                        (x, y, z), q, r))
    return out


def same(reference, output):
    a, b = records(reference), records(output)
    if len(a) != len(b):
        return [f"{len(a)} atoms in, {len(b)} out"]
    problems = []
    for n, (x, y) in enumerate(zip(a, b)):
        if x[:4] != y[:4]:
            problems.append(f"atom {n + 1}: {x[:4]} became {y[:4]}")
        worst = max(max(abs(u - v) for u, v in zip(x[4], y[4])), abs(x[5] - y[5]), abs(x[6] - y[6]))
        if worst > 1e-6:
            problems.append(f"atom {n + 1}: position, charge or radius differ by {worst}")
    return problems


def totals(reference, output):
    ref, out = records(reference), records(output)
    problems = []
    if abs(sum(a[5] for a in ref) - sum(a[5] for a in out)) > 1e-3:
        problems.append(f"total charge {sum(a[5] for a in out)} against pdb2pqr's {sum(a[5] for a in ref)}")
    net_ref, net_out = collections.defaultdict(float), collections.defaultdict(float)
    for a in ref:
        net_ref[a[:2]] += a[5]
    for a in out:
        net_out[a[:2]] += a[5]
    common = set(net_ref) & set(net_out)
    if len(common) < 0.9 * len(net_ref):
        problems.append(f"only {len(common)} of pdb2pqr's {len(net_ref)} residues found")
    for key in sorted(common):
        if abs(net_ref[key] - net_out[key]) > 1e-3:
            problems.append(f"residue {key}: net charge {net_out[key]:.4f} against pdb2pqr's {net_ref[key]:.4f}")
    heavy = {(a[0], a[1], a[3]): a[4] for a in ref if not a[3].startswith("H")}
    for a in out:
        key = (a[0], a[1], a[3])
        if a[:2] in net_ref and (key not in heavy or max(abs(u - v) for u, v in zip(heavy[key], a[4])) > 1e-6):
            problems.append(f"atom {key} is not at pdb2pqr's place")
    return problems


def radii(reference, output):
    ref, out = records(reference), records(output)
    problems = [f"atom {a[:4]}: radius {a[6]}" for a in out if a[6] <= 0]
    heavy = {(a[0], a[1], a[3]): a[6] for a in ref if not a[3].startswith("H")}
    compared = 0
    for a in out:
        key = (a[0], a[1], a[3])
        if key in heavy:
            compared += 1
            if abs(heavy[key] - a[6]) > 1e-6:
                problems.append(f"atom {key}: radius {a[6]} against pdb2pqr's {heavy[key]}")
    if compared < 0.9 * len(heavy):
        problems.append(f"only {compared} of pdb2pqr's {len(heavy)} heavy atoms found")
    return problems


problems = {"same": same, "totals": totals, "radii": radii}[sys.argv[1]](sys.argv[2], sys.argv[3])
print("\n".join(problems[:20]) if problems else "ok")
sys.exit(1 if problems else 0)
