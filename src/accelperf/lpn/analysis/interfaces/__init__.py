"""Performance interfaces of an LPN (lpn2pi, OSDI'24 §4.1–4.2, A.1–A.3, and the
phase-aware extension): the net run on symbols (:mod:`.symexec`, :mod:`.symrecords`,
:mod:`.solver`) splits the input space into classes (:mod:`.classes`, :mod:`.one_shot`);
each class gets its terms (:mod:`.loops`, :mod:`.schedule`, :mod:`.steady`,
:mod:`.critical`, :mod:`.handover`) and becomes an interface (:mod:`.interface`, or token
by token :mod:`.token_stream`), written as a standalone module (:mod:`.emit`,
:mod:`.module_text`, :mod:`.stream_emit`, whose bottleneck label reads exact
whole-number arrays, :mod:`.exact_range`) and judged against the simulation
(:mod:`.accuracy`, :mod:`.assumptions`). The space vocabulary is :mod:`..space`."""
