/* report_mpi_print.c - see report_mpi_print.h.  Fits 80 columns. */
#include "report_mpi_print.h"

#include <inttypes.h>

static void heading(FILE *out, int color, const char *text)
{
    fprintf(out, "\n%s%s%s\n", color ? "\033[1m" : "", text, color ? "\033[0m" : "");
}

static void dim_line(FILE *out, int color, const char *text)
{
    fprintf(out, "%s%s%s\n", color ? "\033[2m" : "", text, color ? "\033[0m" : "");
}

static const char *duration(int64_t ns, char *buf, size_t len)
{
    sp_format_duration(ns, buf, len);
    return buf;
}

/* 1023 B, 1.00 KiB, 12.3 MiB ... */
static const char *bytes(int64_t b, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRId64 " B", b);
    else
        snprintf(buf, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

/* Columns of width w, right-aligned, utf-8 µ counted as one column. */
static void cell(FILE *out, const char *s, int w)
{
    int cols = 0;
    for (const char *c = s; *c; c++)
        cols += ((unsigned char)*c & 0xc0) != 0x80;
    fprintf(out, " %*s%s", w > cols ? w - cols : 0, "", s);
}

static void print_ranks(FILE *out, int color, const sp_report_mpi *m)
{
    heading(out, color, "MPI per rank (wait: collective late-arrival wait)");
    dim_line(out, color, "rank       wall      MPI  %wall     wait  %MPI     sent     received");
    for (size_t i = 0; i < m->num_ranks; i++) {
        const sp_report_mpi_rank *r = &m->ranks[i];
        char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
        fprintf(out, "%-6u", r->rank);
        cell(out, duration(r->wall_ns, a, sizeof a), 8);
        cell(out, duration(r->mpi_ns, b, sizeof b), 8);
        snprintf(c, sizeof c, "%.1f", r->wall_ns > 0 ? 100.0 * (double)r->mpi_ns / (double)r->wall_ns : 0);
        cell(out, c, 6);
        cell(out, duration(r->wait_ns, d, sizeof d), 8);
        snprintf(e, sizeof e, "%.1f", r->mpi_ns > 0 ? 100.0 * (double)r->wait_ns / (double)r->mpi_ns : 0);
        cell(out, e, 5);
        cell(out, bytes(r->sent_bytes, f, sizeof f), 8);
        cell(out, bytes(r->recv_bytes, g, sizeof g), 12);
        fputc('\n', out);
    }
}

static void print_calls(FILE *out, int color, const sp_report *report, const sp_report_mpi *m)
{
    heading(out, color, "MPI calls by time (all selected ranks)");
    dim_line(out, color,
             "function                  calls     time     wait     sent  received  waits most");
    size_t shown = m->num_calls < 20 ? m->num_calls : 20;
    for (size_t i = 0; i < shown; i++) {
        const sp_report_mpi_call *c = &m->calls[i];
        char a[32], b[32], d[32], e[32], f[32];
        const char *name = report->profile->names[c->region];
        fprintf(out, "%-24s", name);
        snprintf(a, sizeof a, "%" PRIu64, c->calls);
        cell(out, a, 6);
        cell(out, duration(c->total_ns, b, sizeof b), 8);
        if (c->collective)
            cell(out, duration(c->wait_ns, d, sizeof d), 8);
        else
            cell(out, "-", 8);
        cell(out, bytes(c->sent_bytes, e, sizeof e), 8);
        cell(out, bytes(c->recv_bytes, f, sizeof f), 9);
        if (c->collective && m->num_ranks > 1) {
            snprintf(a, sizeof a, "rank %u", c->most_waiting_rank);
            cell(out, a, 11);
        }
        fputc('\n', out);
    }
    if (shown < m->num_calls)
        fprintf(out, "(%zu more MPI functions)\n", m->num_calls - shown);
}

static void print_sizes(FILE *out, int color, const sp_report_mpi *m)
{
    heading(out, color, "MPI message sizes (point-to-point sends; collective calls by bytes moved)");
    dim_line(out, color, "size up to      messages      bytes   collectives");
    for (int b = 0; b < SP_REPORT_MPI_BINS; b++) {
        if (!m->p2p_messages[b] && !m->collective_calls[b])
            continue;
        char lim[32], cnt[32], by[32], co[32];
        if (b == SP_REPORT_MPI_BINS - 1)
            snprintf(lim, sizeof lim, "larger");
        else
            bytes(sp_report_mpi_bin_limit(b), lim, sizeof lim);
        fprintf(out, "%-10s", lim);
        snprintf(cnt, sizeof cnt, "%" PRIu64, m->p2p_messages[b]);
        cell(out, cnt, 13);
        cell(out, bytes(m->p2p_bytes[b], by, sizeof by), 10);
        snprintf(co, sizeof co, "%" PRIu64, m->collective_calls[b]);
        cell(out, co, 13);
        fputc('\n', out);
    }
}

static void print_matrix(FILE *out, int color, const sp_report_mpi *m)
{
    int64_t total = 0;
    for (size_t i = 0; i < m->matrix_blocks * m->matrix_blocks; i++)
        total += m->matrix[i];
    if (!total)
        return;
    char title[128];
    if (m->block_size > 1)
        snprintf(title, sizeof title,
                 "MPI point-to-point bytes, sender (rows) to receiver, blocks of %u ranks",
                 m->block_size);
    else
        snprintf(title, sizeof title, "MPI point-to-point bytes, sender (rows) to receiver");
    heading(out, color, title);
    /* Columns of 8 wide fit 8 blocks in 80 columns; more wrap per row. */
    fprintf(out, "%s%-7s", color ? "\033[2m" : "", "from\\to");
    for (size_t j = 0; j < m->matrix_blocks; j++) {
        char h[16];
        snprintf(h, sizeof h, "%zu", j * m->block_size);
        cell(out, h, 8);
    }
    fprintf(out, "%s\n", color ? "\033[0m" : "");
    for (size_t i = 0; i < m->matrix_blocks; i++) {
        fprintf(out, "%-7zu", i * m->block_size);
        for (size_t j = 0; j < m->matrix_blocks; j++) {
            char v[32];
            int64_t x = m->matrix[i * m->matrix_blocks + j];
            cell(out, x ? bytes(x, v, sizeof v) : ".", 8);
        }
        fputc('\n', out);
    }
}

void cli_print_mpi(FILE *out, int color, const sp_report *report, const sp_report_mpi *m)
{
    print_ranks(out, color, m);
    print_calls(out, color, report, m);
    print_sizes(out, color, m);
    print_matrix(out, color, m);
}

void cli_print_mpi_cross_note(FILE *out, const sp_report_mpi *mpi, uint32_t region)
{
    const sp_report_mpi_call *c = mpi ? sp_report_mpi_find(mpi, region) : NULL;
    if (c && c->collective)
        fprintf(out, "  (most waiting; rank %u arrived last)", c->last_arrival_rank);
    else if (c)
        fputs("  (most waiting)", out); /* time in an MPI call is time waiting for a peer */
}
