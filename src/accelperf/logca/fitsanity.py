"""Sanity checks of measured offload times that a fit cannot repair (issue 35 item 5).

Each flags a physically odd measurement as "check the measurement", with the numbers:

* a time that falls by more than half from one size to the next larger one: its cost per
  byte then falls by more than twice the size ratio, which data outgrowing a cache never
  do (a miss costs more, not less); seen when small buffers were misaligned (copies 9x slow
  below 512 KiB) and a hierarchical fit explained it as "accelerator -90% beyond L2";
* a fitted step a_k or l_k < -1/2 (a cost per byte halves beyond a layer); a host step
  h_k < -1/2 is said without "check the measurement": a multi-threaded library starts its
  threads at some size (the FFT's host time on the H200 box falls from 163 µs at 32 KiB to
  91 µs at 64 KiB), and the bend nearest it carries the threads' gain;
* a bend (the host's cost per byte jumping BEND_FACTOR-fold between neighbouring sizes) far
  from every layer of the hierarchy given (no capacity within a factor FAR of it);
* a g1 that the fitted points contradict (:func:`g1_contradiction`): where the measured
  speedup passes 1 between two neighbouring sizes, a model that follows its points has its
  g1 between them; one outside every such pair (or none), whose speedup at one of the two
  sizes is on the wrong side of 1 and off by more than the outlier rule allows, was bent
  away from the points there, typically by a robust loss that discounted one of them
  (issue 36: the fft kernel's fit on every other size gave g1 = 1 B where its own 4 KiB
  point measured 0.70).
"""

from __future__ import annotations

import math

import numpy as np

from ..units import format_size

BEND_FACTOR = 3.0
FAR = 4.0


def sanity_warnings(d, model=None, layers=()) -> list[str]:
    out = []
    series = [("host", d.t0), ("accelerated", d.t1)] + \
        ([("echo (copies only)", d.echo)] if d.echo is not None else [])
    for label, t in series:
        for i in range(d.n - 1):
            if t[i + 1] < 0.5 * t[i]:
                per_byte = (t[i] / d.g[i]) / (t[i + 1] / d.g[i + 1])
                out.append(f"check the measurement: the {label} time falls from "
                           f"{t[i]:.3g} s at {format_size(d.g[i])} to {t[i + 1]:.3g} s at "
                           f"{format_size(d.g[i + 1])}, a cost per byte {per_byte:.3g}x lower "
                           f"at the larger size; data outgrowing a cache never get cheaper "
                           f"(misaligned or pageable buffers at the small sizes?)")
    if model is not None:
        for label, steps in (("host", model.host_steps), ("accelerator", model.accel_steps),
                             ("copies'", model.link_steps)):
            for layer, h in zip(model.layers, steps):
                if h < -0.5 and label == "host" and layer.threshold:
                    # page faults past the threshold raise the host's cost; a fall there
                    # is the step following something else (a slow size below it)
                    out.append(f"check the fit: the fitted host cost per byte falls "
                               f"{-h:.0%} past the {layer.name} threshold "
                               f"({format_size(layer.capacity_bytes)}), where the threshold "
                               f"can only raise it; the step follows something else (a slow "
                               f"size below it?)")
                elif h < -0.5 and label == "host":
                    # a multi-threaded library runs small calls on one thread (PyTorch below
                    # its grain; the FFT's host time falls at 64 KiB on the H200 box)
                    out.append(f"the fitted host cost per byte falls {-h:.0%} beyond "
                               f"layer {layer.name!r} ({format_size(layer.capacity_bytes)}): "
                               f"no cache does that, a library starting its threads near that "
                               f"size does; read the step as the threads' gain")
                elif h < -0.5:
                    out.append(f"check the measurement: the fitted {label} cost per byte "
                               f"falls {-h:.0%} beyond layer {layer.name!r} "
                               f"({format_size(layer.capacity_bytes)}); leaving a cache never "
                               f"halves it")
    caps = [l.capacity_bytes for l in layers if not math.isinf(l.capacity_bytes)]
    if caps:
        per_byte = d.t0 / d.g
        for i in range(d.n - 1):
            jump = per_byte[i + 1] / per_byte[i]
            if jump < BEND_FACTOR:
                continue
            near = [c for c in caps if d.g[i] / FAR <= c <= d.g[i + 1] * FAR]
            if not near:
                closest = min(caps, key=lambda c: abs(math.log(c / d.g[i])))
                out.append(f"check the measurement: the host's cost per byte jumps "
                           f"{jump:.3g}x between {format_size(d.g[i])} and "
                           f"{format_size(d.g[i + 1])}, far from every layer given (the "
                           f"nearest holds {format_size(closest)})")
    return out


def g1_contradiction(g, measured, model, g1, tolerance: float) -> str | None:
    """A sentence when ``g1`` (None: the model never breaks even) lies outside every pair of
    neighbouring sizes between which the ``measured`` speedup passes 1 and, at a size of
    such a pair, the ``model``'s speedup is on the other side of 1 and off the measured one
    by more than ``tolerance`` in ln (the outlier rule's): the fit left its points there.
    None otherwise, and when the measured speedup never passes 1."""
    s, m = np.asarray(measured, float), np.asarray(model, float)
    pairs = [(i, i + 1) for i in range(s.size - 1) if (s[i] >= 1) != (s[i + 1] >= 1)]
    if g1 is not None and any(g[i] <= g1 <= g[j] for i, j in pairs):
        return None
    left = [k for pair in pairs for k in pair
            if (m[k] >= 1) != (s[k] >= 1) and abs(math.log(m[k] / s[k])) > tolerance]
    if not left:
        return None
    k = left[0]
    i, j = next(p for p in pairs if k in p)
    said = "never breaks even" if g1 is None else f"gives g1 = {format_size(g1)}"
    return (f"check the fit: it {said}, but the measured speedup passes 1 between "
            f"{format_size(g[i])} ({s[i]:.3g}) and {format_size(g[j])} ({s[j]:.3g}) and the "
            f"fit expects {m[k]:.3g} at {format_size(g[k])}: it does not follow its points "
            f"there (a discounted outlier?); read g1 from the measurements")
