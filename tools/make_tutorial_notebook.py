"""Write docs/tutorial/ten-minutes.ipynb from docs/tutorial/ten-minutes.md: the page's prose
as Markdown cells, its Python blocks as code cells, and after some of them a cell that only
names an object, so the notebook shows it (a net's picture, a table; accelperf.notebook).

    .venv/bin/python tools/make_tutorial_notebook.py

The notebook is generated, never edited: tests/test_docs.py checks it equals this output
and runs it top to bottom. Console blocks become Markdown (a notebook runs Python).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorial" / "ten-minutes.md"
NOTEBOOK = PAGE.with_suffix(".ipynb")

# after the code cell that defines the name, show it on its own
SHOW = ["model", "result", "interface", "worst", "sizing", "fit.model"]


def _markdown(text: str) -> dict:
    # the page's relative links point into the site; in a notebook, at the page itself
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip("\n")}


def _code(text: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": text.strip("\n")}


def cells(page: str) -> list[dict]:
    out, prose, shown = [], [], set()
    parts = re.split(r"^```(\w*)\n(.*?)^```\n", page, flags=re.M | re.S)
    # re.split with two groups: prose, lang, body, prose, lang, body, ...
    for i in range(0, len(parts), 3):
        prose.append(parts[i])
        if i + 2 >= len(parts):
            break
        lang, body = parts[i + 1], parts[i + 2]
        if lang != "python":
            prose.append(f"```{lang}\n{body}```\n")
            continue
        text = "".join(prose).replace("<!-- docs-test: skip", "<!-- skip")
        if text.strip():
            out.append(_markdown(text))
        prose = []
        out.append(_code(body))
        for name in SHOW:
            root = name.split(".")[0]
            if name not in shown and re.search(rf"^{root}\s*=", body, flags=re.M):
                out.append(_code(name))
                shown.add(name)
    if "".join(prose).strip():
        out.append(_markdown("".join(prose)))
    return out


def notebook() -> str:
    nb = {"cells": cells(PAGE.read_text(encoding="utf-8")),
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"},
                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"cell-{i}"
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    NOTEBOOK.write_text(notebook(), encoding="utf-8")
    print(f"wrote {NOTEBOOK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
