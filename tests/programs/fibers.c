/* fibers.c - two fibers (makecontext/swapcontext) interleaving inside one
 * "session" region of the main thread.  Each fiber opens a "work" call,
 * yields, then runs YIELDS "step" calls with a yield inside each, closes
 * "work" and returns to the main context through uc_link.
 *
 * No ThreadSanitizer fiber annotations: a fiber that returns is switched
 * away from by glibc, where no annotation can be placed, and all fibers run
 * on one thread, so TSAN treating them as one is exact enough. */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "scope_profiler.h"

#define YIELDS 3
#define STACK (256 * 1024)

static ucontext_t main_ctx, fiber_ctx[2];
static int work, step;
static volatile double sink;

static void spin(void)
{
    for (int k = 0; k < 20000; k++)
        sink += k;
}

static void fiber(int me)
{
    sp_begin(work);
    spin();
    swapcontext(&fiber_ctx[me], &main_ctx);
    for (int i = 0; i < YIELDS; i++) {
        sp_begin(step);
        spin();
            swapcontext(&fiber_ctx[me], &main_ctx);
        sp_end(step);
    }
    sp_end(work);
}

int main(void)
{
    work = sp_region("work");
    step = sp_region("step");
    int session = sp_region("session");
    sp_begin(session);
    for (int f = 0; f < 2; f++) {
        getcontext(&fiber_ctx[f]);
        fiber_ctx[f].uc_stack.ss_sp = malloc(STACK);
        fiber_ctx[f].uc_stack.ss_size = STACK;
        fiber_ctx[f].uc_link = &main_ctx;
        makecontext(&fiber_ctx[f], (void (*)(void))fiber, 1, f);
    }
    /* Round robin until both fibers returned: 1 + YIELDS + 1 entries each. */
    for (int round = 0; round < YIELDS + 2; round++)
        for (int f = 0; f < 2; f++) {
            swapcontext(&main_ctx, &fiber_ctx[f]);
        }
    sp_end(session);
    printf("fibers done\n");
    return 0;
}
