"""The HTML report that `accelperf demo` writes: an index page, figures and the JSON behind
them. Each level of the toolkit contributes sections; the report only lays them out."""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .plot import save_figure
from .outputs import write_atomic


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
        write_atomic(path, text + "\n")
    return text


@dataclass
class Section:
    title: str
    intro: str = ""
    blocks: list[str] = field(default_factory=list)

    def paragraph(self, text: str) -> None:
        self.blocks.append(f"<p>{prose(text)}</p>")

    def notes(self, title: str, items: list[str]) -> None:
        """A short titled list (what a reader should know about a result, not a warning)."""
        if items:
            self.blocks.append(f"<p class=\"notes\">{prose(title)}</p><ul>"
                               + "".join(f"<li>{prose(i)}</li>" for i in items) + "</ul>")

    def table(self, header: list[str], rows: list[list[object]], caption: str = "") -> None:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
        cap = f"<caption>{prose(caption)}</caption>" if caption else ""
        self.blocks.append(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


_CODE = re.compile(r"`([^`]+)`")
# A cell that reads as a number (a value, a percentage, "1.35e+03 (1.32 KiB)", "—") lines
# up on the right; a cell of words reads from the left.
_NUMERIC = re.compile(r"[-+−]?(\d[\d,.]*(e[-+]?\d+)?|—)(\s?[%a-zA-Zµ/]{0,6})?(\s\(.*\))?")


def prose(text: str) -> str:
    """Escaped text with `code` spans set as code, as the README writes commands."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


def _cell(value) -> str:
    text = str(value)
    align = "" if _NUMERIC.fullmatch(text.strip()) else ' class="words"'
    return f"<td{align}>{html.escape(text)}</td>"


PAGE_WIDTH_PX = 1100          # the body's max-width in the style sheet below
_CSS_PX = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54,
           "mm": 96 / 25.4}
_SVG_IMG = re.compile(r'<img src="(figures/[^"]+\.svg)"([^>]*)>')


def svg_width_px(path: Path) -> float | None:
    """The width a browser gives an SVG file at its natural size (CSS pixels), from its
    ``width`` attribute or, without one, its viewBox; None when it cannot be read."""
    try:
        head = path.read_text("utf-8", errors="replace")[:4000]
    except OSError:
        return None
    tag = re.search(r"<svg\b[^>]*>", head)
    if not tag:
        return None
    width = re.search(r'\swidth="([0-9.]+)\s*([a-z]*)"', tag.group(0))
    if width and width.group(2) in _CSS_PX:
        return float(width.group(1)) * _CSS_PX[width.group(2)]
    box = re.search(r'viewBox="[-0-9.]+[ ,]+[-0-9.]+[ ,]+([0-9.]+)', tag.group(0))
    return float(box.group(1)) if box else None


class Report:
    """A report directory: ``index.html``, ``figures/*.svg`` and ``data/*.json``.

    ``progress``, when given, is called with each section's title as the section starts
    (the demo command shows it on a terminal); sections that measure call it with what
    they are measuring.
    """

    def __init__(self, out: str | Path, title: str = "accelperf report", progress=None):
        self.out = Path(out)
        self.title = title
        self.sections: list[Section] = []
        self._progress = progress
        (self.out / "figures").mkdir(parents=True, exist_ok=True)
        (self.out / "data").mkdir(parents=True, exist_ok=True)

    def progress(self, text: str) -> None:
        """Say what the report is doing now (a no-op without a progress callback)."""
        if self._progress is not None:
            self._progress(text)

    def section(self, title: str, intro: str = "") -> Section:
        self.progress(title)
        sec = Section(title, intro)
        self.sections.append(sec)
        return sec

    def _lay_out_wide_svgs(self, block: str) -> str:
        """Show an SVG wider than the page at its natural size in a frame that scrolls
        sideways, linked to the file for zooming, instead of shrinking its text to a few
        pixels (an LPN drawn as one long row is ~1800 px wide with 11 px text)."""
        def natural(match):
            src, rest = match.group(1), match.group(2)
            width = svg_width_px(self.out / src)
            if width is None or width <= PAGE_WIDTH_PX:
                return match.group(0)
            return (f'<span class="wide"><a href="{src}" title="open the full-size picture">'
                    f'<img src="{src}"{rest} width="{width:.0f}"></a></span>'
                    f'<span class="hint">(drawn at its natural size: scroll sideways, or click '
                    f'to open it alone)</span>')
        return _SVG_IMG.sub(natural, block)

    def figure(self, section: Section, fig, name: str, caption: str) -> Path:
        path = save_figure(fig, self.out / "figures" / f"{name}.svg")
        save_figure(fig, self.out / "figures" / f"{name}.png")
        section.blocks.append(
            f'<figure><img src="figures/{name}.svg" alt="{html.escape(caption)}">'
            f"<figcaption>{prose(caption)} "
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
            + (f"<p>{prose(s.intro)}</p>" if s.intro else "")
            + "".join(self._lay_out_wide_svgs(b) for b in s.blocks)
            + "</section>" for i, s in enumerate(self.sections))
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(self.title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: {PAGE_WIDTH_PX}px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
th {{ background: #f2f2f2; }} td:first-child, td.words {{ text-align: left; }}
code {{ font-size: 0.92em; background: #f4f4f4; padding: 0 0.2em; }}
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
p.notes {{ margin-bottom: 0.2em; }}
caption {{ caption-side: top; text-align: left; font-weight: 600; padding: 0.3em 0; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; height: auto; }}
.wide {{ display: block; overflow-x: auto; border: 1px solid #ddd; }}
.wide img {{ max-width: none; display: block; }}
.hint {{ display: block; color: #777; font-size: 0.8em; }}
figcaption {{ color: #555; font-size: 0.9em; }}
</style></head><body>
<h1>{html.escape(self.title)}</h1><ul>{toc}</ul>{body}
</body></html>
"""
        index = self.out / "index.html"
        write_atomic(index, page)
        return index
