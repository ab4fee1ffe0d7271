"""Proofs about an LPN over an input space (lpn2smt, OSDI'24 §4.4): each class of inputs
written for Z3 token by token (:mod:`.encoding`), the classes found by refinement
(:mod:`.refine`), witnesses and counterexamples simulated again (:mod:`.witness`), a small
space decided by simulating every input (:mod:`.exhaustive`), latency bounds and
properties (:mod:`.verify`) and buffer sizing (:mod:`.sizing`). The space vocabulary is
:mod:`..space`."""
