"""Bad arrays raise ValueError naming the problem; bad files raise InputError with the CLI's
message, file and line."""
import subprocess

import numpy as np
import pytest

import dcsgrid
from conftest import DATA, cli_binary


def test_wrong_shape():
    with pytest.raises(ValueError, match=r"shape \(N, 3\), not \(4, 2\)"):
        dcsgrid.Atoms(np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(ValueError, match=r"charges must have shape \(N,\)"):
        dcsgrid.Atoms(np.zeros((4, 3)), np.zeros((4, 1)))


def test_mismatched_lengths():
    with pytest.raises(ValueError, match="positions hold 4 atoms but charges 3"):
        dcsgrid.Atoms(np.zeros((4, 3)), np.zeros(3))


def test_nan_and_inf():
    positions = np.zeros((4, 3))
    positions[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"positions holds NaN or inf \(flat index 7\)"):
        dcsgrid.Atoms(positions, np.zeros(4))
    with pytest.raises(ValueError, match="charges holds NaN or inf"):
        dcsgrid.Atoms(np.zeros((4, 3)), np.array([0, np.inf, 0, 0]))


def test_not_numbers():
    with pytest.raises((ValueError, TypeError)):
        dcsgrid.Atoms([["a", "b", "c"]], [1.0])


def test_non_contiguous_and_other_dtypes_are_copied():
    rng = np.random.default_rng(2)
    big = rng.uniform(-5, 5, size=(20, 6))
    strided = big[::2, ::2]  # (10, 3), neither row- nor column-contiguous, float64
    charges = rng.uniform(-1, 1, size=20)[::2]
    a = dcsgrid.Atoms(strided, charges)
    b = dcsgrid.Atoms(np.ascontiguousarray(strided, dtype=np.float32), charges.astype(np.float32))
    assert np.array_equal(a.positions, b.positions)
    grid = dcsgrid.Grid((-6, -6, -6), 2.0, (7, 7, 7))
    assert np.array_equal(dcsgrid.potential(a, grid, device="cpu").values,
                          dcsgrid.potential(b, grid, device="cpu").values)


def test_frame_of_the_wrong_length():
    atoms = dcsgrid.Atoms(np.zeros((3, 3)), np.ones(3))
    grid = dcsgrid.Grid((-2, -2, -2), 1.0, (4, 4, 4))
    with pytest.raises(ValueError, match="a frame holds 2 positions but the atoms 3"):
        list(dcsgrid.potentials(atoms, [np.zeros((3, 3)), np.zeros((2, 3))], grid, device="cpu"))


def test_input_error_has_the_cli_message_file_and_line(tmp_path):
    bad = tmp_path / "bad.pqr"
    bad.write_text((DATA / "1d7h-min.pqr").read_text().splitlines()[0] + "\n"
                   "ATOM      2  H1  GLY     1      20.981   oops  17.380   0.164   0.599\n")
    with pytest.raises(dcsgrid.InputError) as info:
        dcsgrid.read_atoms(bad)
    e = info.value
    assert e.file == str(bad) and e.line == 2 and e.problem
    cli = subprocess.run([str(cli_binary()), str(bad), "-o", str(tmp_path / "x.h5")],
                         capture_output=True, text=True)
    assert cli.returncode == 1
    assert str(e) in cli.stderr


def test_missing_file():
    with pytest.raises(dcsgrid.InputError, match="nothere.pqr"):
        dcsgrid.read_atoms("nothere.pqr")
    with pytest.raises(dcsgrid.Error, match="unknown map format"):
        dcsgrid.load_map("x.txt")
