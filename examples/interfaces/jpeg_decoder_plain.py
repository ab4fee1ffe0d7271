"""A plain performance interface of the jpeg-decoder LPN, in the shape of OSDI'24 Fig. 4.

Hand-written from the model's steady state (one 4:2:0 MCU of blocks with s AC symbols each
takes max(6·(3s + 6), 526) cycles) plus a fill-and-drain term; a stand-in until the
generated interfaces of `accelperf lpn interface` are available. It reads only the mean
count, so it cannot see where in the image the costly blocks are: the verifier measures
how wrong that can be (`accelperf lpn verify ... --interface this.py --within 0.43`).
"""

FILL_DRAIN = 200       # cycles before the first and after the last MCU (measured, rounded)


def latency(blocks):
    """Cycles to decode ``blocks``, a list of per-block AC-symbol counts (6 per MCU)."""
    mcus = len(blocks) / 6
    mean_symbols = sum(blocks) / len(blocks)
    # Bottleneck: entropy decoding (6 blocks at 3s + 6 cycles) or the IDCT/colour back end.
    return mcus * max(6 * (3 * mean_symbols + 6), 526) + FILL_DRAIN
