/* dist_wire.h - what processes send each other: a byte buffer written and
 * read field by field (native byte order: every process of one launch
 * runs the same binary on the same architecture). */
#ifndef SCOPEPROF_DIST_WIRE_H
#define SCOPEPROF_DIST_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/profile.h"

typedef struct sp_wire {
    uint8_t *data;
    size_t len, cap, pos;
    int failed; /* out of memory writing, or read past the end */
} sp_wire;

void sp_wire_u64(sp_wire *w, uint64_t v);
void sp_wire_i64(sp_wire *w, int64_t v);
void sp_wire_f64(sp_wire *w, double v);
void sp_wire_str(sp_wire *w, const char *s); /* NULL sent as "" */
void sp_wire_bytes(sp_wire *w, const void *p, size_t n);
/* Metadata entries, every type. */
void sp_wire_meta(sp_wire *w, const sp_meta *meta, size_t n);

/* Reading from data[pos]: a read past the end sets failed and gives 0/"". */
void sp_wire_reader(sp_wire *w, const uint8_t *data, size_t len);
uint64_t sp_wire_get_u64(sp_wire *w);
int64_t sp_wire_get_i64(sp_wire *w);
double sp_wire_get_f64(sp_wire *w);
char *sp_wire_get_str(sp_wire *w); /* malloc'd, NULL when failed */
/* n entries, malloc'd (free with sp_wire_meta_free). */
sp_meta *sp_wire_get_meta(sp_wire *w, size_t *n);
void sp_wire_meta_free(sp_meta *meta, size_t n);

void sp_wire_free(sp_wire *w);

#endif
