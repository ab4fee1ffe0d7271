"""Figures. Built on ``matplotlib.figure.Figure`` (no pyplot state), so they are safe to
create from a command, a test or a notebook. Models never import this package."""

from __future__ import annotations

from pathlib import Path

from ..errors import invalid
from ..outputs import replacing

FIGURE_FORMATS = (".png", ".svg")


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` as PNG or SVG, chosen by the file's suffix."""
    path = Path(path)
    if path.suffix.lower() not in FIGURE_FORMATS:
        raise invalid("out", str(path), "a figure is written as .png or .svg")
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as temp:
        fig.savefig(temp, dpi=150 if path.suffix.lower() == ".png" else None,
                    bbox_inches="tight")
    return path
