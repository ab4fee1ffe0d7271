/* The compiled LPN engine's fixed part: state, checked arithmetic, the event loop.
 *
 * accelperf/lpn/compiled.py writes one C file per net: this runtime with the net's
 * tables (N_P, N_T, STRIDE, CONC, the dirty lists, DONE) and one fire/commit function per
 * transition inserted. The loop below is the Python engine's (sim.py) line for line,
 * over the same rules (semantics.py R1-R8): a dirty set of transitions to re-check,
 * smallest id first (here a bit set: one OR marks a transition's watchers, a count of
 * trailing zeros finds the smallest, the order of the Python engine's heap); an event
 * heap ordered by (time, transition, start sequence); initiation-interval wake-ups; the
 * same limits. The per-place and per-transition state sits in fixed arrays inside the
 * context, so the generated code reaches C->P[3].len at a constant offset. Values are
 * int64: every operation that would leave that range stops the run with an error
 * instead of wrapping. While a run watches for Ctrl-C, SIGINT only sets a flag that the
 * loop reads every 4096 commits (a few microseconds apart), so the run stops between two
 * instants with its state intact for the report.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* @TABLES@ : the net's sizes and tables (N_P, N_T, STRIDE, ...) are inserted here */

/* Arrays in the context have at least one element, so a net without places or
 * transitions still compiles. */
#define N_P1 (N_P ? N_P : 1)
#define N_T1 (N_T ? N_T : 1)
#define N_PARAM1 (N_PARAM ? N_PARAM : 1)
#define N_W ((N_T + 63) / 64)

typedef struct { int64_t *buf; int64_t cap, head, len; } Place;   /* ring of tokens */
typedef struct { int64_t *d; int64_t cap; } Rec;                   /* one firing's data */
#define NO_REC INT32_MAX        /* the slot of a firing that carries no data */
/* 32 bytes: the heap moves whole events. slot -1: a wake-up; records stop short of
 * NO_REC (rec_get), transition ids are int32 in every table. */
typedef struct { int64_t time, seq, start; int32_t tid, slot; } Event;

/* A firing error: code, then what the Python side needs to write the message. */
enum { E_NONE, E_OP, E_BELOW_ZERO, E_TOO_FEW, E_NO_ROUTE };
typedef struct { int64_t code, op, a, b, msg; } Err;

enum { OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_MOD, OP_DIV, OP_NEG, OP_ABS, OP_TIME };

static inline void fail_op(Err *E, int64_t op, int64_t a, int64_t b) {
    if (!E->code) { E->code = E_OP; E->op = op; E->a = a; E->b = b; }
}
/* Python's integer semantics in int64: floor division and modulo round toward -inf (C
 * truncates toward zero), exact division fails when inexact, division by zero fails. */
static inline int64_t lpn_add(Err *E, int64_t a, int64_t b) {
    int64_t r; if (__builtin_add_overflow(a, b, &r)) fail_op(E, OP_ADD, a, b); return r;
}
static inline int64_t lpn_sub(Err *E, int64_t a, int64_t b) {
    int64_t r; if (__builtin_sub_overflow(a, b, &r)) fail_op(E, OP_SUB, a, b); return r;
}
static inline int64_t lpn_mul(Err *E, int64_t a, int64_t b) {
    int64_t r; if (__builtin_mul_overflow(a, b, &r)) fail_op(E, OP_MUL, a, b); return r;
}
static inline int64_t lpn_floordiv(Err *E, int64_t a, int64_t b) {
    if (b == 0 || (a == INT64_MIN && b == -1)) { fail_op(E, OP_FLOORDIV, a, b); return 0; }
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
static inline int64_t lpn_mod(Err *E, int64_t a, int64_t b) {
    if (b == 0) { fail_op(E, OP_MOD, a, b); return 0; }
    if (b == -1) return 0;                      /* INT64_MIN % -1 traps in C */
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static inline int64_t lpn_div(Err *E, int64_t a, int64_t b) {
    if (b == 0 || (a == INT64_MIN && b == -1) || a % b != 0) {
        fail_op(E, OP_DIV, a, b); return 0;
    }
    return a / b;
}
static inline int64_t lpn_neg(Err *E, int64_t a) {
    if (a == INT64_MIN) { fail_op(E, OP_NEG, a, 0); return 0; } return -a;
}
static inline int64_t lpn_abs(Err *E, int64_t a) {
    if (a == INT64_MIN) { fail_op(E, OP_ABS, a, 0); return 0; } return a < 0 ? -a : a;
}
static inline int64_t lpn_min(int64_t a, int64_t b) { return b < a ? b : a; }
static inline int64_t lpn_max(int64_t a, int64_t b) { return b > a ? b : a; }

typedef struct Ctx {
    Place P[N_P1];
    int64_t L[N_P1], M[N_P1];           /* locked, high-water marks */
    int64_t NS[N_T1];                   /* next start */
    int64_t done_time, done_count;
    Err err;
    Rec *recs; int64_t n_recs, cap_recs;
    int64_t *free_recs; int64_t n_free, cap_free;
    int64_t fire_delay, fire_slot;      /* what the last successful fire produced */
    int nomem;
    /* run statistics, as in sim.py */
    int64_t inflight[N_T1], wake_at[N_T1], busy[N_T1], busy_since[N_T1], area[N_T1],
        area_since[N_T1], slots[N_T1], commits[N_T1];
    int64_t now, last_commit, total, t_next, err_tid;
    Event *ev; int64_t n_ev, cap_ev;
    int64_t *trace; int64_t n_trace, cap_trace;
    int64_t param[N_PARAM1];            /* the named parameters' values (net.parameter) */
} Ctx;

enum { F_FAIL = -2, F_NONE = -1, F_HELD = 0, F_FIRED = 1 };

static int below(Ctx *C, int64_t msg, int64_t v) {
    C->err.code = E_BELOW_ZERO; C->err.msg = msg; C->err.a = v;
    return F_FAIL;
}
static int too_few(Ctx *C, int64_t msg, int64_t n, int64_t taken) {
    C->err.code = E_TOO_FEW; C->err.msg = msg; C->err.a = n; C->err.b = taken;
    return F_FAIL;
}
static int no_route(Ctx *C, int64_t msg) {
    C->err.code = E_NO_ROUTE; C->err.msg = msg;
    return F_FAIL;
}

static int grow(void **p, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return 0;
    *p = q; *cap = c;
    return 1;
}

/* Room for n more tokens of `stride` values in place p (the ring doubles, unwrapped). */
static inline int place_reserve(Ctx *C, int64_t pid, int64_t stride, int64_t n) {
    Place *p = &C->P[pid];
    if (!stride || p->len + n <= p->cap) return 1;
    int64_t c = p->cap ? p->cap : 16;
    while (c < p->len + n) c *= 2;
    int64_t *b = malloc((size_t)(c * stride) * sizeof(int64_t));
    if (!b) { C->nomem = 1; return 0; }
    for (int64_t i = 0; i < p->len; i++)
        memcpy(b + i * stride, p->buf + ((p->head + i) & (p->cap - 1)) * stride,
               (size_t)stride * sizeof(int64_t));
    free(p->buf);
    p->buf = b; p->cap = c; p->head = 0;
    return 1;
}
#define TOK(pid, i, k, stride) \
    (C->P[pid].buf[((C->P[pid].head + (i)) & (C->P[pid].cap - 1)) * (stride) + (k)])
#define SLOT(pid, i, stride) \
    (C->P[pid].buf + ((C->P[pid].head + C->P[pid].len + (i)) & (C->P[pid].cap - 1)) * (stride))

static inline void pop(Ctx *C, int64_t pid, int64_t n) {
    Place *p = &C->P[pid];
    if (p->cap) p->head = (p->head + n) & (p->cap - 1);
    p->len -= n;
    C->L[pid] += n;
}

static inline int64_t *rec_get(Ctx *C, int64_t need, int64_t *slot) {
    int64_t s;
    if (C->n_free) s = C->free_recs[--C->n_free];
    else {
        if (C->n_recs == NO_REC - 1 ||
            !grow((void **)&C->recs, &C->cap_recs, C->n_recs + 1, sizeof(Rec)) ||
            !grow((void **)&C->free_recs, &C->cap_free, C->n_recs + 1, sizeof(int64_t))) {
            C->nomem = 1; return NULL;
        }
        s = C->n_recs++;
        C->recs[s].d = NULL; C->recs[s].cap = 0;
    }
    if (need < 1) need = 1;             /* a record is never NULL, even with no data */
    if (!grow((void **)&C->recs[s].d, &C->recs[s].cap, need, sizeof(int64_t))) {
        C->free_recs[C->n_free++] = s;
        C->nomem = 1;
        return NULL;
    }
    *slot = s;
    return C->recs[s].d;
}
static inline void rec_put(Ctx *C, int64_t s) {
    C->free_recs[C->n_free++] = s;      /* room: the list has one entry per slot */
}

static inline void occupancy(Ctx *C, int64_t pid) {
    int64_t o = C->P[pid].len + C->L[pid];
    if (o > C->M[pid]) C->M[pid] = o;
}

/* @NET@ : the net's tables and transitions are inserted here */

/* ------------------------------------------------------------------ heaps */
static inline int ev_less(const Event *a, const Event *b) {
    if (a->time != b->time) return a->time < b->time;
    if (a->tid != b->tid) return a->tid < b->tid;
    return a->seq < b->seq;
}
/* Fields, not a struct by value: a struct copied through the stack stalls the loads. */
static inline int ev_push(Ctx *C, int64_t time, int64_t tid, int64_t seq, int64_t slot,
                          int64_t start) {
    if (C->n_ev == C->cap_ev &&
        !grow((void **)&C->ev, &C->cap_ev, C->n_ev + 1, sizeof(Event))) return 0;
    int64_t i = C->n_ev++;
    Event *h = C->ev;
    while (i) {
        int64_t up = (i - 1) / 2;
        Event *u = &h[up];
        if (u->time < time || (u->time == time && (u->tid < tid ||
                                                    (u->tid == tid && u->seq < seq)))) break;
        h[i] = *u; i = up;
    }
    h[i].time = time; h[i].seq = seq; h[i].start = start;
    h[i].tid = (int32_t)tid; h[i].slot = (int32_t)slot;
    return 1;
}
static inline void ev_pop(Ctx *C, Event *top) {
    Event *h = C->ev;
    *top = h[0];
    int64_t n = --C->n_ev, i = 0;
    if (!n) return;
    Event *last = &h[n];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_less(&h[c + 1], &h[c])) c++;
        if (!ev_less(&h[c], last)) break;
        h[i] = h[c]; i = c;
    }
    h[i] = *last;
}
/* The dirty set: bit t of word t / 64 set when transition t is to be re-checked, and the
 * first word that may have a bit set. A local of lpn_run that no called function sees:
 * when the net fits one word (DW is then constant 0) it lives in a register. */
typedef struct { uint64_t w[N_W ? N_W : 1]; int64_t lo; } Dirty;
#define WORD(w) (N_W == 1 ? 0 : (w))
#define DW(t) WORD((t) >> 6)
static inline void dirty_add(Dirty *D, int64_t t) {
    D->w[DW(t)] |= UINT64_C(1) << (t & 63);
    if (DW(t) < D->lo) D->lo = DW(t);
}
/* The first word with a bit set (N_W when none), remembered in lo. */
static inline int64_t dirty_word(Dirty *D) {
    if (N_W == 1) return D->w[0] ? 0 : 1;
    int64_t w = D->lo;
    while (w < N_W && !D->w[w]) w++;
    return D->lo = w;
}
/* Take the smallest dirty transition out of the set: N_T when there is none. */
static inline int64_t dirty_pop(Dirty *D) {
    int64_t w = dirty_word(D);
    if (w == N_W) return N_T;
    uint64_t x = D->w[WORD(w)];
    D->w[WORD(w)] = x & (x - 1);                  /* clear the lowest bit */
    return w * 64 + __builtin_ctzll(x);
}
/* Whether a transition with a smaller id than t is dirty. */
static inline int dirty_below(Dirty *D, int64_t t) {
    int64_t w = dirty_word(D);
    return w < DW(t) || (w == DW(t) && (D->w[WORD(w)] & ((UINT64_C(1) << (t & 63)) - 1)));
}
/* x += n * dt for the utilisation statistics, refusing to wrap. */
static inline int accumulate(Ctx *C, int64_t *x, int64_t n, int64_t dt) {
    int64_t p;
    if (__builtin_mul_overflow(n, dt, &p) || __builtin_add_overflow(*x, p, x)) {
        fail_op(&C->err, OP_TIME, *x, p);
        return 0;
    }
    return 1;
}
/* Mark list k of a table written by compiled.py: (word, bits) pairs, words ascending;
 * for a net of one word, the table holds one mask per list. */
static inline void mark_list(Dirty *D, const int32_t *at, const int32_t *word,
                             const uint64_t *bits, int64_t k) {
    int32_t j = at[k], end = at[k + 1];
    if (j == end) return;
    if (WORD(word[j]) < D->lo) D->lo = WORD(word[j]);
    for (; j < end; j++) D->w[WORD(word[j])] |= bits[j];
}
#if N_W == 1
#define MARK(D, NAME, k) ((D)->w[0] |= NAME[k])
#else
#define MARK(D, NAME, k) mark_list(D, NAME##_AT, NAME##_W, NAME, k)
#endif

/* ------------------------------------------------------------------ the API */
void *lpn_new(void) {
    return calloc(1, sizeof(Ctx));
}

/* The values of the net's named parameters for this run, in the model's order: one
 * library serves every parameter vector of a net (csource reads them as C->param[k]). */
void lpn_set_params(void *ctx, const int64_t *values) {
    if (N_PARAM) memcpy(((Ctx *)ctx)->param, values, N_PARAM * sizeof(int64_t));
}

void lpn_free(void *ctx) {
    Ctx *C = ctx;
    if (!C) return;
    for (int64_t i = 0; i < N_P; i++) free(C->P[i].buf);
    for (int64_t i = 0; i < C->n_recs; i++) free(C->recs[i].d);
    free(C->recs); free(C->free_recs); free(C->ev); free(C->trace);
    free(C);
}

enum { R_DONE, R_MAX_TIME, R_MAX_COMMITS, R_STALLED, R_ERROR, R_NOMEM, R_INTERRUPTED };

#define FAIL(code) do { C->now = now; C->total = total; return (code); } while (0)

/* Set by SIGINT while a run watches for it; read by the loop. */
static volatile sig_atomic_t interrupted = 0;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static int run_loop(Ctx *C, const int64_t *counts, const int64_t *values, int64_t max_time,
                    int64_t max_commits, int64_t max_cycle, int keep_trace);

/* Run from the initial marking: counts[N_P] tokens per place, their values in place
 * order. Limits < 0 mean none. Returns an R_ code; the state stays in the context.
 * watch_sigint: take SIGINT over for the run (the caller, on the interpreter's main
 * thread, turns R_INTERRUPTED into its own interruption); the previous handler is put
 * back before returning, and a SIGINT that came after the loop ended is raised again
 * for that handler, never lost. */
int lpn_run(void *ctx, const int64_t *counts, const int64_t *values, int64_t max_time,
            int64_t max_commits, int64_t max_cycle, int keep_trace, int watch_sigint) {
#if defined(__unix__) || defined(__APPLE__)
    if (watch_sigint) {
        struct sigaction ours, old;
        memset(&ours, 0, sizeof ours);
        ours.sa_handler = on_sigint;
        sigemptyset(&ours.sa_mask);
        interrupted = 0;
        if (sigaction(SIGINT, &ours, &old) == 0) {
            int status = run_loop(ctx, counts, values, max_time, max_commits, max_cycle,
                                  keep_trace);
            sigaction(SIGINT, &old, NULL);
            if (interrupted && status != R_INTERRUPTED) raise(SIGINT);
            interrupted = 0;
            return status;
        }
    }
#else
    (void)watch_sigint;
#endif
    return run_loop(ctx, counts, values, max_time, max_commits, max_cycle, keep_trace);
}

static int run_loop(Ctx *C, const int64_t *counts, const int64_t *values, int64_t max_time,
                    int64_t max_commits, int64_t max_cycle, int keep_trace) {
    const int64_t *v = values;
    for (int64_t p = 0; p < N_P; p++) {
        if (!place_reserve(C, p, STRIDE[p], counts[p])) return R_NOMEM;
        if (STRIDE[p]) memcpy(C->P[p].buf, v, (size_t)(counts[p] * STRIDE[p]) * sizeof(int64_t));
        v += counts[p] * STRIDE[p];
        C->P[p].len = counts[p];
        C->M[p] = counts[p];
    }
    Dirty dirty = {{0}, 0}, *D = &dirty;
    for (int64_t t = 0; t < N_T; t++) { C->wake_at[t] = -1; dirty_add(D, t); }
    int64_t now = 0, seq = 0, total = 0, at_cycle = 0, tid = 0;
    C->done_time = -1;
    for (;;) {
        /* R5: start firings at `now`, always of the lowest-id transition that can */
        for (;;) {
            tid = dirty_pop(D);
            if (tid == N_T) break;
            while (C->inflight[tid] < CONC[tid]) {
                int r = fire_any(C, tid, now, 0);
                if (r == F_FAIL) { C->err_tid = tid; FAIL(C->nomem ? R_NOMEM : R_ERROR); }
                if (r != F_FIRED) {
                    if (r == F_HELD && C->wake_at[tid] != C->NS[tid]) {   /* R2 (g) */
                        C->wake_at[tid] = C->NS[tid];
                        if (!ev_push(C, C->NS[tid], tid, ++seq, -1, now)) FAIL(R_NOMEM);
                    }
                    break;
                }
                if (++at_cycle > max_cycle && max_cycle >= 0) FAIL(R_STALLED);
                int64_t n_in = C->inflight[tid];
                if (n_in == 0) C->busy_since[tid] = now;
                else if (!accumulate(C, &C->area[tid], n_in, now - C->area_since[tid]))
                    { C->err_tid = tid; FAIL(R_ERROR); }
                C->area_since[tid] = now;
                C->inflight[tid] = n_in + 1;
                if (!accumulate(C, &C->slots[tid], 1, C->NS[tid] - now))
                    { C->err_tid = tid; FAIL(R_ERROR); }
                int64_t due;
                if (__builtin_add_overflow(now, C->fire_delay, &due)) {
                    fail_op(&C->err, OP_TIME, now, C->fire_delay);
                    C->err_tid = tid; FAIL(R_ERROR);
                }
                if (!ev_push(C, due, tid, ++seq, C->fire_slot, now)) FAIL(R_NOMEM);
                MARK(D, START_DIRTY, tid);
                if (dirty_below(D, tid)) {               /* a lower id may start first */
                    dirty_add(D, tid);
                    break;
                }
            }
        }
        /* R6: drop wake-ups of transitions that can no longer start */
        while (C->n_ev && C->ev[0].slot < 0) {
            tid = C->ev[0].tid;
            if (C->inflight[tid] < CONC[tid]) {
                int r = fire_any(C, tid, now, 1);
                if (r == F_FAIL) { C->err_tid = tid; FAIL(R_ERROR); }
                if (r != F_NONE) break;
            }
            Event dropped;
            ev_pop(C, &dropped);
            C->wake_at[tid] = -1;
        }
        if (!C->n_ev) break;
        int64_t t_next = C->ev[0].time;
        if (max_time >= 0 && t_next > max_time) { C->t_next = t_next; FAIL(R_MAX_TIME); }
        if (t_next != now) { now = t_next; at_cycle = 0; }
        /* R4, R5: every commit due at `now`, smallest id first */
        while (C->n_ev && C->ev[0].time == now) {
            Event e;
            ev_pop(C, &e);
            tid = e.tid;
            if (e.slot < 0) {                       /* an initiation-interval wake-up */
                C->wake_at[tid] = -1;
                dirty_add(D, tid);
                continue;
            }
            int64_t chosen = commit_any(C, tid, e.slot, now);
            if (chosen == -2) FAIL(R_NOMEM);
            MARK(D, COMMIT_DIRTY, tid);
            if (chosen >= 0) MARK(D, WATCHERS, chosen);
            int64_t n_in = C->inflight[tid];
            if (!accumulate(C, &C->area[tid], n_in, now - C->area_since[tid]))
                { C->err_tid = tid; FAIL(R_ERROR); }
            C->area_since[tid] = now;
            C->inflight[tid] = n_in - 1;
            if (n_in == 1) C->busy[tid] += now - C->busy_since[tid];
            C->commits[tid]++;
            total++;
            C->last_commit = now;
            if (keep_trace) {
                if (!grow((void **)&C->trace, &C->cap_trace, 3 * (C->n_trace + 1),
                          sizeof(int64_t))) FAIL(R_NOMEM);
                int64_t *f = C->trace + 3 * C->n_trace++;
                f[0] = tid; f[1] = e.start; f[2] = now;
            }
            if (max_commits >= 0 && total > max_commits) FAIL(R_MAX_COMMITS);
            if (!(total & 4095) && interrupted) FAIL(R_INTERRUPTED);
        }
    }
    C->now = now; C->total = total;
    return R_DONE;
}

/* Scalars: now, last commit, commits, done time (-1: none), done tokens, the next event
 * (after R_MAX_TIME), the failing transition, error code, op, a, b, message id. */
void lpn_scalars(void *ctx, int64_t *out) {
    Ctx *C = ctx;
    int64_t s[] = {C->now, C->last_commit, C->total, C->done_time, C->done_count, C->t_next,
                   C->err_tid, C->err.code, C->err.op, C->err.a, C->err.b, C->err.msg};
    memcpy(out, s, sizeof s);
}

/* Per transition: commits, busy, busy_since, area, area_since, slots, inflight, next
 * start; then per place: high-water mark, free tokens, locked tokens. */
void lpn_arrays(void *ctx, int64_t *out) {
    Ctx *C = ctx;
    int64_t *t[] = {C->commits, C->busy, C->busy_since, C->area, C->area_since, C->slots,
                    C->inflight, C->NS};
    for (int k = 0; k < 8; k++, out += N_T) memcpy(out, t[k], N_T * sizeof(int64_t));
    for (int64_t p = 0; p < N_P; p++) { out[p] = C->M[p]; out[N_P + p] = C->P[p].len;
                                        out[2 * N_P + p] = C->L[p]; }
}

int64_t lpn_trace_len(void *ctx) { return ((Ctx *)ctx)->n_trace; }
void lpn_trace(void *ctx, int64_t *out) {
    Ctx *C = ctx;
    memcpy(out, C->trace, (size_t)(3 * C->n_trace) * sizeof(int64_t));
}

/* The free tokens of place p, head first (for a report of where a run stands). */
void lpn_tokens(void *ctx, int64_t p, int64_t *out) {
    Ctx *C = ctx;
    for (int64_t i = 0; i < C->P[p].len; i++)
        for (int64_t k = 0; k < STRIDE[p]; k++) *out++ = TOK(p, i, k, STRIDE[p]);
}
