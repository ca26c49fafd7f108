/* cgpredict trace runtime: the record layout, defined once.
 *
 * The numpy dtypes in cgpredict/tracefile.py mirror these structs; tests/test_tracefile.py
 * compiles a program printing sizeof/offsetof and compares them.
 *
 * Event stream: one uint64 per event. Top 16 bits = tag, low 48 bits = payload.
 *   tag < CGP_TAG_MARKERS : memory access by static instruction `tag`; payload = address
 *   CGP_TAG_LOOP          : loop iteration; payload = loop id << 32 | iteration index
 *   CGP_TAG_EXIT          : a marked loop exits; payload = loop id << 32
 *   CGP_TAG_BEGIN/END     : region launch begins/ends; payload = region << 32 | launch index
 *
 * Trip file (CGP_TRIPS): one cgp_trip per entry of a region loop below the outermost one
 * (depth 2 .. CGP_HELPER_DEPTH - 1) in a recorded launch: what a pseudo-thread's lanes need to
 * be compared (a warp runs its slowest lane's trips, cgpredict/lane_trips.py).
 */
#ifndef CGP_RUNTIME_H
#define CGP_RUNTIME_H
#include <stdint.h>

#define CGP_TAG_MARKERS 0xF000u
#define CGP_TAG_LOOP 0xFFFFu
#define CGP_TAG_BEGIN 0xFFFEu
#define CGP_TAG_END 0xFFFDu
#define CGP_TAG_EXIT 0xFFFCu
#define CGP_MARKED_DEPTH 2
#define CGP_HELPER_DEPTH 100 /* instrument/memtrace.py HELPER_DEPTH: loops of helper calls */
#define CGP_NO_INDEX 0xFFFFFFFFu
#define CGP_META_MAGIC 0x4154454d50474343ull /* "CCGPMETA" */

/* One launch of a region, written to the meta file when the launch ends. It is followed by
 * nbb uint64 block-execution counts and 2 * nloops uint64 (loop iterations, loop entries),
 * the deltas of this launch. */
typedef struct cgp_launch {
    int32_t region;
    uint32_t launch;
    uint64_t first_event; /* index in the event stream of its BEGIN record */
    uint64_t n_events;    /* events recorded for it (0 when not recorded) */
    uint32_t recorded;    /* 1 when its memory events are in the stream */
    uint32_t pad;
} cgp_launch;

/* The meta file starts with this header; `status` is rewritten at exit. After the last launch
 * record, a finished run appends the addresses (uint64) of the module's array globals, in the
 * order of __cgp_globals, so that addresses can be mapped back to array elements. */
typedef struct cgp_meta_header {
    uint64_t magic;
    uint32_t nbb;
    uint32_t nloops;
    uint64_t n_events;   /* total events written */
    uint32_t status;     /* 0 running, 1 finished, 2 event limit reached, 3 nested regions */
    uint32_t n_launches;
} cgp_meta_header;

/* One entry of a loop: the launch's row in the meta file, the loop, its iterations (header
 * executions) in this entry, and the iteration indices of its depth-1 and depth-2 ancestors at
 * the entry (CGP_NO_INDEX: none; the loop itself is at depth 2). */
typedef struct cgp_trip {
    uint32_t row;
    uint32_t loop;
    uint32_t trips;
    uint32_t index1;
    uint32_t index2;
} cgp_trip;

enum { CGP_RUNNING = 0, CGP_FINISHED = 1, CGP_EVENT_LIMIT = 2, CGP_NESTED = 3 };

void __cgp_region_begin(int region);
void __cgp_region_end(int region);
void __cgp_mem(uint64_t record);
extern int __cgp_recording; /* nonzero while the active launch records its events */
void __cgp_loop(uint32_t loop);
void __cgp_loop_exit(uint32_t loop);
void __cgp_bb_h(uint32_t block);
void __cgp_fn_enter(uint32_t fn);
#endif
