"""Poisson–Boltzmann from Python: potential(method="pb", ...) with the command line's PB options,
the atoms' radii, the solve's report on the Map, and the refusals (docs/python.md)."""
import shutil
import subprocess

import numpy as np
import pytest

import dcsgrid

from conftest import COULOMB, DATA

PQR_1D7H = DATA / "1d7h-min.pqr"


def cube_grid(n, h, centre=(0.0, 0.0, 0.0)):
    half = 0.5 * h * (n - 1)
    return dcsgrid.Grid([c - half for c in centre], h, (n, n, n))


@pytest.mark.parametrize("pdie", [1.0, 2.0])
def test_born_ion_solvation_energy(pdie):
    # An ion of radius 2 Å slightly off the centre of 81³ points at 0.25 Å (on a grid point the
    # sphere meets the lattice symmetrically and the energy is 1.5 % off), surface the sphere
    # itself (probe 0): the Born energy −(q²/2R)(1/ε_in − 1/ε_out)·k_C, in kcal/mol.
    q, radius, sdie = 1.0, 2.0, 78.54
    atoms = dcsgrid.Atoms([[0.1, 0.07, 0.03]], [q], radii=[radius])
    pot = dcsgrid.potential(atoms, cube_grid(81, 0.25), method="pb", device="cpu", dielectric=pdie,
                            solvent_dielectric=sdie, probe_radius=0.0, boundary="mdh",
                            solvation=True)
    born_kcal = -(q * q / (2 * radius)) * (1 / pdie - 1 / sdie) * COULOMB
    report = pot.solver
    assert report is not None and report["method"] == "pb"
    assert report["solvation_kj_per_mol"] == pytest.approx(born_kcal * 4.184, rel=0.01)
    kt_kcal = 1.987204259e-3 * 298.15
    assert report["solvation_kt"] == pytest.approx(born_kcal / kt_kcal, rel=0.01)
    assert report["energy_kj_per_mol"] / report["energy_kt"] == pytest.approx(kt_kcal * 4.184, rel=1e-6)
    # The map's solve, then the reference medium's; its residual fell below the tolerance.
    assert [level["reference"] for level in report["levels"]] == [False, True]
    history = report["residual_history"]
    assert report["iterations"] == len(history) - 1 > 0
    assert history[-1] < 1e-9 < history[0]


def test_pb_without_solvation_reports_no_solvation_energy():
    atoms = dcsgrid.Atoms([[0.1, 0.07, 0.03]], [1.0], radii=[2.0])
    pot = dcsgrid.potential(atoms, cube_grid(33, 0.5), method="pb", device="cpu", boundary="mdh")
    assert pot.solver["solvation_kt"] is None and pot.solver["solvation_kj_per_mol"] is None
    assert pot.solver["energy_kt"] > 0
    assert dcsgrid.potential(atoms, cube_grid(9, 1.0), device="cpu").solver is None


def test_atoms_carry_radii():
    atoms = dcsgrid.read_atoms(PQR_1D7H)
    assert atoms.radius_source == "file"
    with open(PQR_1D7H) as f:
        first = next(line for line in f if line.startswith(("ATOM", "HETATM")))
    assert atoms.radii[0] == pytest.approx(float(first.split()[-1]))
    assert np.array_equal(atoms.with_positions(atoms.positions + 1).radii, atoms.radii)
    # A PDB file's radii are its force field's: AMBER's N is 1.824 Å (parm94's vdW radius).
    pdb = dcsgrid.read_atoms(DATA / "pept.pdb")
    assert "AMBER" in pdb.radius_source and pdb.radii[0] == pytest.approx(1.824)
    plain = dcsgrid.Atoms([[0, 0, 0]], [1.0])
    assert plain.radii is None and plain.radius_source == ""
    with pytest.raises(dcsgrid.Error, match="needs atomic radii"):
        dcsgrid.potential(plain, cube_grid(17, 0.5), method="pb", device="cpu")
    with pytest.raises(ValueError, match="negative radius"):
        dcsgrid.Atoms([[0, 0, 0]], [1.0], radii=[-1.0])
    with pytest.raises(ValueError, match="radii 2"):
        dcsgrid.Atoms([[0, 0, 0]], [1.0], radii=[1.0, 2.0])


def test_mdanalysis_radii_reach_the_atoms():
    mda = pytest.importorskip("MDAnalysis")
    universe = mda.Universe(str(PQR_1D7H))
    atoms = dcsgrid._compute._as_atoms(universe)
    assert np.allclose(atoms.radii, universe.atoms.radii)


@pytest.mark.skipif(shutil.which("apbs") is None, reason="apbs is not on PATH")
def test_1d7h_equals_apbs(tmp_path):
    # The apbs-pb preset on APBS's mg-manual grid (97 × 65 × 65 at 0.75 Å, centred on the atoms'
    # box) with the mdh boundary: pdie 2, sdie 78.54, 0.15 M 1:1 salt of radius 2 Å, srad 1.4,
    # smol, spl2, sdens 10, swin 0.3, 298.15 K, as tests/test_pb_apbs.hpp writes APBS's input.
    atoms = dcsgrid.read_atoms(PQR_1D7H)
    positions = atoms.positions.astype(np.float64)
    centre = 0.5 * (positions.min(axis=0) + positions.max(axis=0))
    dims = (97, 65, 65)
    origin = [centre[d] - 0.375 * (dims[d] - 1) for d in range(3)]
    grid = dcsgrid.Grid(origin, 0.75, dims)
    ours = dcsgrid.potential(atoms, grid, method="pb", preset="apbs-pb", boundary="mdh", device="cpu")

    centre_text = " ".join(repr(float(c)) for c in centre)
    (tmp_path / "apbs.in").write_text(
        f"read\n  mol pqr {PQR_1D7H}\nend\nelec name pb\n  mg-manual\n  dime 97 65 65\n"
        f"  grid 0.75 0.75 0.75\n  gcent {centre_text}\n  mol 1\n  bcfl mdh\n  pdie 2\n  sdie 78.54\n"
        "  ion charge 1 conc 0.15 radius 2\n  ion charge -1 conc 0.15 radius 2\n  lpbe\n  srfm smol\n"
        "  chgm spl2\n  sdens 10\n  srad 1.4\n  swin 0.3\n  temp 298.15\n  calcenergy total\n"
        "  calcforce no\n  write pot dx apbs_pot\nend\nquit\n")
    run = subprocess.run(["apbs", "apbs.in"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # APBS built with MPI names the map after its rank.
    name = "apbs_pot.dx" if (tmp_path / "apbs_pot.dx").exists() else "apbs_pot-PE0.dx"
    apbs = dcsgrid.load_map(tmp_path / name)
    assert apbs.grid.same_as(ours.grid, 1e-4)
    reference = apbs.values.astype(np.float64)
    relative_l2 = np.linalg.norm(ours.values - reference) / np.linalg.norm(reference)
    assert relative_l2 < 1e-3
    # The total energy APBS prints, kJ/mol.
    energy = [line for line in run.stdout.splitlines() if "Total electrostatic energy" in line]
    assert energy, run.stdout[-2000:]
    apbs_kj = float(energy[-1].split("=")[1].split()[0])
    assert ours.solver["energy_kj_per_mol"] == pytest.approx(apbs_kj, rel=1e-3)


def test_preset_leaves_the_options_given():
    atoms = dcsgrid.Atoms([[0.1, 0.07, 0.03]], [1.0], radii=[2.0])
    grid = cube_grid(17, 1.0)
    params = lambda m: m.metadata["parameters"]["pb"]
    preset = dcsgrid.potential(atoms, grid, method="pb", preset="apbs-pb", boundary="mdh", device="cpu")
    assert "pdie 2" in params(preset) and "0.15" in params(preset)
    given = dcsgrid.potential(atoms, grid, method="pb", preset="apbs-pb", dielectric=4.0, boundary="mdh",
                              device="cpu")
    assert "pdie 4" in params(given) and "0.15" in params(given)


@pytest.mark.parametrize("options, message", [
    (dict(surface="cube"), "--surface: unknown value 'cube' \\(mol, smol, spl2, spl4\\)"),
    (dict(charge_map="spl3"), "--charge-map: unknown value 'spl3'"),
    (dict(boundary="wall"), "--boundary: unknown value 'wall' \\(zero, sdh, mdh, focus\\)"),
    (dict(coarse_boundary="focus"), "--coarse-boundary: unknown value 'focus'"),
    (dict(boundary="mdh", coarse_size=(60, 60, 60)), "--coarse-size focuses from a coarse grid"),
    (dict(boundary="sdh", coarse_boundary="zero"), "--coarse-boundary sets the coarse grid"),
    (dict(preset="gromacs"), "--preset: unknown value 'gromacs'"),
    (dict(solvent_dielectric=-1.0), "sdie"),
    (dict(probe_radius=-1.0), "srad"),
    (dict(pb_tolerance=0.0), "tolerance"),
    (dict(ions=[(1, 0.15, 2.0)]), "neutral"),
])
def test_bad_pb_options_name_the_option(options, message):
    atoms = dcsgrid.Atoms([[0.0, 0.0, 0.0]], [1.0], radii=[2.0])
    with pytest.raises(dcsgrid.Error, match=message):
        dcsgrid.potential(atoms, cube_grid(17, 1.0), method="pb", device="cpu", **options)


def test_solvation_needs_pb():
    atoms = dcsgrid.Atoms([[0.0, 0.0, 0.0]], [1.0], radii=[2.0])
    with pytest.raises(dcsgrid.Error, match="--solvation"):
        dcsgrid.potential(atoms, cube_grid(9, 1.0), device="cpu", solvation=True)


def test_each_frame_of_potentials_carries_its_solve():
    # Two frames of a Born ion, the second moved by 0.3 Å: each map's solver is that frame's own,
    # the energies of potential() on the frame alone (the same grid and solve; the frames' worker
    # thread runs its own OpenMP team, whose sums may round in another order: 1e-10).
    atoms = dcsgrid.Atoms([[0.1, 0.07, 0.03]], [1.0], radii=[2.0])
    grid = cube_grid(33, 0.5)
    frames = [np.array([[0.1, 0.07, 0.03]]), np.array([[0.4, 0.07, 0.03]])]
    options = dict(method="pb", device="cpu", boundary="mdh", solvation=True)
    maps = list(dcsgrid.potentials(atoms, frames, grid, **options))
    assert len(maps) == 2
    for frame, m in zip(frames, maps):
        alone = dcsgrid.potential(atoms.with_positions(frame), grid, **options)
        assert m.solver is not None
        assert m.solver["energy_kt"] == pytest.approx(alone.solver["energy_kt"], rel=1e-10)
        assert m.solver["solvation_kt"] == pytest.approx(alone.solver["solvation_kt"], rel=1e-10)
        assert np.allclose(m.values, alone.values, rtol=1e-6, atol=1e-6 * np.abs(alone.values).max())
    assert maps[0].solver["energy_kt"] != pytest.approx(maps[1].solver["energy_kt"], rel=1e-6)
    # Methods without a solve carry none.
    assert all(m.solver is None for m in dcsgrid.potentials(atoms, frames, grid, device="cpu"))
