/* file_kind.c - see file_kind.h. */
#include <stddef.h>

#include "model/file_kind.h"

const char *sp_file_kind_not_regular(const struct stat *st)
{
    if (S_ISREG(st->st_mode))
        return NULL;
    if (S_ISDIR(st->st_mode))
        return "a directory";
    if (S_ISFIFO(st->st_mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(st->st_mode))
        return "a socket";
    if (S_ISCHR(st->st_mode))
        return "a character device";
    if (S_ISBLK(st->st_mode))
        return "a block device";
    return "not a regular file";
}
