"""How accelperf's objects show themselves in Jupyter (issue 26, item 2).

In a notebook the last expression of a cell is displayed by IPython's formatters. This
module gives them, per accelperf type, a picture or a table:

* a built LPN (:class:`~accelperf.lpn.net.Model`): the net's picture (SVG, ``lpn.viz``);
* a LogCA model: its speedup curve with g1 and g_A/2 marked (SVG, ``plot.logca``);
* a simulation (``SimResult``): latency and bottleneck, and one row per transition with
  its commits, busy cycles and utilisation;
* an interface: per input class its condition, formula and bottleneck;
* every other result with a ``to_dict()`` (density bounds, fits, g1s, regions, advice,
  designs, proofs, bounds, sizings, calibrations): its one-line ``repr`` as a heading over
  a table of its fields, numbers to 6 significant digits.

The renderers are registered with IPython by type *name* when ``accelperf`` is imported
inside a running IPython (:func:`register_if_running`), so the models stay free of any
display code and the modules that draw (``lpn.viz``, ``plot``) are imported only when a
picture is asked for: a ``_repr_svg_`` method on ``Model`` would make ``lpn.net`` import
``lpn.viz``, which imports ``lpn.net``, an import circle. :func:`html` and :func:`svg` are
the same renderers for use outside Jupyter (a report, a test).
"""
from __future__ import annotations

import html as _html
import sys

# (module, class) -> (MIME type, renderer name in this module)
RENDERERS = {
    ("accelperf.lpn.net", "Model"): ("image/svg+xml", "model_svg"),
    ("accelperf.logca.model", "LogCA"): ("image/svg+xml", "logca_svg"),
    ("accelperf.lpn.outcome", "SimResult"): ("text/html", "simulation_html"),
    ("accelperf.lpn.analysis.interfaces.interface", "Interface"): ("text/html", "interface_html"),
}
# Every result with a to_dict() (tests/test_notebook.py lists the package's classes and
# holds this to it: ChosenFit, GranularityResult and the rest showed as plain text)
RENDERERS.update({key: ("text/html", "fields_html") for key in (
    ("accelperf.density.hierarchy", "Layer"), ("accelperf.density.hierarchy", "LayerRate"),
    ("accelperf.density.hierarchy", "DensityBound"),
    ("accelperf.logca.advise", "Advice"),
    ("accelperf.logca.casestudies", "DesignCutoffs"),
    ("accelperf.logca.casestudies", "CaseStudyResult"),
    ("accelperf.logca.choose", "TermChoice"), ("accelperf.logca.choose", "ChosenFit"),
    ("accelperf.logca.design", "DesignResult"), ("accelperf.logca.design", "FeasibilityCurve"),
    ("accelperf.logca.fit", "GranularityEstimate"), ("accelperf.logca.fit", "FitResult"),
    ("accelperf.logca.layerbounds", "LayerReach"),
    ("accelperf.logca.layerbounds", "LayerBound"),
    ("accelperf.logca.hierfit", "HierarchyFit"),
    ("accelperf.logca.holdout", "PredictedPoint"), ("accelperf.logca.holdout", "Prediction"),
    ("accelperf.logca.holdout", "PredictionCheck"),
    ("accelperf.logca.lpn_bridge", "LpnFit"),
    ("accelperf.logca.metrics", "GranularityResult"), ("accelperf.logca.metrics", "Peak"),
    ("accelperf.logca.metrics", "Bound"), ("accelperf.logca.metrics", "BoundReach"),
    ("accelperf.logca.metrics", "ModelSummary"),
    ("accelperf.logca.quote", "QuotedG1"),
    ("accelperf.logca.regions", "ParameterRegion"), ("accelperf.logca.regions", "Band"),
    ("accelperf.logca.regions", "RegionAnalysis"),
    ("accelperf.logca.uncertainty", "Distribution"),
    ("accelperf.logca.uncertainty", "MetricDistribution"),
    ("accelperf.logca.uncertainty", "UncertaintyResult"),
    ("accelperf.logca.whatif", "WhatIf"),
    ("accelperf.lpn.analysis.input_class", "InputClass"),
    ("accelperf.lpn.analysis.interfaces.accuracy", "ErrorSummary"),
    ("accelperf.lpn.analysis.interfaces.accuracy", "Accuracy"),
    ("accelperf.lpn.analysis.interfaces.accuracy", "FormChoice"),
    ("accelperf.lpn.analysis.proofs.sizing", "Trial"),
    ("accelperf.lpn.analysis.proofs.sizing", "SizingResult"),
    ("accelperf.lpn.analysis.proofs.verify", "BoundResult"),
    ("accelperf.lpn.analysis.proofs.verify", "ProofResult"),
    ("accelperf.lpn.analysis.proofs.witness", "Witness"),
    ("accelperf.lpn.batch", "BatchRow"), ("accelperf.lpn.batch", "BatchResult"),
    ("accelperf.lpn.calibrate", "Calibration"),
    ("accelperf.lpn.check", "Finding"),
    ("accelperf.lpn.trace_align", "TraceAlignment"),
    ("accelperf.measure.crypto", "Measurement"),
    ("accelperf.parameters", "Parameter"),
)})
MAX_CELL = 160          # characters of one table cell; longer values are cut with "…"


def readable(value) -> str:
    """A field's value as a person reads it: numbers to 6 significant digits (a fit's
    table showed ``np.float64(4.999999999999998)``), None as "—", infinity as "∞",
    mappings and sequences item by item."""
    import math

    import numpy as np
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return ("∞" if x > 0 else "−∞") if math.isinf(x) else f"{x:.6g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {readable(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(readable(v) for v in value) + "]"
    return repr(value)


def _cell(value) -> str:
    text = readable(value)
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL - 1] + "…"
    return _html.escape(text)


def table(header: list[str], rows: list[list], caption: str = "") -> str:
    """An HTML table, every cell escaped and cut to ``MAX_CELL`` characters."""
    head = "".join(f"<th>{_html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in rows)
    cap = f"<caption>{_html.escape(caption)}</caption>" if caption else ""
    return f'<table class="accelperf">{cap}<thead><tr>{head}</tr></thead>' \
           f"<tbody>{body}</tbody></table>"


def fields_html(obj) -> str:
    """The object's ``repr`` over a table of its ``to_dict()`` fields."""
    fields = obj.to_dict() if hasattr(obj, "to_dict") else vars(obj)
    rows = [[name, value] for name, value in fields.items()]
    return f"<p><code>{_html.escape(repr(obj))}</code></p>" + table(["field", "value"], rows)


def simulation_html(result) -> str:
    """Latency and bottleneck, then one row per transition (commits, busy, utilisation)."""
    rows = [[name, result.commits[name], result.busy.get(name, ""),
             f"{result.utilisation.get(name, 0):.1%}"] for name in result.commits]
    return (f"<p><b>{_html.escape(result.model)}</b>: latency {result.latency} cycles, "
            f"bottleneck <b>{_html.escape(str(result.bottleneck))}</b></p>"
            + table(["transition", "commits", "busy cycles", "utilisation"], rows))


def interface_html(interface) -> str:
    """Per input class: its conditions, latency formula and bottleneck (where it holds,
    as `lpn interface` prints it)."""
    from .lpn.analysis.interfaces.bottleneck import class_bottleneck
    rows = [[c.input_class.index, " and ".join(c.input_class.readable_conditions()) or "the whole space",
             str(c.latency), class_bottleneck(c, interface.space)] for c in interface.classes]
    return (f"<p><code>{_html.escape(repr(interface))}</code></p>"
            + table(["class", "condition", "latency (cycles)", "bottleneck"], rows))


def model_svg(model) -> str:
    """The net's picture (:func:`accelperf.lpn.viz.net_svg`)."""
    from .lpn.viz import net_svg
    return net_svg(model)


def logca_svg(model) -> str:
    """The speedup curve over LogCA's default range (:func:`accelperf.plot.logca.speedup_figure`)."""
    import io

    import matplotlib.pyplot as plt

    from .plot.logca import speedup_figure
    fig = speedup_figure(model)
    try:
        out = io.StringIO()
        fig.savefig(out, format="svg", bbox_inches="tight")
        return out.getvalue()
    finally:
        plt.close(fig)


def _renderer(obj):
    for cls in type(obj).__mro__:
        found = RENDERERS.get((cls.__module__, cls.__name__))
        if found:
            return found[0], getattr(sys.modules[__name__], found[1])
    return None, None


def html(obj) -> str | None:
    """The HTML accelperf shows for ``obj`` in a notebook, or None if it draws a picture."""
    mime, render = _renderer(obj)
    return render(obj) if mime == "text/html" else None


def svg(obj) -> str | None:
    """The SVG picture accelperf shows for ``obj`` in a notebook, or None."""
    mime, render = _renderer(obj)
    return render(obj) if mime == "image/svg+xml" else None


def register(shell) -> None:
    """Give IPython ``shell``'s formatters accelperf's renderers (by type name, so nothing
    is imported until an object of that type is shown)."""
    formatters = shell.display_formatter.formatters
    this = sys.modules[__name__]
    for (module, name), (mime, render) in RENDERERS.items():
        formatters[mime].for_type_by_name(module, name, getattr(this, render))


def register_if_running() -> None:
    """Register with the running IPython, if any; never imports IPython itself."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "display_formatter"):
        register(shell)
