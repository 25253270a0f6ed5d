/* signals.c - SIGTERM, SIGXCPU and SIGUSR1 (what batch schedulers send
 * before SIGKILL) end a profiled run with its normal profile written.
 *
 * Writing HDF5 is not async-signal-safe, so the handler writes nothing: it
 * notes the signal in sp_tick_pending, arms a one-shot grace timer and
 * returns.  The recording threads look at the flag on their slow paths
 * (every 256 region exits and every new chunk, spill.h): the first one to
 * see it writes every profile from ordinary thread context, then restores
 * the default action and raises the signal again, so the process ends the
 * way the signal says (exit status, core dump for SIGXCPU).
 *
 * A process that makes no more calls (blocked in MPI, sleeping) never looks
 * at the flag: when the grace timer fires it delivers the same signal again
 * and the handler then lets the default action run at once.  What survives
 * that case is the spill file (fsync'ed at every spill), which
 * `scopeprof recover` turns into a profile.  A second signal from outside
 * also terminates at once.
 *
 * Only signals whose action is the default when the shim loads are watched:
 * a handler already there (another tool) or SIG_IGN stays in place, and a
 * handler the program installs later replaces ours, so the program's own
 * handling always wins.  See docs/robustness.md. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spill.h"

/* How long a process that makes no calls may delay the signal's action. */
#define SP_SIGNAL_GRACE_S 2


static const int watched[] = {SIGTERM, SIGXCPU, SIGUSR1};
#define NUM_WATCHED (sizeof watched / sizeof *watched)
static timer_t grace_timer[NUM_WATCHED];
static int armed_ok[NUM_WATCHED]; /* our handler and its timer are in place */
static pid_t owner_pid;           /* timers do not survive fork() */
static int exiting;               /* a thread is writing the profiles */

static int slot_of(int sig)
{
    for (size_t i = 0; i < NUM_WATCHED; i++)
        if (watched[i] == sig)
            return (int)i;
    return -1;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGUSR1: return "SIGUSR1";
    default: return "signal";
    }
}

static void on_signal(int sig);

/* Default action for sig; raised again it terminates the process (from the
 * handler: as soon as the handler returns and sig is unblocked). */
static void restore_default(int sig)
{
    struct sigaction current;
    if (sigaction(sig, NULL, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == on_signal) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
}

/* Async-signal-safe: atomics, getpid, sigaction, timer_settime, raise. */
static void on_signal(int sig)
{
    int saved_errno = errno;
    int i = slot_of(sig);
    int pending = __atomic_load_n(&sp_tick_pending, __ATOMIC_RELAXED);
    int recorded = __atomic_load_n(&sp_buffer_bytes, __ATOMIC_RELAXED) != 0;
    if (i < 0 || !armed_ok[i] || getpid() != owner_pid || pending || !recorded) {
        /* Nothing to write, a fork child, the grace time is over, or a
         * second signal: the default action, now. */
        restore_default(sig);
        raise(sig);
        errno = saved_errno;
        return;
    }
    struct itimerspec grace;
    memset(&grace, 0, sizeof grace);
    grace.it_value.tv_sec = SP_SIGNAL_GRACE_S;
    if (timer_settime(grace_timer[i], 0, &grace, NULL) != 0) {
        restore_default(sig);
        raise(sig);
    } else {
        __atomic_store_n(&sp_tick_pending, sig, __ATOMIC_RELAXED);
    }
    errno = saved_errno;
}

void sp_signals_install(void)
{
    owner_pid = getpid();
    for (size_t i = 0; i < NUM_WATCHED; i++) {
        int sig = watched[i];
        struct sigaction old;
        if (sigaction(sig, NULL, &old) != 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* someone else's handler, or ignored: left alone */
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_SIGNAL;
        ev.sigev_signo = sig;
        if (timer_create(CLOCK_MONOTONIC, &ev, &grace_timer[i]) != 0) {
            sp_debug("timer_create failed (%s): %s keeps its default action",
                     strerror(errno), signal_name(sig));
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* Interrupted system calls of the program resume as if nothing
         * happened: the program only ends later, at its next call. */
        sa.sa_flags = SA_RESTART;
        armed_ok[i] = 1;
        if (sigaction(sig, &sa, NULL) != 0) {
            armed_ok[i] = 0;
            timer_delete(grace_timer[i]);
        }
    }
}

/* From ordinary thread context: the default action of sig, now. */
static void terminate(int sig)
{
    restore_default(sig);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

void sp_signals_deferred_exit(void)
{
    int sig = __atomic_load_n(&sp_tick_pending, __ATOMIC_RELAXED);
    if (!sig || __atomic_exchange_n(&exiting, 1, __ATOMIC_ACQ_REL))
        return; /* another thread is writing; this one goes on meanwhile */
    int i = slot_of(sig);
    if (i >= 0) {
        /* The write may take longer than the grace time: the timer would
         * kill it half-way.  The scheduler's SIGKILL still bounds it. */
        struct itimerspec off;
        memset(&off, 0, sizeof off);
        timer_settime(grace_timer[i], 0, &off, NULL);
    }
    sp_log("%s received: writing the profile before terminating", signal_name(sig));
    sp_proc.finalized = 1;
    sp_finalize_all(signal_name(sig));
    terminate(sig);
}

void sp_signals_after_exit_write(void)
{
    int sig = __atomic_load_n(&sp_tick_pending, __ATOMIC_RELAXED);
    if (sig && !__atomic_exchange_n(&exiting, 1, __ATOMIC_ACQ_REL))
        terminate(sig);
}
