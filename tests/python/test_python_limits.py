"""Issue 35, groups 1 and 11: hostile keywords and arrays raise dcsgrid.Error or ValueError with the
command line's messages (never pybind11's "Unable to cast"), and thread counts of any size run
within the one bound the command line keeps."""
import os
import subprocess
import sys

import numpy as np
import pytest

import dcsgrid
from conftest import GAS_CONSTANT, grid_points, reference_potential


def _three_ions():
    return dcsgrid.Atoms(np.array([[0, 0, 0], [3, 0, 0], [1, 1, 0]]), np.array([1.0, -1.0, 0.5]))


def test_grid_dims_must_be_whole_numbers_within_the_limit():
    with pytest.raises(ValueError, match=r"dims must be a whole number, not 5\.5"):
        dcsgrid.Grid((0, 0, 0), 1, (5.5, 5, 5))
    with pytest.raises(ValueError, match="dims: 1180591620717411303424 is beyond 64 bits"):
        dcsgrid.Grid((0, 0, 0), 1, (2**70, 5, 5))
    with pytest.raises(dcsgrid.Error, match=r"grid dimension y is 1099511627776: more than 2\^30 points"):
        dcsgrid.Grid((0, 0, 0), 1, (5, 2**40, 5))
    with pytest.raises(ValueError, match="dims must be 3 point counts"):
        dcsgrid.Grid((0, 0, 0), 1, 5)
    with pytest.raises(ValueError, match="spacing must be real numbers"):
        dcsgrid.Grid((0, 0, 0), 1j, (5, 5, 5))
    with pytest.raises(ValueError, match="origin must be real numbers"):
        dcsgrid.Grid(("a", 0, 0), 1, (5, 5, 5))
    grid = dcsgrid.Grid(np.zeros(3), np.float32(0.5), np.array([4, 3, 2], dtype=np.uint16))
    assert grid.shape == (4, 3, 2) and grid.spacing == [0.5, 0.5, 0.5]
    with pytest.raises(dcsgrid.Error, match=r"--size 1e\+30 Å along x: 2e\+30 points"):
        dcsgrid.Grid.box((0, 0, 0), 1e30, 0.5)


def test_complex_and_non_numeric_arrays_are_refused():
    positions = np.zeros((3, 3), dtype=complex)
    with pytest.raises(ValueError, match="positions must be real numbers, not an array of complex128"):
        dcsgrid.Atoms(positions, np.ones(3))
    with pytest.raises(ValueError, match="charges must be real numbers"):
        dcsgrid.Atoms(np.zeros((3, 3)), np.ones(3) + 1j)
    with pytest.raises(ValueError, match="positions must be real numbers"):
        dcsgrid.Atoms([[True, False, True]], [1.0])
    grid = dcsgrid.Grid((0, 0, 0), 1.0, (2, 2, 2))
    with pytest.raises(ValueError, match="values must be real numbers"):
        dcsgrid.Map(np.zeros((2, 2, 2), dtype=np.complex64), grid)
    atoms = _three_ions()
    with pytest.raises(ValueError, match="positions must be real numbers"):
        atoms.with_positions(np.zeros((3, 3), dtype=complex))


def test_unknown_units_are_refused_with_the_cli_message():
    grid = dcsgrid.Grid((0, 0, 0), 1.0, (2, 2, 2))
    with pytest.raises(dcsgrid.Error, match="unknown unit 'furlongs': use kT/e, kcal/mol/e, kJ/mol/e or V"):
        dcsgrid.Map(np.zeros((2, 2, 2)), grid, units="furlongs")
    with pytest.raises(dcsgrid.Error, match="unknown unit 'furlongs'"):
        dcsgrid.potential(_three_ions(), grid, units="furlongs", device="cpu")
    assert dcsgrid.Map(np.zeros((2, 2, 2)), grid, units="V").units == "V"


def test_similarity_of_zero_maps_is_an_error_naming_them():
    grid = dcsgrid.Grid((0, 0, 0), 1.0, (3, 2, 2))
    zero = dcsgrid.Map(np.zeros((3, 2, 2)), grid)
    some = dcsgrid.Map(np.arange(12, dtype=float).reshape(3, 2, 2), grid)
    with pytest.raises(dcsgrid.Error, match="maps 0, 1 are zero at every point compared"):
        dcsgrid.similarity([zero, zero], device="cpu")
    with pytest.raises(dcsgrid.Error, match="map 1 is zero at every point compared"):
        dcsgrid.similarity([some, zero, some], device="cpu")


def test_thread_counts_beyond_the_bound_run_with_a_warning(capfd):
    atoms = _three_ions()
    grid = dcsgrid.Grid((-2, -2, -2), 1.0, (6, 5, 4))
    expected = reference_potential(atoms.positions, atoms.charges, grid_points(grid),
                                   factor=1.0 / (GAS_CONSTANT * 298.15))
    for threads in (1, 100000):
        pot = dcsgrid.potential(atoms, grid, device="cpu", threads=threads)
        np.testing.assert_allclose(pot.values.ravel("C"), expected, rtol=2e-5, atol=1e-5)
    printed = capfd.readouterr()  # the warning on stderr, as the command line's; stdout stays the script's
    assert "threads = 100000: more than 4 threads per hardware thread" in printed.err
    assert "threads" not in printed.out
    with pytest.raises(ValueError, match="threads: 18446744073709551616 is beyond 64 bits"):
        dcsgrid.potential(atoms, grid, device="cpu", threads=2**64)
    with pytest.raises(ValueError, match=r"threads must be a whole number, not 2\.5"):
        dcsgrid.potential(atoms, grid, device="cpu", threads=2.5)
    with pytest.raises(dcsgrid.Error, match="threads must be 0 .all cores. or a positive count, got -1"):
        dcsgrid.potential(atoms, grid, device="cpu", threads=-1)


def test_omp_num_threads_beyond_the_bound_does_not_crash_the_interpreter():
    # OpenMP reads OMP_NUM_THREADS when it loads, so the check runs in a fresh interpreter; with
    # 100000 it had died of a segmentation fault.
    script = ("import numpy as np, dcsgrid\n"
              "a = dcsgrid.Atoms(np.array([[0., 0, 0], [2, 0, 0]]), np.array([1., -1]))\n"
              "g = dcsgrid.Grid((-1, -1, -1), 0.5, (9, 5, 5))\n"
              "print(float(dcsgrid.potential(a, g, device='cpu').values.sum()))\n"
              "print(float(dcsgrid.potential(a, g, device='cpu', threads=1).values.sum()))\n")
    env = dict(os.environ, OMP_NUM_THREADS="100000")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "OMP_NUM_THREADS 100000 (OpenMP's default team): more than 4" in r.stdout + r.stderr
    many, one = (float(line) for line in r.stdout.splitlines() if "warning" not in line)
    assert many == pytest.approx(one, rel=1e-6, abs=1e-6)
