"""Pictures of an LPN: a self-contained SVG (or an HTML page around it).

Places are circles, transitions boxes; a bounded place shows its capacity instead of its
capacity place, arcs show weights other than 1, read arcs are dashed, inhibitor arcs end in
a small circle, and transitions show their delay, concurrency and initiation interval. After a run, transitions are coloured by
utilisation (white = idle, red = saturated) so the bottleneck stands out. The layout is
layered from the start places; no Graphviz is needed.
"""

from __future__ import annotations

import html
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


def _colour(u: float | None) -> str:
    if u is None:
        return "#eef3fb"
    u = max(0.0, min(1.0, u))
    g = int(255 - 200 * u)
    return f"#ff{g:02x}{g:02x}"


def net_svg(model: Model, result: SimResult | None = None) -> str:
    """The net as an SVG document string."""
    layer = _layers(model)
    columns: dict = {}
    for node, d in sorted(layer.items(), key=lambda kv: (kv[1], kv[0][0] != "p", kv[0][1])):
        columns.setdefault(d, []).append(node)
    pos = {}
    for d, nodes in columns.items():
        for k, node in enumerate(nodes):
            pos[node] = (80 + d * DX, 70 + k * DY)
    width = 80 + (max(columns) + 1) * DX
    height = 70 + max(len(v) for v in columns.values()) * DY + 40
    util = result.utilisation if result else {}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
           'fill="#555"/></marker><marker id="inhibit" viewBox="0 0 10 10" refX="9" '
           'refY="5" markerWidth="8" markerHeight="8"><circle cx="5" cy="5" r="4" '
           'fill="white" stroke="#a33"/></marker></defs>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">'
           f'{html.escape(model.name)}</text>']
    if result:
        out.append(f'<text x="10" y="38">latency {result.latency} cycles; bottleneck '
                   f'{html.escape(result.bottleneck)} (red = busy)</text>')

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
            out.append(f'<text x="{label_at[0]}" y="{label_at[1]}" fill="#a33" '
                       f'text-anchor="middle">{html.escape(label)}</text>')

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
                   f'<text x="{x}" y="{y + R + 13}" text-anchor="middle">'
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
