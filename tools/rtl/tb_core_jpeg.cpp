// Cycle-counting driver for tb_core_jpeg.v (ultraembedded/core_jpeg under Verilator).
//
//   tb_core_jpeg IMAGE.jpg PIXELS [TRACE.csv [RGB.bin]]
//
// Feeds the file as a 32-bit AXI stream (byte 0 in bits 7:0), valid on every cycle so the
// core takes words as fast as it accepts them; the pixel sink is always ready. Cycle 0 is
// the clock edge that takes the file's first byte; the latency is the edge of the
// PIXELS-th pixel, the last of the file's blocks (64 per luma block, padding included).
// The core may send more: when its parser has not met EOI by the time the last MCU's Cr
// block starts, it decodes the bits after the scan as a further MCU (in order, after the
// real ones, so they are not delayed). Those extra events are left in the trace. Prints key=value lines on stdout; with TRACE.csv writes `event,cycle` rows:
//   header_end        first compressed byte enters the bit buffer
//   entropy_decode    a block leaves the Huffman/MCU decoder (its end-of-block)
//   idct_y|idct_cb|idct_cr   a block's last sample (index 63) leaves the IDCT
//   colour_convert    the 64th pixel of an 8x8 output block leaves the core
// With RGB.bin, writes every pixel sent as 7 bytes: x, y (16-bit little-endian), r, g, b.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "Vtb_core_jpeg.h"
#include "verilated.h"

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) {
        std::fprintf(stderr, "usage: %s IMAGE.jpg PIXELS [TRACE.csv [RGB.bin]]\n", argv[0]);
        return 2;
    }
    const long long want_pixels = std::atoll(argv[2]);
    if (want_pixels < 64) { std::fprintf(stderr, "PIXELS must be >= 64\n"); return 2; }
    FILE *f = std::fopen(argv[1], "rb");
    if (!f) { std::fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    std::vector<uint8_t> bytes;
    for (int c; (c = std::fgetc(f)) != EOF;) bytes.push_back(uint8_t(c));
    std::fclose(f);
    FILE *trace = nullptr;
    if (argc >= 4 && !(trace = std::fopen(argv[3], "w"))) {
        std::fprintf(stderr, "cannot write %s\n", argv[3]); return 2;
    }
    FILE *rgb = nullptr;
    if (argc == 5 && !(rgb = std::fopen(argv[4], "wb"))) {
        std::fprintf(stderr, "cannot write %s\n", argv[4]); return 2;
    }
    if (trace) std::fprintf(trace, "event,cycle\n");

    // Words of 4 bytes; the tail is padded with masked (strobe 0) bytes, which the core
    // reads as zeros after the EOI marker. TLAST is not used: the core takes a word with
    // TLAST after its first byte, which would drop a final EOI that is not word-aligned.
    size_t words = (bytes.size() + 3) / 4;
    auto word_at = [&](size_t w, uint32_t &data, uint32_t &strb) {
        data = 0; strb = 0;
        for (int b = 0; b < 4; ++b) {
            size_t i = 4 * w + b;
            if (i < bytes.size()) { data |= uint32_t(bytes[i]) << (8 * b); strb |= 1u << b; }
        }
    };

    Verilated::commandArgs(argc, argv);
    Vtb_core_jpeg top;
    top.clk_i = 0; top.rst_i = 1; top.inport_valid_i = 0; top.inport_last_i = 0;
    top.inport_data_i = 0; top.inport_strb_i = 0;
    for (int i = 0; i < 4; ++i) { top.clk_i = 0; top.eval(); top.clk_i = 1; top.eval(); }
    top.rst_i = 0;

    const char *idct_name[3] = {"idct_y", "idct_cb", "idct_cr"};
    size_t word = 0;
    long long cycle = 0, last_pixel = -1, nth_pixel = -1, header_end = -1, first_pixel = -1;
    long long pixels = 0, idct_blocks = 0, entropy_blocks = 0;
    bool prev_eob = false, idle_at_end = false;
    const long long QUIET = 50000;  // cycles without a pixel: the core has hung
    const long long limit = 2000000LL + 4000LL * (long long)bytes.size();
    for (long long edge = 0;; ++edge) {
        top.clk_i = 0;
        if (word < words) {
            uint32_t d, s; word_at(word, d, s);
            top.inport_valid_i = 1; top.inport_data_i = d; top.inport_strb_i = s;
        } else {
            top.inport_valid_i = 0; top.inport_strb_i = 0;
        }
        top.eval();
        // Handshakes seen now complete at the coming rising edge, numbered `cycle`.
        cycle = edge;
        bool take_word = top.inport_valid_i && top.inport_accept_o;
        if (top.scan_byte_o && header_end < 0) {
            header_end = cycle;
            if (trace) std::fprintf(trace, "header_end,%lld\n", cycle);
        }
        bool eob = top.entropy_eob_o && top.entropy_type_o != 3;
        if (eob && !prev_eob) {
            ++entropy_blocks;
            if (trace) std::fprintf(trace, "entropy_decode,%lld\n", cycle);
        }
        prev_eob = eob;
        if (top.idct_block_o && top.idct_type_o != 3) {
            ++idct_blocks;
            if (trace) std::fprintf(trace, "%s,%lld\n", idct_name[top.idct_type_o], cycle);
        }
        if (top.outport_valid_o) {
            if (first_pixel < 0) first_pixel = cycle;
            last_pixel = cycle;
            if (rgb) {
                unsigned x = top.outport_pixel_x_o, y = top.outport_pixel_y_o;
                uint8_t px[7] = {uint8_t(x), uint8_t(x >> 8), uint8_t(y), uint8_t(y >> 8),
                                 top.outport_pixel_r_o, top.outport_pixel_g_o,
                                 top.outport_pixel_b_o};
                std::fwrite(px, 1, sizeof px, rgb);
            }
            if (++pixels == want_pixels) nth_pixel = cycle;
            if (pixels % 64 == 0 && trace) std::fprintf(trace, "colour_convert,%lld\n", cycle);
        }
        top.clk_i = 1;
        top.eval();
        if (take_word) ++word;
        // The core goes idle after the end-of-image block. On some files it never does:
        // it flags the end only if the parser has met EOI when the last MCU's Cr block
        // starts. All pixels are out by then, so a long silence also ends the run.
        if (word >= words && pixels > 0 && cycle - last_pixel > (top.idle_o ? 64 : QUIET)) {
            idle_at_end = top.idle_o;
            break;
        }
        if (cycle > limit || pixels > 2 * want_pixels + 4096) {
            std::fprintf(stderr, "%s: no end after %lld cycles (pixels so far %lld)\n",
                         argv[1], cycle, pixels);
            return 1;
        }
    }
    if (trace) std::fclose(trace);
    if (rgb) std::fclose(rgb);
    std::printf("cycles=%lld\n", nth_pixel);
    std::printf("last_pixel=%lld\n", last_pixel);
    std::printf("header_cycles=%lld\n", header_end);
    std::printf("first_pixel=%lld\n", first_pixel);
    std::printf("pixels=%lld\n", pixels);
    std::printf("blocks=%lld\n", entropy_blocks);
    std::printf("idct_blocks=%lld\n", idct_blocks);
    std::printf("idle_at_end=%d\n", int(idle_at_end));
    std::printf("width=%d\nheight=%d\n", int(top.outport_width_o), int(top.outport_height_o));
    return 0;
}
