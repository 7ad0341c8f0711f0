"""dcsgrid surface's meshes read by an independent reader: trimesh loads the .ply and the .glb and
finds them watertight and consistently wound, with the vertex count and area the other file has."""
import subprocess

import pytest

from conftest import DATA, cli_binary

trimesh = pytest.importorskip("trimesh", reason="trimesh (PyPI) is not installed")


@pytest.mark.parametrize("kind", ["ses", "sas"])
def test_ply_and_glb_are_watertight(tmp_path, kind):
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
