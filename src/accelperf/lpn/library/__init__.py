"""Example accelerators, each a function that builds a fresh model with its Ψ and a
default input: ``LIBRARY[name]()`` or ``build("jpeg-decoder")``."""

from __future__ import annotations

from ...errors import ModelError
from ..params import build_with
from .credit_link import attach_credit_link, credit_link, pipeline_over_link
from .darwin import darwin_gact, darwin_latency_formula
from .fig2 import fig2_pipeline
from .aes_gcm import aes_gcm
from .block_pipeline import block_pipeline
from .jpeg_decoder import jpeg_decoder_420, jpeg_decoder_pcie
from .menshen import menshen_pipeline
from .protoacc import protoacc_serializer
from .vta import vta

LIBRARY = {
    "fig2-pipeline": fig2_pipeline,
    "jpeg-decoder": jpeg_decoder_420,
    "jpeg-decoder-pcie": jpeg_decoder_pcie,
    "block-pipeline": block_pipeline,
    "darwin": darwin_gact,
    "credit-link": credit_link,
    "pipeline-over-link": pipeline_over_link,
    "protoacc": protoacc_serializer,
    "menshen": menshen_pipeline,
    "vta": vta,
    "aes-gcm": aes_gcm,
}


def build(name: str, params: dict | None = None):
    """A library model by name; ``params`` ({name: value}) replace the defaults of the
    delays it declares (``accelperf lpn show MODEL --parameters`` lists them)."""
    if name not in LIBRARY:
        raise ModelError(f"model = {name!r} is invalid: library models are "
                         f"{', '.join(LIBRARY)} (or give path/to/file.py:function)")
    return build_with(LIBRARY[name], params)


__all__ = ["LIBRARY", "build", "fig2_pipeline", "block_pipeline", "darwin_gact",
           "darwin_latency_formula", "credit_link", "attach_credit_link", "pipeline_over_link",
           "jpeg_decoder_420", "jpeg_decoder_pcie", "vta", "aes_gcm"]
