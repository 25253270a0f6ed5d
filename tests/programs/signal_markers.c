/* signal_markers.c - markers inside a SIGALRM handler firing at ~10 kHz
 * while the main flow records (and allocates, and registers new regions).
 *
 *   signal_markers HANDLER_CALLS
 * Runs until the handler has made HANDLER_CALLS sp_begin/sp_end pairs of
 * "handler" (looked up by name in the handler every time, as a handler
 * that cannot keep ids would), with "main" > "inner" pairs and a malloc in
 * the main loop, then prints "main=M handler=H": the calls each made. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static volatile sig_atomic_t handler_calls;

static void on_alarm(int sig)
{
    (void)sig;
    int h = sp_region("handler");
    sp_begin(h);
    sp_end(h);
    handler_calls++;
}

int main(int argc, char **argv)
{
    long want = argc > 1 ? atol(argv[1]) : 2000;
    int main_id = sp_region("main"), inner = sp_region("inner");
    sp_region("handler");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    /* A POSIX timer: precise at 100 us where an itimer may not be. */
    timer_t timer;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGALRM;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) {
        perror("timer_create");
        return 1;
    }
    struct itimerspec every = {{0, 100000}, {0, 100000}};
    timer_settime(timer, 0, &every, NULL);
    long main_calls = 0;
    volatile char *keep = NULL;
    while (handler_calls < want) {
        sp_begin(main_id);
        sp_begin(inner);
        char *p = malloc(64 + (size_t)(main_calls & 1023));
        if (p)
            p[0] = (char)main_calls;
        free((void *)keep);
        keep = p;
        sp_end(inner);
        sp_end(main_id);
        main_calls++;
        if (main_calls % 50000 == 0) {
            char name[32];
            snprintf(name, sizeof name, "dyn_%ld", main_calls / 50000);
            sp_region(name); /* the registration path, under its lock */
        }
    }
    timer_delete(timer);
    free((void *)keep);
    printf("main=%ld handler=%ld\n", main_calls, (long)handler_calls);
    return 0;
}
