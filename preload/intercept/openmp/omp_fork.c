/* omp_fork.c - parallel region instances as calls and fork edges
 * (omp_fork.h). */
#include <stdlib.h>
#include <string.h>

#include "omp_fork.h"
#include "record/forks.h"

static const char *const fork_region_names[SP_OMP_NUM_KINDS] = {"omp parallel", "omp teams"};

struct sp_omp_child {
    int64_t thread, ordinal;
};

/* Region ids per kind and profiler slot, -1 until registered. */
#define MAX_SLOTS 64
static int region_of_slot[SP_OMP_NUM_KINDS][MAX_SLOTS];
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static void clear_slots(void)
{
    for (int k = 0; k < SP_OMP_NUM_KINDS; k++)
        for (int i = 0; i < MAX_SLOTS; i++)
            region_of_slot[k][i] = -1;
}

static int fork_region(struct sp_profiler *p, int kind, uintptr_t site)
{
    pthread_once(&slots_once, clear_slots);
    int known = p->slot >= 0 && p->slot < MAX_SLOTS;
    if (known && SP_LOAD(region_of_slot[kind][p->slot]) >= 0)
        return SP_LOAD(region_of_slot[kind][p->slot]);
    /* The first construct seen gives the region its call site: the writer
     * resolves the address to the construct's source line. */
    uintptr_t frames[1] = {site};
    int id = sp_region_lookup(p, fork_region_names[kind], NULL, -1, frames,
                              site && sp_cfg.callsites ? 1 : 0, 0);
    if (id >= 0 && known)
        SP_STORE(region_of_slot[kind][p->slot], id);
    return id;
}

/* Wait for the clock to step (at most one clock step, bounded): the
 * region's call then strictly contains the calls of the body, even on a
 * coarse clock where a short body would otherwise have the same interval,
 * and identical intervals nest by region order (spec 5.2), not by time. */
static void clock_step(void)
{
    int64_t t = sp_ticks();
    for (int k = 0; k < 100000 && sp_ticks() == t; k++)
        ;
}

int sp_omp_is_fork_region(struct sp_profiler *p, uint32_t region)
{
    pthread_once(&slots_once, clear_slots);
    if (!p || p->slot < 0 || p->slot >= MAX_SLOTS)
        return 0;
    for (int k = 0; k < SP_OMP_NUM_KINDS; k++)
        if (SP_LOAD(region_of_slot[k][p->slot]) == (int)region)
            return 1;
    return 0;
}

void sp_omp_fork_begin(struct sp_omp_instance *inst, int kind, uintptr_t site)
{
    inst->profiler = NULL;
    inst->kind = kind;
    inst->children = NULL;
    inst->num_children = inst->children_cap = 0;
    inst->ended = 0;
    inst->parent_ordinal = -1;
    struct sp_profiler *p = sp_current_profiler();
    if (sp_cfg.disable || !p || !SP_LOAD(p->active))
        return;
    int region = fork_region(p, kind, site);
    /* Excluded by SCOPE_PROFILER_INCLUDE/EXCLUDE: no call, no edge. */
    if (region < 0 || !sp_region_get(p, (uint32_t)region)->wanted)
        return;
    sp_profiler_begin(p, region);
    clock_step();
    inst->encountering = sp_tls_thread;
    if (!inst->encountering)
        return;
    inst->region = region;
    pthread_mutex_init(&inst->lock, NULL);
    inst->profiler = p;
    __atomic_store_n(&inst->published, 1, __ATOMIC_RELEASE);
}

void sp_omp_fork_end(struct sp_omp_instance *inst)
{
    struct sp_profiler *p = inst->profiler;
    if (!p)
        return;
    clock_step();
    sp_profiler_end(p, inst->region);
    __atomic_store_n(&inst->published, 0, __ATOMIC_RELAXED);
    sp_fork_edge edge = {
        .parent_thread = inst->encountering->index,
        .parent_ordinal = sp_fork_last_ordinal(p, (uint32_t)inst->region),
        .parent_region = (uint32_t)inst->region,
        .child_region = (uint32_t)inst->region,
    };
    pthread_mutex_lock(&inst->lock);
    for (size_t i = 0; i < inst->num_children && edge.parent_ordinal >= 0; i++) {
        edge.child_thread = inst->children[i].thread;
        edge.child_ordinal = inst->children[i].ordinal;
        sp_fork_add(p, &edge);
    }
    free(inst->children);
    inst->children = NULL;
    inst->num_children = inst->children_cap = 0;
    inst->parent_ordinal = edge.parent_ordinal;
    inst->ended = 1;
    pthread_mutex_unlock(&inst->lock);
}

void sp_omp_instance_destroy(struct sp_omp_instance *inst)
{
    if (!inst->profiler)
        return;
    pthread_mutex_destroy(&inst->lock);
    inst->profiler = NULL;
}

void sp_omp_mark_worker(int thread_num)
{
    struct sp_thread *t = sp_tls_thread;
    if (!t || t->omp_thread_num >= 0 || thread_num <= 0)
        return;
    pthread_mutex_lock(&sp_threads_lock);
    if (strcmp(t->kind, "main") != 0)
        t->kind = "openmp";
    t->omp_thread_num = thread_num;
    pthread_mutex_unlock(&sp_threads_lock);
}

int sp_omp_worker_begin(struct sp_omp_instance *inst)
{
    if (!__atomic_load_n(&inst->published, __ATOMIC_ACQUIRE))
        return 0;
    struct sp_profiler *p = inst->profiler;
    if (!p || sp_tls_thread == inst->encountering)
        return 0;
    sp_profiler_begin(p, inst->region);
    clock_step();
    return 1;
}

void sp_omp_worker_end(struct sp_omp_instance *inst)
{
    struct sp_profiler *p = inst->profiler;
    if (!p)
        return;
    clock_step();
    sp_profiler_end(p, inst->region);
    struct sp_thread *t = sp_tls_thread;
    int64_t ordinal = sp_fork_last_ordinal(p, (uint32_t)inst->region);
    /* Always through the lock: the encountering thread takes it before it
     * ends the instance, which orders this worker's last use before. */
    pthread_mutex_lock(&inst->lock);
    if (!t || ordinal < 0) {
        pthread_mutex_unlock(&inst->lock);
        return;
    }
    if (inst->ended) {
        /* The encountering thread's edges are out: this one goes alone. */
        sp_fork_edge edge = {
            .parent_thread = inst->encountering->index,
            .parent_ordinal = inst->parent_ordinal,
            .parent_region = (uint32_t)inst->region,
            .child_thread = t->index,
            .child_ordinal = ordinal,
            .child_region = (uint32_t)inst->region,
        };
        pthread_mutex_unlock(&inst->lock);
        if (edge.parent_ordinal >= 0)
            sp_fork_add(p, &edge);
        return;
    }
    if (inst->num_children == inst->children_cap) {
        size_t cap = inst->children_cap ? inst->children_cap * 2 : 8;
        struct sp_omp_child *grown = realloc(inst->children, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&inst->lock);
            return;
        }
        inst->children = grown;
        inst->children_cap = cap;
    }
    inst->children[inst->num_children++] = (struct sp_omp_child){t->index, ordinal};
    pthread_mutex_unlock(&inst->lock);
}
