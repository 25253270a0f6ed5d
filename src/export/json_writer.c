/* json_writer.c - a small streaming JSON writer: values go straight to the
 * FILE*, so exports of millions of events never hold the document in memory.
 * Numbers are formatted by hand because printf dominates export time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/utf8.h"
#include "scopeprof/export.h"

void sp_json_escape(FILE *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t plain = 0; /* start of the pending run of characters needing no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80) {
            /* Names are bytes: a JSON document must be UTF-8 (RFC 8259). */
            size_t k = sp_utf8_sequence((const unsigned char *)s + i, n - i);
            if (k) {
                i += k - 1;
                continue;
            }
            fwrite_unlocked(s + plain, 1, i - plain, out);
            fputs_unlocked(SP_UTF8_REPLACEMENT, out);
            plain = i + 1;
            continue;
        }
        fwrite_unlocked(s + plain, 1, i - plain, out);
        plain = i + 1;
        switch (c) {
        case '"': fputs_unlocked("\\\"", out); break;
        case '\\': fputs_unlocked("\\\\", out); break;
        case '\n': fputs_unlocked("\\n", out); break;
        case '\r': fputs_unlocked("\\r", out); break;
        case '\t': fputs_unlocked("\\t", out); break;
        default: {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            fwrite_unlocked(esc, 1, sizeof esc, out);
        }
        }
    }
    fwrite_unlocked(s + plain, 1, n - plain, out);
}

void sp_write_int(FILE *out, int64_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(buf + sizeof buf - p), out);
}

void sp_write_fixed(FILE *out, int64_t value, unsigned decimals)
{
    if (decimals > 18)
        decimals = 18;
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    uint64_t u = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    uint64_t whole = u / scale, frac = u % scale;
    char buf[48];
    char *p = buf + sizeof buf;
    if (frac) {
        unsigned digits = decimals;
        while (frac % 10 == 0) { /* drop trailing zeros */
            frac /= 10;
            digits--;
        }
        for (unsigned i = 0; i < digits; i++) {
            *--p = (char)('0' + frac % 10);
            frac /= 10;
        }
        *--p = '.';
    }
    do {
        *--p = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (value < 0)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(buf + sizeof buf - p), out);
}

void sp_json_init(sp_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Comma before any item but the first of its container (keys carry it). */
static void before_value(sp_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (j->has_items[j->depth - 1])
            putc_unlocked(',', j->out);
        j->has_items[j->depth - 1] = 1;
    }
}

static void open_container(sp_json *j, char c)
{
    before_value(j);
    putc_unlocked(c, j->out);
    if (j->depth < SP_JSON_MAX_DEPTH)
        j->has_items[j->depth] = 0;
    j->depth++;
}

static void close_container(sp_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    putc_unlocked(c, j->out);
}

void sp_json_begin_object(sp_json *j) { open_container(j, '{'); }
void sp_json_end_object(sp_json *j) { close_container(j, '}'); }
void sp_json_begin_array(sp_json *j) { open_container(j, '['); }
void sp_json_end_array(sp_json *j) { close_container(j, ']'); }

void sp_json_key(sp_json *j, const char *key)
{
    before_value(j);
    putc_unlocked('"', j->out);
    sp_json_escape(j->out, key, strlen(key));
    fputs_unlocked("\":", j->out);
    j->after_key = 1;
}

void sp_json_string_n(sp_json *j, const char *s, size_t n)
{
    before_value(j);
    putc_unlocked('"', j->out);
    sp_json_escape(j->out, s, n);
    putc_unlocked('"', j->out);
}

void sp_json_string(sp_json *j, const char *s)
{
    if (!s)
        sp_json_null(j);
    else
        sp_json_string_n(j, s, strlen(s));
}

void sp_json_int(sp_json *j, int64_t v)
{
    before_value(j);
    sp_write_int(j->out, v);
}

void sp_json_uint(sp_json *j, uint64_t v)
{
    before_value(j);
    char buf[24];
    char *p = buf + sizeof buf;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    fwrite_unlocked(p, 1, (size_t)(buf + sizeof buf - p), j->out);
}

void sp_json_double(sp_json *j, double v)
{
    if (!isfinite(v)) {
        sp_json_null(j);
        return;
    }
    before_value(j);
    /* %.17g round-trips every double. */
    fprintf(j->out, "%.17g", v);
}

void sp_json_fixed(sp_json *j, int64_t value, unsigned decimals)
{
    before_value(j);
    sp_write_fixed(j->out, value, decimals);
}

void sp_json_bool(sp_json *j, int v)
{
    before_value(j);
    fputs_unlocked(v ? "true" : "false", j->out);
}

void sp_json_null(sp_json *j)
{
    before_value(j);
    fputs_unlocked("null", j->out);
}

void sp_json_raw(sp_json *j, const char *json)
{
    before_value(j);
    fputs_unlocked(json, j->out);
}

void sp_json_newline(sp_json *j)
{
    putc_unlocked('\n', j->out);
}
