"""The HTML report that `accelperf demo` writes: an index page, figures and the JSON behind
them. Each level of the toolkit contributes sections; the report only lays them out."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .plot import save_figure


def jsonable(value):
    """Replace non-finite floats (not valid JSON) with None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        return jsonable(value.item())
    return value


def dump_json(value, path: str | Path | None = None, indent: int = 2) -> str:
    text = json.dumps(jsonable(value), indent=indent, allow_nan=False)
    if path is not None:
        Path(path).write_text(text + "\n", encoding="utf-8")
    return text


@dataclass
class Section:
    title: str
    intro: str = ""
    blocks: list[str] = field(default_factory=list)

    def paragraph(self, text: str) -> None:
        self.blocks.append(f"<p>{html.escape(text)}</p>")

    def table(self, header: list[str], rows: list[list[object]], caption: str = "") -> None:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                       for row in rows)
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        self.blocks.append(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


class Report:
    """A report directory: ``index.html``, ``figures/*.svg`` and ``data/*.json``."""

    def __init__(self, out: str | Path, title: str = "accelperf report"):
        self.out = Path(out)
        self.title = title
        self.sections: list[Section] = []
        (self.out / "figures").mkdir(parents=True, exist_ok=True)
        (self.out / "data").mkdir(parents=True, exist_ok=True)

    def section(self, title: str, intro: str = "") -> Section:
        sec = Section(title, intro)
        self.sections.append(sec)
        return sec

    def figure(self, section: Section, fig, name: str, caption: str) -> Path:
        path = save_figure(fig, self.out / "figures" / f"{name}.svg")
        save_figure(fig, self.out / "figures" / f"{name}.png")
        section.blocks.append(
            f'<figure><img src="figures/{name}.svg" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)} "
            f'(<a href="figures/{name}.png">PNG</a>)</figcaption></figure>')
        return path

    def data(self, section: Section, value, name: str, caption: str) -> Path:
        path = self.out / "data" / f"{name}.json"
        dump_json(value, path)
        section.blocks.append(f'<p class="data">Data: <a href="data/{name}.json">'
                              f"{html.escape(caption)}</a></p>")
        return path

    def write(self) -> Path:
        toc = "".join(f'<li><a href="#s{i}">{html.escape(s.title)}</a></li>'
                      for i, s in enumerate(self.sections))
        body = "".join(
            f'<section id="s{i}"><h2>{html.escape(s.title)}</h2>'
            + (f"<p>{html.escape(s.intro)}</p>" if s.intro else "") + "".join(s.blocks)
            + "</section>" for i, s in enumerate(self.sections))
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(self.title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
th {{ background: #f2f2f2; }} td:first-child {{ text-align: left; }}
caption {{ caption-side: top; text-align: left; font-weight: 600; padding: 0.3em 0; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; }}
figcaption {{ color: #555; font-size: 0.9em; }}
</style></head><body>
<h1>{html.escape(self.title)}</h1><ul>{toc}</ul>{body}
</body></html>
"""
        index = self.out / "index.html"
        index.write_text(page, encoding="utf-8")
        return index
