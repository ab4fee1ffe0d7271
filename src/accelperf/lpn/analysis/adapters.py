"""Standalone Ψ for the library models, copied into generated interface modules.

A generated interface must run with a bare ``python3`` on the parsed input a user gives
``accelperf lpn simulate --input``; these functions turn that input into the tokens the
interface reads, with the standard library only. Each must agree with its model's own
``tokens_from_input`` (tests check it on the models' inputs); a model without one here
takes tokens directly, or calls accelperf when it is installed.
"""

from __future__ import annotations


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


def psi_darwin(pair, num_pe=4):
    """Tokens of Darwin GACT for {"ref_len", "query_len", "steps"} (4 processing
    elements): one stripe per num_pe query rows, and the alignment."""
    ref, query, steps = (int(pair[k]) for k in ("ref_len", "query_len", "steps"))
    stripes = -(-query // num_pe)
    return {"stripes": [{"ref_len": ref}] * stripes,
            "alignment": [{"steps": steps, "stripes": stripes}]}


def psi_jpeg_decoder(counts):
    """Tokens of the JPEG decoder for a parsed list of per-block AC-symbol counts (whole
    4:2:0 MCUs of 6 blocks, each 1..63); a .jpg file needs accelperf's reader."""
    if not isinstance(counts, list) or not counts or len(counts) % 6:
        raise ValueError(f"input = {str(counts)[:40]} is invalid: a list of per-block "
                         f"AC-symbol counts, whole MCUs of 6 blocks")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 63:
            raise ValueError(f"AC symbols of a block = {c!r} is invalid: an integer 1..63")
    return {"blocks": [{"symbols": c} for c in counts]}


ADAPTERS = {"block-pipeline": psi_block_pipeline, "darwin": psi_darwin,
            "jpeg-decoder": psi_jpeg_decoder}
"""Library model name -> standalone Ψ."""

__all__ = ["ADAPTERS", "psi_block_pipeline", "psi_darwin", "psi_jpeg_decoder"]
