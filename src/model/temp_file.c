/* temp_file.c - see temp_file.h. */
#include "temp_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int sp_temp_file_open(const char *stem)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-XXXXXX", dir && dir[0] ? dir : "/tmp", stem);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

int sp_temp_file_write(int fd, const void *buf, size_t len, off_t at)
{
    const char *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
        at += w;
    }
    return 0;
}

int sp_temp_file_read(int fd, void *buf, size_t len, off_t at)
{
    char *p = buf;
    while (len) {
        ssize_t got = pread(fd, p, len, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        len -= (size_t)got;
        at += got;
    }
    return 0;
}
