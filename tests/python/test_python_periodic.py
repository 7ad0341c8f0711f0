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


def test_maps_on_a_triclinic_cells_own_lattice():
    cell = (20.0, 22.0, 19.0, 75.0, 85.0, 65.0)
    al, be, ga = np.radians(cell[3:])
    cx = cell[2] * np.cos(be)
    cy = cell[2] * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    vectors = np.array([[cell[0], 0, 0], [cell[1] * np.cos(ga), cell[1] * np.sin(ga), 0],
                        [cx, cy, np.sqrt(cell[2] ** 2 - cx ** 2 - cy ** 2)]])
    grid = dcsgrid.Grid.on_cell(cell, 2.0)
    assert not grid.orthogonal
    assert grid.shape == (10, 11, 10)  # ⌈length / 2⌉
    assert np.allclose(np.array(grid.axes) * np.array(grid.shape)[:, None], vectors, atol=1e-12)
    with pytest.raises(ValueError, match="skewed grid"):
        grid.coordinates()
    rng = np.random.default_rng(5)
    positions = (rng.random((40, 3)) @ vectors).astype(np.float32)
    charges = rng.uniform(-1, 1, 40)
    atoms = dcsgrid.Atoms(positions, (charges - charges.mean()).astype(np.float32))
    pot = dcsgrid.potential(atoms, grid, method="ewald", cell=cell, device="cpu")
    # Each point of the skewed map equals the same method at that point on a one-point orthogonal grid.
    for ijk in [(0, 0, 0), (9, 3, 7), (4, 10, 2), (5, 5, 9)]:
        p = np.array(ijk) @ np.array(grid.axes)
        single = dcsgrid.potential(atoms, dcsgrid.Grid(origin=tuple(p), spacing=1.0, dims=(1, 1, 1)),
                                   method="ewald", cell=cell, device="cpu")
        assert abs(pot.values[ijk] - single.values[0, 0, 0]) <= 1e-5 * (1 + abs(single.values[0, 0, 0])), ijk
