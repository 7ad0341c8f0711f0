"""dcsgrid: electrostatic potential maps of biomolecules on regular 3D grids, from Python.

The same engine as the ``dcsgrid`` command (GPU when one is visible), with numpy in and out::

    import dcsgrid
    atoms = dcsgrid.read_atoms("protein.pqr")          # or dcsgrid.Atoms(positions, charges)
    grid = dcsgrid.Grid.around(atoms, padding=10, spacing=0.5)
    pot = dcsgrid.potential(atoms, grid)                # a Map, in kT/e
    pot.values[i, j, k]                                 # numpy view, shape (nx, ny, nz)
    pot.save("pot.h5")                                  # .h5, .dx, .ccp4/.mrc/.map
    pot.sample(points)                                  # trilinear, NaN outside the grid
    s = dcsgrid.surface("protein.pqr")                  # SES mesh, potential at vertices, tables
    for m in dcsgrid.potentials(atoms, universe, grid): ...   # a trajectory, frame by frame
    mean = dcsgrid.average(atoms, universe, grid)       # its mean map (std=True: and spread)

Errors the user can fix raise :class:`dcsgrid.Error` (bad files raise its subclass
:class:`dcsgrid.InputError`, with ``.file`` and ``.line``), with the command line's messages; bad
arrays raise ``ValueError``. Computations release the GIL; Ctrl-C stops them.
See docs/python.md for worked examples.
"""
from ._core import Atoms, Error, Grid, InputError, gpu_available
from ._core import version as __version__
from ._compute import average, potential, potentials, read_atoms
from ._maps import Map, compare, load_map, similarity
from ._surface import surface

__all__ = [
    "Atoms", "Error", "Grid", "InputError", "Map", "average", "compare", "gpu_available", "load_map",
    "potential", "potentials", "read_atoms", "similarity", "surface",
]
