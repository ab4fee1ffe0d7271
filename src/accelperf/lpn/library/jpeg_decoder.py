"""The OSDI'24 JPEG decoder (§3.3, §5, Fig. 4) as an LPN, re-modelled from the authors'
released model.

Source of the facts: dslab-epfl/lpn, ``lpn_family/accel_lib/jpeg_decoder/
no_guard_threshold`` (the variant their runner ``lpn_examples/jpeg_decoder/run_sim.py``
simulates), an LPN of the ultraembedded core_jpeg Verilog decoder. One token per 8×8
block; its property ``symbols`` is the number of Huffman-coded AC symbols of the block
(see :mod:`accelperf.lpn.inputs.jpeg`). The units, all single servers:

* **entropy_decode** (their t0, with the t1/p8 loop that makes it one block at a time):
  ``3·symbols + 6`` cycles per block; it needs one of 4 slots of the coefficient buffer
  (their p4), which the IDCT frees when it finishes the block.
* **idct_y / idct_cb / idct_cr** (their dispatch transitions t2p/t3p/t4p fused with the
  66-cycle units t2/t3/t4 they feed; a hold token makes each dispatch wait for its idle
  unit, so dispatch and start coincide): 4:2:0 MCUs arrive as Y0 Y1 Y2 Y3 Cb Cr; turn
  tokens (their p20/p21/p22) send the first four blocks of an MCU to idct_y, the fifth to
  idct_cb, the sixth to idct_cr. Y and Cb need 2 free output slots (their threshold on
  p6); Cr takes 4, one per output block of the MCU.
* **colour_convert** (their t5): 65 cycles per 8×8 output block, once the Y block and the
  MCU's Cb and Cr are transformed; each frees one output slot.

The end-to-end latency is the commit of the last output block. Against Table 2 of the
paper (6 transitions, 16 places, 33 edges) and the released model (9 transitions,
22 places, 49 arcs; ../shared/reference/osdi2024.toml [released_models]) this net has
5 transitions, 11 places (the Ψ place included) and 26 arcs: the released model's
dispatch/hold pairs and the t1 loop are expressed by ``concurrency=1``, and its place p5
(7 tokens, never read) and the sink ``pstart`` are left out; none of them changes a
cycle.

In steady state an MCU of blocks with s symbols each takes max(6·(3s + 6), 526) cycles:
the entropy term of Fig. 4's interface exactly, and 526 where the interface has 509 for
the back end (the authors' simulator also gives 526).

Only 4:2:0 images: the released model and its input driver handle only that layout
(their driver leaves the 4:4:4 and greyscale paths commented out).

:func:`jpeg_decoder_pcie` puts the PCIe topology of :mod:`.pcie` in front (§5.2.5).

Named parameters (``accelperf lpn show jpeg-decoder --parameters``): the delays above
(``entropy_per_symbol`` 3, ``entropy_base`` 6, ``idct_cycles`` 66, ``colour_cycles`` 65)
and a **header stage** the authors' model lacks: ``parse_header`` takes
``header_per_byte · bytes + header_base`` cycles, ``bytes`` being the file's bytes before
its entropy-coded data (markers, Huffman and quantisation tables, frame and scan
headers), and the entropy decoder starts once it is done (an inhibitor arc on the header
place). Both default to 0, so with its
defaults the net times every image exactly as the authors' simulator does; calibrated
against the core's RTL (issue 21) the values ship in ``examples/params/core_jpeg.toml``.
An input given as a JSON list of symbol counts has no file, so no header token. The
gate is a one-shot gate (:func:`..analysis.one_shot.one_shot_stages`): the interface
prices the header as a phase in series before the blocks.

Y and Cb only read the output slots (``read={out_slots: 2}``: a threshold, nothing
taken); the credit, slot and turn places end the run with the tokens they started with,
so the simulator does not count them as stuck work.
"""

from __future__ import annotations

from ...errors import ModelError, invalid
from ..declared import Declared
from ..inputs.jpeg import JpegBlocks, JpegSample
from ..net import Net, Place
from .pcie import PcieConfig, attach_pcie, chunk_tokens

ENTROPY_PER_SYMBOL, ENTROPY_BASE = 3, 6
IDCT_CYCLES = 66
COLOUR_CYCLES = 65
COEFF_SLOTS = 4          # blocks the entropy decoder may run ahead of the IDCT
OUT_SLOTS = 4            # output blocks of one 4:2:0 MCU
BLOCKS_PER_MCU = 6       # Y0 Y1 Y2 Y3 Cb Cr
MAX_SYMBOLS = 63         # 63 AC coefficients; EOB only when the last ones are zero
DEFAULT_SAMPLE = "hopper_128x96_q75_420.jpg"


def header_tokens(image) -> list[dict]:
    """Ψ of the header stage: one token holding the bytes before the scan data (none for
    an input that is a list of symbol counts rather than a file: no header to parse)."""
    if isinstance(image, JpegSample):
        image = image.read()
    return [{"bytes": image.header_bytes}] if isinstance(image, JpegBlocks) else []


def decoder_tokens(image) -> dict:
    """Ψ of the decoder with its header stage: the header token and the block tokens."""
    if isinstance(image, JpegSample):
        image = image.read()
    return {"blocks": block_tokens(image), "header": header_tokens(image)}


def block_tokens(image):
    """Ψ: a 4:2:0 JPEG's blocks → one token per block, in bitstream order.

    Takes what :func:`accelperf.lpn.inputs.read_jpeg` returns (``--input photo.jpg``) or a
    list of per-block AC-symbol counts, whole MCUs of 6 blocks (``--input '[1,1,1,1,16,22]'``).
    """
    if isinstance(image, JpegSample):
        image = image.read()
    if isinstance(image, JpegBlocks):
        if image.chroma != "4:2:0":
            raise invalid("JPEG file", image.name,
                          f"it is {image.chroma}; the authors' decoder model (and so this "
                          f"one) takes 4:2:0 JPEGs only")
        counts = image.symbols
    elif isinstance(image, (list, tuple)) and image:
        counts = image
    else:
        raise invalid("input", image, "a JPEG file or a non-empty JSON list of per-block "
                      "AC-symbol counts")
    if not isinstance(counts, (list, tuple)):       # an array (jpeg_dct): checked at once
        if len(counts) % BLOCKS_PER_MCU == 0 and \
                ((counts >= 1) & (counts <= MAX_SYMBOLS)).all():
            return counts                            # one property: an (n,) array is fine
        counts = counts.tolist()                     # to name what is wrong, below
    for i, c in enumerate(counts):
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_SYMBOLS:
            raise invalid(f"input[{i}] (AC symbols of a block)", c, f"an integer "
                          f"1..{MAX_SYMBOLS} (every block codes at least an EOB)")
    if len(counts) % BLOCKS_PER_MCU:
        raise ModelError(f"input = a list of {len(counts)} blocks is invalid: 4:2:0 images "
                         f"come in MCUs of {BLOCKS_PER_MCU} blocks (Y0 Y1 Y2 Y3 Cb Cr)")
    return [{"symbols": c} for c in counts]


def add_decoder(net: Net, blocks: Place, header: Place | None = None) -> Place:
    """The decoder's units reading Block tokens from ``blocks``; returns the place that
    receives the output blocks. With a ``header`` place (Header tokens, property
    ``bytes``) a header stage runs first and the entropy decoder waits for it."""
    per_symbol = net.parameter("entropy_per_symbol", ENTROPY_PER_SYMBOL,
                               doc="entropy decoder cycles per AC symbol of a block")
    base = net.parameter("entropy_base", ENTROPY_BASE,
                         doc="entropy decoder cycles per block besides its symbols")
    idct = net.parameter("idct_cycles", IDCT_CYCLES, doc="cycles of one 8x8 inverse DCT")
    colour = net.parameter("colour_cycles", COLOUR_CYCLES,
                           doc="cycles to colour-convert one 8x8 output block")
    header_gate = {}
    if header is not None:
        per_byte = net.parameter("header_per_byte", 0,
                                 doc="header parser cycles per byte before the scan data")
        header_base = net.parameter("header_base", 0,
                                    doc="header parser cycles besides its bytes")
        # An inhibitor, not a read of a "parsed" token: an input without a header token
        # (a list of symbol counts, the interface's input space) runs the authors' net.
        net.transition("parse_header", inputs={header: 1},
                       delay=lambda h: per_byte * h.bytes + header_base)
        header_gate = {header: 1}
    coefficients = net.place("coefficients", blocks.token_type)
    coeff_slots = net.place("coeff_slots", initial=[()] * COEFF_SLOTS)
    out_slots = net.place("out_slots", initial=[()] * OUT_SLOTS)
    y_turn = net.place("y_turn", initial=[()] * 4)
    cb_turn = net.place("cb_turn")
    cr_turn = net.place("cr_turn")
    y_pixels, cb_pixels, cr_pixels = (net.place(f"{c}_pixels") for c in ("y", "cb", "cr"))
    pixels = net.place("pixels")
    net.transition("entropy_decode", inputs={blocks: 1, coeff_slots: 1},
                   outputs={coefficients: 1}, inhibit=header_gate,
                   delay=lambda blocks: per_symbol * blocks.symbols + base)
    net.transition("idct_y", inputs={coefficients: 1, y_turn: 1}, read={out_slots: 2},
                   outputs={cb_turn: 1, y_pixels: 1, coeff_slots: 1}, delay=idct)
    net.transition("idct_cb", inputs={coefficients: 1, cb_turn: 4}, read={out_slots: 2},
                   outputs={cr_turn: 1, cb_pixels: 4, coeff_slots: 1}, delay=idct)
    net.transition("idct_cr", inputs={coefficients: 1, cr_turn: 1, out_slots: OUT_SLOTS},
                   outputs={cr_pixels: 4, y_turn: 4, coeff_slots: 1}, delay=idct)
    net.transition("colour_convert", inputs={y_pixels: 1, cb_pixels: 1, cr_pixels: 1},
                   outputs={pixels: 1, out_slots: 1}, delay=colour)
    return pixels


def jpeg_decoder_420(params=None):
    net = Net("jpeg-decoder", "the OSDI'24 JPEG decoder (authors' model, 4:2:0)",
              input_format="a baseline .jpg, or a JSON list of per-block AC-symbol counts "
                           "(1..63)", params=params)
    blocks = net.place("blocks", net.token_type("Block", "symbols"))
    header = net.place("header", net.token_type("Header", "bytes"))
    net.start, net.done = [blocks, header], add_decoder(net, blocks, header)
    net.tokens_from_input = decoder_tokens
    net.declared = Declared(reader=psi_jpeg_decoder)
    net.default_input = JpegSample(DEFAULT_SAMPLE)
    return net.build()


def jpeg_decoder_pcie(link: str | PcieConfig = "pcie-gen3-x16", params=None, **overrides):
    """The decoder reading its JPEG from host memory over PCIe (OSDI'24 §5.2.5): a block
    starts decoding once the DMA chunk holding its last byte has arrived (the whole file
    is read, headers first). ``link`` is a name such as ``pcie-gen3-x16`` or a
    :class:`~accelperf.lpn.library.pcie.PcieConfig`; ``overrides`` set its other fields."""
    config = link if isinstance(link, PcieConfig) else PcieConfig.parse(link, **overrides)
    net = Net(f"jpeg-decoder-{config.name}",
              f"the JPEG decoder behind {config.name} with {config.switches} switch(es)",
              input_format="a baseline .jpg (the whole file crosses the link)", params=params)
    blocks = net.place("blocks", net.token_type("Block", "symbols"))
    # No header stage here: the authors' PCIe model has none, and one that started at once
    # would only approximate a parse of bytes still crossing the link; a header token the
    # link delivers would also make the gate timing-dependent (not a one-shot gate, see
    # analysis.one_shot.one_shot_stages), which the interface analysis refuses.
    front = attach_pcie(net, blocks, config)
    net.start, net.done = [front.chunks, front.staged], add_decoder(net, blocks)

    def tokens(image):
        if isinstance(image, JpegSample):
            image = image.read()
        if not isinstance(image, JpegBlocks):
            raise invalid("input", image, "a JPEG file: the link needs each block's bytes")
        return chunk_tokens(front, block_tokens(image), image.ends, image.size, config)

    net.tokens_from_input = tokens
    net.default_input = JpegSample(DEFAULT_SAMPLE)
    return net.build()


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
