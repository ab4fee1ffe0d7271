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


def psi_protoacc(doc):
    """Tokens of the Protoacc serializer for parsed message JSON (one message object or
    a list of them), as its Ψ makes them: depth first, an end-of-message pseudo field
    per message, runs of at most 32 non-submessage fields per control token
    (accelperf.lpn.library.protoacc.message_tokens, whose field-kind numbers these are)."""
    end, nonscalar, end_top, scalar, submessage, run_kind = range(6)
    control, fields, sizes = [], [], []

    def walk(msg, top):
        if not isinstance(msg, dict) or not msg:
            raise ValueError(f"message = {str(msg)[:40]} is invalid: an object "
                             f"{{field: {{type, is_repeated, data}}}}")
        run = 0

        def close():
            nonlocal run
            while run:
                control.append({"kind": run_kind, "fields": min(run, 32)})
                run -= min(run, 32)

        for name, spec in msg.items():
            kind = spec.get("type") if isinstance(spec, dict) else None
            if kind == "submessage":
                close()
                control.append({"kind": submessage, "fields": 0})
                walk(spec["data"], False)
            elif kind in ("scalar", "nonscalar"):
                run += 1
                fields.append({"kind": scalar if kind == "scalar" else nonscalar,
                               "elements": len(spec["data"])})
                sizes.extend({"bytes": int(b)} for b in spec["data"])
            else:
                raise ValueError(f"field {name!r} = {str(spec)[:40]} is invalid: "
                                 f"{{type: scalar|nonscalar|submessage, is_repeated, data}}")
        run += 1
        fields.append({"kind": end_top if top else end, "elements": 1})
        sizes.append({"bytes": 1})
        close()

    for msg in doc if isinstance(doc, list) else [doc]:
        walk(msg, True)
    return {"message_tasks": control, "field_descriptors": fields, "field_data": sizes}


def psi_menshen(packets):
    """Tokens of Menshen for a parsed packet list: {"n_words", "kind": control|data|drop}
    entries or [n_words, is_control, is_data, is_drop] rows (kind numbers 0, 1, 2)."""
    kinds = ("control", "data", "drop")
    out = []
    for i, p in enumerate(packets):
        if isinstance(p, dict) and p.get("kind") in kinds:
            out.append({"n_words": int(p["n_words"]), "kind": kinds.index(p["kind"])})
        elif isinstance(p, (list, tuple)) and len(p) == 4 and sorted(p[1:]) == [0, 0, 1]:
            out.append({"n_words": int(p[0]), "kind": list(p[1:]).index(1)})
        else:
            raise ValueError(f"packet[{i}] = {str(p)[:40]} is invalid: {{n_words, kind}} "
                             f"or [n_words, is_control, is_data, is_drop]")
    return {"packets": out}


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


def split_protoacc(doc):
    """A Protoacc input as the messages it serialises one after the other (Fig. 5 sums
    them): a list of messages, or one message."""
    return list(doc) if isinstance(doc, list) else [doc]


def turns_protoacc(tokens):
    """Protoacc's round-robin turns a message takes: one per field descriptor (its
    end-of-message marker included), each sending the dispatch and write turns one
    pipeline on."""
    return len(tokens.get("field_descriptors", ()))


def rotate_protoacc(stage, turns, pipelines):
    """The name of ``stage`` (a transition, or a place as ``[place]``) for a message
    that starts ``turns`` round-robin turns after the first pipeline: pipeline k's
    stages (``f{k}_...``, ``[..._f{k}]``) become pipeline k + turns's, counted round
    the ``pipelines`` of them (the pipelines are identical: accelperf.lpn.library.protoacc)."""
    import re
    return re.sub(r"(?<![A-Za-z0-9])f([0-9]+)(?![0-9])",
                  lambda m: "f" + str((int(m.group(1)) - 1 + turns) % pipelines + 1), stage)


ADAPTERS = {"block-pipeline": psi_block_pipeline, "darwin": psi_darwin,
            "jpeg-decoder": psi_jpeg_decoder, "protoacc": psi_protoacc,
            "menshen": psi_menshen, "aes-gcm": psi_aes_gcm}
"""Library model name -> standalone Ψ."""

SPLITTERS = {"protoacc": split_protoacc}
"""Library model name -> the units of an input that a typed interface (one formula per
input type, :func:`accelperf.lpn.analysis.emit.typed_module_source`) prices one by one."""

ROTATIONS = {"protoacc": (turns_protoacc, rotate_protoacc, "f{}_dispatch")}
"""Library model name -> (turns a unit takes, its stages' names after so many turns, the
transition each of the identical round-robin units has once): a unit of a list finds the
round-robin where the units before it left it, not where its own trace starts
(:mod:`.handover`)."""

__all__ = ["ADAPTERS", "ROTATIONS", "SPLITTERS", "psi_aes_gcm", "psi_block_pipeline", "psi_darwin",
           "psi_jpeg_decoder", "psi_protoacc", "psi_menshen", "rotate_protoacc",
           "split_protoacc", "turns_protoacc"]
