"""Ψ's reader for JPEG files: how many Huffman-coded AC symbols each 8×8 block costs.

A baseline JPEG (ITU-T T.81, Annex F) codes every 8×8 block as one DC difference and a
list of AC symbols. Each AC symbol is one Huffman code word: a non-zero coefficient with
the run of zeros before it, ZRL (a run of 16 zeros, when 16 or more zeros precede a
non-zero coefficient) or EOB (the rest of the block is zero; absent when coefficient 63
is non-zero). The entropy decoder of the OSDI'24 JPEG accelerator (ultraembedded
core_jpeg) spends three cycles per AC symbol, so the number of AC symbols per block —
``nonzero AC + ZRL + EOB`` — is the token property its LPN needs (OSDI'24 §5: "each 8×8
image block ... a property representing the number of non-zero pixels after
quantization"; the authors' driver counts exactly these symbols, EOB and ZRL included).

This module decodes the Huffman code words of the scan itself (it does not reconstruct
coefficients): the count is what the hardware reads, by definition. Blocks come out in
bitstream order: for 4:2:0, each MCU gives Y0 Y1 Y2 Y3 Cb Cr.

Only what the accelerator decodes is accepted: baseline (SOF0) Huffman-coded JPEG with
one interleaved scan of 1 or 3 components. Progressive, lossless, hierarchical and
arithmetic-coded JPEG, CMYK, truncated and non-JPEG files raise ModelError with one line
that says which.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ...errors import ModelError, invalid

_SOF_KIND = {0xC1: "extended sequential", 0xC2: "progressive", 0xC3: "lossless",
             0xC5: "hierarchical", 0xC6: "hierarchical progressive",
             0xC7: "hierarchical lossless", 0xC9: "arithmetic-coded",
             0xCA: "arithmetic-coded progressive", 0xCB: "arithmetic-coded lossless",
             0xCD: "arithmetic-coded hierarchical",
             0xCE: "arithmetic-coded hierarchical progressive",
             0xCF: "arithmetic-coded hierarchical lossless"}
_ALLOWED = "a baseline (SOF0) Huffman-coded JPEG with 1 or 3 components in one scan"
_MAGIC = {b"\x89PNG": "a PNG image", b"GIF8": "a GIF image", b"BM": "a BMP image",
          b"RIFF": "a RIFF (WebP?) file", b"%PDF": "a PDF file", b"II*\x00": "a TIFF image",
          b"MM\x00*": "a TIFF image"}


@dataclass(frozen=True)
class JpegBlocks:
    """One JPEG's blocks as the decoder meets them.

    ``symbols[i]`` is the number of Huffman-coded AC symbols of block i (bitstream order);
    ``ends[i]`` the file offset just past the byte holding block i's last bit (what a DMA
    engine must have fetched before the block can be decoded); ``size`` the file's bytes;
    ``sampling`` is each component's (horizontal, vertical) sampling factors;
    ``header_bytes`` the bytes before the entropy-coded data (markers, tables, frame and
    scan headers: what a decoder parses before its first block).
    """

    name: str
    width: int
    height: int
    sampling: tuple[tuple[int, int], ...]
    symbols: tuple[int, ...]
    ends: tuple[int, ...] = ()
    size: int = 0
    header_bytes: int = 0     # file offset where the entropy-coded data starts

    @property
    def blocks(self) -> int:
        return len(self.symbols)

    @property
    def chroma(self) -> str:
        """'4:2:0', '4:4:4', 'grey' or the raw sampling factors."""
        s = self.sampling
        if len(s) == 1:
            return "grey"
        if s[1:] == ((1, 1), (1, 1)):
            return {(2, 2): "4:2:0", (1, 1): "4:4:4", (2, 1): "4:2:2"}.get(s[0], str(s))
        return str(s)

    def digest(self) -> str:
        """SHA-256 of the comma-separated symbol counts (to compare long lists)."""
        return symbols_digest(self.symbols)

    def __repr__(self) -> str:
        return (f"JpegBlocks({self.name}: {self.width}x{self.height} {self.chroma}, "
                f"{self.blocks} blocks, {sum(self.symbols)} AC symbols)")


@dataclass(frozen=True)
class JpegSample:
    """A JPEG the project ships (``accelperf/data/jpeg/``), read when first needed; see
    ``tools/make_sample_images.py`` for how each was made."""

    name: str

    def read(self) -> JpegBlocks:
        return scan_jpeg(sample_path(self.name).read_bytes(), self.name)


SAMPLES = Path(__file__).resolve().parents[2] / "data" / "jpeg"


def sample_path(name: str) -> Path:
    path = SAMPLES / name
    if not path.is_file():
        raise invalid("sample image", name, f"one of {', '.join(sample_names())}")
    return path


def sample_names() -> list[str]:
    return sorted(p.name for p in SAMPLES.glob("*.jpg"))


def symbols_digest(symbols) -> str:
    return hashlib.sha256(",".join(str(int(s)) for s in symbols).encode()).hexdigest()


def read_bytes(path: str | Path) -> bytes:
    """A JPEG file's bytes, or one line saying why they cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise invalid("input", str(path), f"a readable JPEG file ({exc.strerror})") from None


def read_jpeg_reference(path: str | Path) -> JpegBlocks:
    """Read a JPEG file with :func:`scan_jpeg` (``lpn.inputs.read_jpeg`` is the same
    answer from a faster reader)."""
    return scan_jpeg(read_bytes(path), str(path))


def scan_jpeg(data: bytes, name: str = "<bytes>") -> JpegBlocks:
    """The blocks of the JPEG held in ``data`` (the reference: Huffman code words decoded
    one by one)."""
    return _Parser(data, name).run()


@dataclass(frozen=True)
class ScanLayout:
    """A JPEG's headers and where its entropy-coded data lies, without decoding it: what
    a reader that gets the coefficients elsewhere (:mod:`.jpeg_dct`) needs to count the
    same symbols and place the same block ends.

    ``components``: per component of the scan, in scan order, (h, v, DC table, AC table);
    ``huffman``: per table (class, id), its DHT code counts per length (16 bytes) and
    symbol values; ``segments``: per restart interval, (first byte, byte past the last,
    MCUs in it) in the file.
    """

    name: str
    width: int
    height: int
    sampling: tuple
    components: tuple
    huffman: dict
    segments: tuple
    mcus: int
    size: int


def scan_layout(data: bytes, name: str = "<bytes>") -> ScanLayout:
    """The headers and scan segments of the JPEG in ``data``, checked as :func:`scan_jpeg`
    checks them (the same errors for a bad header), its Huffman data not decoded."""
    parser = _Parser(data, name, decode=False)
    parser.run()
    return parser.layout


def layout_or_none(data: bytes, name: str = "<bytes>") -> ScanLayout | None:
    """:func:`scan_layout`, or None for a file it refuses: the reference scanner, which
    decodes the scan as it goes, may meet another fault first, so only it can say which
    error the file gives."""
    try:
        return scan_layout(data, name)
    except ModelError:
        return None


class _Parser:
    def __init__(self, data: bytes, name: str, decode: bool = True):
        self.data, self.name, self.decode = data, name, decode
        self.tables: dict[tuple[int, int], list[int]] = {}   # (class, id) -> lookup
        self.huffman: dict[tuple[int, int], tuple] = {}      # (class, id) -> DHT counts, values
        self.frame = None            # (width, height, [(id, h, v)])
        self.restart = 0
        self.symbols: list[int] | None = None
        self.ends: list[int] = []
        self.scan_start = 0
        self.layout: ScanLayout | None = None

    def fail(self, why: str) -> NoReturn:
        raise invalid("JPEG file", self.name, f"{why}; the decoder takes {_ALLOWED}")

    def run(self) -> JpegBlocks:
        d = self.data
        if not d:
            raise self.fail("the file is empty")
        if d[:2] != b"\xff\xd8":
            kind = next((v for k, v in _MAGIC.items() if d.startswith(k)), None)
            raise self.fail(f"it is {kind}, not a JPEG" if kind else
                            f"it does not start with the JPEG start-of-image marker "
                            f"(first bytes {d[:4].hex(' ')})")
        pos = 2
        while True:
            marker, pos = self._marker(pos)
            if marker == 0xD9:                                   # EOI
                break
            if marker == 0x01 or 0xD0 <= marker <= 0xD7:         # TEM, stray RSTn
                continue
            length = self._u16(pos)
            if length < 2 or pos + length > len(d):
                raise self.fail(f"it is truncated (a 0x{marker:02X} segment runs past the "
                                f"end of the file)")
            body = d[pos + 2:pos + length]
            pos += length
            if marker == 0xC0:
                self._frame(body)
            elif marker in _SOF_KIND:
                raise self.fail(f"it is a {_SOF_KIND[marker]} JPEG (SOF 0x{marker:02X})")
            elif marker == 0xCC:
                raise self.fail("it is arithmetic-coded (DAC segment)")
            elif marker == 0xC4:
                self._huffman_tables(body)
            elif marker == 0xDD:
                self.restart = int.from_bytes(body[:2], "big") if len(body) >= 2 else 0
            elif marker == 0xDA:
                if self.symbols is not None:
                    raise self.fail("its image data is split over several scans")
                pos = self._scan(body, pos)
        if self.symbols is None:
            raise self.fail("it has no image data (no start-of-scan segment)")
        width, height, comps = self.frame
        return JpegBlocks(self.name, width, height, tuple((h, v) for _, h, v in comps),
                          tuple(self.symbols), tuple(self.ends), len(self.data),
                          self.scan_start)

    # ---------------------------------------------------------------- segments
    def _u16(self, pos: int) -> int:
        if pos + 2 > len(self.data):
            raise self.fail("it is truncated (it ends inside a segment header)")
        return (self.data[pos] << 8) | self.data[pos + 1]

    def _marker(self, pos: int) -> tuple[int, int]:
        d = self.data
        if pos >= len(d):
            raise self.fail("it is truncated (no end-of-image marker)")
        if d[pos] != 0xFF:
            raise self.fail(f"it is corrupt (byte 0x{d[pos]:02X} at offset {pos} where a "
                            f"marker should be)")
        while pos < len(d) and d[pos] == 0xFF:                   # fill bytes
            pos += 1
        if pos >= len(d):
            raise self.fail("it is truncated (no end-of-image marker)")
        return d[pos], pos + 1

    def _frame(self, body: bytes) -> None:
        if self.frame is not None:
            raise self.fail("it has two frame headers")
        if len(body) < 6:
            raise self.fail("its frame header is too short")
        precision, height, width, n = body[0], int.from_bytes(body[1:3], "big"), \
            int.from_bytes(body[3:5], "big"), body[5]
        if precision != 8:
            raise self.fail(f"its samples have {precision} bits, not 8")
        if n == 4:
            raise self.fail("it has 4 colour components (CMYK or YCCK)")
        if n not in (1, 3) or len(body) < 6 + 3 * n:
            raise self.fail(f"it has {n} colour components")
        if width == 0 or height == 0:
            raise self.fail(f"its size is {width}x{height}")
        comps = [(body[6 + 3 * i], body[7 + 3 * i] >> 4, body[7 + 3 * i] & 15)
                 for i in range(n)]
        if any(not 1 <= h <= 4 or not 1 <= v <= 4 for _, h, v in comps):
            raise self.fail("its sampling factors are outside 1..4")
        self.frame = (width, height, comps)

    def _huffman_tables(self, body: bytes) -> None:
        at = 0
        while at < len(body):
            if at + 17 > len(body):
                raise self.fail("a Huffman table segment is cut short")
            cls, tid = body[at] >> 4, body[at] & 15
            counts = body[at + 1:at + 17]
            total = sum(counts)
            values = body[at + 17:at + 17 + total]
            if cls > 1 or tid > 3 or len(values) != total:
                raise self.fail("a Huffman table is malformed")
            if self.decode:          # the C scanner builds its own tables from `huffman`
                self.tables[(cls, tid)] = _lookup(counts, values)
            self.huffman[(cls, tid)] = (bytes(counts), bytes(values))
            at += 17 + total

    # ---------------------------------------------------------------- entropy-coded data
    def _scan(self, header: bytes, pos: int) -> int:
        if self.frame is None:
            raise self.fail("its scan comes before any frame header")
        width, height, comps = self.frame
        n = header[0] if header else 0
        if n != len(comps) or len(header) < 1 + 2 * n:
            raise self.fail(f"its scan codes {n} of the {len(comps)} components (the image "
                            f"data is split over several scans)")
        sampling = {cid: (h, v) for cid, h, v in comps}
        order = []                   # per block of an MCU: (dc table, ac table)
        components = []              # per component in scan order: (h, v, dc, ac)
        for i in range(n):           # blocks follow the scan header's component order
            cid, tables = header[1 + 2 * i], header[2 + 2 * i]
            if cid not in sampling:
                raise self.fail(f"its scan codes component {cid} twice or one the frame "
                                f"lacks")
            h, v = sampling.pop(cid)
            dc, ac = (0, tables >> 4), (1, tables & 15)
            for table in (dc, ac):
                if table not in self.huffman:
                    raise self.fail(f"it uses {('DC', 'AC')[table[0]]} Huffman table "
                                    f"{table[1]} but never defines it")
            if self.decode:
                order += [(self.tables[dc], self.tables[ac])] * (h * v if n > 1 else 1)
            components.append((h, v, dc, ac))
        hmax, vmax = max(h for _, h, _ in comps), max(v for _, _, v in comps)
        if n > 1:
            mcus = -(-width // (8 * hmax)) * -(-height // (8 * vmax))
        else:                        # one component: one block per MCU, no padding MCUs
            cid, h, v = comps[0]
            mcus = -(-width * h // (8 * hmax)) * -(-height * v // (8 * vmax))
        self.symbols = []
        self.scan_start = pos
        per_interval = self.restart or mcus
        done = 0
        segments = []
        while done < mcus:
            count = min(per_interval, mcus - done)
            end = self._segment_end(pos)
            if self.decode:
                seg = self.data[pos:end].replace(b"\xff\x00", b"\xff")
                bits = self._decode(seg, count, order)
                self._file_offsets(seg, pos, bits)
            segments.append((pos, end, count))
            done += count
            pos = end
            if done < mcus:          # a restart marker RSTn must follow
                if end + 1 >= len(self.data) or not 0xD0 <= self.data[end + 1] <= 0xD7:
                    raise self.fail("it is truncated or corrupt (a restart marker is "
                                    "missing)" if end + 1 < len(self.data) else
                                    "it is truncated (the image data stops early)")
                pos = end + 2
        self.layout = ScanLayout(self.name, width, height, tuple((h, v) for _, h, v in comps),
                                 tuple(components), dict(self.huffman), tuple(segments), mcus,
                                 len(self.data))
        return pos

    def _segment_end(self, pos: int) -> int:
        """Offset of the first marker (0xFF not followed by 0x00) at or after ``pos``."""
        d = self.data
        at = pos
        while True:
            at = d.find(b"\xff", at)
            if at < 0 or at + 1 >= len(d):
                return len(d)
            if d[at + 1] != 0x00:
                return at
            at += 2

    def _file_offsets(self, seg: bytes, start: int, bits: list[int]) -> None:
        """Append, for each block's end (a bit offset into the unstuffed ``seg``), the file
        offset past its last byte: every 0xFF byte before it was followed by a stuffed
        0x00 in the file (T.81 F.1.2.3)."""
        stuffed = [i for i in range(len(seg)) if seg[i] == 0xFF] if b"\xff" in seg else []
        k = 0
        for b in bits:
            byte_end = (b + 7) // 8
            while k < len(stuffed) and stuffed[k] < byte_end:
                k += 1
            self.ends.append(start + byte_end + k)

    def _decode(self, seg: bytes, mcus: int, order) -> list[int]:
        """Append the AC-symbol count of every block of ``mcus`` MCUs coded in ``seg``;
        return the bit offset in ``seg`` where each block ends."""
        avail = len(seg) * 8
        data = seg + b"\xff" * 512         # decoders pad with 1 bits; checked below
        out, ends = self.symbols, []
        pos, acc, nbits = 0, 0, 0
        for _ in range(mcus):
            for dc, ac in order:
                table, k, count = dc, 0, -1           # the DC symbol first, not counted
                while k < 64:
                    if nbits < 32:
                        acc = ((acc & ((1 << nbits) - 1)) << 32) | \
                            int.from_bytes(data[pos:pos + 4], "big")
                        pos += 4
                        nbits += 32
                    e = table[(acc >> (nbits - 16)) & 0xFFFF]
                    if not e:
                        raise self._bad(pos, nbits, avail)
                    nbits -= e >> 8
                    count += 1
                    if k == 0:
                        table, k = ac, 1
                        continue
                    sym = e & 0xFF
                    if sym == 0:                       # EOB
                        break
                    if sym & 15 == 0 and sym != 0xF0:  # run without a value: not baseline
                        raise self._bad(pos, nbits, avail)
                    k += (sym >> 4) + 1                # ZRL 0xF0 skips 16
                if k > 64:
                    raise self._bad(pos, nbits, avail)
                out.append(count)
                ends.append(pos * 8 - nbits)
            if pos * 8 - nbits > avail:                # read past the data: truncated
                raise self._bad(pos, nbits, avail)
        return ends

    def _bad(self, pos: int, nbits: int, avail: int) -> NoReturn:
        if pos * 8 - nbits > avail - 8:
            raise self.fail("it is truncated (the image data stops early)")
        raise self.fail(f"its image data is corrupt (invalid Huffman code after "
                         f"{len(self.symbols)} blocks)")


def _lookup(counts: bytes, values: bytes) -> list[int]:
    """A 16-bit lookup table for one Huffman table (T.81 Annex C): entry = (bits to
    consume, code word plus its appended value bits) << 8 | symbol; 0 = no such code."""
    table = [0] * 65536
    code, k = 0, 0
    for length in range(1, 17):
        for _ in range(counts[length - 1]):
            sym = values[k]
            k += 1
            lo = code << (16 - length)
            hi = (code + 1) << (16 - length)
            if hi > 65536:
                raise ModelError("a Huffman table has more codes than its lengths allow")
            table[lo:hi] = [((length + (sym & 15)) << 8) | sym] * (hi - lo)
            code += 1
        code <<= 1
    return table
