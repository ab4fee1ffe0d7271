"""A made-up four-stage pipeline over 8×8 blocks: NOT the OSDI'24 JPEG decoder (that is
``jpeg_decoder.py``, the ``jpeg-decoder`` model).

It stays because it shows two things the paper's decoder does not: a pipelined unit (the
IDCT accepts a block every ``initiation_interval`` cycles while several are in flight)
and bounded buffers expanded into capacity places.

Each block token carries ``nnz``, its number of non-zero coefficients (fewer at higher
compression). Entropy decoding costs 4 + 3·nnz cycles, dequantisation 8 + nnz, the IDCT is
a pipelined unit (96 cycles latency, a new block every 32 cycles) and colour conversion
takes 40 cycles per block. Bounded buffers sit between the stages. Below nnz ≈ 12 colour
conversion limits the throughput; above it entropy decoding does: the bottleneck moves
with the compression ratio.
"""

from __future__ import annotations

import random

from ..net import Net

ENTROPY_BASE, ENTROPY_PER_COEFF = 4, 3
DEQUANT_BASE = 8
IDCT_LATENCY, IDCT_INTERVAL = 96, 32
COLOUR_CYCLES = 40


def image_blocks(image):
    """Ψ: an image → block tokens.

    Accepts a list of per-block non-zero counts, or a dict ``{"blocks": N, "nnz": k}``
    (every block k), or ``{"width": W, "height": H, "mean_nnz": m, "seed": s}``
    (⌈W/8⌉·⌈H/8⌉·3 blocks, one per colour component, nnz drawn around m, reproducibly).
    """
    if isinstance(image, dict):
        if "blocks" in image:
            counts = [int(image["nnz"])] * int(image["blocks"])
        else:
            w, h = int(image["width"]), int(image["height"])
            rng = random.Random(image.get("seed", 0))
            mean = float(image.get("mean_nnz", 12))
            n = -(-w // 8) * -(-h // 8) * 3
            counts = [max(1, min(64, round(rng.gauss(mean, mean / 3)))) for _ in range(n)]
    else:
        counts = [int(c) for c in image]
    for c in counts:
        if not 0 <= c <= 64:
            from ..net import NetError
            raise NetError(f"nnz = {c} is invalid: an 8x8 block has 0..64 non-zero "
                           f"coefficients")
    return [{"nnz": c} for c in counts]


def add_block_stages(net: Net, blocks, buffer_blocks: int = 2):
    """Add the four decoder stages reading Block tokens from ``blocks``; returns the place
    that receives decoded blocks."""
    block = blocks.token_type
    coeffs = net.place("coefficients", block, capacity=buffer_blocks)
    # A slot is released when the unit that took its block commits (OSDI'24 §3.3 step 4),
    # so the buffers on both sides of the pipelined IDCT also cover the
    # IDCT_LATENCY / IDCT_INTERVAL blocks in flight inside it.
    in_flight = IDCT_LATENCY // IDCT_INTERVAL
    dequantised = net.place("dequantised", block, capacity=buffer_blocks + in_flight)
    spatial = net.place("spatial", block, capacity=buffer_blocks + in_flight)
    pixels = net.place("pixels", block)
    net.transition("entropy_decode", inputs={blocks: 1}, outputs={coeffs: 1},
                   delay=lambda b: ENTROPY_BASE + ENTROPY_PER_COEFF * b.nnz)
    net.transition("dequantise", inputs={coeffs: 1}, outputs={dequantised: 1},
                   delay=lambda b: DEQUANT_BASE + b.nnz)
    net.transition("idct", inputs={dequantised: 1}, outputs={spatial: 1}, delay=IDCT_LATENCY,
                   concurrency=None, initiation_interval=IDCT_INTERVAL)
    net.transition("colour_convert", inputs={spatial: 1}, outputs={pixels: 1},
                   delay=COLOUR_CYCLES)
    return pixels


DEFAULT_IMAGE = {"width": 64, "height": 64, "mean_nnz": 12, "seed": 1}


def block_pipeline(buffer_blocks: int = 2):
    net = Net("block-pipeline", "made-up 4-stage block pipeline (not the paper's decoder): "
              "pipelined IDCT, bounded buffers; input: per-block non-zero counts")
    block = net.token_type("Block", "nnz")
    start = net.place("blocks", block)
    net.start, net.done = start, add_block_stages(net, start, buffer_blocks)
    net.tokens_from_input = image_blocks
    net.default_input = DEFAULT_IMAGE
    return net.build()
