"""Independent side of tests/test_io_trajectory*.cpp: writes trajectories with MDAnalysis' own
writers (or DCD variants byte by byte from the format description), reads them back with
MDAnalysis, and dumps what MDAnalysis sees for the C++ readers to be compared with.

  write FORMAT PATH ATOMS FRAMES SEED   MDAnalysis writer (dcd xtc trr ncdf), then reference
  dcd PATH ATOMS FRAMES SEED FLAVOUR ENDIAN MARKER [FIXED]
                                        hand-made DCD: FLAVOUR charmm|xplor, ENDIAN < or >,
                                        MARKER 4|8; FIXED > 0 writes a fixed-atom header
  trr-double PATH ATOMS FRAMES SEED     double-precision TRR with velocities, byte by byte
  trr-mixed PATH ATOMS FRAMES SEED      the same with records of x+v, v, x, f in turn
  reference PATH                        MDAnalysis' reading of an existing trajectory
  charges TOPOLOGY                      atom names, residue names and charges per line
  real OUTDIR                           references for MDAnalysisTests' adk/bala files
Reference files next to PATH: PATH.meta ("frames atoms"), PATH.xyz (float64 positions, Å),
PATH.box (float64 a b c alpha beta gamma per frame, NaN for none), PATH.time (float64 ps),
PATH.offsets (XTC/TRR/NetCDF frame offsets, text), PATH.written (float64 positions as written).
"""
import struct
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import MDAnalysis as mda  # noqa: E402


def random_frames(atoms, frames, seed, spread=40.0):
    """Water-like triples (close atoms) so XTC runs of small differences occur."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, spread, size=(frames, (atoms + 2) // 3, 3))
    offsets = rng.normal(0, 0.6, size=(frames, (atoms + 2) // 3, 3, 3))
    xyz = (centres[:, :, None, :] + offsets).reshape(frames, -1, 3)[:, :atoms]
    # Atoms far apart as well: the first few span a wider range.
    xyz[:, : min(atoms, 4)] += rng.uniform(-spread, 2 * spread, size=(frames, min(atoms, 4), 3))
    boxes = np.column_stack([
        rng.uniform(30, 60, size=(frames, 3)),
        rng.uniform(70, 110, size=(frames, 3)),
    ])
    return xyz.astype(np.float32), boxes


def dump_reference(path, universe):
    traj = universe.trajectory
    xyz, box, time = [], [], []
    for ts in traj:
        if not ts.has_positions:  # TRR records of velocities or forces only
            continue
        xyz.append(ts.positions.astype(np.float64))
        dims = ts.dimensions
        box.append(np.full(6, np.nan) if dims is None else np.asarray(dims, dtype=np.float64))
        time.append(ts.time)
    np.asarray(xyz).tofile(path + ".xyz")
    np.asarray(box).tofile(path + ".box")
    np.asarray(time, dtype=np.float64).tofile(path + ".time")
    with open(path + ".meta", "w") as f:
        f.write("%d %d\n" % (len(xyz), universe.atoms.n_atoms))
    if hasattr(traj, "_xdr"):
        np.savetxt(path + ".offsets", np.asarray(traj._xdr.offsets, dtype=np.int64), fmt="%d")
    if path.endswith(".ncdf"):
        # Classic netCDF keeps the records at the end of the file, scipy knows their size.
        import os
        import scipy.io
        with scipy.io.netcdf_file(path, "r", mmap=False) as f:
            recsize = f._recsize
        size = os.path.getsize(path)
        offsets = [size - (len(xyz) - k) * recsize for k in range(len(xyz))]
        np.savetxt(path + ".offsets", np.asarray(offsets, dtype=np.int64), fmt="%d")


def write_with_mdanalysis(fmt, path, atoms, frames, seed):
    xyz, boxes = random_frames(atoms, frames, seed)
    u = mda.Universe.empty(atoms, trajectory=True)
    with mda.Writer(path, atoms) as w:
        for f in range(frames):
            u.atoms.positions = xyz[f]
            u.dimensions = boxes[f]
            u.trajectory.ts.time = 2.5 * f + 1.0
            u.trajectory.ts.data["step"] = 100 * f
            w.write(u)
    xyz.astype(np.float64).tofile(path + ".written")
    dump_reference(path, mda.Universe(path_topology(atoms), path))


def path_topology(atoms):
    """A throwaway PDB-free topology: MDAnalysis needs one to open a trajectory."""
    u = mda.Universe.empty(atoms)
    return u._topology


def write_dcd_by_hand(path, atoms, frames, seed, flavour, endian, marker, fixed):
    xyz, boxes = random_frames(atoms, frames, seed)
    mark = (endian + ("i" if marker == 4 else "q"))

    def record(payload):
        return struct.pack(mark, len(payload)) + payload + struct.pack(mark, len(payload))

    icntrl = [0] * 20
    icntrl[0], icntrl[1], icntrl[2] = frames, 10, 5
    icntrl[8] = fixed
    head = b"CORD" + struct.pack(endian + "9i", *icntrl[:9])
    if flavour == "charmm":
        head += struct.pack(endian + "f", 0.02)
        icntrl[10], icntrl[19] = 1, 24
        head += struct.pack(endian + "10i", *icntrl[10:])
    else:
        head += struct.pack(endian + "d", 0.02) + struct.pack(endian + "9i", *icntrl[11:])
    out = record(head)
    out += record(struct.pack(endian + "i", 2) + b"REMARKS hand-made DCD".ljust(80) + b"x".ljust(80))
    out += record(struct.pack(endian + "i", atoms))
    if fixed:
        out += record(struct.pack(endian + "%di" % (atoms - fixed), *range(1, atoms - fixed + 1)))
    for f in range(frames):
        if flavour == "charmm":
            a, b, c, al, be, ga = boxes[f]
            cosines = [np.cos(np.radians(x)) for x in (ga, be, al)]
            out += record(struct.pack(endian + "6d", a, cosines[0], b, cosines[1], cosines[2], c))
        for axis in range(3):
            out += record(xyz[f, :, axis].astype(endian + "f4").tobytes())
    with open(path, "wb") as fh:
        fh.write(out)
    xyz.astype(np.float64).tofile(path + ".written")
    boxes.tofile(path + ".boxes_written")
    if marker == 4 and not fixed:
        dump_reference(path, mda.Universe(path_topology(atoms), path, format="DCD"))


def write_double_trr(path, atoms, frames, seed, mixed=False):
    """A double-precision TRR (GROMACS' double build) with velocities, byte by byte. mixed: the
    records cycle through x+v, v only, x only, f only (then a last v-only one), as with
    different output intervals for positions, velocities and forces."""
    xyz, boxes = random_frames(atoms, frames, seed)
    rng = np.random.default_rng(seed + 1)
    out = b""
    kinds = [("x", "v"), ("v",), ("x",), ("f",)] if mixed else [("x", "v")]
    records = [(f, kinds[f % len(kinds)]) for f in range(frames)]
    if mixed:
        records.append((frames - 1, ("v",)))
    written = []
    for f, kind in records:
        a, b, c = boxes[f, :3] / 10.0
        tilt = rng.uniform(-0.3, 0.3, size=3)
        box = np.array([[a, 0, 0], [tilt[0], b, 0], [tilt[1], tilt[2], c]])
        vectors = rng.normal(size=(atoms, 3))
        block = 24 * atoms
        sizes = [0, 0, 72, 0, 0, 0, 0, block if "x" in kind else 0, block if "v" in kind else 0,
                 block if "f" in kind else 0, atoms, 1000 * f, 0]
        out += struct.pack(">iii", 1993, 13, 12) + b"GMX_trn_file" + struct.pack(">13i", *sizes)
        out += struct.pack(">dd", 0.5 * f, 0.0) + box.astype(">f8").tobytes()
        if "x" in kind:
            out += (xyz[f].astype(np.float64) / 10.0).astype(">f8").tobytes()
            written.append(xyz[f])
        if "v" in kind or "f" in kind:
            out += vectors.astype(">f8").tobytes()
    with open(path, "wb") as fh:
        fh.write(out)
    np.asarray(written, dtype=np.float64).tofile(path + ".written")
    dump_reference(path, mda.Universe(path_topology(atoms), path))


def write_charges(topology, out=None):
    u = mda.Universe(topology)
    with open((out or topology) + ".charges", "w") as f:
        for atom in u.atoms:
            f.write("%s %s %d %.10g\n" % (atom.name, atom.resname, atom.resid, atom.charge))


# MDAnalysisTests' real files (adk, bala): name, topology attribute, trajectory attribute.
REAL_FILES = [("adk_dcd", "PSF", "DCD"), ("adk_xtc", "GRO", "XTC"), ("adk_trr", "GRO", "TRR"),
              ("bala_ncdf", "PRMncdf", "NCDF"),
              ("c36_triclinic", "PSF_TRICLINIC", "DCD_TRICLINIC"),
              ("namd_triclinic", "PSF_NAMD_TRICLINIC", "DCD_NAMD_TRICLINIC"),
              ("namd_gbis", "PSF_NAMD_GBIS", "DCD_NAMD_GBIS"),
              ("amber_truncoct", "PRM7", "NCDFtruncoct")]


def dump_real_files(outdir):
    """References for the MDAnalysisTests files that exist (adk, bala, triclinic CHARMM c36
    and NAMD DCDs, a truncated-octahedron AMBER NetCDF): OUTDIR/pairs.txt lists
    "name topology trajectory"; OUTDIR/name.* as dump_reference, OUTDIR/name.charges for PSF
    and PRMTOP topologies."""
    import os
    import MDAnalysisTests.datafiles as data
    with open(os.path.join(outdir, "pairs.txt"), "w") as pairs:
        for name, top_attr, traj_attr in REAL_FILES:
            top, traj = getattr(data, top_attr, None), getattr(data, traj_attr, None)
            if not top or not traj or not os.path.exists(top) or not os.path.exists(traj):
                continue
            out = os.path.join(outdir, name)
            dump_reference(out, mda.Universe(top, traj))
            if top.endswith((".psf", ".prmtop", ".parm7", ".top")):
                write_charges(top, out)
            pairs.write("%s %s %s\n" % (name, top, traj))


def main(argv):
    cmd = argv[1]
    if cmd == "write":
        write_with_mdanalysis(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]))
    elif cmd == "dcd":
        fixed = int(argv[9]) if len(argv) > 9 else 0
        write_dcd_by_hand(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), argv[6], argv[7],
                          int(argv[8]), fixed)
    elif cmd == "reference":
        u = mda.Universe(path_topology(int(argv[3])), argv[2])
        dump_reference(argv[2], u)
    elif cmd in ("trr-double", "trr-mixed"):
        write_double_trr(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), cmd == "trr-mixed")
    elif cmd == "charges":
        write_charges(argv[2])
    elif cmd == "real":
        dump_real_files(argv[2])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
