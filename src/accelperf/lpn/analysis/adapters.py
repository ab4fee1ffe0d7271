"""The standalone Ψ of the library models, by model name, as the models declare them.

Each function lives beside its model in :mod:`accelperf.lpn.library` and is declared
there (``net.declared``, :mod:`accelperf.lpn.declared`); the emitters ask the model for
it, never this table. It gathers them for callers that look one up by name: a
generated interface copies the function's source, so it must agree with the model's own
``tokens_from_input`` (tests check it on the models' inputs).
"""

from __future__ import annotations

from ..library import LIBRARY, build
from ..library.aes_gcm import psi_aes_gcm
from ..library.block_pipeline import psi_block_pipeline
from ..library.darwin import psi_darwin
from ..library.jpeg_decoder import psi_jpeg_decoder
from ..library.menshen import psi_menshen
from ..library.protoacc import psi_protoacc, rotate_protoacc, split_protoacc, turns_protoacc

ADAPTERS = {model.name: model.declared.reader for model in map(build, LIBRARY)
            if model.declared.reader is not None}
"""Library model name -> standalone Ψ (``model.declared.reader``)."""

__all__ = ["ADAPTERS", "psi_aes_gcm", "psi_block_pipeline", "psi_darwin", "psi_jpeg_decoder",
           "psi_protoacc", "psi_menshen", "rotate_protoacc", "split_protoacc",
           "turns_protoacc"]
