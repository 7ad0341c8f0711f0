"""Computing maps: read_atoms, potential (one structure), potentials (the frames of a trajectory) and
average (their mean).
Keywords are parsed by the compiled core with the command line's parsers, so its messages and
methods (including new ones) apply unchanged."""
from __future__ import annotations

import functools
import inspect
import itertools
import os
from typing import Any, Iterable, Iterator

import numpy as np

from . import _core
from ._core import Atoms, Error, Grid
from ._maps import Map


def read_atoms(path: str | os.PathLike, *, forcefield: str = "amber", model: int = 1,
               unknown_zero: bool = False, forcefield_dir: str | os.PathLike | None = None) -> Atoms:
    """Reads atoms and charges from a structure file, as the ``dcsgrid`` command does: .pqr,
    .pdbqt, .xyz (charges from the file), .pdb/.ent/.cif/.mmcif (charges from ``forcefield``:
    "amber", "charmm" or "parse"), gzipped or not. ``model``: 1-based model number.
    ``unknown_zero``: atoms the force field lacks get charge 0 (with a warning) instead of an
    error. Raises InputError naming the file, line and problem."""
    return _core.read_atoms(os.fspath(path), forcefield, model, unknown_zero,
                            os.fspath(forcefield_dir) if forcefield_dir else "")


def _mda_radii(group: Any):
    """An MDAnalysis AtomGroup's radii, or None where its topology has none (MDAnalysis raises
    NoDataError, an AttributeError and ValueError, for a missing attribute)."""
    try:
        return group.radii
    except (AttributeError, ValueError):
        return None


def _as_atoms(atoms: Any) -> Atoms:
    """Atoms, or an MDAnalysis Universe/AtomGroup (its current positions, charges and radii where
    it has them)."""
    if isinstance(atoms, Atoms):
        return atoms
    group = getattr(atoms, "atoms", None)
    if group is not None and hasattr(group, "positions") and hasattr(group, "charges"):
        return Atoms(group.positions, group.charges, _mda_radii(group))
    raise TypeError("atoms must be dcsgrid.Atoms or an MDAnalysis Universe/AtomGroup, not "
                    + type(atoms).__name__)


def _settings(method="direct", device="auto", gpus=None, threads=0, units="kT/e", dielectric=1.0,
              distance_dependent=False, ionic_strength=0.0, temperature=298.15, min_distance=0.5,
              cutoff=12.0, cutoff_form="shifted", switch_start=10.0, cell=None, pme_order=6,
              pme_spacing=1.0, pme_tolerance=1e-5, pme_cutoff=10.0, smooth=0.0, preset=None,
              solvent_dielectric=78.54, ions=None, ion_radius=2.0, probe_radius=1.4, surface="smol",
              charge_map="spl2", boundary=None, coarse_boundary=None, coarse_size=None,
              surface_density=10.0, spline_window=0.3, nonlinear=False, pb_tolerance=1e-9,
              solvation=False, given=()):
    pb = dict(solvent_dielectric=solvent_dielectric, ions=ions, ion_radius=ion_radius,
              probe_radius=probe_radius, surface=surface, charge_map=charge_map, boundary=boundary,
              coarse_boundary=coarse_boundary, coarse_size=coarse_size,
              surface_density=surface_density, spline_window=spline_window, nonlinear=nonlinear,
              pb_tolerance=pb_tolerance, solvation=solvation)
    return _core.make_settings(
        method=method, device=device, gpus=gpus, threads=threads, units=units,
        dielectric=dielectric, distance_dependent=distance_dependent,
        ionic_strength=ionic_strength, temperature=temperature, min_distance=min_distance,
        cutoff=cutoff, cutoff_form=cutoff_form, switch_start=switch_start, cell=cell,
        pme_order=pme_order, pme_spacing=pme_spacing, pme_tolerance=pme_tolerance,
        pme_cutoff=pme_cutoff, smooth=smooth, pb=pb, preset=preset, given=list(given))


def _keywords_given(function):
    """Calls ``function`` with ``given``: the names of the keywords its caller passed, so that a
    preset sets only the others (as ``--preset`` leaves the options given on the command line).
    The signature shown is the function's without ``given``."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        return function(*args, given=tuple(kwargs), **kwargs)

    signature = inspect.signature(function)
    call.__signature__ = signature.replace(
        parameters=[p for name, p in signature.parameters.items() if name != "given"])
    return call


@_keywords_given
def potential(atoms: Atoms, grid: Grid | None = None, *, method: str = "direct",
              device: str = "auto", units: str = "kT/e", dielectric: float = 1.0,
              distance_dependent: bool = False, ionic_strength: float = 0.0,
              temperature: float = 298.15, min_distance: float = 0.5, cutoff: float = 12.0,
              cutoff_form: str = "shifted", switch_start: float = 10.0, spacing: float = 0.5,
              padding: float = 10.0, gpus: Any = None, threads: int = 0, cell: Any = None,
              pme_order: int = 6, pme_spacing: float = 1.0, pme_tolerance: float = 1e-5,
              pme_cutoff: float = 10.0, smooth: float = 0.0, preset: str | None = None,
              solvent_dielectric: float = 78.54, ions: Any = None, ion_radius: float = 2.0,
              probe_radius: float = 1.4, surface: str = "smol", charge_map: str = "spl2",
              boundary: str | None = None, coarse_boundary: str | None = None,
              coarse_size: Any = None, surface_density: float = 10.0, spline_window: float = 0.3,
              nonlinear: bool = False, pb_tolerance: float = 1e-9, solvation: bool = False,
              given: tuple = ()):
    """The electrostatic potential of ``atoms`` on ``grid``: a :class:`Map`.

    atoms      Atoms (or an MDAnalysis Universe/AtomGroup with charges, and radii for "pb").
    grid       a Grid; None: ``Grid.around(atoms, padding, spacing)``.
    method     "direct" (exact sum), "cutoff" (within ``cutoff`` Å, smoothed by ``cutoff_form``:
               "shifted", "truncated" or "switched" from ``switch_start``), "pb" (Poisson–
               Boltzmann, below), or a list such as "direct,cutoff": then a dict {method: Map}.
    device     "auto" (GPU when one is visible, else CPU), "cpu" or "gpu"; ``gpus``: device ids
               ("0,1" or [0, 1]; None: all); ``threads``: CPU threads (0: all cores; more
               than 4 per hardware thread are cut to that, with a warning).
    units      "kT/e" (at ``temperature`` K), "kcal/mol/e", "kJ/mol/e" or "V".
    dielectric relative permittivity (pb: the solute's, APBS pdie); ``distance_dependent``:
               ε(r) = 4r instead; ``ionic_strength`` (mol/L): Debye–Hückel screening (pb: a 1:1
               salt of radius ``ion_radius`` Å).
    preset     another program's conventions: "pymol", "apbs", "chimerax", "vmd" or "apbs-pb"
               (pdie 2, sdie 78.54, 0.15 M salt, T 298.15 K: APBS's usual PB run with
               method="pb"); it sets dielectric, distance_dependent, temperature, ionic_strength
               and units where they are not given, as ``--preset``.
    min_distance  Å: closer atoms count as this far, so a point on an atom stays finite.
    cell       the unit cell of the periodic methods "ewald" (exact) and "pme" (smooth PME):
               (A, B, C) or (A, B, C, ALPHA, BETA, GAMMA) in Å and degrees, or "A,B,C,...";
               the default grid is then one period of the cell. ``pme_order`` (4..12),
               ``pme_spacing`` (Å, the FFT mesh), ``pme_tolerance`` and ``pme_cutoff`` (Å) set
               the Ewald split; ``smooth`` > 0: only the reciprocal part of Gaussian charges of
               that Ewald factor (1/Å), as VMD's PMEpot writes (docs/periodic.md).

    Poisson–Boltzmann (method="pb", APBS's keywords by the command line's option names;
    docs/pb.md). The atoms need radii (a PQR file, a PDB/mmCIF file's force field, or radii=).
    solvent_dielectric  sdie; ``ions``: [(charge, conc, radius), ...] in e, mol/L and Å, in
               place of ionic_strength's 1:1 salt (APBS ion).
    probe_radius  Å (srad); ``surface``: "mol", "smol", "spl2" or "spl4" (srfm);
               ``surface_density`` points per Å² (sdens, mol/smol); ``spline_window`` Å (swin,
               spl2/spl4); ``charge_map``: "spl0", "spl2" or "spl4" (chgm).
    boundary   "zero", "sdh" or "mdh" on the grid itself (APBS mg-manual), or "focus" (mg-auto:
               a coarse grid's solution sets the faces); None: mdh, focusing when the grid is
               shorter than 1.7 × the molecule's extent along an axis. With focusing,
               ``coarse_boundary`` (default "mdh") and ``coarse_size`` (X, Y, Z Å) set the
               coarsest grid.
    nonlinear  full PB by Newton's method (npbe); ``pb_tolerance``: the relative residual the
               solver stops at; ``solvation``: also solve the reference medium and report the
               solvation energy.
    The map's ``solver`` holds the energies (kT and kJ/mol), solvation energy, iterations and
    residual history (:attr:`Map.solver`).

    The values are computed in float32 by the engine the ``dcsgrid`` command uses (same results;
    pb solves in float64); the GIL is released meanwhile and Ctrl-C raises KeyboardInterrupt.
    Raises Error for bad options (the command line's messages, naming the option) and ValueError
    for bad arrays.
    """
    atoms = _as_atoms(atoms)
    settings = _settings(
        method=method, device=device, gpus=gpus, threads=threads, units=units,
        dielectric=dielectric, distance_dependent=distance_dependent,
        ionic_strength=ionic_strength, temperature=temperature, min_distance=min_distance,
        cutoff=cutoff, cutoff_form=cutoff_form, switch_start=switch_start, cell=cell,
        pme_order=pme_order, pme_spacing=pme_spacing, pme_tolerance=pme_tolerance,
        pme_cutoff=pme_cutoff, smooth=smooth, preset=preset,
        solvent_dielectric=solvent_dielectric, ions=ions, ion_radius=ion_radius,
        probe_radius=probe_radius, surface=surface, charge_map=charge_map, boundary=boundary,
        coarse_boundary=coarse_boundary, coarse_size=coarse_size,
        surface_density=surface_density, spline_window=spline_window, nonlinear=nonlinear,
        pb_tolerance=pb_tolerance, solvation=solvation, given=given)
    if grid is None:
        grid = _core.default_grid(atoms, settings, spacing, padding)
    maps = [(name, Map._wrap(data, solver))
            for name, data, solver in _core.potential(atoms, grid, settings)]
    return maps[0][1] if len(maps) == 1 else dict(maps)


def _mda_cell(dimensions: Any):
    """A frame's box from MDAnalysis (a, b, c, alpha, beta, gamma), or None where it has none."""
    if dimensions is None:
        return None
    cell = [float(v) for v in dimensions]
    return cell if len(cell) == 6 and all(v > 0 for v in cell) else None


def _as_pair(item: Any) -> tuple:
    """(positions, cell) of one frame: a 2-tuple whose first element is an (N, 3) array (a frame of
    two atoms given as a tuple of two points is positions, not a pair), else positions alone."""
    if isinstance(item, tuple) and len(item) == 2 and np.ndim(item[0]) == 2:
        return item
    return item, None


def _box_parameters(cell: Any, index: int) -> np.ndarray:
    """A frame's cell as six numbers (a, b, c, alpha, beta, gamma), angles 90 where three are given."""
    values = np.asarray(cell, dtype=float).ravel()
    if values.size == 3:
        return np.concatenate([values, [90.0, 90.0, 90.0]])
    if values.size != 6:
        raise Error(f"frame {index}'s cell has {values.size} numbers: give A,B,C or A,B,C,ALPHA,BETA,GAMMA")
    return values


def _frame_source(frames: Any):
    """((positions, cell) iterator, frame count or None, source name) of a trajectory: an
    MDAnalysis Universe or AtomGroup (every frame of its trajectory, with its box), or an iterable
    of (N, 3) arrays or of (positions, cell) pairs."""
    if hasattr(frames, "universe") and hasattr(frames, "positions"):  # AtomGroup
        group, trajectory = frames, frames.universe.trajectory
    elif hasattr(frames, "trajectory") and hasattr(frames, "atoms"):  # Universe
        group, trajectory = frames.atoms, frames.trajectory
    else:
        count = len(frames) if hasattr(frames, "__len__") else None
        return (_as_pair(item) for item in frames), count, "<frames>"

    def positions():
        for ts in trajectory:
            yield group.positions, _mda_cell(ts.dimensions)

    source = getattr(trajectory, "filename", None) or "<trajectory>"
    return positions(), len(trajectory), os.fspath(source)


def _frames_grid(atoms: Atoms, settings: Any, grid: Grid | None, pairs: Iterator, spacing: float,
                 padding: float) -> tuple:
    """(grid, pairs): the grid given, else the default one; a periodic method without cell= lays
    it over the first frame's box (that frame is read ahead and put back)."""
    if grid is not None:
        return grid, pairs
    first_cell = None
    if settings.periodic and not settings.has_cell:
        first = next(pairs, None)
        if first is not None:
            first_cell = first[1]
            pairs = itertools.chain([first], pairs)
    return _core.default_grid(atoms, settings, spacing, padding, first_cell), pairs


def _yield_maps(core_frames, positions: Iterator) -> Iterator[Map]:
    # Frame i+1 is read and queued before frame i's map is taken, so reading overlaps computing.
    first = next(positions, None)
    if first is None:
        return
    core_frames.submit(*first)
    for frame in positions:
        core_frames.submit(*frame)
        yield Map._wrap(*core_frames.next())
    while (taken := core_frames.next()) is not None:
        yield Map._wrap(*taken)
    core_frames.finish()


def potentials(atoms: Any, frames: Any, grid: Grid | None = None, *, out: str | os.PathLike | None = None,
               n_frames: int | None = None, overwrite: bool = False, stats: bool = True,
               ensemble: bool = False, depth: int = 2, spacing: float = 0.5, padding: float = 10.0,
               **options) -> Iterator[Map] | dict:
    """The potential of every frame of a trajectory, on one grid.

    atoms    the system's charges (Atoms, or an MDAnalysis Universe/AtomGroup); its positions
             lay out the default grid (``Grid.around(atoms, padding, spacing)``; for a
             periodic method, one period of ``cell=`` or else of the first frame's box).
    frames   an MDAnalysis Universe or AtomGroup (every frame of its trajectory, the group's
             atoms, and each frame's box), or any iterable of (N, 3) position arrays, N =
             len(atoms), or of (positions, cell) pairs, cell as ``potential``'s keyword.
             A periodic method (``ewald``, ``pme``) computes each frame in its own cell unless
             ``cell=`` gives one for all, as ``dcsgrid batch`` does; a frame without one is an
             error.
    options  the keywords of :func:`potential` (one method).

    Without ``out``: an iterator of Maps, one per frame, in order; each frame is computed on a
    worker thread while the next is read (at most ``depth`` frames wait, so memory is bounded).
    With ``method="pb"`` each Map's ``solver`` holds that frame's energies and solve.
    With ``out`` (.h5): every map is written into a batch file (the layout of ``dcsgrid batch``,
    with per-frame statistics unless ``stats`` is False, and mean/std maps under /analysis with
    ``ensemble``), and a summary dict is returned (frames, seconds, frames_per_second, device).
    The frame count must be known for the file: from the Universe, ``len(frames)`` or
    ``n_frames``. ``overwrite`` replaces an existing file.
    """
    atoms = _as_atoms(atoms)
    settings = _settings(**options, given=tuple(options))
    positions, count, source = _frame_source(frames)
    grid, positions = _frames_grid(atoms, settings, grid, positions, spacing, padding)
    if out is None:
        core_frames = _core.FrameMaps(atoms, grid, settings, "", 0, source, False, False, False,
                                      True, depth)
        return _yield_maps(core_frames, positions)
    count = n_frames if n_frames is not None else count
    if count is None:
        raise ValueError("out= needs the number of frames: pass n_frames= for an iterable without len()")
    core_frames = _core.FrameMaps(atoms, grid, settings, os.fspath(out), count, source, overwrite,
                                  stats, ensemble, False, depth)
    for frame in positions:
        core_frames.submit(*frame)
    summary = core_frames.finish()
    summary["output"] = os.fspath(out)
    return summary


def _one_box(pairs: Iterator) -> Iterator:
    """The (positions, cell) pairs, refusing a frame whose box differs from the first one's."""
    first = None
    for index, (positions, cell) in enumerate(pairs):
        if cell is not None:
            box = _box_parameters(cell, index)
            if first is None:
                first = box
            elif not np.allclose(box, first, rtol=1e-6, atol=0):
                raise Error(f"frame {index}'s box {list(cell)} differs from the first frame's "
                            f"{first.tolist()}: average() adds the maps point by point, which needs "
                            "one box; `dcsgrid batch --average` takes frames of changing boxes (NPT) "
                            "at the same fractional coordinates of each box")
        yield positions, cell


def average(atoms: Any, frames: Any, grid: Grid | None = None, *, std: bool = False, depth: int = 2,
            spacing: float = 0.5, padding: float = 10.0, **options) -> Map | tuple:
    """The mean potential over a trajectory's frames, and with ``std`` its (population) standard
    deviation: PMEpot's averaged map with ``method="pme", smooth=0.25``.

    Takes :func:`potentials`' atoms, frames, grid and keywords. Each frame is computed as
    ``potentials`` computes it and added to a float64 running mean and spread (the accumulator of
    ``dcsgrid batch --ensemble``), so no frame's map is kept. A periodic
    method's frames must share one box (or ``cell=`` gives one to all). Returns the mean Map, or
    (mean, std) with ``std``.
    """
    atoms = _as_atoms(atoms)
    settings = _settings(**options, given=tuple(options))
    pairs, _, source = _frame_source(frames)
    grid, pairs = _frames_grid(atoms, settings, grid, pairs, spacing, padding)
    if settings.periodic and not settings.has_cell:
        pairs = _one_box(pairs)
    core_frames = _core.FrameMaps(atoms, grid, settings, "", 0, source, False, False, False, True, depth)
    ensemble, first = None, None
    for m in _yield_maps(core_frames, pairs):
        if ensemble is None:
            ensemble, first = _core.Ensemble(m._data.values.size), m._data  # first: grid and metadata
        ensemble.add(m._data)
    if ensemble is None:
        raise Error("average: no frames")
    meta = first.metadata
    meta["parameters"] = dict(meta["parameters"], frames_averaged=str(ensemble.count))
    mean = Map(ensemble.mean(first).values, grid, metadata=meta)
    if not std:
        return mean
    meta["parameters"]["statistic"] = "standard deviation over the frames (population)"
    return mean, Map(ensemble.stddev(first).values, grid, metadata=meta)
