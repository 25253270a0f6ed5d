/* fuzz_input.c - see fuzz_input.h. */
#include "fuzz_input.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, len, "%s/scopeprof-fuzz-%d", dir, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    return done == size ? 0 : -1;
}

void fuzz_input_done(const char *path)
{
    unlink(path);
}
