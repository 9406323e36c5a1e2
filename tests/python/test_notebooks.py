"""The example notebooks run end to end (nbclient), so they never rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["quickstart.ipynb", "compare.ipynb"])
def test_the_notebook_runs_end_to_end(name: str, tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    html = [o for o in outputs if "text/html" in o.get("data", {})]
    assert images and html, "plots and tables rendered"
    assert list(tmp_path.iterdir()), "the runs wrote their results next to the notebook"
