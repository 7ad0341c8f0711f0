"""Shared fixtures for the Python package's tests (run with /usr/bin/python3 -m pytest tests/python,
PYTHONPATH=<build>/python; ctest sets both)."""
import os
import pathlib

import numpy as np
import pytest

import dcsgrid

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "data"

# Coulomb constant, kcal·Å/(mol·e²), and the gas constant, kcal/(mol·K): the published values,
# written here so the references below do not take them from the program.
COULOMB = 332.0637
GAS_CONSTANT = 1.987204259e-3


def cli_binary():
    """The dcsgrid executable: $DCSGRID_BINARY (ctest sets it) or <repo>/build/dcsgrid."""
    path = pathlib.Path(os.environ.get("DCSGRID_BINARY", REPO / "build" / "dcsgrid"))
    if not path.exists():
        pytest.skip(f"the dcsgrid executable is not built ({path})")
    return path


def reference_potential(positions, charges, points, *, factor, min_distance=0.5, dielectric=1.0):
    """Σ q/(ε max(r, r_min)) · k_C · factor at each point, in float64."""
    pos = np.asarray(positions, dtype=np.float64)
    q = np.asarray(charges, dtype=np.float64)
    r = np.linalg.norm(points[:, None, :] - pos[None, :, :], axis=2)
    r = np.maximum(r, min_distance)
    return COULOMB * factor * (q[None, :] / (dielectric * r)).sum(axis=1)


def grid_points(grid):
    """Every point of the grid, (nx*ny*nz, 3) in [i, j, k] C order (matching values.ravel('C'))."""
    x, y, z = (np.asarray(c, dtype=np.float64) for c in grid.coordinates())
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    return np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)


@pytest.fixture
def small_system():
    rng = np.random.default_rng(7)
    positions = rng.uniform(-4.0, 4.0, size=(25, 3)).astype(np.float32)
    charges = rng.uniform(-1.0, 1.0, size=25).astype(np.float32)
    return positions, charges


requires_gpu = pytest.mark.skipif(not dcsgrid.gpu_available(),
                                  reason="no CUDA device visible (or a build without CUDA)")
