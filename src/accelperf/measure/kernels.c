/* Micro-benchmark kernels for accelperf's memory probe, compiled at first use.
 *
 * chase: a dependent pointer chase; every load's address is the previous load's value,
 *        so the loop runs at one memory latency per step.
 * stream_read: reads a buffer `passes` times with independent integer accumulators, so
 *        loads are not serialised; the empty asm with a memory clobber stops the compiler
 *        from computing one pass and multiplying.
 */
#include <stddef.h>
#include <stdint.h>

uint64_t chase(const uint64_t *next, uint64_t start, uint64_t steps) {
    uint64_t i = start;
    for (uint64_t k = 0; k < steps; k++) i = next[i];
    return i;
}

uint64_t stream_read(const uint64_t *a, size_t n, size_t passes) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (size_t p = 0; p < passes; p++) {
        __asm__ volatile("" : : "r"(a) : "memory");
        for (size_t i = 0; i + 8 <= n; i += 8) {
            s0 += a[i]; s1 += a[i + 1]; s2 += a[i + 2]; s3 += a[i + 3];
            s4 += a[i + 4]; s5 += a[i + 5]; s6 += a[i + 6]; s7 += a[i + 7];
        }
    }
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
}
