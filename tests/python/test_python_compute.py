"""dcsgrid.potential against float64 references, the CLI, and its own settings."""
import inspect
import subprocess

import h5py
import numpy as np
import pytest

import dcsgrid
from dcsgrid import _core
from conftest import (DATA, GAS_CONSTANT, cli_binary, grid_points, reference_potential,
                      requires_gpu)


def test_direct_matches_float64_reference(small_system):
    positions, charges = small_system
    atoms = dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid(origin=(-5.0, -4.5, -4.0), spacing=(0.9, 1.0, 1.1), dims=(12, 10, 9))
    pot = dcsgrid.potential(atoms, grid, device="cpu", units="kcal/mol/e")
    expected = reference_potential(positions, charges, grid_points(grid), factor=1.0)
    got = pot.values.ravel(order="C").astype(np.float64)
    assert pot.values.shape == (12, 10, 9)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-5


def test_units_dielectric_and_min_distance(small_system):
    positions, charges = small_system
    atoms = dcsgrid.Atoms(positions, charges)
    # A grid whose point (0, 0, 0) lies on atom 0: the minimum distance keeps it finite.
    grid = dcsgrid.Grid(origin=positions[0].astype(float), spacing=0.8, dims=(5, 4, 3))
    temperature = 310.0
    pot = dcsgrid.potential(atoms, grid, device="cpu", units="kT/e", temperature=temperature,
                            dielectric=4.0, min_distance=0.7)
    expected = reference_potential(positions, charges, grid_points(grid),
                                   factor=1.0 / (GAS_CONSTANT * temperature), min_distance=0.7,
                                   dielectric=4.0)
    got = pot.values.ravel(order="C")
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-5 * np.abs(expected).max())
    assert pot.units == "kT/e"
    assert pot.metadata["dielectric"] == 4.0
    assert pot.metadata["temperature"] == temperature


PQR = DATA / "1d7h-min.pqr"


def cli_maps(tmp_path, *options):
    """The CLI's maps of PQR with these options: {dataset: array (nx, ny, nz)}, and the origin."""
    out = tmp_path / "cli.h5"
    subprocess.run([str(cli_binary()), str(PQR), "-o", str(out), *options], check=True,
                   capture_output=True)
    with h5py.File(out, "r") as f:
        maps = {name: f[name][()].transpose(2, 1, 0) for name in f if name.startswith("potential")}
        return maps, tuple(f["potential"].attrs["origin"])


def test_api_equals_cli_on_the_same_input(tmp_path):
    cli, origin = cli_maps(tmp_path, "--device", "cpu", "--spacing", "1.5", "--padding", "4")
    pot = dcsgrid.potential(dcsgrid.read_atoms(PQR), device="cpu", spacing=1.5, padding=4)
    assert origin == pytest.approx(pot.origin, abs=0)
    assert cli["potential"].shape == pot.values.shape
    assert np.array_equal(cli["potential"], pot.values)


def test_cutoff_equals_cli_and_several_methods_give_a_dict(tmp_path):
    cli, _ = cli_maps(tmp_path, "--device", "cpu", "--spacing", "2", "--method", "direct,cutoff",
                      "--cutoff", "8")
    maps = dcsgrid.potential(dcsgrid.read_atoms(PQR), device="cpu", spacing=2,
                             method="direct,cutoff", cutoff=8)
    assert set(maps) == {"direct", "cutoff"}
    assert np.array_equal(cli["potential"], maps["direct"].values)
    assert np.array_equal(cli["potential_cutoff"], maps["cutoff"].values)
    assert maps["cutoff"].metadata["parameters"]["cutoff"] == "8"


def test_python_defaults_are_the_engines():
    defaults = _core.default_settings()
    signature = inspect.signature(dcsgrid.potential).parameters
    for name, value in defaults.items():
        assert signature[name].default == value, name


def test_bad_options_raise_the_cli_messages(small_system):
    atoms = dcsgrid.Atoms(*small_system)
    with pytest.raises(dcsgrid.Error, match="unknown --device 'tpu'"):
        dcsgrid.potential(atoms, device="tpu")
    with pytest.raises(dcsgrid.Error, match="direct twice"):
        dcsgrid.potential(atoms, method="direct,direct")
    with pytest.raises(dcsgrid.Error, match="--cutoff must be a positive radius"):
        dcsgrid.potential(atoms, method="cutoff", cutoff=-1)
    with pytest.raises(dcsgrid.Error):
        dcsgrid.potential(atoms, units="furlongs")
    # GPU lists are checked before any device is looked for, as a list or as the CLI's text.
    for gpus in ([1, 1], "1,1"):
        with pytest.raises(dcsgrid.Error, match="GPU 1 is listed twice"):
            dcsgrid.potential(atoms, device="gpu", gpus=gpus)
    with pytest.raises(dcsgrid.Error, match="GPU numbers start at 0, got -2"):
        dcsgrid.potential(atoms, device="gpu", gpus=[-2])


def test_grid_constructors(small_system):
    atoms = dcsgrid.Atoms(*small_system)
    around = dcsgrid.Grid.around(atoms, padding=3.0, spacing=0.5)
    lo, hi = small_system[0].min(axis=0), small_system[0].max(axis=0)
    origin, far = np.array(around.origin), np.array(around.origin) + (np.array(around.dims) - 1) * 0.5
    assert np.all(origin <= lo - 3.0 + 1e-6) and np.all(far >= hi + 3.0 - 1e-6)
    box = dcsgrid.Grid.box(center=(1, 2, 3), size=(10, 8, 6), spacing=1.0)
    x, y, z = box.coordinates()
    assert (x[0] + x[-1]) / 2 == pytest.approx(1) and (z[0] + z[-1]) / 2 == pytest.approx(3)
    assert x[-1] - x[0] >= 10 - 1e-9
    with pytest.raises(dcsgrid.Error):
        dcsgrid.Grid(origin=(0, 0, 0), spacing=-1, dims=(2, 2, 2))


def test_keyboard_interrupt_stops_a_long_run():
    import _thread
    import threading
    import time

    rng = np.random.default_rng(1)
    atoms = dcsgrid.Atoms(rng.uniform(0, 40, (4000, 3)), rng.uniform(-1, 1, 4000))
    grid = dcsgrid.Grid(origin=(0, 0, 0), spacing=0.25, dims=(160, 160, 160))  # 1.6e10 pairs
    timer = threading.Timer(0.5, _thread.interrupt_main)
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        dcsgrid.potential(atoms, grid, device="cpu", threads=1)
    timer.cancel()
    assert time.monotonic() - t0 < 30


@requires_gpu
def test_gpu_matches_float64_reference(small_system):
    positions, charges = small_system
    grid = dcsgrid.Grid(origin=(-5.0, -4.5, -4.0), spacing=0.7, dims=(16, 14, 13))
    pot = dcsgrid.potential(dcsgrid.Atoms(positions, charges), grid, device="gpu",
                            units="kcal/mol/e")
    expected = reference_potential(positions, charges, grid_points(grid), factor=1.0)
    got = pot.values.ravel(order="C").astype(np.float64)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-5


@requires_gpu
def test_gpu_api_equals_cli_and_frames_equal_single_maps(tmp_path):
    cli, _ = cli_maps(tmp_path, "--device", "gpu", "--spacing", "0.5", "--method", "direct,cutoff")
    atoms = dcsgrid.read_atoms(PQR)
    maps = dcsgrid.potential(atoms, device="gpu", spacing=0.5, method="direct,cutoff")
    assert np.array_equal(cli["potential"], maps["direct"].values)
    # The GPU cutoff adds its CPU overflow sums in the order threads finish: equal to float
    # rounding, not bit for bit (measured on an H100).
    cut = cli["potential_cutoff"]
    assert np.linalg.norm(maps["cutoff"].values - cut) <= 1e-6 * np.linalg.norm(cut)
    shifted = [atoms.positions + np.float32(0.25 * i) for i in range(3)]
    grid = maps["direct"].grid
    for m, positions in zip(dcsgrid.potentials(atoms, shifted, grid, device="gpu"), shifted):
        single = dcsgrid.potential(atoms.with_positions(positions), grid, device="gpu")
        # The GPU kernels take coordinates relative to each slab: slabs planned differently
        # round differently (measured on an H100), so equal to float rounding.
        assert np.linalg.norm(m.values - single.values) <= 1e-6 * np.linalg.norm(single.values)
