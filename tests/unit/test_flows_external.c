/* test_flows_external.c - the external sort (src/export/ext_sort.h) and
 * the pairing past the budget (mpi_flows_external.c): the same order as a
 * sort in memory, and the same message ids, counts and ends as
 * sp_mpi_flows_pair, with budgets that make many runs, one, or none; a
 * receive's flow end carries its paired send's sent bytes (otf2's
 * MPI_RECV length) on both paths. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/ext_sort.h"
#include "export/mpi_flows.h"

typedef struct rec {
    uint64_t key, tie;
    char pad[8];
} rec;

static int by_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->tie > y->tie) - (x->tie < y->tie);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* A private TMPDIR, so that a file left behind is seen. */
static char tmp[64];

static void make_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/sp-flows-ext-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
}

static void remove_tmp(void)
{
    DIR *d = opendir(tmp);
    cr_assert_not_null(d);
    int left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        left += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    cr_expect_eq(left, 0, "%d temporary files left in TMPDIR", left);
    rmdir(tmp);
    unsetenv("TMPDIR");
}

TestSuite(flows_external, .init = make_tmp, .fini = remove_tmp);

Test(flows_external, merges_runs_in_the_order_of_a_sort_in_memory)
{
    const size_t n = 5000;
    rec *want = malloc(n * sizeof *want);
    uint64_t seed = 7;
    for (size_t i = 0; i < n; i++)
        want[i] = (rec){lcg(&seed) % 100, i, {0}};
    /* budgets: a run per 4 records (the least), per 100, one run, none */
    const size_t budgets[] = {1, 100 * sizeof(rec), (n - 1) * sizeof(rec), 10 * n * sizeof(rec)};
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        sp_ext_sort *s = sp_ext_sort_new(sizeof(rec), by_rec, budgets[b]);
        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(sp_ext_sort_push(s, &want[i]), 0);
        cr_expect_eq(sp_ext_sort_count(s), n);
        cr_expect_eq(sp_ext_sort_spilled(s), b < 3, "budget %zu", budgets[b]);
        cr_assert_eq(sp_ext_sort_finish(s), 0);
        qsort(want, n, sizeof *want, by_rec);
        for (int pass = 0; pass < 2; pass++) {
            if (pass)
                cr_assert_eq(sp_ext_sort_rewind(s), 0);
            size_t got = 0;
            const rec *r;
            while ((r = sp_ext_sort_next(s)) != NULL) {
                cr_assert_lt(got, n);
                cr_assert_eq(by_rec(r, &want[got]), 0, "budget %zu: record %zu", budgets[b],
                             got);
                got++;
            }
            cr_expect_eq(got, n, "budget %zu pass %d", budgets[b], pass);
            cr_expect(!sp_ext_sort_failed(s));
        }
        sp_ext_sort_free(s);
        /* shuffled again for the next budget */
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = lcg(&seed) % (i + 1);
            rec t = want[i];
            want[i] = want[j];
            want[j] = t;
        }
    }
    free(want);
}

Test(flows_external, hands_back_what_fits_unsorted)
{
    sp_ext_sort *s = sp_ext_sort_new(sizeof(rec), by_rec, 1 << 20);
    for (uint64_t i = 0; i < 10; i++) {
        rec r = {10 - i, i, {0}};
        cr_assert_eq(sp_ext_sort_push(s, &r), 0);
    }
    size_t n = 0;
    rec *v = sp_ext_sort_take(s, &n);
    cr_assert_eq(n, 10);
    for (uint64_t i = 0; i < 10; i++)
        cr_expect_eq(v[i].key, 10 - i);
    free(v);
    sp_ext_sort_free(s);
}

/* A call of the random ends: its rank, start on the file's axis and
 * event (every event is one call). */
typedef struct call {
    uint32_t rank;
    int64_t start;
    uint64_t event;
    uint64_t shuffle;
} call;

/* The sent bytes of the send at event e (receives: -1, unknown). */
static int64_t sent_at(uint64_t e)
{
    return (int64_t)(7 * e + 3);
}

/* Random ends over few keys (so keys repeat), some keys short of a
 * receive, every fifth pair of calls two MPI_Sendrecv (an event with two
 * ends): pair them in memory and externally.  calls[2n]: each event's. */
static void random_ends(uint64_t seed, size_t n, sp_mpi_end **sends, size_t *ns,
                        sp_mpi_end **recvs, size_t *nr, call *calls)
{
    *sends = malloc(2 * n * sizeof **sends);
    *recvs = malloc(2 * n * sizeof **recvs);
    *ns = *nr = 0;
    for (size_t e = 0; e < n; e++) {
        int64_t src = (int64_t)(lcg(&seed) % 4), dst = (int64_t)(lcg(&seed) % 4),
                tag = (int64_t)(lcg(&seed) % 3), start = (int64_t)(lcg(&seed) % 50);
        calls[2 * e] = (call){(uint32_t)src, start, 2 * e, lcg(&seed)};
        calls[2 * e + 1] = (call){(uint32_t)dst, start + 5, 2 * e + 1, lcg(&seed)};
        if (e % 5 == 0) {
            /* src and dst exchange with tag 9: each call sends and receives */
            (*sends)[(*ns)++] = (sp_mpi_end){src, dst, 9, 0, start, 2 * e, sent_at(2 * e)};
            (*recvs)[(*nr)++] = (sp_mpi_end){dst, src, 9, 0, start, 2 * e, -1};
            (*sends)[(*ns)++] =
                (sp_mpi_end){dst, src, 9, 0, start + 5, 2 * e + 1, sent_at(2 * e + 1)};
            (*recvs)[(*nr)++] = (sp_mpi_end){src, dst, 9, 0, start + 5, 2 * e + 1, -1};
            continue;
        }
        sp_mpi_end x = {src, dst, tag, 0, start, 2 * e, sent_at(2 * e)};
        (*sends)[(*ns)++] = x;
        /* the receive, at a later event, except for key (1, 2, 0) now and
         * then: that key's counts differ */
        if (!(src == 1 && dst == 2 && tag == 0 && lcg(&seed) % 7 == 0)) {
            x.event = 2 * e + 1;
            x.start += 5;
            x.bytes = -1;
            (*recvs)[(*nr)++] = x;
        }
    }
}

static int in_call_order(const void *a, const void *b)
{
    const call *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->event > y->event) - (x->event < y->event);
}

/* The stream's order (rank, start) with the calls of one start in any
 * order (the stream puts the longer first, not the smaller event). */
static int in_stream_order(const void *a, const void *b)
{
    const call *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->shuffle > y->shuffle) - (x->shuffle < y->shuffle);
}

/* The ranks' clock offsets: the stream's start is the file's minus it. */
static const uint32_t offset_ranks[] = {0, 1, 2, 3};
static const int64_t offsets[] = {0, 1000, -7, 5};

/* Per message id, the event of its send (from the in-memory ends). */
static uint64_t *send_of_message;

/* A flow end's bytes: a send's own, a receive's its paired send's. */
static void expect_bytes(const sp_mpi_flow_end *f, const char *what)
{
    int64_t want = sent_at(f->send ? f->event : send_of_message[f->id]);
    cr_assert_eq(f->bytes, want, "%s: %s end of event %llu (message %llu): %lld bytes, want %lld",
                 what, f->send ? "send" : "receive", (unsigned long long)f->event,
                 (unsigned long long)f->id, (long long)f->bytes, (long long)want);
}

/* Every call looked up in `calls` order: what the in-memory lookup gives. */
static void expect_lookups(const sp_mpi_flows *want, const sp_mpi_flows *got, const call *calls,
                           size_t n, const char *what)
{
    for (size_t k = 0; k < n; k++) {
        size_t cw = 0, cg = 0;
        const sp_mpi_flow_end *fw = sp_mpi_flows_at(want, calls[k].event, &cw);
        const sp_mpi_flow_end *fg =
            sp_mpi_flows_at_call(got, calls[k].rank, calls[k].start, calls[k].event, &cg);
        cr_assert_eq(cg, cw, "%s: lookup %zu, event %llu", what, k,
                     (unsigned long long)calls[k].event);
        for (size_t i = 0; i < cw; i++) {
            cr_assert_eq(fg[i].id, fw[i].id, "%s: event %llu", what,
                         (unsigned long long)calls[k].event);
            cr_assert_eq(fg[i].send, fw[i].send);
            cr_assert_eq(fg[i].event, fw[i].event);
            expect_bytes(&fg[i], what);
        }
    }
}

Test(flows_external, pairs_as_in_memory)
{
    const size_t n = 3000;
    sp_mpi_end *sends, *recvs;
    size_t ns, nr;
    call *calls = malloc(2 * n * sizeof *calls);
    random_ends(11, n, &sends, &ns, &recvs, &nr, calls);
    sp_mpi_end *s2 = malloc(ns * sizeof *s2), *r2 = malloc(nr * sizeof *r2);
    memcpy(s2, sends, ns * sizeof *s2);
    memcpy(r2, recvs, nr * sizeof *r2);
    sp_mpi_flows want;
    cr_assert_eq(sp_mpi_flows_pair(s2, ns, r2, nr, &want), 0);
    cr_assert_gt(want.unpaired, 0, "the test needs a key left out");
    cr_assert_gt(want.messages, 0);
    size_t both = 0; /* events with two ends */
    for (size_t i = 0; i + 1 < want.num_ends; i++)
        both += want.ends[i].event == want.ends[i + 1].event;
    cr_assert_gt(both, 100, "the test needs events with two ends");
    send_of_message = calloc(want.messages + 1, sizeof *send_of_message);
    for (size_t i = 0; i < want.num_ends; i++)
        if (want.ends[i].send)
            send_of_message[want.ends[i].id] = want.ends[i].event;
    for (size_t i = 0; i < want.num_ends; i++)
        expect_bytes(&want.ends[i], "in memory");
    uint64_t seed = 5;
    /* the stream's start: the file's minus the rank's clock offset */
    for (size_t i = 0; i < 2 * n; i++)
        calls[i].start -= offsets[calls[i].rank];
    sp_mpi_rank_offsets by_rank = {offset_ranks, offsets, 4};
    /* budgets: everything spilled and windows of 4 ends, of 12 ends, the
     * pairing spilled and the flow ends in memory */
    const size_t budgets[] = {1, 4096, 400000};
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        /* (the sorts of the ends within 64,000 bytes: spilled) */
        size_t half = budgets[b] / 2 < 64000 ? budgets[b] / 2 : 64000;
        sp_ext_sort *a = sp_ext_sort_new(sizeof(sp_mpi_end), sp_mpi_end_by_key, half);
        sp_ext_sort *c = sp_ext_sort_new(sizeof(sp_mpi_end), sp_mpi_end_by_key, half);
        for (size_t i = 0; i < ns; i++)
            cr_assert_eq(sp_ext_sort_push(a, &sends[i]), 0);
        for (size_t i = 0; i < nr; i++)
            cr_assert_eq(sp_ext_sort_push(c, &recvs[i]), 0);
        cr_assert(sp_ext_sort_spilled(a) && sp_ext_sort_spilled(c));
        sp_mpi_flows got;
        cr_assert_eq(sp_mpi_flows_pair_external(a, c, budgets[b], &by_rank, &got), 0);
        sp_ext_sort_free(a);
        sp_ext_sort_free(c);
        cr_expect_eq(got.messages, want.messages);
        cr_expect_eq(got.unpaired, want.unpaired);
        cr_expect_eq(got.num_ends, want.num_ends);
        cr_assert_eq(got.file != NULL, b < 2, "budget %zu", budgets[b]);
        if (got.file) {
            size_t window = sp_mpi_flows_file_window(got.file);
            cr_expect_eq(window, b == 0 ? 4 : 12); /* 4096 / 8 / 40 bytes */
            cr_assert_gt(got.num_ends, 100 * window, "the ends span many windows");
        }
        /* the writers' order, exactly: read forward, never back */
        qsort(calls, 2 * n, sizeof *calls, in_call_order);
        expect_lookups(&want, &got, calls, 2 * n, "call order");
        cr_expect_eq(sp_mpi_flows_file_seeks(got.file), 0);
        /* again (a pass per lane goes back to the rank's start), then
         * the stream's order with ties in any order */
        expect_lookups(&want, &got, calls, 2 * n, "call order again");
        qsort(calls, 2 * n, sizeof *calls, in_stream_order);
        expect_lookups(&want, &got, calls, 2 * n, "stream order");
        /* any order: every lookup still finds its ends */
        for (size_t i = 2 * n - 1; i > 0; i--) {
            size_t j = lcg(&seed) % (i + 1);
            call t = calls[i];
            calls[i] = calls[j];
            calls[j] = t;
        }
        expect_lookups(&want, &got, calls, 2 * n, "shuffled");
        if (got.file)
            cr_expect_gt(sp_mpi_flows_file_seeks(got.file), 0);
        sp_mpi_flows_free(&got);
    }
    sp_mpi_flows_free(&want);
    free(send_of_message);
    free(calls);
    free(sends);
    free(recvs);
}
