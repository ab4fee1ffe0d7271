"""Which fitted delays the measurements determine, by the rank of the Jacobian (issue 35).

Near the fit the relative residuals are ``r(θ + δ) ≈ r(θ) + J δ``, with ``J`` the
Jacobian in relative error per cycle (exact inside a regime: latency is linear in the
delays there). A move δ in the null space of ``J`` (``J δ = 0``) changes no simulated
latency, so the data cannot see it. Hence:

* parameter j is **identified** iff its unit vector eⱼ is orthogonal to the null space,
  ``‖Nᵀ eⱼ‖ = 0`` for an orthonormal basis N of it (then θⱼ is a fixed combination of
  the latencies, ``eⱼ ∈ row(J)``); a zero column (no input is sensitive to θⱼ) is the
  simplest case;
* a delay the latency is **quantised** in (bytes per cycle, nanoseconds of a slower
  clock) can have a zero column at the fit and yet a cost that rises a few cycles away:
  a plateau. Its one-unit column is zero inside the plateau (the delay looks dead, and a
  partner that makes up for it looks identified alone) and a whole cycle's jump at its
  edge, so ``lpn calibrate`` passes the Jacobian by a step to the plateau's edge
  (:meth:`~accelperf.lpn.fitter.Fitter.edge_jacobian`: a link latency in ns and the
  colour cycles it trades against are then one confounded group, "only
  pcie_link_latency_ns + 14·colour_cycles is determined"). The Jacobian cannot see the
  plateau's extent; the profile of the cost can
  (:mod:`accelperf.lpn.uncertainty`): where the fit meets the data exactly and more than
  one whole value does so (others refitted), the delay is **flat**, not identified to one
  value, and its interval is that run (:func:`accelperf.lpn.calibrate.calibrate`);
* parameters that share a null vector form a **confounded group**: only the
  combinations ``c·θ`` with ``c ⊥`` the group's null vectors are determined. For two
  delays a, b with null vector (v_a, v_b) that is ``a − (v_a/v_b)·b``, e.g. ``a + b``
  for two delays that always add (``J_a = J_b``, null vector (1, −1)).

The rank is decided on the column-scaled ``J`` (each column divided by its norm, so a
delay's unit does not weigh in): a singular value below :data:`RANK_TOLERANCE` times the
largest counts as zero. With one-cycle differences of integer latencies the columns of
delays that always add are exactly equal, so the test is not a matter of noise; a
|correlation| rule would also fire on delays that are merely hard to separate, which
the width of their intervals says instead ("poorly determined").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANK_TOLERANCE = 1e-6      # singular value / largest below this: a null direction
IN_NULL_SPACE = 1e-6       # ‖Nᵀ eⱼ‖² above this: parameter j is not identified


@dataclass(frozen=True)
class Confounded:
    """Delays the data cannot tell apart, and the combination of them that is
    determined (None when more than one null direction couples them)."""

    names: tuple[str, ...]
    combination: str | None
    free: int = 1           # null directions among them: how many must be fixed

    def describe(self) -> str:
        which = (f"only {self.combination} is" if self.combination else
                 "only some combinations of them are")
        return f"the data cannot tell {', '.join(self.names)} apart ({which} determined)"

    def remedy(self) -> str:
        """What pins them: fixing ``free`` of them (at values known otherwise). "Fix all
        but one" was said of four delays of which fixing one was enough."""
        if self.free >= len(self.names) - 1:
            return "fix all but one with --fit"
        return (f"fix {self.free} of them (leave {'it' if self.free == 1 else 'them'} "
                f"out of --fit, at a known value) and the others are determined")


@dataclass(frozen=True)
class Identification:
    """The outcome of :func:`identify`: delays no input is sensitive to, confounded
    groups, and the null directions (in cycles, one dict per direction)."""

    dead: tuple[str, ...]
    groups: tuple[Confounded, ...]
    null: tuple[dict, ...] = ()
    flat: tuple[str, ...] = ()    # exact fit, but a run of values fits equally (quantised)

    @property
    def unidentified(self) -> set[str]:
        return set(self.dead) | set(self.flat) | {n for g in self.groups for n in g.names}

    def identified(self, name: str) -> bool:
        return name not in self.unidentified


def identify(J: np.ndarray, names: list[str]) -> Identification:
    """Identifiability of ``names`` from the Jacobian ``J`` (rows: inputs, columns: the
    relative error per cycle of each name), by the module docstring's rule."""
    norms = np.linalg.norm(J, axis=0) if J.size else np.zeros(len(names))
    dead = tuple(n for n, s in zip(names, norms) if s == 0)
    live = [i for i, s in enumerate(norms) if s > 0]
    if len(live) < 2:
        return Identification(dead, ())
    A = J[:, live] / norms[live]
    _, s, vt = np.linalg.svd(A, full_matrices=True)
    s = np.concatenate([s, np.zeros(len(live) - len(s))])
    basis = vt[s < RANK_TOLERANCE * s[0]]               # orthonormal null space, scaled
    if not len(basis):
        return Identification(dead, ())
    weight = (basis ** 2).sum(axis=0)
    loose = [k for k in range(len(live)) if weight[k] > IN_NULL_SPACE]
    # Group the loose parameters that share a null direction (connected components).
    groups, seen = [], set()
    for k in loose:
        if k in seen:
            continue
        group, frontier = {k}, [k]
        while frontier:
            j = frontier.pop()
            for v in basis:
                if abs(v[j]) > np.sqrt(IN_NULL_SPACE):
                    new = {i for i in loose if abs(v[i]) > np.sqrt(IN_NULL_SPACE)} - group
                    group |= new
                    frontier += list(new)
        seen |= group
        members = sorted(group)
        free = sum(1 for v in basis if any(abs(v[i]) > np.sqrt(IN_NULL_SPACE)
                                           for i in members))
        groups.append(Confounded(tuple(names[live[i]] for i in members),
                                 _combination(basis, members, norms[live], names, live),
                                 free))
    null = tuple({names[live[i]]: float(v[i] / norms[live][i]) for i in range(len(live))
                  if abs(v[i]) > np.sqrt(IN_NULL_SPACE)} for v in basis)
    return Identification(dead, tuple(groups), null)


def _combination(basis, members, norms, names, live) -> str | None:
    """``a + r·b`` for a pair with one null direction (in cycles), else None."""
    if len(members) != 2:
        return None
    touching = [v for v in basis if any(abs(v[i]) > np.sqrt(IN_NULL_SPACE) for i in members)]
    if len(touching) != 1:
        return None
    i, j = members
    va, vb = touching[0][i] / norms[i], touching[0][j] / norms[j]    # per cycle
    ratio = -va / vb                                  # c = (1, ratio) with c·v = 0
    a, b = names[live[i]], names[live[j]]
    if abs(ratio - 1) < 1e-6:
        return f"{a} + {b}"
    if abs(ratio + 1) < 1e-6:
        return f"{a} − {b}"
    return f"{a} {'+' if ratio > 0 else '−'} {abs(ratio):.4g}·{b}"


__all__ = ["Confounded", "Identification", "identify", "RANK_TOLERANCE"]
