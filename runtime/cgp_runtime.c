/* cgpredict trace runtime: records what the instrumented program does inside marked regions.
 *
 * Environment: CGP_EVENTS (event file), CGP_META (meta file), CGP_MAX_EVENTS (0: no limit),
 * CGP_MAX_LAUNCHES (record the memory events of the first N launches of each region; 0: all),
 * CGP_COUNT_ONLY=1 (record no memory events at all: block and loop counts only), CGP_TRIPS
 * (the trip file, cgp_trip records; unset: none written).
 * The instrumented IR defines __cgp_bbc, __cgp_nbb, __cgp_loop_parent, __cgp_loop_depth and
 * __cgp_nloops (see instrument/memtrace.py). Its inline loop probe (instrument/loopfast.py)
 * updates the loop state below through the exported pointers for an iteration that continues
 * its loop's entry and writes no marker, and calls __cgp_loop for any other.
 */
#include "cgp_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern uint64_t __cgp_bbc[];
extern const uint32_t __cgp_nbb;
extern const int32_t __cgp_loop_parent[];
extern const int32_t __cgp_loop_depth[];
extern const uint32_t __cgp_nloops;
extern const uint32_t __cgp_nfuncs;
extern void *const __cgp_globals[];
extern const uint32_t __cgp_nglobals;

#define BUF_EVENTS (1u << 17) /* 1 MiB */
#define MAX_REGIONS 4096

static uint64_t buf[BUF_EVENTS];
static uint32_t pos;
static FILE *events_f, *meta_f, *trips_f;
static cgp_meta_header meta;
static uint64_t max_events, max_launches, written, trips_written;
static int count_only;
static int active = -1;
/* read inline by the instrumented code (memtrace: @__cgp_mem_fast): no call per access of a
 * launch that is not recorded (count-only probes, launches past --max-launches) */
int __cgp_recording;
/* the loop state, exported for the inline probe (same allocations, same heap layout) */
uint64_t __cgp_tick, __cgp_launch_tick;
static uint32_t launches[MAX_REGIONS];
uint8_t *__cgp_lopen;
uint64_t *__cgp_fserial; /* per traced helper function: __cgp_tick of its latest call */
uint64_t *__cgp_liters, *__cgp_lstamp, *__cgp_lserial, *__cgp_lidx;
static uint64_t *loop_entries;
static uint64_t *base_bb, *base_iters, *base_entries, *delta;
static cgp_launch cur;
/* per loop: whether a recorded entry's trip is pending (written at its next entry or at the
 * launch's end), and its ancestors' iteration indices at the entry */
static uint8_t *trip_open;
static uint32_t *trip_index1, *trip_index2;
static uint32_t cur_row; /* the launch's row in the meta file */

static void die(const char *msg) {
    fprintf(stderr, "cgpredict runtime: %s\n", msg);
    _exit(97);
}

static void write_header(void) {
    if (!meta_f) return;
    fflush(meta_f);
    long here = ftell(meta_f);
    fseek(meta_f, 0, SEEK_SET);
    fwrite(&meta, sizeof meta, 1, meta_f);
    fseek(meta_f, here, SEEK_SET);
    fflush(meta_f);
}

static void flush_events(void) {
    if (pos && fwrite(buf, sizeof(uint64_t), pos, events_f) != pos) die("cannot write events");
    written += pos;
    pos = 0;
    if (max_events && written > max_events) {
        fflush(events_f);
        meta.n_events = written;
        meta.status = CGP_EVENT_LIMIT;
        write_header();
        _exit(0);
    }
}

static inline void emit(uint64_t rec) {
    if (pos == BUF_EVENTS) flush_events();
    buf[pos++] = rec;
}

static void finish(void) {
    if (!events_f) return;
    flush_events();
    fflush(events_f);
    meta.n_events = written;
    if (meta.status == CGP_RUNNING) meta.status = CGP_FINISHED;
    fseek(meta_f, 0, SEEK_END);
    for (uint32_t g = 0; g < __cgp_nglobals; g++) {
        uint64_t a = (uint64_t)(uintptr_t)__cgp_globals[g];
        fwrite(&a, sizeof a, 1, meta_f);
    }
    write_header();
    if (trips_f) fclose(trips_f);
    fclose(events_f);
    fclose(meta_f);
    events_f = meta_f = trips_f = NULL;
}

static uint64_t *zeros(size_t n) {
    uint64_t *p = calloc(n ? n : 1, sizeof(uint64_t));
    if (!p) die("out of memory");
    return p;
}

__attribute__((constructor)) static void cgp_init(void) {
    const char *ev = getenv("CGP_EVENTS"), *me = getenv("CGP_META");
    if (!ev || !me) die("CGP_EVENTS and CGP_META must name the output files");
    events_f = fopen(ev, "wb");
    meta_f = fopen(me, "w+b");
    if (!events_f || !meta_f) die("cannot open the trace output files");
    const char *s = getenv("CGP_MAX_EVENTS");
    max_events = s ? strtoull(s, NULL, 10) : 0;
    s = getenv("CGP_MAX_LAUNCHES");
    max_launches = s ? strtoull(s, NULL, 10) : 0;
    s = getenv("CGP_COUNT_ONLY");
    count_only = s && s[0] == '1';
    s = getenv("CGP_TRIPS");
    trips_f = s ? fopen(s, "wb") : NULL;
    if (s && !trips_f) die("cannot open the trip file");
    uint32_t nl = __cgp_nloops;
    __cgp_liters = zeros(nl); loop_entries = zeros(nl); __cgp_lstamp = zeros(nl);
    __cgp_lserial = zeros(nl); __cgp_lidx = zeros(nl);
    base_bb = zeros(__cgp_nbb); base_iters = zeros(nl); base_entries = zeros(nl);
    delta = zeros(__cgp_nbb + 2 * (size_t)nl);
    for (uint32_t l = 0; l < nl; l++) __cgp_lstamp[l] = UINT64_MAX;
    __cgp_fserial = zeros(__cgp_nfuncs);
    __cgp_lopen = calloc(nl ? nl : 1, 1);
    trip_open = calloc(nl ? nl : 1, 1);
    trip_index1 = calloc(nl ? nl : 1, sizeof(uint32_t));
    trip_index2 = calloc(nl ? nl : 1, sizeof(uint32_t));
    if (!__cgp_lopen || !trip_open || !trip_index1 || !trip_index2) die("out of memory");
    meta.magic = CGP_META_MAGIC;
    meta.nbb = __cgp_nbb;
    meta.nloops = nl;
    fwrite(&meta, sizeof meta, 1, meta_f);
    atexit(finish);
}

/* The pending trip of loop ``loop``'s latest entry (its iterations: the index of its latest
 * one + 1); a trip counts as an event towards CGP_MAX_EVENTS. */
static void write_trip(uint32_t loop) {
    trip_open[loop] = 0;
    if (!trips_f) return;
    uint64_t n = __cgp_lidx[loop] + 1;
    cgp_trip t = {cur_row, loop, n > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)n,
                  trip_index1[loop], trip_index2[loop]};
    if (fwrite(&t, sizeof t, 1, trips_f) != 1) die("cannot write trips");
    if (max_events && written + ++trips_written > max_events) {
        fflush(trips_f);
        flush_events();
        fflush(events_f);
        meta.n_events = written;
        meta.status = CGP_EVENT_LIMIT;
        write_header();
        _exit(0);
    }
}

/* A recorded entry of a region loop at depth >= 2 opens a trip: its ancestors' indices. */
static void open_trip(uint32_t loop) {
    int32_t depth = __cgp_loop_depth[loop];
    if (!__cgp_recording || depth < 2 || depth >= CGP_HELPER_DEPTH) return;
    uint32_t i1 = CGP_NO_INDEX, i2 = CGP_NO_INDEX;
    for (int32_t p = __cgp_loop_parent[loop]; p >= 0; p = __cgp_loop_parent[p]) {
        if (__cgp_loop_depth[p] == 1) i1 = (uint32_t)__cgp_lidx[p];
        if (__cgp_loop_depth[p] == 2) i2 = (uint32_t)__cgp_lidx[p];
    }
    trip_open[loop] = 1;
    trip_index1[loop] = i1;
    trip_index2[loop] = i2;
}

void __cgp_region_begin(int region) {
    if (active >= 0) {
        meta.status = CGP_NESTED;
        finish();
        die("a marked region started inside another one");
    }
    if (region < 0 || region >= MAX_REGIONS) die("region number out of range");
    active = region;
    cur.region = region;
    cur.launch = launches[region]++;
    __cgp_recording = !count_only && (max_launches == 0 || cur.launch < max_launches);
    cur.recorded = (uint32_t)__cgp_recording;
    cur.first_event = written + pos;
    cur_row = meta.n_launches;
    memcpy(base_bb, __cgp_bbc, __cgp_nbb * sizeof(uint64_t));
    memcpy(base_iters, __cgp_liters, __cgp_nloops * sizeof(uint64_t));
    memcpy(base_entries, loop_entries, __cgp_nloops * sizeof(uint64_t));
    __cgp_launch_tick = ++__cgp_tick;
    if (__cgp_recording) emit((uint64_t)CGP_TAG_BEGIN << 48 | (uint64_t)region << 32 | cur.launch);
}

void __cgp_region_end(int region) {
    if (active != region) return;
    if (__cgp_recording) emit((uint64_t)CGP_TAG_END << 48 | (uint64_t)region << 32 | cur.launch);
    for (uint32_t l = 0; l < __cgp_nloops; l++)
        if (trip_open[l]) write_trip(l);
    cur.n_events = __cgp_recording ? written + pos - cur.first_event : 0;
    uint32_t nb = __cgp_nbb, nl = __cgp_nloops;
    for (uint32_t b = 0; b < nb; b++) delta[b] = __cgp_bbc[b] - base_bb[b];
    for (uint32_t l = 0; l < nl; l++) {
        delta[nb + l] = __cgp_liters[l] - base_iters[l];
        delta[nb + nl + l] = loop_entries[l] - base_entries[l];
    }
    fwrite(&cur, sizeof cur, 1, meta_f);
    fwrite(delta, sizeof(uint64_t), nb + 2 * (size_t)nl, meta_f);
    meta.n_launches++;
    active = -1;
    __cgp_recording = 0;
}

void __cgp_mem(uint64_t record) {
    if (__cgp_recording) emit(record);
}

void __cgp_loop(uint32_t loop) {
    int32_t parent = __cgp_loop_parent[loop];
    /* parent >= 0: a loop; -1: the region launch; <= -2: a call of helper function -2-parent */
    uint64_t parent_serial = parent >= 0 ? __cgp_lserial[parent]
                             : parent == -1 ? __cgp_launch_tick : __cgp_fserial[-2 - parent];
    if (__cgp_lstamp[loop] != parent_serial) {
        if (trip_open[loop]) write_trip(loop);
        __cgp_lstamp[loop] = parent_serial;
        __cgp_lidx[loop] = 0;
        loop_entries[loop]++;
        open_trip(loop);
    } else {
        __cgp_lidx[loop]++;
    }
    __cgp_lserial[loop] = ++__cgp_tick;
    __cgp_liters[loop]++;
    __cgp_lopen[loop] = 1;
    if (__cgp_recording && __cgp_loop_depth[loop] <= CGP_MARKED_DEPTH)
        emit((uint64_t)CGP_TAG_LOOP << 48 | (uint64_t)loop << 32
             | (__cgp_lidx[loop] & 0xFFFFFFFFu));
}

/* Called at the start of every exit block of a marked loop; only a real exit (the loop was
 * iterating) emits a marker, so an exit block shared with other paths is harmless. */
void __cgp_loop_exit(uint32_t loop) {
    if (!__cgp_lopen[loop]) return;
    __cgp_lopen[loop] = 0;
    if (__cgp_recording) emit((uint64_t)CGP_TAG_EXIT << 48 | (uint64_t)loop << 32);
}

/* Heap arrays start where cudaMalloc would put them (256-byte aligned), so that coalescing
 * and transactions per warp do not depend on the host allocator. Linked with
 * -Wl,--wrap=malloc,--wrap=calloc (see cgpredict/compiler.py); free() releases these. */
#define CGP_HEAP_ALIGN 256
void *__wrap_malloc(size_t n) {
    void *p = NULL;
    return posix_memalign(&p, CGP_HEAP_ALIGN, n ? n : 1) == 0 ? p : NULL;
}

void *__wrap_calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = __wrap_malloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

void __cgp_fn_enter(uint32_t fn) { __cgp_fserial[fn] = ++__cgp_tick; }

void __cgp_bb_h(uint32_t block) {
    if (active >= 0) __cgp_bbc[block]++;
}
