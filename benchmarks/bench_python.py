#!/usr/bin/env python3
"""The Python package against the command line on the same inputs, in one run.

1. potential: dcsgrid.potential (warm: the backend is started by a first call) against the CLI's
   compute stage (`dcsgrid IN -o OUT --json`: the pass's kernel seconds and its wall time, sink
   included) on random atoms in a box, on one grid; values compared bit for bit.
2. frames: dcsgrid.potentials over an MDAnalysis universe (PQR + DCD written here) into a batch
   file, and as an iterator of maps, against `dcsgrid batch` on the same frames written as PQR
   files; frames/s of each and the values compared.

Prints a table and writes JSON (--json). On the GPU machine:
    PYTHONPATH=build/python python3 benchmarks/bench_python.py --cli build/dcsgrid \
        --atoms 100000 --dims 256 --protein data/1hpv_pdb2pqr_amber.pqr.gz --frames 100
"""
import argparse
import json
import os
import pathlib
import subprocess
import tempfile
import time
import warnings

import h5py
import numpy as np

import dcsgrid


def run_cli(cli, args):
    t0 = time.perf_counter()
    done = subprocess.run([str(cli), *map(str, args), "--json"], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout), time.perf_counter() - t0


def write_pqr(path, positions, charges):
    with open(path, "w") as f:
        for i, ((x, y, z), q) in enumerate(zip(positions, charges)):
            f.write(f"ATOM  {i % 100000:5d}  C   UNK     1    {x:8.3f}{y:8.3f}{z:8.3f} {q:7.4f} 1.7000\n")


def grid_args(grid):
    o, d = grid.origin, grid.dims
    return ["--origin", f"{o[0]!r},{o[1]!r},{o[2]!r}", "--dims", f"{d[0]},{d[1]},{d[2]}",
            "--spacing", repr(grid.spacing[0])]


def bench_potential(cli, work, n_atoms, n, device, repeats):
    rng = np.random.default_rng(1)
    side = 0.5 * (n - 1)
    positions = rng.uniform(0.1 * side, 0.9 * side, size=(n_atoms, 3))
    charges = rng.uniform(-1, 1, size=n_atoms)
    pqr = work / "atoms.pqr"
    write_pqr(pqr, positions, charges)
    atoms = dcsgrid.read_atoms(pqr)  # the same float32 values as the CLI reads
    grid = dcsgrid.Grid(origin=(0.0, 0.0, 0.0), spacing=0.5, dims=(n, n, n))
    out = work / "cli.h5"
    cli_runs = []
    for _ in range(repeats):
        out.unlink(missing_ok=True)
        report, wall = run_cli(cli, [pqr, "-o", out, "--device", device, *grid_args(grid)])
        cli_runs.append({"compute": report["passes"][0]["seconds"]["compute"],
                         "pass_wall": report["passes"][0]["seconds"]["wall"], "process": wall,
                         "device": report["device"]})
    dcsgrid.potential(atoms, dcsgrid.Grid((0, 0, 0), 1.0, (8, 8, 8)), device=device)  # warm-up
    py_runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        pot = dcsgrid.potential(atoms, grid, device=device)
        py_runs.append(time.perf_counter() - t0)
    with h5py.File(out, "r") as f:
        identical = bool(np.array_equal(f["potential"][()].transpose(2, 1, 0), pot.values))
    best = lambda key: min(r[key] for r in cli_runs)
    return {"atoms": n_atoms, "dims": [n, n, n], "device": cli_runs[0]["device"],
            "cli_compute_s": best("compute"), "cli_pass_wall_s": best("pass_wall"),
            "cli_process_s": best("process"), "python_s": min(py_runs),
            "python_over_cli_compute": min(py_runs) / best("compute"),
            "python_over_cli_pass_wall": min(py_runs) / best("pass_wall"),
            "identical_values": identical, "repeats": repeats}


def make_frames(work, protein, frames):
    """The protein jiggled `frames` times: the frames as arrays, and as PQR files for the CLI."""
    # Rewritten in one PQR flavour (MDAnalysis' parser takes the first line's for every line).
    pqr = work / "protein.pqr"
    protein_atoms = dcsgrid.read_atoms(protein)
    write_pqr(pqr, protein_atoms.positions, protein_atoms.charges)
    rng = np.random.default_rng(2)
    reference = protein_atoms.positions.astype(np.float64)
    list_file = work / "frames.txt"
    positions = []
    with open(list_file, "w") as names:
        for i in range(frames):
            # jiggled, rounded to the PQR's 3 decimals so both sides read the same coordinates
            positions.append(np.round(reference + rng.normal(scale=0.3, size=reference.shape), 3))
            frame_pqr = work / f"frame{i:04d}.pqr"
            write_pqr(frame_pqr, positions[-1], protein_atoms.charges)
            names.write(f"{frame_pqr.name}\n")
    return pqr, positions, list_file


def trajectory(work, pqr, positions):
    """An MDAnalysis universe over a DCD of the frames where MDAnalysis is installed, else the
    frames as (N, 3) arrays (the API takes either)."""
    try:
        import MDAnalysis as mda
    except ImportError:
        atoms = dcsgrid.read_atoms(pqr)
        return atoms, [p.astype(np.float32) for p in positions], "arrays"
    u = mda.Universe(str(pqr))
    dcd = work / "traj.dcd"
    with mda.Writer(str(dcd), n_atoms=u.atoms.n_atoms) as w:
        for p in positions:
            u.atoms.positions = p
            w.write(u.atoms)
    u = mda.Universe(str(pqr), str(dcd))
    return u.atoms, u, "MDAnalysis DCD"


def bench_frames(cli, work, protein, frames, device):
    pqr, positions, list_file = make_frames(work, protein, frames)
    atoms, frames_in, kind = trajectory(work, pqr, positions)
    grid = dcsgrid.Grid.around(atoms, padding=10.0, spacing=1.0)
    cli_out = work / "cli_frames.h5"
    report, cli_wall = run_cli(cli, ["batch", f"@{list_file}", "-o", cli_out, "--device", device,
                                     *grid_args(grid)])
    dcsgrid.potential(atoms, dcsgrid.Grid((0, 0, 0), 1.0, (8, 8, 8)), device=device)  # warm-up
    py_out = work / "py_frames.h5"
    t0 = time.perf_counter()
    summary = dcsgrid.potentials(atoms, frames_in, grid, out=py_out, device=device)
    py_file_wall = time.perf_counter() - t0
    t0 = time.perf_counter()
    count = sum(1 for _ in dcsgrid.potentials(atoms, frames_in, grid, device=device))
    py_iter_wall = time.perf_counter() - t0
    with h5py.File(cli_out, "r") as a, h5py.File(py_out, "r") as b:
        x, y = a["potential"][()], b["potential"][()]
        # equal to float rounding: the GPU kernels' slab-relative coordinates round per slab plan
        identical = bool(np.linalg.norm(x - y) <= 1e-6 * np.linalg.norm(x))
    return {"protein": str(protein), "atoms": len(positions[0]), "frames": frames, "input": kind,
            "dims": list(grid.dims), "spacing": 1.0, "device": report.get("device", ""),
            "cli_frames_per_s": report["frames_per_second"], "cli_process_s": cli_wall,
            "cli_frames_per_s_process": frames / cli_wall,
            "python_file_frames_per_s": frames / py_file_wall,
            "python_iter_frames_per_s": count / py_iter_wall,
            "python_file_summary": summary, "identical_values": identical}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default="build/dcsgrid")
    parser.add_argument("--atoms", type=int, default=100000)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--protein", default="data/1hpv_pdb2pqr_amber.pqr.gz")
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default="bench_python.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    results = {"gpu": dcsgrid.gpu_available()}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        results["potential"] = bench_potential(args.cli, work, args.atoms, args.dims, args.device,
                                               args.repeats)
        results["frames"] = bench_frames(args.cli, work, args.protein, args.frames, args.device)
    p, f = results["potential"], results["frames"]
    print(f"potential: {p['atoms']} atoms, {p['dims'][0]}^3, {p['device']}")
    print(f"  CLI compute stage {p['cli_compute_s']:.4f} s, CLI pass (with sink) {p['cli_pass_wall_s']:.4f} s")
    print(f"  dcsgrid.potential {p['python_s']:.4f} s  = {p['python_over_cli_compute']:.3f}x compute,"
          f" {p['python_over_cli_pass_wall']:.3f}x pass; identical values: {p['identical_values']}")
    print(f"frames: {f['atoms']} atoms, {f['frames']} frames, grid {f['dims']} at 1 Å, {f['device']}")
    print(f"  dcsgrid batch        {f['cli_frames_per_s']:.1f} frames/s (pipeline), "
          f"{f['cli_frames_per_s_process']:.1f} frames/s (whole process)")
    print(f"  potentials(out=)     {f['python_file_frames_per_s']:.1f} frames/s ({f['input']})")
    print(f"  potentials iterator  {f['python_iter_frames_per_s']:.1f} frames/s; identical values: "
          f"{f['identical_values']} (to 1e-6)")
    pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
