"""dcsgrid.potential's periodic methods: the cell keyword, the default grid over the cell, and a
neutral pair in a huge cell against Coulomb's law computed here in float64."""
import numpy as np
import pytest

import dcsgrid
from conftest import grid_points


def test_neutral_pair_in_a_huge_cell_approaches_coulombs_law():
    positions = np.array([[0, 0, 1.5], [0, 0, -1.5]], dtype=np.float32)
    charges = np.array([1.0, -1.0], dtype=np.float32)
    atoms = dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid(origin=(-8.0, -8.0, -8.0), spacing=2.0, dims=(9, 9, 9))
    maps = dcsgrid.potential(atoms, grid, method="ewald,pme", cell=(150, 150, 150), device="cpu",
                             units="kcal/mol/e")
    points = grid_points(grid)
    r1 = np.maximum(0.5, np.linalg.norm(points - positions[0].astype(np.float64), axis=1))
    r2 = np.maximum(0.5, np.linalg.norm(points - positions[1].astype(np.float64), axis=1))
    coulomb = 332.0637 * (1 / r1 - 1 / r2)
    for name in ("ewald", "pme"):
        got = maps[name].values.ravel(order="C").astype(np.float64)
        # The images and the tin-foil term move the values by about 5e-4 of the pair's own.
        assert np.linalg.norm(got - coulomb) / np.linalg.norm(coulomb) < 2e-3, name
        assert maps[name].metadata["parameters"]["cell"] == "150 150 150 90 90 90"


def test_default_grid_is_one_period_of_the_cell():
    atoms = dcsgrid.Atoms(np.array([[1.0, 2.0, 3.0]], dtype=np.float32), np.array([1.0], dtype=np.float32))
    pot = dcsgrid.potential(atoms, method="pme", cell="20,18,16", spacing=2.0, smooth=0.25, device="cpu")
    assert pot.shape == (10, 9, 8)  # ⌈20/2⌉, ⌈18/2⌉, ⌈16/2⌉ points: one period, none repeated
    assert tuple(pot.origin) == (0.0, 0.0, 0.0)


def test_bad_cells_raise():
    atoms = dcsgrid.Atoms(np.zeros((1, 3), dtype=np.float32), np.ones(1, dtype=np.float32))
    with pytest.raises(dcsgrid.Error, match="needs a unit cell"):
        dcsgrid.potential(atoms, method="pme", device="cpu")
    with pytest.raises(ValueError, match="3 lengths"):
        dcsgrid.potential(atoms, method="pme", cell=(10, 10), device="cpu")
    with pytest.raises(dcsgrid.Error, match="enclose no volume"):
        dcsgrid.potential(atoms, method="ewald", cell=(10, 10, 10, 150, 60, 60), device="cpu")
