"""docs/python.md's examples run as written (from a folder where data/ is the repository's)."""
import os
import re
import warnings

import pytest

from conftest import REPO


def test_the_worked_examples_run(tmp_path, monkeypatch):
    for module in ("matplotlib", "MDAnalysis", "xarray", "h5netcdf"):
        pytest.importorskip(module)
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    (tmp_path / "data").symlink_to(REPO / "data")
    monkeypatch.chdir(tmp_path)
    warnings.filterwarnings("ignore")
    namespace = {}
    exec(compile("\n".join(blocks), "docs/python.md", "exec"), namespace)
    for name in ("1tii_slice.png", "1tii.dx", "complex.dcd", "mean.h5", "mean.xmf", "frames.h5"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert namespace["summary"]["frames"] == 10
    born_kj = -(1 / 4) * (1 - 1 / 78.54) * 332.06 * 4.184  # −(q²/2R)(1/ε_in − 1/ε_out)·k_C
    assert namespace["born"].solver["solvation_kj_per_mol"] == pytest.approx(born_kj, rel=0.01)
