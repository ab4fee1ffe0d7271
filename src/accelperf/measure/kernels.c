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

/* add_chain: n blocks of 8 dependent register-register additions. Each addition needs the
 * previous result, so a block takes 8 core cycles whatever the pipeline width: 8n / seconds
 * is the core clock (on virtual machines /proc/cpuinfo reports the nominal TSC rate
 * instead). Register operands matter: recent cores fold "add register, immediate" chains
 * at rename, which would make the chain look several times faster than the clock. */
uint64_t add_chain(uint64_t n) {
    uint64_t x = 0, step = 1;
    for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__)
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x) : "r"(step));
#elif defined(__aarch64__)
        __asm__ volatile("add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                         "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                         "add %0, %0, %1\n\tadd %0, %0, %1" : "+r"(x) : "r"(step));
#else
        x += 8 * step; __asm__ volatile("" : "+r"(x));
#endif
    }
    return x;
}
