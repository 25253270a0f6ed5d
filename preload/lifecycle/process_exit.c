/* process_exit.c - the file is written when the process exits, after the
 * program's own atexit handlers, so regions closed after MPI_Finalize are
 * kept. */
#include <stdlib.h>

#include "spill.h"

static void write_at_exit(void)
{
    if (sp_proc.finalized)
        return;
    sp_proc.finalized = 1;
    void (*leaving)(void) = SP_LOAD(sp_record_hooks.thread_leaving);
    if (leaving)
        leaving();
    sp_finalize_all("exit");
    sp_signals_after_exit_write();
}

/* atexit handlers run last-in first-out, and the dynamic loader registers
 * its own finalizer (which tears down every library, the writer's HDF5
 * included) only after our constructor ran.  So the hook is registered on
 * the first region registration instead, normally from main(): it then runs
 * before the loader's, while everything is still alive. */
static void register_exit_hook(void)
{
    if (atexit(write_at_exit) != 0)
        sp_log("cannot register the exit hook; call sp_finalize() to write the profile");
}

void sp_process_arm_exit_hook(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_exit_hook);
}

/* Last resort when the hook could not run first (regions recorded only in
 * constructors): the destructor. */
__attribute__((destructor)) static void scopeprof_unload(void)
{
    write_at_exit();
}

void sp_lifecycle_install(void)
{
    /* What the recorder calls on its slow paths (recorder.h). */
    SP_STORE(sp_record_hooks.chunk_full, sp_spill_on_full_chunk);
    SP_STORE(sp_record_hooks.tick, sp_spill_tick_slow);
    SP_STORE(sp_record_hooks.first_region, sp_process_arm_exit_hook);
    SP_STORE(sp_record_hooks.describe_callsite, sp_callsite_describe_with_writer);
    SP_STORE(sp_record_hooks.lock_events, sp_spill_lock);
    SP_STORE(sp_record_hooks.unlock_events, sp_spill_unlock);
    /* SIGTERM & co. write the profile before the process ends (signals.c). */
    sp_spill_install();
}
