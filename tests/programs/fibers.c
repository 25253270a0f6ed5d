/* fibers.c - two fibers (makecontext/swapcontext) interleaving inside one
 * "session" region of the main thread.  Each fiber opens a "work" call,
 * yields, then runs YIELDS "step" calls with a yield inside each, closes
 * "work" and returns to the main context through uc_link. */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "scope_profiler.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SANITIZE_THREAD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SANITIZE_THREAD 1
#endif
#ifdef SANITIZE_THREAD
/* ThreadSanitizer must be told about stack switches. */
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

#define YIELDS 3
#define STACK (256 * 1024)

static ucontext_t main_ctx, fiber_ctx[2];
#ifdef SANITIZE_THREAD
static void *tsan_fiber[3]; /* the two fibers, then the main context */
#endif
static int work, step;
static volatile double sink;

static void announce(int to)
{
#ifdef SANITIZE_THREAD
    __tsan_switch_to_fiber(tsan_fiber[to], 0);
#else
    (void)to;
#endif
}

static void spin(void)
{
    for (int k = 0; k < 20000; k++)
        sink += k;
}

static void fiber(int me)
{
    sp_begin(work);
    spin();
    announce(2);
    swapcontext(&fiber_ctx[me], &main_ctx);
    for (int i = 0; i < YIELDS; i++) {
        sp_begin(step);
        spin();
        announce(2);
        swapcontext(&fiber_ctx[me], &main_ctx);
        sp_end(step);
    }
    sp_end(work);
    announce(2);
}

int main(void)
{
    work = sp_region("work");
    step = sp_region("step");
    int session = sp_region("session");
    sp_begin(session);
#ifdef SANITIZE_THREAD
    tsan_fiber[2] = __tsan_get_current_fiber();
#endif
    for (int f = 0; f < 2; f++) {
        getcontext(&fiber_ctx[f]);
        fiber_ctx[f].uc_stack.ss_sp = malloc(STACK);
        fiber_ctx[f].uc_stack.ss_size = STACK;
        fiber_ctx[f].uc_link = &main_ctx;
        makecontext(&fiber_ctx[f], (void (*)(void))fiber, 1, f);
#ifdef SANITIZE_THREAD
        tsan_fiber[f] = __tsan_create_fiber(0);
#endif
    }
    /* Round robin until both fibers returned: 1 + YIELDS + 1 entries each. */
    for (int round = 0; round < YIELDS + 2; round++)
        for (int f = 0; f < 2; f++) {
            announce(f);
            swapcontext(&main_ctx, &fiber_ctx[f]);
        }
    sp_end(session);
    printf("fibers done\n");
    return 0;
}
