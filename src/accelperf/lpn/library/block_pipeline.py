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

from ...errors import invalid
from ..declared import Declared
from ..inputs import abridged
from ..inputs.values import entries, record, whole
from ..net import Net

ENTROPY_BASE, ENTROPY_PER_COEFF = 4, 3
DEQUANT_BASE = 8
IDCT_LATENCY, IDCT_INTERVAL = 96, 32
COLOUR_CYCLES = 40
MAX_BLOCKS = 2 ** 24     # 16.7 million blocks, gigabytes of tokens: the most Ψ will make


def image_blocks(image):
    """Ψ: an image → block tokens.

    Accepts a list of per-block non-zero counts, or a dict ``{"blocks": N, "nnz": k}``
    (every block k), or ``{"width": W, "height": H, "mean_nnz": m, "seed": s}``
    (⌈W/8⌉·⌈H/8⌉·3 blocks, one per colour component, nnz drawn around m, reproducibly).
    """
    if isinstance(image, dict) and "blocks" in image:
        image = record(image, "input", ("blocks", "nnz"))
        counts = [whole(image["nnz"], "input.nnz", 0, 64)] * \
            whole(image["blocks"], "input.blocks", 1, MAX_BLOCKS)
    elif isinstance(image, dict):
        image = record(image, "input", ("width", "height"), ("mean_nnz", "seed"))
        w, h = (whole(image[k], f"input.{k}", 1, 65535) for k in ("width", "height"))
        mean = image.get("mean_nnz", 12)
        if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not 0 <= mean <= 64:
            raise invalid("input.mean_nnz", mean, "a number from 0 to 64")
        rng = random.Random(whole(image.get("seed", 0), "input.seed", 0, 2 ** 63))
        n = -(-w // 8) * -(-h // 8) * 3
        if n > MAX_BLOCKS:
            raise invalid("input", abridged(image), f"at most {MAX_BLOCKS} blocks "
                                                    f"(this image has {n})")
        counts = [max(1, min(64, round(rng.gauss(mean, mean / 3)))) for _ in range(n)]
    else:
        counts = [whole(c, f"--input[{i}] (non-zero coefficients of a block)", 0, 64)
                  for i, c in enumerate(entries(image, "input (per-block counts)"))]
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
    # The IDCT's latency and interval stay constants: they size the buffers above.
    entropy_base = net.parameter("entropy_base", ENTROPY_BASE,
                                 doc="entropy decoder cycles per block")
    per_coeff = net.parameter("entropy_per_coeff", ENTROPY_PER_COEFF,
                              doc="entropy decoder cycles per non-zero coefficient")
    dequant = net.parameter("dequant_base", DEQUANT_BASE,
                            doc="dequantiser cycles per block (plus one per coefficient)")
    colour = net.parameter("colour_cycles", COLOUR_CYCLES,
                           doc="colour converter cycles per block")
    net.transition("entropy_decode", inputs={blocks: 1}, outputs={coeffs: 1},
                   delay=lambda b: entropy_base + per_coeff * b.nnz)
    net.transition("dequantise", inputs={coeffs: 1}, outputs={dequantised: 1},
                   delay=lambda b: dequant + b.nnz)
    net.transition("idct", inputs={dequantised: 1}, outputs={spatial: 1}, delay=IDCT_LATENCY,
                   concurrency=None, initiation_interval=IDCT_INTERVAL)
    net.transition("colour_convert", inputs={spatial: 1}, outputs={pixels: 1},
                   delay=colour)
    return pixels


DEFAULT_IMAGE = {"width": 64, "height": 64, "mean_nnz": 12, "seed": 1}


def block_pipeline(buffer_blocks: int = 2, params=None):
    net = Net("block-pipeline", "made-up 4-stage block pipeline (not the paper's decoder): "
              "pipelined IDCT, bounded buffers",
              input_format="a JSON list of per-block non-zero counts (0..64), "
                           "{blocks, nnz} or {width, height, mean_nnz, seed}", params=params)
    block = net.token_type("Block", "nnz")
    start = net.place("blocks", block)
    net.start, net.done = start, add_block_stages(net, start, buffer_blocks)
    net.tokens_from_input = image_blocks
    net.declared = Declared(reader=psi_block_pipeline)
    net.default_input = DEFAULT_IMAGE
    return net.build()


def psi_block_pipeline(image):
    """Tokens of the block pipeline (the JPEG stand-in): a list of per-block non-zero
    counts, {"blocks": N, "nnz": k}, or {"width", "height", "mean_nnz", "seed"}."""
    import random
    if isinstance(image, dict) and "blocks" in image:
        counts = [int(image["nnz"])] * int(image["blocks"])
    elif isinstance(image, dict):
        rng = random.Random(image.get("seed", 0))
        mean = float(image.get("mean_nnz", 12))
        n = -(-int(image["width"]) // 8) * -(-int(image["height"]) // 8) * 3
        counts = [max(1, min(64, round(rng.gauss(mean, mean / 3)))) for _ in range(n)]
    else:
        counts = [int(c) for c in image]
    return {"blocks": [{"nnz": c} for c in counts]}
