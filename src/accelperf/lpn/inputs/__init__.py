"""Readers of accelerators' real input formats (the Ψ side of the library models).

Each reader turns decoded JSON (or text) into small frozen dataclasses and rejects
malformed input with one ModelError naming the entry at fault; the models turn those
into tokens.
"""
