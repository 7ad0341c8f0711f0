"""Map: a potential map whose values are a numpy view of the module's buffer; load, compare and
similarity of maps. The work is done by the compiled core (dcsgrid's io and analysis layers)."""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from . import _core
from ._core import Atoms, Grid


class Map:
    """A potential map on a regular grid.

    ``values`` is a numpy array of shape ``(nx, ny, nz)`` indexed ``[i, j, k]``, the point at
    ``origin + (i, j, k) * spacing`` (Å). It is a view of the map's own buffer, not a copy
    (x varies fastest in memory, so its strides are Fortran-ordered); ``values.base`` is that
    buffer. Maps come from :func:`dcsgrid.potential`, :func:`dcsgrid.potentials` and
    :func:`dcsgrid.load_map`, or from an array: ``Map(values, grid, units="kT/e")`` (copied).
    """

    __slots__ = ("_data", "_solver")

    def __init__(self, values: Any, grid: Grid, *, units: str = "kT/e",
                 metadata: dict | None = None):
        meta = dict(metadata or {})
        meta.setdefault("units", units)
        self._data = _core.MapData.from_array(np.asarray(values), grid, meta)
        self._solver = None

    @classmethod
    def _wrap(cls, data: _core.MapData, solver: dict | None = None) -> "Map":
        m = cls.__new__(cls)
        m._data = data
        m._solver = solver
        return m

    @property
    def values(self) -> np.ndarray:
        """The potential, shape (nx, ny, nz), a view of the map's buffer (writable)."""
        return self._data.values

    @property
    def grid(self) -> Grid:
        return self._data.grid

    @property
    def origin(self) -> tuple:
        """Position of point (0, 0, 0), Å."""
        return tuple(self.grid.origin)

    @property
    def spacing(self) -> tuple:
        """Spacing along x, y, z, Å."""
        return tuple(self.grid.spacing)

    @property
    def shape(self) -> tuple:
        return self.grid.shape

    @property
    def units(self) -> str:
        return self._data.metadata["units"]

    @property
    def metadata(self) -> dict:
        """What the map records besides the numbers (units, method, physics, provenance)."""
        return self._data.metadata

    @property
    def solver(self) -> dict | None:
        """What the solve of an iterative method (``method="pb"``) reported, else None: a dict with
        ``energy_kt`` and ``energy_kj_per_mol`` (APBS's total electrostatic energy),
        ``solvation_kt`` and ``solvation_kj_per_mol`` (with ``solvation=True``, else None),
        ``iterations`` and ``residual_history`` (‖f − Aφ‖/‖f‖ before the first iteration and after
        each, numpy float64) of the map's grid, and ``levels``: every grid solved, coarsest first
        (each a dict of ``grid``, ``boundary``, ``reference``, ``iterations``, ``residual_history``)."""
        return self._solver

    def coordinates(self) -> tuple:
        """The x, y and z coordinates (Å) of the grid's planes: three 1-D arrays."""
        return self.grid.coordinates()

    def save(self, path: str | os.PathLike, *, compress: bool = False) -> None:
        """Writes the map; the format comes from the extension: .h5/.hdf5 (HDF5 with an XDMF
        sidecar), .dx (OpenDX), .ccp4/.map/.mrc (CCP4/MRC). ``compress``: HDF5 deflate. The file
        appears only once complete."""
        _core.save_map(self._data, os.fspath(path), compress)

    def sample(self, points: Any, *, device: str = "auto") -> np.ndarray:
        """The potential at points ((M, 3) array, Å) by trilinear interpolation: float32 (M,),
        NaN for points outside the grid."""
        return _core.sample(self._data, points, device)

    def to_xarray(self):
        """An ``xarray.DataArray`` over the same buffer, dims ("x", "y", "z") with coordinates in
        Å and the metadata as attributes."""
        import xarray as xr

        x, y, z = self.coordinates()
        meta = self.metadata
        attrs = {k: v for k, v in meta.items() if k != "parameters"}
        attrs.update({"parameter:" + k: v for k, v in meta["parameters"].items()})
        return xr.DataArray(self.values, dims=("x", "y", "z"), coords={"x": x, "y": y, "z": z},
                            name="potential", attrs=attrs)

    def __repr__(self) -> str:
        return f"<dcsgrid.Map {self.metadata['method'] or 'map'} in {self.units}, {self.grid!r}>"


def load_map(path: str | os.PathLike, *, dataset: str = "potential",
             frame: int | None = None) -> Map:
    """Reads a map: HDF5 (``dataset``, /potential by default; a batch file's ``frame``, the first
    complete one by default) or OpenDX. Raises InputError naming the file and the problem."""
    return Map._wrap(_core.load_map(os.fspath(path), dataset, -1 if frame is None else frame))


def compare(reference: Map, test: Map, *, atoms: Atoms | None = None) -> dict:
    """How far ``test`` is from ``reference`` (same grid and units): the report of
    ``dcsgrid compare`` as a dict (overall RMS, maximum and relative L2 error, where the largest
    error is, error histogram; with ``atoms``, the error by distance from the nearest atom)."""
    return json.loads(_core.compare(reference._data, test._data, atoms))


def similarity(maps: Sequence[Map], *, index: str = "hodgkin", device: str = "auto") -> np.ndarray:
    """The similarity matrix (n × n) of maps on one grid: ``index`` "hodgkin" (2<a,b>/(<a,a>+<b,b>),
    as PIPSA), "carbo" (<a,b>/sqrt(<a,a><b,b>)) or "gram" (<a,b>). Raises Error naming the maps
    that are zero everywhere (every index with them is 0/0)."""
    result = _core.similarity([m._data for m in maps], device)
    if index not in ("hodgkin", "carbo", "gram"):
        raise ValueError(f"index must be 'hodgkin', 'carbo' or 'gram', not {index!r}")
    return result[index]
