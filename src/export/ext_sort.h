/* ext_sort.h - sorting fixed-size records in a bounded memory budget, for
 * the MPI message ends of a streamed export (mpi_flows.h).
 *
 * Records are gathered in memory; when they would exceed the budget, the
 * gathered ones are sorted (in place) and written as one sorted run to a
 * temporary file ($TMPDIR or /tmp, unlinked as soon as it is created), and
 * gathering starts again.  Reading back merges the runs (a heap over their
 * heads, one buffer per run, an eighth of the budget for all).  Under the
 * budget there is no file and the records can be taken back as one
 * malloc'ed array.  When no temporary file can be created the records
 * stay in memory past the budget (the behaviour before the budget).
 *
 * The comparison must order every record strictly (no two equal): the
 * in-place sort and the merge then give the one order there is. */
#ifndef SCOPEPROF_EXT_SORT_H
#define SCOPEPROF_EXT_SORT_H

#include <stddef.h>

typedef struct sp_ext_sort sp_ext_sort;

/* Records of `size` bytes (at most 64), ordered by cmp; budget in bytes
 * for the gathered records.  NULL when out of memory. */
sp_ext_sort *sp_ext_sort_new(size_t size, int (*cmp)(const void *, const void *), size_t budget);
/* 0, or -1 (out of memory, or a run could not be written). */
int sp_ext_sort_push(sp_ext_sort *s, const void *record);
size_t sp_ext_sort_count(const sp_ext_sort *s);
/* Some records went to the temporary file. */
int sp_ext_sort_spilled(const sp_ext_sort *s);
/* Not spilled: the records (in push order, unsorted) as one malloc'ed
 * array, *n of them; the sorter is left empty.  NULL with *n = 0 when
 * there are none (or when spilled). */
void *sp_ext_sort_take(sp_ext_sort *s, size_t *n);
/* Done pushing: the last run is sorted (written too when spilled), and
 * reading starts from the first record.  0, or -1. */
int sp_ext_sort_finish(sp_ext_sort *s);
/* Read again from the first record (after finish).  0, or -1. */
int sp_ext_sort_rewind(sp_ext_sort *s);
/* The next record in order (valid until the next call), NULL at the end
 * or when a read failed (sp_ext_sort_failed then says so). */
const void *sp_ext_sort_next(sp_ext_sort *s);
int sp_ext_sort_failed(const sp_ext_sort *s);
void sp_ext_sort_free(sp_ext_sort *s);

/* The budget of the MPI message pairing, in bytes: SCOPEPROF_FLOWS_BUDGET
 * (bytes, or with a K, M or G suffix), else 64 MiB.  A value that is not a
 * size is named on stderr once and the default used. */
size_t sp_flows_budget(void);

#endif
