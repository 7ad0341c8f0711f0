#!/usr/bin/python3
"""Reads the maps tests/test_io_maps_formats.cpp wrote into DIR with other people's readers and
checks origin, spacing, axis order and values at real coordinates against the field the test
sampled (computed here again in float64).

Usage: /usr/bin/python3 check_map_readers.py DIR
Exit status: 0 all checks passed, 1 a check failed, 77 no reader installed (the test skips).
A reader that is not installed is skipped with a message naming its Debian package.
"""
import math
import os
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"skip: every reader (python3-numpy not installed: {e})")
    sys.exit(77)

ORIGIN = np.array([-3.5, 2.25, 10.0])
SPACING = np.array([0.5, 0.25, 1.0])
DIMS = (6, 5, 4)  # nx, ny, nz
ATOM = np.array([-2.0, 2.5, 11.0])  # the cube's one atom, Å
# Points inside the grid, off the nodes, where trilinear interpolation is exact for field().
POINTS = [(-2.3, 2.6, 11.7), (-1.1, 3.2, 10.2), (-3.4, 2.3, 12.9)]
TOLERANCE = 2e-5  # float32 storage of values of size ~5


def field(x, y, z):
    return 1.5 + 0.5 * x - 0.25 * y + 0.125 * z + 0.01 * x * y * z


def node(i, j, k):
    return ORIGIN + SPACING * np.array([i, j, k])


failures = []
ran = []


def check(what, condition, detail=""):
    if not condition:
        failures.append(f"{what}: {detail}")


def check_close(what, got, expected, tol=TOLERANCE):
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=0, atol=tol):
        failures.append(f"{what}: got {got.tolist()}, expected {expected.tolist()}")


def check_xyz_array(what, values):
    """values indexed [i][j][k] (x, y, z) as many Python readers give them."""
    check(what + " shape", tuple(values.shape) == DIMS, f"{values.shape} != {DIMS}")
    if tuple(values.shape) != DIMS:
        return
    expected = np.array([[[field(*node(i, j, k)) for k in range(DIMS[2])]
                          for j in range(DIMS[1])] for i in range(DIMS[0])])
    check_close(what + " values by index", values, expected)


def run(name, package, body):
    try:
        body()
        ran.append(name)
    except ImportError as e:
        print(f"skip: {name} ({package} not installed: {e})")


def with_gemmi(d):
    import gemmi
    for fname in ("m.ccp4", "m.mrc"):
        m = gemmi.read_ccp4_map(os.path.join(d, fname))
        m.setup(float("nan"))
        g = m.grid
        check_close(f"gemmi {fname} spacing", g.spacing, SPACING, 1e-6)
        check_close(f"gemmi {fname} values at coordinates",
                    [g.interpolate_value(gemmi.Position(*p)) for p in POINTS],
                    [field(*p) for p in POINTS])
        check_close(f"gemmi {fname} value at the origin node",
                    g.interpolate_value(gemmi.Position(*ORIGIN)), field(*ORIGIN))


def with_mrcfile(d):
    import mrcfile
    path = os.path.join(d, "m.mrc")
    check("mrcfile validate m.mrc", mrcfile.validate(path, print_file=open(os.devnull, "w")),
          "not a valid MRC2014 file")
    with mrcfile.open(path) as m:
        start = np.array([int(m.header.nxstart), int(m.header.nystart), int(m.header.nzstart)])
        voxel = np.array([float(m.voxel_size.x), float(m.voxel_size.y), float(m.voxel_size.z)])
        check_close("mrcfile voxel size", voxel, SPACING, 1e-6)
        check_close("mrcfile NXSTART * voxel (origin)", start * voxel, ORIGIN, 1e-5)
        origin = np.array([float(m.header.origin.x), float(m.header.origin.y), float(m.header.origin.z)])
        check_close("mrcfile ORIGIN words (zero on the lattice)", origin, [0, 0, 0], 0)
        check_xyz_array("mrcfile m.mrc", np.transpose(m.data, (2, 1, 0)))  # data are [z][y][x]


def with_griddataformats(d):
    import gridData
    for fname in ("m.dx", "m.dx.gz", "m.ccp4"):
        g = gridData.Grid(os.path.join(d, fname))
        check_close(f"GridDataFormats {fname} origin", g.origin, ORIGIN, 1e-5)
        check_close(f"GridDataFormats {fname} delta", g.delta, SPACING, 1e-6)
        check_xyz_array(f"GridDataFormats {fname}", g.grid)


def with_h5py(d):
    import h5py
    with h5py.File(os.path.join(d, "m.h5"), "r") as f:
        p = f["potential"]
        check_close("h5py origin attribute", p.attrs["origin"], ORIGIN, 0)
        check_close("h5py spacing attribute", p.attrs["spacing"], SPACING, 0)
        check_xyz_array("h5py /potential", np.transpose(p[()], (2, 1, 0)))  # [z][y][x]
        for axis, name in enumerate("xyz"):
            check_close(f"h5py /{name}", f[name][()],
                        ORIGIN[axis] + SPACING[axis] * np.arange(DIMS[axis]), 1e-12)


def with_xarray(d):
    import h5netcdf  # noqa: F401  (the engine)
    import xarray as xr
    with xr.open_dataset(os.path.join(d, "m.h5"), engine="h5netcdf") as ds:
        p = ds["potential"]
        check("xarray dims", p.dims == ("z", "y", "x"), str(p.dims))
        check("xarray units", p.attrs.get("units") == "kcal/mol/e", str(p.attrs.get("units")))
        check("xarray long_name", "potential" in str(p.attrs.get("long_name")), str(p.attrs))
        check("xarray x units", ds["x"].attrs.get("units") == "angstrom", str(ds["x"].attrs))
        check("xarray Conventions", ds.attrs.get("Conventions") == "CF-1.8", str(ds.attrs))
        check_close("xarray values at coordinates",
                    [float(p.interp(x=x, y=y, z=z)) for x, y, z in POINTS],
                    [field(*q) for q in POINTS])
    with xr.open_dataset(os.path.join(d, "batch.h5"), engine="h5netcdf") as ds:
        p = ds["potential"]
        check("xarray batch dims", p.dims == ("frame", "z", "y", "x"), str(p.dims))
        x, y, z = POINTS[0]
        check_close("xarray batch frame 1 at a coordinate",
                    float(p.isel(frame=1).interp(x=x, y=y, z=z)), field(*POINTS[0]))


def with_ase(d):
    from ase.io.cube import read_cube
    from ase.units import Bohr
    with open(os.path.join(d, "m.cube")) as f:
        cube = read_cube(f)
    check_close("ASE cube origin", cube["origin"], ORIGIN, 1e-6)
    # ASE's cell is the point count times the step vector along each axis.
    steps = np.diag(np.asarray(cube["atoms"].cell)) / np.array(DIMS)
    check_close("ASE cube spacing", steps, SPACING, 1e-6)
    check_xyz_array("ASE cube", cube["data"])
    atoms = cube["atoms"]
    check("ASE cube atom count", len(atoms) == 1, str(len(atoms)))
    if len(atoms) == 1:
        # ASE and we may use Bohr from different CODATA sets: 1e-9 relative.
        check_close("ASE cube atom position", atoms.positions[0], ATOM, 1e-6)
    check("ASE Bohr", math.isclose(Bohr, 0.529177210903, rel_tol=1e-8), str(Bohr))


def main():
    d = sys.argv[1]
    run("gemmi", "python3-gemmi", lambda: with_gemmi(d))
    run("mrcfile", "python3-mrcfile", lambda: with_mrcfile(d))
    run("GridDataFormats", "python3-griddataformats", lambda: with_griddataformats(d))
    run("h5py", "python3-h5py", lambda: with_h5py(d))
    run("xarray+h5netcdf", "python3-xarray python3-h5netcdf", lambda: with_xarray(d))
    run("ASE", "python3-ase", lambda: with_ase(d))
    for f in failures:
        print("FAIL:", f)
    print("readers run:", ", ".join(ran) if ran else "none")
    if failures:
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
