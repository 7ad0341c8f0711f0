"""dcsgrid.potentials over trajectories: MDAnalysis universes (a DCD written here) and plain arrays,
lazily and into a batch file, each frame equal to dcsgrid.potential on that frame."""
import warnings

import h5py
import numpy as np
import pytest

import dcsgrid
from conftest import DATA


@pytest.fixture
def universe(tmp_path):
    mda = pytest.importorskip("MDAnalysis")
    warnings.filterwarnings("ignore", category=UserWarning)
    pqr = DATA / "1d7h-min.pqr"
    u = mda.Universe(str(pqr))
    dcd = tmp_path / "traj.dcd"
    rng = np.random.default_rng(4)
    with mda.Writer(str(dcd), n_atoms=u.atoms.n_atoms) as w:
        for _ in range(4):  # the structure jiggled: four frames
            u.atoms.positions = u.atoms.positions + rng.normal(scale=0.3, size=(u.atoms.n_atoms, 3))
            w.write(u.atoms)
    return mda.Universe(str(pqr), str(dcd))


def frame_arrays(u):
    return [u.atoms.positions.copy() for _ in u.trajectory]


def test_universe_frames_equal_single_potentials(universe):
    u = universe
    arrays = frame_arrays(u)
    charges = u.atoms.charges
    atoms = dcsgrid.Atoms(arrays[0], charges)
    grid = dcsgrid.Grid.around(atoms, padding=4, spacing=2.0)
    maps = list(dcsgrid.potentials(u, u, grid, device="cpu"))
    assert len(maps) == 4
    for m, positions in zip(maps, arrays):
        single = dcsgrid.potential(dcsgrid.Atoms(positions, charges), grid, device="cpu")
        assert np.array_equal(m.values, single.values)
    assert not np.array_equal(maps[0].values, maps[1].values)


def test_ligand_atoms_sampled_over_the_trajectory(universe):
    u = universe
    ligand = u.select_atoms("resid 1")
    values = [m.sample(ligand.positions, device="cpu")
              for m in dcsgrid.potentials(u.atoms, u, padding=4, spacing=1.5, device="cpu")]
    assert len(values) == 4 and values[0].shape == (ligand.n_atoms,)
    assert np.all(np.isfinite(values[0]))


def test_iterable_of_arrays_into_a_batch_file(tmp_path, small_system):
    positions, charges = small_system
    rng = np.random.default_rng(8)
    frames = [positions + rng.normal(scale=0.5, size=positions.shape).astype(np.float32)
              for _ in range(3)]
    atoms = dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid((-6, -6, -6), 1.0, (13, 12, 11))
    out = tmp_path / "frames.h5"
    summary = dcsgrid.potentials(atoms, frames, grid, out=out, ensemble=True, device="cpu")
    assert summary["frames"] == 3 and summary["output"] == str(out)
    expected = [dcsgrid.potential(dcsgrid.Atoms(f, charges), grid, device="cpu").values for f in frames]
    with h5py.File(out, "r") as f:
        data = f["potential"][()]  # [frame][nz][ny][nx]
        assert data.shape == (3, 11, 12, 13)
        for i in range(3):
            assert np.array_equal(data[i].transpose(2, 1, 0), expected[i])
        assert list(f["frames/status"][()]) == [1, 1, 1]
        mean = f["analysis/mean"][()].transpose(2, 1, 0)
        np.testing.assert_allclose(mean, np.mean(np.array(expected, dtype=np.float64), axis=0),
                                   rtol=1e-5, atol=1e-5)
    # the batch file reads back through load_map, frame by frame
    assert np.array_equal(dcsgrid.load_map(out, frame=2).values, expected[2])
    with pytest.raises(dcsgrid.Error, match="exists"):
        dcsgrid.potentials(atoms, frames, grid, out=out, device="cpu")


def test_batch_file_needs_the_frame_count(tmp_path, small_system):
    atoms = dcsgrid.Atoms(*small_system)
    frames = (p for p in [small_system[0]] * 2)
    with pytest.raises(ValueError, match="n_frames"):
        dcsgrid.potentials(atoms, frames, out=tmp_path / "x.h5", device="cpu")
    frames = (p for p in [small_system[0]] * 2)
    with pytest.raises(dcsgrid.Error, match="created for 3 frames but 2 came"):
        dcsgrid.potentials(atoms, frames, out=tmp_path / "y.h5", n_frames=3, device="cpu")


def test_keyboard_interrupt_stops_the_frames_loop():
    import _thread
    import threading
    import time

    rng = np.random.default_rng(6)
    positions = rng.uniform(0, 40, (4000, 3))
    atoms = dcsgrid.Atoms(positions, rng.uniform(-1, 1, 4000))
    grid = dcsgrid.Grid(origin=(0, 0, 0), spacing=0.25, dims=(160, 160, 160))  # 1.6e10 pairs a frame
    timer = threading.Timer(0.5, _thread.interrupt_main)
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in dcsgrid.potentials(atoms, [positions] * 5, grid, device="cpu", threads=1):
            pass
    timer.cancel()
    assert time.monotonic() - t0 < 30


def test_periodic_frames_take_each_frames_box(tmp_path, small_system):
    # A periodic method computes every frame in that frame's own box (MDAnalysis' dimensions, or
    # a (positions, cell) pair), each map equal to potential() with that cell; a frame without a
    # box is an error, and cell= gives one box to all.
    positions, charges = small_system
    atoms = dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid((-6, -6, -6), 1.5, (9, 9, 9))
    boxes = [[20.0, 20.0, 20.0, 90.0, 90.0, 90.0], [22.0, 21.0, 20.0, 90.0, 90.0, 90.0]]
    rng = np.random.default_rng(3)
    frames = [positions + rng.normal(scale=0.3, size=positions.shape).astype(np.float32) for _ in boxes]

    def single(frame, box):
        return dcsgrid.potential(dcsgrid.Atoms(frame, charges), grid, method="ewald", cell=box,
                                 device="cpu").values

    maps = list(dcsgrid.potentials(atoms, list(zip(frames, boxes)), grid, method="ewald", device="cpu"))
    for m, frame, box in zip(maps, frames, boxes):
        np.testing.assert_array_equal(m.values, single(frame, box))
    assert not np.allclose(maps[0].values, single(frames[0], boxes[1]), rtol=1e-3)
    one_box = list(dcsgrid.potentials(atoms, list(zip(frames, boxes)), grid, method="ewald",
                                      cell=boxes[0], device="cpu"))
    np.testing.assert_array_equal(one_box[1].values, single(frames[1], boxes[0]))
    out = tmp_path / "boxes.h5"
    dcsgrid.potentials(atoms, list(zip(frames, boxes)), grid, method="ewald", device="cpu", out=out)
    with h5py.File(out, "r") as f:  # the batch file keeps each frame's cell
        np.testing.assert_allclose(f["frames/cell"][:], boxes)
        np.testing.assert_array_equal(f["potential"][1], maps[1].values.transpose())  # [nz][ny][nx]
    # Without a grid, a periodic method's grid is one period of the first frame's box.
    laid = next(iter(dcsgrid.potentials(atoms, list(zip(frames, boxes)), method="ewald", spacing=4.0,
                                        device="cpu")))
    assert laid.shape == (5, 5, 5) and laid.origin == (0.0, 0.0, 0.0) and laid.spacing == (4.0, 4.0, 4.0)
    with pytest.raises(dcsgrid.Error, match="frame 0 has no unit cell for the periodic method ewald"):
        list(dcsgrid.potentials(atoms, frames, grid, method="ewald", device="cpu"))

    mda = pytest.importorskip("MDAnalysis")
    warnings.filterwarnings("ignore", category=UserWarning)
    u = mda.Universe.empty(len(charges), trajectory=True)
    dcd = tmp_path / "boxes.dcd"
    with mda.Writer(str(dcd), n_atoms=len(charges)) as w:
        for frame, box in zip(frames, boxes):
            u.atoms.positions = frame
            u.dimensions = box
            w.write(u.atoms)
    u = mda.Universe.empty(len(charges), trajectory=True)
    u.load_new(str(dcd))
    read_boxes = [ts.dimensions.copy() for ts in u.trajectory]
    np.testing.assert_allclose(read_boxes, boxes, rtol=1e-6)
    maps = list(dcsgrid.potentials(atoms, u, grid, method="ewald", device="cpu"))
    for m, ts_box, frame in zip(maps, read_boxes, [ts.positions.copy() for ts in u.trajectory]):
        np.testing.assert_array_equal(m.values, single(frame, [float(v) for v in ts_box]))


def test_average_is_the_mean_and_spread_of_the_frames(small_system):
    positions, charges = small_system
    atoms = dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid((-6, -6, -6), 1.5, (9, 9, 9))
    rng = np.random.default_rng(5)
    frames = [positions + rng.normal(scale=0.4, size=positions.shape).astype(np.float32) for _ in range(5)]
    each = np.array([m.values for m in dcsgrid.potentials(atoms, frames, grid, device="cpu")], dtype=np.float64)
    mean, spread = dcsgrid.average(atoms, frames, grid, std=True, device="cpu")
    np.testing.assert_allclose(mean.values, each.mean(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(spread.values, each.std(axis=0), rtol=1e-5, atol=1e-5)
    assert mean.metadata["parameters"]["frames_averaged"] == "5" and mean.units == "kT/e"
    assert "standard deviation" in spread.metadata["parameters"]["statistic"]
    assert spread.values.max() > 0.01  # the frames differ
    # Periodic frames: one box, or cell= for all; a frame of another box is refused.
    box, other = [20.0, 20.0, 20.0, 90.0, 90.0, 90.0], [21.0, 20.0, 20.0, 90.0, 90.0, 90.0]
    one = dcsgrid.average(atoms, [(f, box) for f in frames[:2]], grid, method="ewald", device="cpu")
    expected = np.mean([dcsgrid.potential(dcsgrid.Atoms(f, charges), grid, method="ewald", cell=box,
                                          device="cpu").values for f in frames[:2]], axis=0)
    np.testing.assert_allclose(one.values, expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(dcsgrid.Error, match="frame 1's box .* differs from the first frame's"):
        dcsgrid.average(atoms, [(frames[0], box), (frames[1], other)], grid, method="ewald", device="cpu")
    dcsgrid.average(atoms, [(frames[0], box), (frames[1], other)], grid, method="ewald", cell=box, device="cpu")


def test_frames_are_told_from_position_cell_pairs_by_shape():
    # A frame of two atoms given as a tuple of two points is positions, not (positions, cell).
    positions = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]], dtype=np.float32)
    atoms = dcsgrid.Atoms(positions, np.array([1.0, -1.0], dtype=np.float32))
    grid = dcsgrid.Grid((-3, -3, -3), 1.5, (5, 5, 5))
    moved = positions + np.float32(0.25)
    as_tuple = tuple(tuple(float(v) for v in p) for p in moved)
    (got,) = dcsgrid.potentials(atoms, [as_tuple], grid, device="cpu")
    expected = dcsgrid.potential(dcsgrid.Atoms(moved, atoms.charges), grid, device="cpu")
    np.testing.assert_array_equal(got.values, expected.values)
    # Cells of three and of six numbers name the same box; another count is refused by name.
    box3, box6 = [20.0, 20.0, 20.0], [20.0, 20.0, 20.0, 90.0, 90.0, 90.0]
    mixed = dcsgrid.average(atoms, [(positions, box3), (moved, box6)], grid, method="ewald", device="cpu")
    same = dcsgrid.average(atoms, [(positions, box6), (moved, box6)], grid, method="ewald", device="cpu")
    np.testing.assert_array_equal(mixed.values, same.values)
    with pytest.raises(dcsgrid.Error, match="frame 1's cell has 4 numbers"):
        dcsgrid.average(atoms, [(positions, box6), (moved, [20.0, 20.0, 20.0, 90.0])], grid, method="ewald",
                        device="cpu")
