"""A PCIe topology in front of an accelerator: the device reads its input from host memory
by DMA through the root complex and a chain of switches (OSDI'24 §5.2.5).

The device sends a read request per chunk of at most ``read_request_bytes`` (one tag per
outstanding request); the request travels up every link; host memory answers after a
fixed latency; the root complex splits the data into completions of at most
``completion_bytes`` that travel down the links. Each link's transmitter is a single
server that spends the per-TLP processing time plus the serialisation time of header,
framing and payload at the link's rate, then the TLP flies for the link latency (many in
flight). A switch forwards a completion only into free receive buffer space: it holds
``switch_credits`` 16-byte data credits, taken by the sender, given back (one link
latency later) when the switch has sent the TLP on. The root complex and the device
advertise infinite completion credits. When all completions of a chunk have arrived,
the items (for the JPEG decoder: blocks) whose bytes end in that chunk are released into
the accelerator's start place.

Parameters and their sources (times in ns, converted to the accelerator's clock,
rounded up):

* ``generation``, ``lanes``: per-lane rate 2.5 / 5 GT/s with 8b/10b coding (Gen1/2),
  8 / 16 / 32 GT/s with 128b/130b coding (Gen3/4/5): PCI Express Base Specification 5.0
  §4.2 (8b/10b) and §4.2.2 (128b/130b); widths x1..x16.
* ``tlp_overhead_bytes`` = 30 per TLP: the authors' calibration (dslab-epfl/lpn
  pcie_topo/param_x8.py, HBYTE), in line with the specification: a 3-4 DW header
  (§2.2.1), 2-byte sequence number and 4-byte LCRC (chapter 3, Data Link Layer),
  framing (§4.2.2.3).
* ``process_ns`` = 7 + 2 ns per 16 bytes per TLP at each sender, ``link_latency_ns`` =
  405, ``memory_latency_ns`` = 90 + 1 ns per 64 bytes, ``read_request_bytes`` = 512 and
  ``completion_bytes`` = 256: the authors' values (param_x8.py: ProcessTLPCost,
  DelayCycle, ReadDelay, READMPS, RCTLP_SIZE; funcs.py for the per-byte terms), which they
  set against their FPGA measurements; the paper reports 1.9% mean error for its version.
* ``tags`` = 32 outstanding reads: the 5-bit Tag field without extended tags (§2.2.6.2).
* ``switch_credits`` = 64 (1 KiB of completion data per switch port): an assumption; the
  specification lets a switch advertise any finite amount (§2.6.1).
* ``clock_mhz`` = 75: the accelerator's clock (OSDI'24 Fig. 4, line 1).

Named parameters (``accelperf lpn show jpeg-decoder-pcie --parameters``): the four timing
values the authors calibrated, ``pcie_process_ns``, ``pcie_link_latency_ns``,
``pcie_memory_latency_ns`` and ``pcie_tlp_overhead_bytes`` (:func:`timing_parameters`),
with the configuration's values as defaults.

This is accelperf's own model from those facts: the authors released the topology LPN
but not its coupling to the JPEG decoder, so there is no number of theirs to match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from fractions import Fraction

from ...errors import invalid
from ..net import Net, Out, Place

_RATES = {1: (Fraction(5, 2), Fraction(8, 10)), 2: (Fraction(5), Fraction(8, 10)),
          3: (Fraction(8), Fraction(128, 130)), 4: (Fraction(16), Fraction(128, 130)),
          5: (Fraction(32), Fraction(128, 130))}
_LANES = (1, 2, 4, 8, 16)
CREDIT_BYTES = 16            # flow-control data credit unit (PCIe Base Spec §2.6.1)


@dataclass(frozen=True)
class PcieConfig:
    """One PCIe topology (see the module docstring for every value's source)."""

    generation: int = 3
    lanes: int = 16
    switches: int = 1
    clock_mhz: int = 75
    read_request_bytes: int = 512
    completion_bytes: int = 256
    tlp_overhead_bytes: int = 30
    process_ns: int = 7
    link_latency_ns: int = 405
    memory_latency_ns: int = 90
    tags: int = 32
    switch_credits: int = 64

    def __post_init__(self):
        if self.generation not in _RATES:
            raise invalid("generation", self.generation, "1, 2, 3, 4 or 5")
        if self.lanes not in _LANES:
            raise invalid("lanes", self.lanes, "1, 2, 4, 8 or 16")
        for f in fields(self):
            v = getattr(self, f.name)
            low = 0 if f.name in ("switches", "process_ns", "memory_latency_ns",
                                  "link_latency_ns") else 1
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise invalid(f.name, v, f"an integer >= {low}")
        if self.switch_credits * CREDIT_BYTES < self.completion_bytes and self.switches:
            raise invalid("switch_credits", self.switch_credits,
                          f"at least {-(-self.completion_bytes // CREDIT_BYTES)} (one "
                          f"{self.completion_bytes}-byte completion)")

    @classmethod
    def parse(cls, text: str, **overrides) -> "PcieConfig":
        """``pcie-gen3-x16`` → generation 3, 16 lanes."""
        m = re.fullmatch(r"pcie-gen(\d)-x(\d+)", str(text).strip().lower())
        if not m:
            raise invalid("link", text, "pcie-genG-xL, e.g. pcie-gen3-x16 (G 1..5, L 1..16)")
        return cls(generation=int(m[1]), lanes=int(m[2]), **overrides)

    @property
    def name(self) -> str:
        return f"pcie-gen{self.generation}-x{self.lanes}"

    def bytes_per_cycle(self) -> Fraction:
        rate, coding = _RATES[self.generation]
        return rate * coding * self.lanes / 8 * 1000 / self.clock_mhz


@dataclass(frozen=True)
class PcieFront:
    """What :func:`attach_pcie` adds: Ψ puts chunk tokens in ``chunks`` and the items they
    carry in ``staged`` (see :func:`chunk_tokens`)."""

    chunks: Place
    staged: Place


# The authors' calibrated timing values (module docstring): the ones worth fitting to a
# measured link; the rest of the configuration is topology and sizes.
TIMING_PARAMETERS = {
    "process_ns": "ns a sender spends per TLP before serialising it (plus 2 ns per 16 bytes)",
    "link_latency_ns": "ns a TLP or a returned credit flies on one link",
    "memory_latency_ns": "ns host memory takes to answer a read (plus 1 ns per 64 bytes)",
    "tlp_overhead_bytes": "bytes of header, sequence number, LCRC and framing per TLP",
}


def timing_parameters(net: Net, config: PcieConfig, prefix: str = "pcie") -> dict:
    """Declare the link's timing values as named parameters of ``net`` (``pcie_process_ns``
    and so on, defaults from ``config``; ``--param pcie_link_latency_ns=380`` overrides
    one) and return them by field name, as the expressions the delays are written in.

    They stay run-time values of the built net, never numbers baked into its functions:
    the compiled engine reads each from the run's parameter array, so a calibration that
    tries hundreds of values reuses one compiled library."""
    timing = {}
    for field, doc in TIMING_PARAMETERS.items():
        low = 1 if field == "tlp_overhead_bytes" else 0
        timing[field] = net.parameter(f"{prefix}_{field}", getattr(config, field),
                                      minimum=low, doc=doc)
    return timing


def ceil_div(x, d: int):
    """⌈x / d⌉ for x ≥ 0 (an integer or a traced expression) and a whole d ≥ 1."""
    return (x + d - 1) // d


def attach_pcie(net: Net, into: Place, config: PcieConfig, prefix: str = "pcie") -> PcieFront:
    """Put a PCIe DMA read path in front of ``into``: items wait in ``staged`` until the
    chunk holding their last byte has arrived, then move to ``into`` in order."""
    timing = timing_parameters(net, config, prefix)
    process, link, memory, ovh = (timing[f] for f in TIMING_PARAMETERS)
    rate = config.bytes_per_cycle()
    num, den = rate.numerator, rate.denominator
    clk, cred = config.clock_mhz, CREDIT_BYTES

    def cycles(ns):               # whole accelerator cycles covering ns nanoseconds
        return ceil_div(ns * clk, 1000)

    def send_delay(size):         # processing + serialisation of one TLP, in cycles
        return cycles(process + 2 * ceil_div(size, cred)) + ceil_div((size + ovh) * den, num)

    hops = config.switches + 1
    up = hops * (cycles(process) + ceil_div(ovh * den, num) + cycles(link))
    chunk = net.token_type(f"{prefix}_Chunk", "bytes", "items")
    tlp = net.token_type(f"{prefix}_Completion", "size", "packets", "items")
    chunks = net.place(f"{prefix}.chunks", chunk)
    staged = net.place(f"{prefix}.staged", into.token_type)
    tags = net.place(f"{prefix}.tags", initial=[()] * config.tags)
    at_memory = net.place(f"{prefix}.at_memory", chunk)
    read = net.place(f"{prefix}.read", chunk)
    queues = [net.place(f"{prefix}.rc_out", tlp)] + \
        [net.place(f"{prefix}.switch{i + 1}", tlp) for i in range(config.switches)]
    rx = net.place(f"{prefix}.device_rx", tlp)
    arrived = net.place(f"{prefix}.arrived", tlp)

    net.transition(f"{prefix}.request", inputs={chunks: 1, tags: 1}, outputs={at_memory: 1},
                   delay=up, concurrency=None)
    net.transition(f"{prefix}.memory", inputs={at_memory: 1}, outputs={read: 1},
                   concurrency=None,
                   delay=lambda m: cycles(memory) + cycles(ceil_div(m.bytes, 64)))
    C = config.completion_bytes

    def completion(last: bool):
        def props(m):
            full = (m.bytes - 1) // C
            return {"size": m.bytes - C * full if last else C,
                    "packets": (m.bytes + C - 1) // C, "items": m.items}
        return props

    net.transition(f"{prefix}.split", inputs={read: 1}, outputs=[
        (queues[0], Out(lambda m: (m.bytes - 1) // C, props=completion(False))),
        (queues[0], Out(1, props=completion(True)))])
    credits = None
    for i, q in enumerate(queues):
        wire = net.place(f"{prefix}.link{i + 1}", tlp)
        target = queues[i + 1] if i + 1 < len(queues) else rx
        inputs, outputs = {q: 1}, {wire: 1}
        to_switch = i + 1 < len(queues)     # a switch receives: finite buffer space
        if i > 0:                 # switch i sends on: its receive credits go back
            back = net.place(f"{prefix}.credit_return{i}")
            outputs[back] = (lambda t, k: ceil_div(t.size, cred)) if to_switch else \
                (lambda t: ceil_div(t.size, cred))
            net.transition(f"{prefix}.return{i}", inputs={back: 1},
                           outputs={credits: 1}, delay=cycles(link),
                           concurrency=None)
        if to_switch:
            credits = net.place(f"{prefix}.credits{i + 1}", initial=[()] * config.switch_credits)
            inputs[credits] = lambda t, k: ceil_div(t.size, cred)
        net.transition(f"{prefix}.send{i + 1}", inputs=inputs, outputs=outputs,
                       delay=(lambda t, k: send_delay(t.size)) if to_switch else
                       (lambda t: send_delay(t.size)))
        net.transition(f"{prefix}.fly{i + 1}", inputs={wire: 1}, outputs={target: 1},
                       delay=cycles(link), concurrency=None)
    net.transition(f"{prefix}.reassemble", inputs={rx: lambda t: t.packets},
                   outputs={arrived: Out(1, copy=rx.name), tags: 1})
    net.transition(f"{prefix}.release", inputs={arrived: 1, staged: lambda a, s: a.items},
                   outputs={into: Out(lambda a, s: a.items, copy=staged.name)})
    return PcieFront(chunks, staged)


def chunk_tokens(front: PcieFront, items: list, ends, size: int,
                 config: PcieConfig) -> dict:
    """Ψ's part for the link: ``items`` (tokens for the accelerator, in order) whose data
    ends at file offsets ``ends`` in a file of ``size`` bytes read in chunks."""
    R = config.read_request_bytes
    n_chunks = -(-size // R)
    per_chunk = [0] * n_chunks
    for e in ends:
        per_chunk[(e - 1) // R] += 1
    chunks = [{"bytes": min(R, size - i * R), "items": k} for i, k in enumerate(per_chunk)]
    return {front.chunks.name: chunks, front.staged.name: list(items)}
