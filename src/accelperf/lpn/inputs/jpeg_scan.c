/* Ψ's JPEG symbol count in C: the reference scanner of jpeg.py (_Parser._decode and
 * _file_offsets), the same steps on the same lookup tables, at C speed.
 *
 * jpeg_native.py parses the headers in Python (jpeg.scan_layout), builds each Huffman
 * table's 16-bit lookup here (jpeg_table), and hands every restart interval of the scan
 * to jpeg_scan at once. Any code the tables lack, any run past the data, makes jpeg_scan
 * return -1: the caller then runs the reference scanner, whose error names the fault. */
#include <stdint.h>
#include <string.h>

/* One Huffman table (T.81 Annex C) as 65536 entries, indexed by the next 16 bits:
 * (bits to consume: code length + the value bits it announces) << 8 | symbol; 0: no code.
 * Returns 0, or -1 when the lengths allow fewer codes than listed. */
int jpeg_table(const uint8_t *counts, const uint8_t *values, uint32_t *out) {
    memset(out, 0, 65536 * sizeof(uint32_t));
    uint32_t code = 0;
    int k = 0;
    for (int length = 1; length <= 16; length++) {
        for (int i = 0; i < counts[length - 1]; i++) {
            uint32_t sym = values[k++];
            uint32_t lo = code << (16 - length), hi = (code + 1) << (16 - length);
            if (hi > 65536) return -1;
            uint32_t e = ((uint32_t)(length + (sym & 15)) << 8) | sym;
            for (uint32_t j = lo; j < hi; j++) out[j] = e;
            code++;
        }
        code <<= 1;
    }
    return 0;
}

/* Decode n_seg restart intervals: interval s is data[start[s]:stop[s]] (byte-stuffed, as
 * in the file) holding mcus[s] MCUs of per_mcu blocks; block j of an MCU uses lookup
 * tables dc[j] and ac[j] (indices into `tables`). Writes each block's AC-symbol count
 * (EOB and ZRL included) and the file offset past the byte holding its last bit.
 * work: room for the largest interval + 8 bytes; ff: for as many int64. */
int jpeg_scan(const uint8_t *data, int64_t n_seg, const int64_t *start, const int64_t *stop,
              const int64_t *mcus, const uint32_t *tables, const int32_t *dc,
              const int32_t *ac, int64_t per_mcu, uint8_t *work, int64_t *ff,
              int64_t *counts, int64_t *ends) {
    int64_t b = 0;
    for (int64_t s = 0; s < n_seg; s++) {
        /* unstuff: 0xFF 0x00 -> 0xFF, remembering where each 0xFF lands */
        int64_t avail = 0, n_ff = 0;
        for (int64_t i = start[s]; i < stop[s]; i++) {
            uint8_t byte = data[i];
            if (byte == 0xFF) {
                ff[n_ff++] = avail;
                if (i + 1 < stop[s] && data[i + 1] == 0x00) i++;
            }
            work[avail++] = byte;
        }
        int64_t first = b, pos = 0;
        uint64_t acc = 0;
        int nbits = 0;
        for (int64_t m = 0; m < mcus[s]; m++) {
            for (int64_t j = 0; j < per_mcu; j++) {
                const uint32_t *table = tables + (int64_t)dc[j] * 65536;
                int k = 0, count = -1;               /* the DC symbol first, not counted */
                while (k < 64) {
                    while (nbits <= 56) {            /* past the data: 1-bits, as decoders pad */
                        acc = (acc << 8) | (pos < avail ? work[pos] : 0xFF);
                        pos++;
                        nbits += 8;
                    }
                    uint32_t e = table[(acc >> (nbits - 16)) & 0xFFFF];
                    if (!e) return -1;
                    nbits -= (int)(e >> 8);
                    count++;
                    if (k == 0) { table = tables + (int64_t)ac[j] * 65536; k = 1; continue; }
                    uint32_t sym = e & 0xFF;
                    if (sym == 0) break;                          /* EOB */
                    if ((sym & 15) == 0 && sym != 0xF0) return -1; /* not baseline */
                    k += (int)(sym >> 4) + 1;                     /* ZRL 0xF0 skips 16 */
                }
                if (k > 64) return -1;
                counts[b] = count;
                ends[b++] = pos * 8 - nbits;                      /* bit offset, for now */
            }
            if (pos * 8 - nbits > avail * 8) return -1;           /* read past the data */
        }
        /* bit offsets -> file offsets: each 0xFF before the end had a stuffed 0x00 */
        int64_t k = 0;
        for (int64_t i = first; i < b; i++) {
            int64_t byte_end = (ends[i] + 7) / 8;
            while (k < n_ff && ff[k] < byte_end) k++;
            ends[i] = start[s] + byte_end + k;
        }
    }
    return 0;
}
