/* dist_part_file.c - a process's part of a distributed export, written into
 * a temporary file ($TMPDIR, unlinked as soon as it is created, so no path
 * leaves one behind) and sent to process 0 in pieces of at most 1 MiB: a
 * part may be as large as the output (csv: a row per call), and neither
 * the sender nor process 0 holds more than a piece of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"

#define PART_PIECE ((size_t)1 << 20)

/* A piece on the wire: one status byte, then data (0) or a message (1). */
enum { PIECE_DATA = 0, PIECE_FAILED = 1 };

int sp_dist_part_open(sp_dist_part *part)
{
    memset(part, 0, sizeof *part);
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/scopeprof-part-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    if (!(part->file = fdopen(fd, "w+b"))) {
        close(fd);
        return -1;
    }
    /* the rows are small writes: a large buffer, as the serial output's */
    if (!(part->buffer = malloc(PART_PIECE)) ||
        setvbuf(part->file, part->buffer, _IOFBF, PART_PIECE) != 0) {
        sp_dist_part_close(part);
        return -1;
    }
    return 0;
}

int sp_dist_part_finish(sp_dist_part *part)
{
    if (ferror(part->file) || fflush(part->file) != 0)
        return -1;
    off_t end = ftello(part->file);
    if (end < 0)
        return -1;
    part->bytes = (uint64_t)end;
    return 0;
}

/* Read the next piece's bytes at `at` into buf + 1. */
static ssize_t read_piece(int fd, uint8_t *buf, size_t want, uint64_t at)
{
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, buf + 1 + got, want - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int sp_dist_part_send(sp_dist_part *part, int dest)
{
    /* the stream's buffer is free once flushed: it carries the pieces */
    uint8_t *buf = malloc(PART_PIECE + 1);
    int fd = fileno(part->file);
    int rc = 0;
    for (uint64_t at = 0; at < part->bytes && rc == 0;) {
        size_t want = part->bytes - at < PART_PIECE ? (size_t)(part->bytes - at) : PART_PIECE;
        if (!buf || read_piece(fd, buf, want, at) < 0) {
            static const char why[] = "\001a part's temporary file cannot be read back";
            rc = sp_dist_send(why, sizeof why - 1, dest) == 0 ? 1 : -1;
            break;
        }
        buf[0] = PIECE_DATA;
        rc = sp_dist_send(buf, want + 1, dest);
        at += want;
    }
    free(buf);
    return rc == 0 ? 0 : -1;
}

int sp_dist_part_receive(FILE *out, uint64_t bytes, int source, char *why, size_t whylen)
{
    for (uint64_t got = 0; got < bytes;) {
        uint8_t *piece;
        size_t len;
        if (sp_dist_recv(&piece, &len, source) != 0) {
            snprintf(why, whylen, "MPI failed receiving the part of process %d", source);
            return -1;
        }
        if (len < 1 || piece[0] != PIECE_DATA || len - 1 > bytes - got) {
            snprintf(why, whylen, "process %d: %.*s", source,
                     len > 1 && piece[0] == PIECE_FAILED ? (int)(len - 1) : 14,
                     len > 1 && piece[0] == PIECE_FAILED ? (const char *)piece + 1
                                                         : "a damaged part");
            free(piece);
            return -1;
        }
        if (out)
            fwrite(piece + 1, 1, len - 1, out);
        got += len - 1;
        free(piece);
    }
    return 0;
}

void sp_dist_part_close(sp_dist_part *part)
{
    if (part->file)
        fclose(part->file);
    free(part->buffer);
    memset(part, 0, sizeof *part);
}
