"""surface: the molecular surface of a structure coloured by its potential, as ``dcsgrid surface``."""
from __future__ import annotations

import os
from typing import Any

from . import _core
from ._compute import _keywords_given, _settings
from ._maps import Map


@_keywords_given
def surface(path: str | os.PathLike, map: Map | None = None, *, kind: str = "ses", probe_radius: float = 1.4,
            mesh_spacing: float = 0.5, grid_spacing: float = 1.0, method: str = "direct",
            dielectric: float = _core.SURFACE_DIELECTRIC, ionic_strength: float = _core.SURFACE_IONIC_STRENGTH,
            forcefield: str = "amber", model: int = 1, unknown_zero: bool = False, forcefield_dir: str | os.PathLike | None = None,
            given: tuple = (), **options: Any) -> dict:
    """The solvent-excluded (``kind="ses"``) or solvent-accessible (``"sas"``) surface of the atoms
    of ``path`` for a probe of ``probe_radius`` Å, as a closed triangle mesh of about
    ``mesh_spacing`` Å, with the potential at each vertex: from ``map`` (a :class:`Map` that covers
    the surface), else computed on a grid of ``grid_spacing`` Å around it with ``method`` and the
    physics keywords of :func:`potential` (by default in water, ε 78.54, with 0.15 M salt, as the
    command). Radii: PQR's column, the force field's for PDB/mmCIF, else the elements' (Bondi).
    The mesh is made on a GPU where ``device`` (a keyword of :func:`potential`) picks one: the same
    mesh as on the CPU.

    Returns a dict: ``vertices`` (V, 3), ``normals`` (V, 3) float32, ``faces`` (F, 3) uint32
    (counter-clockwise seen from outside), ``potential`` (V,) float32, ``vertex_atom`` (V,) the
    atom whose patch each vertex is on, ``area`` (Å²), and the tables ``atoms`` and ``residues``:
    dicts of columns (chain, residue_name, residue_number, [atom_name], atom, vertices, area,
    mean, min, max: the area-weighted mean, min and max potential over the patch)."""
    settings = _settings(method=method, dielectric=dielectric, ionic_strength=ionic_strength, given=given,
                         **options)
    return _core.surface(os.fspath(path), map._data if map is not None else None, kind, probe_radius,
                         mesh_spacing, grid_spacing, settings, forcefield, model, unknown_zero,
                         os.fspath(forcefield_dir) if forcefield_dir else "")
