"""A streaming AES-GCM packet engine (issue 33's worked example, not from a paper).

Each packet token carries ``bytes``, its payload size. The engine, stage by stage:

* **header** parses the packet's header, ``header_cycles`` (20) per packet, and splits
  the payload into 16-byte blocks, ``B = ceil(bytes/16)``, handed on as *bursts* of at
  most four blocks (64 bytes, the DMA's burst): ``floor((B - 1)/4)`` full bursts and a
  last one of ``B - 4·floor((B - 1)/4)`` blocks (1..4). It also queues the packet for
  its tag.
* **feed** moves one burst's blocks from the packet buffer into the AES FIFO, one
  16-byte block per cycle (``feed_cycles_per_block``, 1).
* **aes** is a pipelined core: ``aes_latency`` (14) cycles per block, a new block every
  cycle (concurrency unbounded, initiation interval 1).
* **ghash** folds one block into the hash, ``ghash_cycles`` (4) per block.
* **dma** writes one burst, ``dma_cycles`` (8) per burst whether full (64 B) or the
  packet's partial last one: it takes a burst's blocks at once (a weight of 1..4 read
  from the blocks themselves; bursts never cross a packet).
* **tag** computes and writes the packet's tag, ``tag_cycles`` (10), once all of its
  bursts are written (it takes ``ceil(bytes/64)`` written-burst tokens).

**The FIFO in front of a pipelined unit.** In an LPN a bounded place's slot is taken when
its producer starts and given back when its *consumer commits* (OSDI'24 §3.3 step 4), not
when the consumer starts. A block inside the AES pipeline therefore still holds its FIFO
slot for the 14 cycles it is in flight, so a ``capacity=4`` FIFO would let only four
blocks into the pipeline at once: a core of 4/14 blocks per cycle, not 1. The 4-entry
FIFO plus the pipeline's ``aes_latency / aes_interval`` stages is what the place bounds:
``capacity = 4 + 14``. Likewise the place between the core and GHASH holds GHASH's input
register (one block) plus the core's stages, so the core stalls (and the FIFO fills) only
when GHASH falls behind, as a core with no output buffer does.

**Bursts.** The DMA could take "4 tokens at a time" from one block queue, but the last
burst of a packet is partial and a fixed weight of 4 would wait forever for blocks of the
next packet (or, at the end of the stream, deadlock). So every block carries the size of
its burst (``burst``, made by **feed**) and the DMA's weight is the head block's
``burst``: it takes exactly one burst, whatever its size.

Cycles for one packet of ``B`` blocks, by hand (the tests check these against the
simulator): the first block reaches GHASH at 20 + min(B, 4) + 14; GHASH is the slowest
stage per block (4 cycles against the DMA's 2 and the core's 1), so the last block is
hashed 4·B cycles later; the last burst is written 8 cycles after that, or, when the
last burst has one block (hashed in 4 cycles while the DMA still writes the burst
before), 8 cycles after the previous burst's write; the tag takes 10 more. For 64 B
(B = 4): 20 + 4 + 14 + 16 + 8 + 10 = 72 cycles; for 1500 B (B = 94): 432.
"""

from __future__ import annotations

from ...errors import invalid
from ..declared import Declared
from ..inputs.values import entries, record, whole
from ..net import Net, Out

HEADER_CYCLES = 20
FEED_CYCLES_PER_BLOCK = 1
AES_LATENCY, AES_INTERVAL = 14, 1
FIFO_ENTRIES = 4
GHASH_CYCLES = 4
DMA_CYCLES = 8
TAG_CYCLES = 10
BLOCK_BYTES, BURST_BLOCKS = 16, 4
MAX_PACKET_BYTES = 65535
MAX_PACKETS = 1_000_000


def packet_tokens(packets):
    """Ψ: a list of packet payload sizes in bytes (each 1..65535), or ``{"packets": N,
    "bytes": k}`` (N packets of k bytes) → packet tokens."""
    if isinstance(packets, dict):
        packets = record(packets, "input", ("packets", "bytes"))
        size = whole(packets["bytes"], "input.bytes", 1, MAX_PACKET_BYTES)
        return [{"bytes": size}] * whole(packets["packets"], "input.packets", 1, MAX_PACKETS)
    sizes = entries(packets, "input (packet payload sizes in bytes)")
    if len(sizes) > MAX_PACKETS:
        raise invalid("input", f"a list of {len(sizes)} packets",
                      f"at most {MAX_PACKETS} packets")
    return [{"bytes": whole(b, f"input[{i}] (payload bytes of a packet)", 1,
                            MAX_PACKET_BYTES)} for i, b in enumerate(sizes)]


def blocks_of(nbytes: int) -> int:
    """16-byte blocks of a payload: ceil(bytes/16)."""
    return -(-nbytes // BLOCK_BYTES)


def aes_gcm(params=None):
    net = Net("aes-gcm", "streaming AES-GCM packet engine: header, AES behind a FIFO, "
              "GHASH, burst DMA, tag (issue 33's example)",
              input_format="a JSON list of packet payload sizes in bytes (1..65535), "
                           "or {packets, bytes}", params=params)
    header_cycles = net.parameter("header_cycles", HEADER_CYCLES,
                                  doc="header parse cycles per packet")
    feed = net.parameter("feed_cycles_per_block", FEED_CYCLES_PER_BLOCK,
                         doc="cycles to move one 16-byte block into the AES FIFO")
    ghash_cycles = net.parameter("ghash_cycles", GHASH_CYCLES, doc="GHASH cycles per block")
    dma_cycles = net.parameter("dma_cycles", DMA_CYCLES,
                               doc="DMA cycles per burst of up to 64 bytes")
    tag_cycles = net.parameter("tag_cycles", TAG_CYCLES, doc="tag cycles per packet")
    # The core's latency and interval stay constants: they size the FIFO (module docstring).
    in_flight = AES_LATENCY // AES_INTERVAL

    packet = net.token_type("Packet", "bytes")
    burst = net.token_type("Burst", "blocks")
    block = net.token_type("Block", "burst")
    packets = net.place("packets", packet)
    payload = net.place("payload", burst)
    tags = net.place("tags", packet)
    fifo = net.place("aes_fifo", block, capacity=FIFO_ENTRIES + in_flight)
    ciphered = net.place("ciphered", block, capacity=1 + in_flight)
    dma_q = net.place("dma_queue", block)
    written = net.place("written", net.token_type("Burst_written"))
    done = net.place("done", packet)

    def full_bursts(packets):
        return ((packets.bytes + BLOCK_BYTES - 1) // BLOCK_BYTES - 1) // BURST_BLOCKS

    net.transition("header", inputs={packets: 1}, outputs=[
        (payload, Out(full_bursts, props={"blocks": BURST_BLOCKS})),
        (payload, Out(1, props=lambda packets: {
            "blocks": (packets.bytes + BLOCK_BYTES - 1) // BLOCK_BYTES
            - BURST_BLOCKS * full_bursts(packets)})),
        (tags, Out(1, copy="packets"))], delay=header_cycles)
    net.transition("feed", inputs={payload: 1},
                   outputs={fifo: Out(lambda payload: payload.blocks,
                                      props=lambda payload: {"burst": payload.blocks})},
                   delay=lambda payload: feed * payload.blocks)
    net.transition("aes", inputs={fifo: 1}, outputs={ciphered: Out(1, copy="aes_fifo")},
                   delay=AES_LATENCY, concurrency=None, initiation_interval=AES_INTERVAL)
    net.transition("ghash", inputs={ciphered: 1}, outputs={dma_q: Out(1, copy="ciphered")},
                   delay=ghash_cycles)
    net.transition("dma", inputs={dma_q: lambda dma_queue: dma_queue.burst},
                   outputs={written: 1}, delay=dma_cycles)
    net.transition("tag", inputs={tags: 1, written: lambda tags: -(-tags.bytes // (BLOCK_BYTES * BURST_BLOCKS))},
                   outputs={done: Out(1, copy="tags")}, delay=tag_cycles)
    net.start, net.done = packets, done
    net.tokens_from_input = packet_tokens
    net.declared = Declared(reader=psi_aes_gcm)
    net.default_input = [64, 1500, 576, 40]
    return net.build()


def psi_aes_gcm(packets):
    """Tokens of the AES-GCM engine: a list of packet payload sizes in bytes (1..65535),
    or {"packets": N, "bytes": k}."""
    if isinstance(packets, dict):
        packets = [packets["bytes"]] * int(packets["packets"])
    if not isinstance(packets, list) or not packets:
        raise ValueError(f"input = {str(packets)[:40]} is invalid: a list of packet sizes")
    for b in packets:
        if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 65535:
            raise ValueError(f"packet bytes = {b!r} is invalid: an integer 1..65535")
    return {"packets": [{"bytes": b} for b in packets]}
