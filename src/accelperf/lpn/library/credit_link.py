"""A credit-based link (PCIe-style) that can sit in front of any accelerator.

Transactions are split into packets of at most ``payload_bytes``. The transmitter needs a
credit per packet from a pool of ``credits``; each packet occupies the link for its
serialisation time (header + payload at ``bytes_per_cycle``), flies ``flight_cycles`` to
the receiver (a pipelined wire: many packets in flight), and once the receiver has taken it
the credit flies back. When all packets of a transaction have arrived, the transaction is
handed on as one token.

Named parameters (``accelperf lpn show credit-link --parameters``): ``link_bytes_per_cycle``
(16), ``link_header_bytes`` (24), ``link_flight_cycles`` (100) and ``link_receive_cycles``
(2), prefixed by the link's ``prefix``; the keyword arguments of :func:`attach_credit_link`
set their defaults.
"""

from __future__ import annotations

from ..inputs.values import entries, whole
from ..net import Net, NetError, Out, Place


def attach_credit_link(net: Net, into: Place, *, payload_bytes: int = 256, credits: int = 8,
                       bytes_per_cycle: int = 16, header_bytes: int = 24,
                       flight_cycles: int = 100, receive_cycles: int = 2,
                       prefix: str = "link") -> Place:
    """Add a link whose delivered transactions become tokens of ``into``; returns the
    place to put transactions in (tokens with ``bytes`` plus ``into``'s properties)."""
    for name, v in (("payload_bytes", payload_bytes), ("credits", credits),
                    ("bytes_per_cycle", bytes_per_cycle)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise NetError(f"{name} = {v!r} is invalid: an integer >= 1")
    for name, v in (("header_bytes", header_bytes), ("flight_cycles", flight_cycles),
                    ("receive_cycles", receive_cycles)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise NetError(f"{name} = {v!r} is invalid: an integer >= 0")
    # The link's timing constants are named parameters (``--param link_flight_cycles=80``);
    # the keyword arguments give their defaults. Sizes and the credit pool stay structure.
    per_cycle = net.parameter(f"{prefix}_bytes_per_cycle", bytes_per_cycle, minimum=1,
                              doc="bytes the transmitter serialises per cycle")
    header = net.parameter(f"{prefix}_header_bytes", header_bytes,
                           doc="header bytes sent with every packet")
    flight = net.parameter(f"{prefix}_flight_cycles", flight_cycles,
                           doc="cycles a packet, or a returning credit, is on the wire")
    receive = net.parameter(f"{prefix}_receive_cycles", receive_cycles,
                            doc="cycles the receiver takes to accept one packet")
    payload = tuple(into.token_type.properties)
    carried = tuple(p for p in payload if p != "bytes")
    txn = net.token_type(f"{prefix}_Transaction", "bytes", *carried)
    packet = net.token_type(f"{prefix}_Packet", "size", "packets", "bytes", *carried)
    credit = net.token_type(f"{prefix}_Credit")
    txns = net.place(f"{prefix}.transactions", txn)
    tx_queue = net.place(f"{prefix}.tx_queue", packet)
    pool = net.place(f"{prefix}.credits", credit, resource=True, initial=[()] * credits)
    wire = net.place(f"{prefix}.wire", packet)
    rx = net.place(f"{prefix}.rx_buffer", packet)
    returning = net.place(f"{prefix}.credit_return", credit)
    delivered = net.place(f"{prefix}.delivered", packet)
    P = payload_bytes

    def packet_props(last: bool):
        def props(t):
            full = (t.bytes - 1) // P
            out = {"size": t.bytes - P * full if last else P,
                   "packets": (t.bytes + P - 1) // P, "bytes": t.bytes}
            out.update({k: getattr(t, k) for k in carried})
            return out
        return props

    net.transition(f"{prefix}.packetise", inputs={txns: 1}, outputs=[
        (tx_queue, Out(lambda t: (t.bytes - 1) // P, props=packet_props(False))),
        (tx_queue, Out(1, props=packet_props(True)))])
    net.transition(f"{prefix}.transmit", inputs={tx_queue: 1, pool: 1}, outputs={wire: 1},
                   delay=lambda p, c: (header + p.size + per_cycle - 1) // per_cycle)
    net.transition(f"{prefix}.fly", inputs={wire: 1}, outputs={rx: 1}, delay=flight,
                   concurrency=None)
    net.transition(f"{prefix}.receive", inputs={rx: 1},
                   outputs={delivered: 1, returning: 1}, delay=receive)
    net.transition(f"{prefix}.return_credit", inputs={returning: 1}, outputs={pool: 1},
                   delay=flight, concurrency=None)
    net.transition(f"{prefix}.reassemble", inputs={delivered: lambda p: p.packets},
                   outputs={into: Out(1, props=lambda p: {k: getattr(p, k) for k in payload})})
    return txns


def credit_link(params=None, **link_options):
    net = Net("credit-link", "credit-based link: packets, credits, serialisation, flight",
              input_format="a JSON list of message sizes in bytes", params=params)
    message = net.token_type("Message", "bytes")
    received = net.place("received", message)
    start = attach_credit_link(net, received, **link_options)
    net.start, net.done = start, received
    net.tokens_from_input = message_tokens
    net.default_input = [4096, 256, 100, 1500, 64 * 1024]
    return net.build()


def message_tokens(sizes) -> list[dict]:
    """Ψ: a JSON list of message sizes in bytes (each at least 1) → one token each."""
    return [{"bytes": whole(b, f"input[{i}] (message bytes)", low=1)}
            for i, b in enumerate(entries(sizes, "input (message sizes in bytes)"))]


def pipeline_over_link(params=None, **link_options):
    """The block pipeline (block_pipeline.py, not the paper's decoder) fed by compressed
    blocks arriving over the credit link (each block is a transaction of 16 + 2·nnz
    bytes)."""
    from .block_pipeline import DEFAULT_IMAGE, add_block_stages, image_blocks
    net = Net("pipeline-over-link", "the block pipeline behind a credit-based link",
              input_format="as block-pipeline", params=params)
    block = net.token_type("Block", "nnz")
    blocks = net.place("blocks", block)
    start = attach_credit_link(net, blocks, **link_options)
    net.start, net.done = start, add_block_stages(net, blocks)
    net.tokens_from_input = lambda image: [{"bytes": 16 + 2 * b["nnz"], "nnz": b["nnz"]}
                                           for b in image_blocks(image)]
    net.default_input = DEFAULT_IMAGE
    return net.build()
