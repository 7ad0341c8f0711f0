"""dcsgrid surface's meshes read by an independent reader: trimesh loads the .ply and the .glb and
finds them watertight and consistently wound, with the vertex count and area the other file has."""
import subprocess

import pytest

from conftest import DATA, cli_binary


@pytest.mark.parametrize("kind", ["ses", "sas"])
def test_ply_and_glb_are_watertight(tmp_path, kind):
    trimesh = pytest.importorskip("trimesh", reason="trimesh (PyPI) is not installed")
    ply, glb = tmp_path / "s.ply", tmp_path / "s.glb"
    subprocess.run([str(cli_binary()), "surface", str(DATA / "1d7h-min.pqr"), "-o", str(ply), "-o", str(glb),
                    "--surface-kind", kind, "-q"], check=True)
    meshes = [trimesh.load(str(path), force="mesh") for path in (ply, glb)]
    for mesh in meshes:
        assert mesh.is_watertight
        assert mesh.is_winding_consistent
        assert mesh.volume > 0  # outward faces enclose a positive volume
    assert len(meshes[0].vertices) == len(meshes[1].vertices)
    assert meshes[0].area == pytest.approx(meshes[1].area, rel=1e-6)


def test_surface_from_python_matches_its_map_and_tables():
    """dcsgrid.surface with a map: the vertex potentials are that map sampled at the vertices; each
    residue row's mean is the area-weighted mean over its vertices (areas: a third of each adjacent
    face's, computed here), and the mesh is the command's (same vertex count and area)."""
    import numpy as np
    import dcsgrid
    pqr = DATA / "1d7h-min.pqr"
    atoms = dcsgrid.read_atoms(pqr)
    pot = dcsgrid.potential(atoms, dcsgrid.Grid.around(atoms, padding=6, spacing=0.5), dielectric=78.54,
                            ionic_strength=0.15, device="cpu")
    s = dcsgrid.surface(pqr, pot, mesh_spacing=0.5)
    v, f = s["vertices"], s["faces"]
    assert v.shape[1] == 3 and f.shape[1] == 3 and len(s["potential"]) == len(v)
    assert np.allclose(s["potential"], pot.sample(v), rtol=1e-5, atol=1e-6)
    corners = v[f].astype(np.float64)
    face_area = 0.5 * np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    vertex_area = np.zeros(len(v))
    for k in range(3):
        np.add.at(vertex_area, f[:, k], face_area / 3)
    assert s["area"] == pytest.approx(face_area.sum(), rel=1e-9)
    res = s["residues"]
    residue_of_atom = {}
    for row, atom in enumerate(s["atoms"]["atom"]):
        key = (s["atoms"]["chain"][row], s["atoms"]["residue_number"][row], s["atoms"]["residue_name"][row])
        residue_of_atom[atom] = key
    keys = list(zip(res["chain"], res["residue_number"], res["residue_name"]))
    for r, key in enumerate(keys):
        mine = np.array([residue_of_atom[a] == key for a in s["vertex_atom"]])
        if not mine.any():
            continue
        want = np.sum(vertex_area[mine] * s["potential"][mine]) / np.sum(vertex_area[mine])
        assert res["mean"][r] == pytest.approx(want, rel=1e-4, abs=1e-6)


def test_surface_from_python_refuses_a_map_that_misses_the_surface():
    import dcsgrid
    pqr = DATA / "1d7h-min.pqr"
    atoms = dcsgrid.read_atoms(pqr)
    small = dcsgrid.potential(atoms, dcsgrid.Grid.box(atoms.positions.mean(axis=0), 4.0, 0.5), device="cpu")
    with pytest.raises(dcsgrid.Error, match="does not cover the surface"):
        dcsgrid.surface(pqr, small)
