/* record_hooks.c - the recorder's calls into the layers above it, which
 * register them at start-up (recorder.h, docs/architecture.md). */
#include "recorder.h"

struct sp_record_hooks sp_record_hooks;
__thread int64_t sp_tls_tick_deadline __attribute__((tls_model("initial-exec")));
volatile sig_atomic_t sp_tick_pending;

void sp_record_tick_slow(struct sp_lane *lane, int64_t now)
{
    void (*tick)(struct sp_lane *, int64_t) = SP_LOAD(sp_record_hooks.tick);
    if (tick)
        tick(lane, now);
    else
        sp_tls_tick_deadline = INT64_MAX; /* nothing above listens yet */
}
