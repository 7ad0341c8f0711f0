"""Maps: the zero-copy view, round trips through every map format (checked with other programs'
readers), sampling, comparison and similarity against numpy."""
import h5py
import numpy as np
import pytest

import dcsgrid
from dcsgrid import _core


@pytest.fixture
def some_map():
    grid = dcsgrid.Grid(origin=(-3.0, 1.5, 2.0), spacing=(0.5, 0.75, 1.0), dims=(7, 6, 5))
    rng = np.random.default_rng(3)
    values = rng.normal(size=grid.shape).astype(np.float32)
    return dcsgrid.Map(values, grid, units="kcal/mol/e"), values


def test_values_are_a_view_of_the_module_buffer(small_system):
    atoms = dcsgrid.Atoms(*small_system)
    pot = dcsgrid.potential(atoms, dcsgrid.Grid((0, 0, 0), 1.0, (5, 4, 3)), device="cpu")
    a, b = pot.values, pot.values
    base = a
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, _core.MapData)
    assert np.shares_memory(a, b)
    assert a.flags.f_contiguous and a.shape == (5, 4, 3)
    a[1, 2, 0] = 42.0
    assert b[1, 2, 0] == 42.0
    # the view outlives the Map object that made it
    del pot
    assert a[1, 2, 0] == 42.0


def test_map_from_array_copies_and_keeps_indexing(some_map):
    m, values = some_map
    assert np.array_equal(m.values, values)
    assert not np.shares_memory(m.values, values)
    assert m.units == "kcal/mol/e"
    with pytest.raises(ValueError, match="grid's shape"):
        dcsgrid.Map(values[:, :, :2], m.grid)


def test_hdf5_round_trip_and_independent_reader(tmp_path, some_map):
    m, values = some_map
    path = tmp_path / "m.h5"
    m.save(path)
    back = dcsgrid.load_map(path)
    assert np.array_equal(back.values, values)
    assert back.grid == m.grid and back.units == "kcal/mol/e"
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["potential"][()], values.transpose(2, 1, 0))
        np.testing.assert_allclose(f["potential"].attrs["origin"], m.origin)
        np.testing.assert_allclose(f["potential"].attrs["spacing"], m.spacing)
    assert (tmp_path / "m.xmf").exists()


def test_dx_round_trip_and_griddataformats(tmp_path, some_map):
    m, values = some_map
    path = tmp_path / "m.dx"
    m.save(path)
    back = dcsgrid.load_map(path)
    assert np.array_equal(back.values, values)
    gridData = pytest.importorskip("gridData")
    g = gridData.Grid(str(path))
    np.testing.assert_allclose(g.grid, values, rtol=1e-7)
    np.testing.assert_allclose(g.origin, m.origin)
    np.testing.assert_allclose(g.delta, m.spacing)


@pytest.mark.parametrize("ext", ["ccp4", "mrc", "map"])
def test_ccp4_written_as_mrcfile_reads_it(tmp_path, some_map, ext):
    m, values = some_map
    path = tmp_path / f"m.{ext}"
    m.save(path)
    mrcfile = pytest.importorskip("mrcfile")
    with mrcfile.open(path) as f:
        assert np.array_equal(f.data, values.transpose(2, 1, 0))  # [section][row][column]
        # Placed as the readers agree: by NXSTART (origin on the spacing's lattice), ORIGIN zero.
        start = np.array([int(f.header.nxstart), int(f.header.nystart), int(f.header.nzstart)])
        voxel = np.array([float(f.voxel_size.x), float(f.voxel_size.y), float(f.voxel_size.z)])
        placed = start * voxel if start.any() else np.array(
            [f.header.origin.x, f.header.origin.y, f.header.origin.z], dtype=float)
        np.testing.assert_allclose(placed, m.origin, atol=1e-5)


def test_to_xarray_shares_the_buffer(some_map):
    pytest.importorskip("xarray")
    m, values = some_map
    da = m.to_xarray()
    assert da.dims == ("x", "y", "z")
    np.testing.assert_allclose(da.coords["y"].values, m.origin[1] + 0.75 * np.arange(6))
    assert np.shares_memory(da.values, m.values)
    assert da.attrs["units"] == "kcal/mol/e"
    assert float(da.sel(x=-2.0, y=1.5, z=4.0)) == values[2, 0, 2]


def test_sample_is_exact_for_linear_fields_and_nan_outside():
    grid = dcsgrid.Grid(origin=(1.0, -2.0, 0.5), spacing=(0.5, 1.0, 0.25), dims=(9, 5, 11))
    x, y, z = np.meshgrid(*grid.coordinates(), indexing="ij")
    m = dcsgrid.Map((2.0 * x - 3.0 * y + 0.5 * z + 1.0).astype(np.float32), grid)
    rng = np.random.default_rng(5)
    lo, hi = np.array(grid.origin), np.array(grid.origin) + (np.array(grid.dims) - 1) * np.array(grid.spacing)
    points = rng.uniform(lo, hi, size=(50, 3))
    got = m.sample(points, device="cpu")
    expected = 2.0 * points[:, 0] - 3.0 * points[:, 1] + 0.5 * points[:, 2] + 1.0
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    outside = m.sample([[lo[0] - 1.0, lo[1], lo[2]], [hi[0], hi[1], hi[2] + 0.1]], device="cpu")
    assert np.all(np.isnan(outside))


def test_compare_matches_numpy(some_map):
    m, values = some_map
    delta = np.random.default_rng(9).normal(scale=0.01, size=values.shape).astype(np.float32)
    test = dcsgrid.Map(values + delta, m.grid, units="kcal/mol/e")
    report = dcsgrid.compare(m, test)
    err = (values + delta).astype(np.float64) - values
    assert report["overall"]["rms_error"] == pytest.approx(np.sqrt(np.mean(err ** 2)), rel=1e-5)
    assert report["overall"]["max_abs_error"] == pytest.approx(np.abs(err).max(), rel=1e-5)
    with pytest.raises(dcsgrid.Error, match="different units"):
        dcsgrid.compare(m, dcsgrid.Map(values, m.grid, units="kT/e"))


def test_similarity_matches_numpy(some_map):
    m, values = some_map
    rng = np.random.default_rng(11)
    arrays = [values, values * 0.5 + rng.normal(size=values.shape).astype(np.float32), -values]
    maps = [dcsgrid.Map(a, m.grid) for a in arrays]
    flat = np.array([a.ravel().astype(np.float64) for a in arrays])
    gram = flat @ flat.T
    hodgkin = 2 * gram / (np.diag(gram)[:, None] + np.diag(gram)[None, :])
    np.testing.assert_allclose(dcsgrid.similarity(maps, device="cpu"), hodgkin, rtol=1e-5, atol=1e-6)
    carbo = gram / np.sqrt(np.outer(np.diag(gram), np.diag(gram)))
    np.testing.assert_allclose(dcsgrid.similarity(maps, index="carbo", device="cpu"), carbo,
                               rtol=1e-5, atol=1e-6)
