"""Type stubs of the compiled module dcsgrid._core (src/python/). Use the dcsgrid package."""
from typing import Any, Sequence

import numpy as np

version: str

class Error(RuntimeError):
    """A failure the user can fix: bad input, bad options, a full disk."""

class InputError(Error):
    """A problem at a place in an input file."""
    file: str
    line: int  # 1-based; 0 for the file as a whole
    problem: str

class Atoms:
    """Atoms with charges: positions (N, 3) Å, charges (N,) e and optionally radii (N,) Å (what
    method="pb" needs), stored as float32.

    Any real arrays are accepted (copied to float32, so non-contiguous input is fine; MDAnalysis'
    ``u.atoms.positions``, ``.charges`` and ``.radii`` work as they are). ValueError for a wrong
    shape, mismatched lengths, NaN or inf, or a negative radius."""
    def __init__(self, positions: Any, charges: Any, radii: Any = None) -> None: ...
    def __len__(self) -> int: ...
    @property
    def positions(self) -> np.ndarray:
        """(N, 3) float32, a copy."""
    @property
    def charges(self) -> np.ndarray:
        """(N,) float32, a copy."""
    @property
    def radii(self) -> np.ndarray | None:
        """(N,) float32, a copy; None without radii."""
    @property
    def radius_source(self) -> str:
        """"file" (PQR), the force field's table, "arrays", or "" without radii."""
    @property
    def total_charge(self) -> float: ...
    @property
    def source(self) -> str:
        """The file read ("" for arrays)."""
    @property
    def charge_source(self) -> str:
        """"file", the force field's name, or "arrays"."""
    def with_positions(self, positions: Any) -> "Atoms":
        """The same charges at other positions (a frame)."""

class Grid:
    """A regular grid: point (i, j, k) at origin + (i, j, k) * spacing, Å. ``spacing`` is one
    number or three; ``dims`` the point counts (nx, ny, nz). Error for non-positive values."""
    def __init__(self, origin: Sequence[float], spacing: float | Sequence[float],
                 dims: Sequence[int]) -> None: ...
    @staticmethod
    def around(atoms: Atoms, padding: float = 10.0, spacing: float = 0.5) -> "Grid":
        """The atoms' box grown by padding on every side, centred, at this spacing."""
    @staticmethod
    def box(center: float | Sequence[float], size: float | Sequence[float],
            spacing: float = 0.5) -> "Grid":
        """A box of edge lengths ``size`` (Å) centred on ``center``, as AutoGrid lays it."""
    @property
    def origin(self) -> list[float]: ...
    @property
    def spacing(self) -> list[float]: ...
    @property
    def dims(self) -> list[int]: ...
    @property
    def shape(self) -> tuple[int, int, int]: ...
    @property
    def size(self) -> int: ...
    def coordinates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x, y and z of the grid planes, Å."""
    def same_as(self, other: "Grid", tolerance: float = 1e-6) -> bool: ...
    def __eq__(self, other: object) -> bool: ...

class MapData:
    """The buffer of a map; its values are views into it."""
    @staticmethod
    def from_array(values: np.ndarray, grid: Grid, metadata: dict = ...) -> "MapData": ...
    @property
    def grid(self) -> Grid: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def values(self) -> np.ndarray: ...

class Settings:
    @property
    def methods(self) -> list[str]: ...
    @property
    def periodic(self) -> bool: ...
    @property
    def has_cell(self) -> bool: ...

class FrameMaps:
    def __init__(self, atoms: Atoms, grid: Grid, settings: Settings, path: str, frames: int,
                 source: str, overwrite: bool, stats: bool, ensemble: bool, keep_maps: bool,
                 depth: int) -> None: ...
    def submit(self, positions: Any, cell: Any = None) -> None: ...
    def next(self) -> tuple[MapData, dict[str, Any] | None] | None: ...
    def finish(self) -> dict[str, Any]: ...

def read_atoms(path: str, forcefield: str, model: int, unknown_zero: bool,
               forcefield_dir: str) -> Atoms: ...
def make_settings(*, method: str, device: str, gpus: Any, threads: int, units: str,
                  dielectric: float, distance_dependent: bool, ionic_strength: float,
                  temperature: float, min_distance: float, cutoff: float, cutoff_form: str,
                  switch_start: float, cell: Any, pme_order: int, pme_spacing: float,
                  pme_tolerance: float, pme_cutoff: float, smooth: float, pb: dict[str, Any],
                  preset: str | None, given: list[str]) -> Settings: ...
def default_settings() -> dict[str, Any]: ...
def potential(atoms: Atoms, grid: Grid, settings: Settings) -> list[tuple[str, MapData, dict[str, Any] | None]]: ...
def gpu_available() -> bool: ...
def save_map(map: MapData, path: str, compress: bool = False) -> None: ...
def load_map(path: str, dataset: str = "potential", frame: int = -1) -> MapData: ...
def sample(map: MapData, points: Any, device: str = "auto") -> np.ndarray: ...
def compare(reference: MapData, test: MapData, atoms: Atoms | None = None) -> str: ...
def surface(path: str, map: MapData | None, kind: str, probe_radius: float, mesh_spacing: float,
            grid_spacing: float, settings: Settings, forcefield: str, model: int, unknown_zero: bool,
            forcefield_dir: str) -> dict[str, Any]: ...
SURFACE_DIELECTRIC: float  # surface()'s default medium, the command's
SURFACE_IONIC_STRENGTH: float
def similarity(maps: Sequence[MapData], device: str = "auto") -> dict[str, np.ndarray]: ...
