"""Pictures of an LPN: a self-contained SVG (or an HTML page around it).

Places are circles, transitions boxes; a bounded place shows its capacity instead of its
capacity place, arcs show weights other than 1, read arcs are dashed, inhibitor arcs end in
a small circle, and transitions show their delay, concurrency and initiation interval.
After a run, transitions are coloured by utilisation (white = idle, red = saturated) so the
bottleneck stands out. The layout is layered from the start places; no Graphviz is needed.
A large net (Protoacc's hundred transitions) is drawn grouped: each unit its names reveal
(``f3_...``, ``link....``) becomes one box, coloured by its busiest transition.
"""

from __future__ import annotations

import html
import re
from collections import deque

from .expr import to_text
from .net import Model
from .sim import SimResult

DX, DY, R, W, H = 190, 90, 26, 130, 46


def _layers(model: Model) -> dict:
    """Layer of every visible node: ('p', id) or ('t', id), by BFS from the inputs."""
    hidden = {i for i, p in enumerate(model.places) if p.capacity_of is not None}
    succ: dict = {}
    for t in model.transitions:
        for p in t.inputs + tuple(p for p, _ in t.reads):   # read places come before, too
            if p not in hidden:
                succ.setdefault(("p", p), []).append(("t", t.id))
        for arc in t.outputs + t.routes:
            if arc.place not in hidden:
                succ.setdefault(("t", t.id), []).append(("p", arc.place))
    produced = {arc.place for t in model.transitions for arc in t.outputs + t.routes}
    nodes = [("p", i) for i in range(len(model.places)) if i not in hidden] + \
        [("t", t.id) for t in model.transitions]
    sources = [n for n in nodes if n[0] == "p" and (n[1] not in produced or n[1] == model.start)]
    return _layer_graph(nodes, succ, sources)


def _layer_graph(nodes: list, succ: dict, sources: list) -> dict:
    """Layer of every node of a directed graph: cycles broken at the edges a depth-first
    search from ``sources`` closes, then each node one layer after its furthest
    predecessor (longest path)."""
    # Drop the edges that close a cycle (found by depth-first search from the inputs), then
    # place every node one layer after its furthest predecessor (longest path).
    back, state = set(), {}
    for root in sources + nodes:
        if root in state:
            continue
        stack = [(root, iter(succ.get(root, [])))]
        state[root] = "open"
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = "done"
                stack.pop()
            elif state.get(child) == "open":
                back.add((node, child))
            elif child not in state:
                state[child] = "open"
                stack.append((child, iter(succ.get(child, []))))
    indegree = {n: 0 for n in nodes}
    for a in nodes:
        for b in succ.get(a, []):
            if (a, b) not in back:
                indegree[b] += 1
    layer = {n: 0 for n in nodes}
    ready = deque(n for n in nodes if indegree[n] == 0)
    while ready:
        a = ready.popleft()
        for b in succ.get(a, []):
            if (a, b) in back:
                continue
            layer[b] = max(layer[b], layer[a] + 1)
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return layer


def _canvas(layer: dict, order, title: str, result: SimResult | None):
    """Positions of the laid-out nodes (one column per layer, in ``order``) and the start of
    the SVG document: its size, markers, title and, after a run, the headline."""
    columns: dict = {}
    for node, d in sorted(layer.items(), key=order):
        columns.setdefault(d, []).append(node)
    pos = {node: (80 + d * DX, 70 + k * DY) for d, ns in columns.items()
           for k, node in enumerate(ns)}
    width = max(80 + (max(columns) + 1) * DX, LEGEND_WIDTH)
    height = 70 + max(len(v) for v in columns.values()) * DY + 40 + LEGEND_HEIGHT
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           # A white outline behind names and arc labels keeps them legible where a line
           # passes under them.
           '<style>.halo { paint-order: stroke; stroke: white; stroke-width: 3px; '
           'stroke-linejoin: round; }</style>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
           'fill="#555"/></marker><marker id="inhibit" viewBox="0 0 10 10" refX="9" '
           'refY="5" markerWidth="8" markerHeight="8"><circle cx="5" cy="5" r="4" '
           'fill="white" stroke="#a33"/></marker></defs>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{html.escape(title)}</text>']
    if result:
        out.append(f'<text x="10" y="38">latency {result.latency} cycles; bottleneck '
                   f'{html.escape(result.bottleneck)} (red = busy)</text>')
    out.append(_legend(height - LEGEND_HEIGHT + 10, result is not None))
    return pos, out


LEGEND_HEIGHT, LEGEND_WIDTH = 46, 900
LABEL_CHAR_PX = 6.2            # the width of one character of an 11 px label, about


def _arc_label(text: str, at: tuple, room: float) -> str:
    """An arc's label centred at ``at``, in lines that fit the ``room`` (px) between the
    nodes the arc joins (a count such as ``(packets.bytes + 15) // 16`` is wider than the
    99 px between a transition and the next place), stacked upward from ``at``, with the
    whole text as its tooltip."""
    import textwrap
    width = max(8, int(room / LABEL_CHAR_PX))
    lines = textwrap.wrap(text, width, break_long_words=False) or [text]
    x, y = at
    spans = "".join(f'<tspan x="{x}" y="{y - 12 * (len(lines) - 1 - k)}">{html.escape(line)}'
                    f'</tspan>' for k, line in enumerate(lines))
    return (f'<text class="halo" fill="#a33" text-anchor="middle"><title>'
            f'{html.escape(text)}</title>{spans}</text>')


def _legend(y: float, ran: bool) -> str:
    """What the picture's marks mean, drawn with the same marks."""
    x = 10
    parts = [f'<g class="legend" font-size="10" fill="#333">',
             f'<path d="M{x},{y} L{x + 30},{y}" stroke="#555" marker-end="url(#arrow)"/>',
             f'<text x="{x + 36}" y="{y + 4}">takes tokens</text>',
             f'<path d="M{x + 120},{y} L{x + 150},{y}" stroke="#36c" stroke-dasharray="5,3" '
             f'marker-end="url(#arrow)"/>',
             f'<text x="{x + 156}" y="{y + 4}">reads (≥ n: waits for n tokens, takes none)</text>',
             f'<path d="M{x + 400},{y} L{x + 430},{y}" stroke="#a33" '
             f'marker-end="url(#inhibit)"/>',
             f'<text x="{x + 436}" y="{y + 4}">inhibits (&lt; n: fires only below n)</text>',
             f'<text x="{x}" y="{y + 22}">red numbers on arcs: tokens moved or needed '
             f'(1 when absent); in a place: cap n = its capacity'
             + ('; max n = the most tokens it held in this run; in a box: delay δ and the '
                'share of the run the unit was busy' if ran else '') + '</text>',
             '</g>']
    return "".join(parts)


def _colour(u: float | None) -> str:
    if u is None:
        return "#eef3fb"
    u = max(0.0, min(1.0, u))
    g = int(255 - 200 * u)
    return f"#ff{g:02x}{g:02x}"


GROUP_ABOVE = 40
"""Nets with more transitions than this are drawn grouped (see :func:`groups`)."""


def group_of(name: str) -> str | None:
    """The unit a transition or place belongs to, read from its name: the part before the
    first dot (``link.fly``: ``link``), or a numbered prefix (``f3_string_header``: ``f3``)."""
    if "." in name:
        return name.split(".", 1)[0]
    match = re.match(r"([A-Za-z]+\d+)_", name)
    return match.group(1) if match else None


def groups(model: Model) -> dict:
    """{group: [transition ids]} for the groups of at least two transitions."""
    found: dict = {}
    for t in model.transitions:
        key = group_of(t.name)
        if key is not None:
            found.setdefault(key, []).append(t.id)
    return {k: v for k, v in found.items() if len(v) > 1}


def net_svg(model: Model, result: SimResult | None = None, grouped: bool | None = None) -> str:
    """The net as an SVG document string. ``grouped`` (default: when the net has more than
    :data:`GROUP_ABOVE` transitions and names that group them) draws each unit, such as one
    of Protoacc's field pipelines, as one box with its busiest transition's utilisation."""
    if grouped is None:
        grouped = len(model.transitions) > GROUP_ABOVE and bool(groups(model))
    if grouped:
        return _grouped_svg(model, result)
    layer = _layers(model)
    pos, out = _canvas(layer, lambda kv: (kv[1], kv[0][0] != "p", kv[0][1]), model.name,
                       result)
    util = result.utilisation if result else {}
    labels: list[str] = []         # drawn after the nodes, so no node hides a label

    def edge(a, b, label="", style=""):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        # start/end on the node borders, horizontally
        x1 += R if a[0] == "p" else W / 2
        x2 -= R if b[0] == "p" else W / 2
        if x2 <= x1:                              # a back edge: bow it below
            mid = max(y1, y2) + DY / 2
            path = f"M{x1},{y1} C{x1 + 60},{mid} {x2 - 60},{mid} {x2},{y2}"
            label_at = ((x1 + x2) / 2, mid - DY / 8)
        else:
            path = f"M{x1},{y1} L{x2},{y2}"
            label_at = ((x1 + x2) / 2, (y1 + y2) / 2 - 4)
        look = {"": 'stroke="#555" marker-end="url(#arrow)"',
                "read": 'stroke="#36c" stroke-dasharray="5,3" marker-end="url(#arrow)"',
                "inhibit": 'stroke="#a33" marker-end="url(#inhibit)"'}[style]
        out.append(f'<path d="{path}" fill="none" {look}/>')
        if label:
            labels.append(_arc_label(label, label_at, abs(x2 - x1)))

    for t in model.transitions:
        names = lambda arg, prop, t=t: f"{model.places[t.arg_places[arg]].name}.{prop}"
        for k, (p, w) in enumerate(zip(t.inputs, t.weights)):
            if ("p", p) in pos:
                label = "" if (w.op == "const" and w.args[0] == 1) else to_text(w, names)
                edge(("p", p), ("t", t.id), label)
        for style, arcs, sign in (("read", t.reads, "≥"), ("inhibit", t.inhibits, "<")):
            for p, n in arcs:
                if ("p", p) in pos:
                    edge(("p", p), ("t", t.id), f"{sign} {to_text(n, names)}", style)
        for arc in t.outputs + t.routes:
            if ("p", arc.place) in pos:
                c = arc.count
                label = "" if (c.op == "const" and c.args[0] == 1) else to_text(c, names)
                if arc.condition is not None:
                    label = (label + " " if label else "") + f"if {to_text(arc.condition, names)}"
                edge(("t", t.id), ("p", arc.place), label)
    for i, p in enumerate(model.places):
        if ("p", i) not in pos:
            continue
        x, y = pos[("p", i)]
        fill = "#dff0d8" if i == model.done else "#fff7d6" if i == model.start else "white"
        cap = "" if p.capacity is None else f"cap {p.capacity}"
        occ = f"max {result.max_occupancy[p.name]}" if result else ""
        out.append(f'<g><title>{html.escape(p.name)}: {html.escape(p.token_type.name)} '
                   f'{list(p.token_type.properties)}</title>'
                   f'<circle cx="{x}" cy="{y}" r="{R}" fill="{fill}" stroke="#333"/>'
                   f'<text class="halo" x="{x}" y="{y + R + 13}" text-anchor="middle">'
                   f'{html.escape(p.name)}</text>'
                   f'<text x="{x}" y="{y + 4}" text-anchor="middle" fill="#555">'
                   f'{html.escape(cap or occ)}</text></g>')
    for t in model.transitions:
        x, y = pos[("t", t.id)]
        names = lambda arg, prop, t=t: f"{model.places[t.arg_places[arg]].name}.{prop}"
        delay = to_text(t.delay, names)
        extra = []
        if t.concurrency != 1:
            extra.append("∞ par" if t.concurrency is None else f"{t.concurrency} par")
        ii = t.initiation_interval
        if not (ii.op == "const" and ii.args[0] == 0):
            extra.append(f"II {to_text(ii, names)}")
        u = util.get(t.name)
        tip = f"{t.name}: delay {delay}" + (f"; utilisation {u:.0%}, {result.commits[t.name]} "
                                             f"commits" if u is not None else "")
        if t.guard is not None:
            tip += f"; guard {to_text(t.guard, names)}"
        out.append(f'<g><title>{html.escape(tip)}</title>'
                   f'<rect x="{x - W / 2}" y="{y - H / 2}" width="{W}" height="{H}" rx="4" '
                   f'fill="{_colour(u)}" stroke="#333"/>'
                   f'<text x="{x}" y="{y - 6}" text-anchor="middle" font-weight="bold">'
                   f'{html.escape(t.name)}</text>'
                   f'<text x="{x}" y="{y + 9}" text-anchor="middle">'
                   f'δ={html.escape(delay if len(delay) < 24 else delay[:21] + "…")}</text>'
                   + (f'<text x="{x}" y="{y + 20}" text-anchor="middle" fill="#555">'
                      f'{html.escape(", ".join(extra))}'
                      + (f" · {u:.0%}" if u is not None else "") + '</text>'
                      if extra or u is not None else "") + '</g>')
    out.extend(labels)
    out.append("</svg>")
    return "\n".join(out)


def _grouped_svg(model: Model, result: SimResult | None) -> str:
    """The net with each group of transitions (and the places only it uses) as one box."""
    members = groups(model)
    box_of = {tid: ("g", key) for key, tids in members.items() for tid in tids}
    node_of_t = lambda t: box_of.get(t.id, ("t", t.id))
    hidden = {i for i, p in enumerate(model.places) if p.capacity_of is not None}
    touching: dict = {}
    for t in model.transitions:
        for p in t.inputs + tuple(a.place for a in t.outputs + t.routes):
            touching.setdefault(p, set()).add(node_of_t(t))
    inner = {p for p, who in touching.items() if len(who) == 1 and next(iter(who))[0] == "g"
             and p not in (model.start, model.done)}
    succ: dict = {}
    for t in model.transitions:
        for p in t.inputs:
            if p not in hidden | inner:
                succ.setdefault(("p", p), set()).add(node_of_t(t))
        for a in t.outputs + t.routes:
            if a.place not in hidden | inner:
                succ.setdefault(node_of_t(t), set()).add(("p", a.place))
    succ = {k: sorted(v, key=str) for k, v in succ.items()}
    nodes = [("p", i) for i in range(len(model.places)) if i not in hidden | inner] + \
        sorted({node_of_t(t) for t in model.transitions}, key=str)
    produced = {b for bs in succ.values() for b in bs}
    sources = [n for n in nodes if n[0] == "p" and (n not in produced or n[1] == model.start)]
    layer = _layer_graph(nodes, succ, sources)
    pos, out = _canvas(layer, lambda kv: (kv[1], str(kv[0])),
                       f"{model.name} (grouped: {len(members)} units drawn as one box each)",
                       result)
    util = result.utilisation if result else {}
    for a, bs in succ.items():
        for b in bs:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            x1 += R if a[0] == "p" else W / 2
            x2 -= R if b[0] == "p" else W / 2
            mid = max(y1, y2) + DY / 2
            path = (f"M{x1},{y1} C{x1 + 60},{mid} {x2 - 60},{mid} {x2},{y2}" if x2 <= x1
                    else f"M{x1},{y1} L{x2},{y2}")
            out.append(f'<path d="{path}" fill="none" stroke="#555" '
                       f'marker-end="url(#arrow)"/>')
    for node, (x, y) in pos.items():
        if node[0] == "p":
            p = model.places[node[1]]
            fill = "#dff0d8" if node[1] == model.done else \
                "#fff7d6" if node[1] == model.start else "white"
            out.append(f'<g><title>{html.escape(p.name)}</title><circle cx="{x}" cy="{y}" '
                       f'r="{R}" fill="{fill}" stroke="#333"/><text x="{x}" y="{y + R + 13}" '
                       f'text-anchor="middle">{html.escape(p.name)}</text></g>')
            continue
        if node[0] == "g":
            names = [model.transitions[t].name for t in members[node[1]]]
            label, detail = node[1], f"{len(names)} transitions"
        else:
            names = [model.transitions[node[1]].name]
            label, detail = names[0], ""
        u = max((util[n] for n in names), default=None) if util else None
        tip = ", ".join(names) + (f"; busiest {u:.0%}" if u is not None else "")
        out.append(f'<g><title>{html.escape(tip)}</title><rect x="{x - W / 2}" '
                   f'y="{y - H / 2}" width="{W}" height="{H}" rx="4" fill="{_colour(u)}" '
                   f'stroke="#333"/><text x="{x}" y="{y - 4}" text-anchor="middle" '
                   f'font-weight="bold">{html.escape(label)}</text><text x="{x}" y="{y + 12}" '
                   f'text-anchor="middle" fill="#555">{html.escape(detail)}'
                   + (f" · {u:.0%}" if u is not None else "") + "</text></g>")
    out.append("</svg>")
    return "\n".join(out)


def net_html(model: Model, result: SimResult | None = None) -> str:
    """A self-contained page: the SVG and, after a run, a utilisation table."""
    rows = ""
    if result:
        for name, u in sorted(result.utilisation.items(), key=lambda kv: -kv[1]):
            rows += (f"<tr><td>{html.escape(name)}</td><td>{result.commits[name]}</td>"
                     f"<td>{u:.1%}</td><td style='background:{_colour(u)}'></td></tr>")
        rows = ("<table><tr><th>transition</th><th>commits</th><th>utilisation</th><th></th>"
                f"</tr>{rows}</table>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>"
            f"{html.escape(model.name)}</title><style>body{{font-family:sans-serif}}"
            f"td,th{{border:1px solid #ccc;padding:2px 8px}}table{{border-collapse:collapse}}"
            f"</style></head><body><h1>{html.escape(model.name)}</h1>"
            f"<p>{html.escape(model.description)}</p>{net_svg(model, result)}{rows}"
            f"</body></html>")
