/* h5_publish.c - atomic publication of an HDF5 file: write a sibling
 * temporary `.<name>.XXXXXX.tmp` (`.scopeprof.XXXXXX.tmp` for names near
 * NAME_MAX), fsync it, rename it over the destination,
 * fsync the directory.  A failure at any step removes the temporary and
 * leaves whatever was at the destination untouched. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5/h5_internal.h"

/* Growth step of the in-memory file image. */
#define SP_CORE_INCREMENT (1 << 20)

static char *directory_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    char *dir = strdup(dirname(copy));
    free(copy);
    return dir;
}

static hid_t create_file_access(int in_memory)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return -1;
    /* The original superblock (version 0) but 1.8 objects where asked for
     * (compact groups, see sp_h5_create_group): small files stay small and
     * readable by any HDF5 and h5py.  Not a 1.8 superblock: HDF5 1.10's
     * H5Fget_file_image clears its status flags without updating its
     * checksum, and the image would not open.  Smaller metadata and raw
     * data blocks avoid padding a few-KiB profile to 2 KiB units. */
    if (H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) < 0 ||
        H5Pset_meta_block_size(fapl, 512) < 0 ||
        H5Pset_small_data_block_size(fapl, 512) < 0 ||
        (in_memory && H5Pset_fapl_core(fapl, SP_CORE_INCREMENT, 0) < 0)) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

int sp_h5_publish_begin(sp_h5_publish *pub, const char *path, int in_memory,
                        char *err, size_t errlen)
{
    memset(pub, 0, sizeof *pub);
    pub->file = -1;
    pub->fd = -1;
    pub->reserve_fd = -1;
    pub->in_memory = in_memory;
    sp_h5_silence();
    char *dir = directory_of(path);
    char *base_copy = strdup(path);
    size_t need = dir && base_copy ? strlen(dir) + strlen(path) + 32 : 0;
    pub->final_path = strdup(path);
    pub->temp_path = need ? malloc(need) : NULL;
    if (!pub->final_path || !pub->temp_path) {
        sp_h5_errf(err, errlen, "%s: out of memory (free memory and retry)", path);
        goto fail;
    }
    /* A final name near NAME_MAX leaves no room for the 12 characters the
     * temporary adds: a short name in the same directory then. */
    const char *base = basename(base_copy);
    if (strlen(base) + strlen("..XXXXXX.tmp") > NAME_MAX)
        snprintf(pub->temp_path, need, "%s/.scopeprof.XXXXXX.tmp", dir);
    else
        snprintf(pub->temp_path, need, "%s/.%s.XXXXXX.tmp", dir, base);
    int fd = mkostemps(pub->temp_path, 4, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(pub->temp_path);
        pub->temp_path = NULL;
        sp_h5_errf(err, errlen, "%s: cannot create a file in directory '%s': %s "
                   "(check that the directory exists and is writable)",
                   path, dir, strerror(e));
        goto fail;
    }
    /* mkstemp makes the file private (0600); the published profile gets
     * the permissions any file the user creates gets (0666 less umask).
     * A failure is not fatal: the profile is only more private. */
    mode_t mask = umask(0);
    umask(mask);
    int chmod_rc = fchmod(fd, 0666 & ~mask);
    (void)chmod_rc;
    if (in_memory)
        pub->fd = fd;
    else
        close(fd);
    hid_t fapl = create_file_access(in_memory);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0 && H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED) < 0) {
        H5Pclose(fcpl);
        fcpl = -1;
    }
    if (fapl >= 0 && fcpl >= 0)
        pub->file = H5Fcreate(pub->temp_path, H5F_ACC_TRUNC, fcpl, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (pub->file < 0) {
        char detail[256];
        sp_h5_errf(err, errlen, "%s: cannot create the HDF5 file: %s "
                   "(check free disk space and permissions)",
                   path, sp_h5_error_detail(detail, sizeof detail));
        goto fail;
    }
    free(dir);
    free(base_copy);
    return 0;
fail:
    free(dir);
    free(base_copy);
    sp_h5_publish_abort(pub);
    return -1;
}

static int write_all(int fd, const unsigned char *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

/* Copy the in-memory file image to the temp file. */
static int store_image(sp_h5_publish *pub, char *err, size_t errlen)
{
    char detail[256];
    ssize_t size = H5Fflush(pub->file, H5F_SCOPE_GLOBAL) < 0
                       ? -1 : H5Fget_file_image(pub->file, NULL, 0);
    unsigned char *image = size > 0 ? malloc((size_t)size) : NULL;
    if (!image || H5Fget_file_image(pub->file, image, (size_t)size) != size) {
        sp_h5_errf(err, errlen, "%s: building the file failed: %s (free memory and retry)",
                   pub->final_path, size > 0 && !image ? "out of memory"
                                     : sp_h5_error_detail(detail, sizeof detail));
        free(image);
        return -1;
    }
    herr_t closed = H5Fclose(pub->file);
    pub->file = -1;
    int rc = 0;
    if (closed < 0) {
        sp_h5_errf(err, errlen, "%s: building the file failed: %s (free memory and retry)",
                   pub->final_path, sp_h5_error_detail(detail, sizeof detail));
        rc = -1;
    } else if (write_all(pub->fd, image, (size_t)size) < 0 || fsync(pub->fd) < 0) {
        sp_h5_errf(err, errlen, "%s: writing the file failed: %s "
                   "(free disk space or write somewhere else)", pub->final_path, strerror(errno));
        rc = -1;
    }
    free(image);
    if (close(pub->fd) < 0 && rc == 0) {
        sp_h5_errf(err, errlen, "%s: writing the file failed: %s "
                   "(free disk space or write somewhere else)", pub->final_path, strerror(errno));
        rc = -1;
    }
    pub->fd = -1;
    return rc;
}

int sp_h5_publish_reserve(sp_h5_publish *pub, uint64_t bytes, char *err, size_t errlen)
{
    const char *path = pub->final_path;
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        bytes > (uint64_t)limit.rlim_cur) {
        sp_h5_errf(err, errlen, "%s: writing the file failed: %s (it may need up to %llu "
                   "bytes, more than the file size limit, ulimit -f)", path, strerror(EFBIG),
                   (unsigned long long)bytes);
        return -1;
    }
    int fd = open(pub->temp_path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        sp_h5_errf(err, errlen, "%s: cannot open the temporary file: %s "
                   "(check the directory's permissions)", path, strerror(errno));
        return -1;
    }
    /* Blocks beyond the end of the file, which stays as HDF5 writes it: an
     * HDF5 write that fails half-way is what must never happen here. */
    int rc;
    do
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes);
    while (rc < 0 && errno == EINTR);
    if (rc < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)) {
        sp_h5_errf(err, errlen, "%s: writing the file failed: %s (it may need up to %llu "
                   "bytes; free disk space or write somewhere else)", path, strerror(errno),
                   (unsigned long long)bytes);
        close(fd);
        return -1;
    }
    /* A file system without fallocate: write without the reservation. */
    pub->reserve_fd = fd;
    pub->reserved = rc == 0 ? bytes : 0;
    return 0;
}

/* Give back what the reservation holds beyond the finished file. */
static void release_reservation(sp_h5_publish *pub)
{
    if (pub->reserve_fd < 0)
        return;
    struct stat st;
    if (pub->reserved && fstat(pub->reserve_fd, &st) == 0 &&
        (uint64_t)st.st_size < pub->reserved) {
        int rc = fallocate(pub->reserve_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                           st.st_size, (off_t)(pub->reserved - (uint64_t)st.st_size));
        if (rc < 0) {
            /* cutting at the end frees blocks past it on the usual file systems */
            rc = ftruncate(pub->reserve_fd, st.st_size);
            (void)rc;
        }
    }
    close(pub->reserve_fd);
    pub->reserve_fd = -1;
    pub->reserved = 0;
}

static int fsync_path(const char *path, int directory)
{
    int fd = open(path, (directory ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int sp_h5_publish_commit(sp_h5_publish *pub, char *err, size_t errlen)
{
    const char *path = pub->final_path;
    char detail[256];
    if (pub->in_memory) {
        if (store_image(pub, err, errlen) < 0)
            goto fail;
    } else {
        herr_t closed = H5Fclose(pub->file);
        pub->file = -1;
        if (closed < 0) {
            sp_h5_errf(err, errlen, "%s: writing the file failed: %s "
                       "(free disk space or write somewhere else)",
                       path, sp_h5_error_detail(detail, sizeof detail));
            goto fail;
        }
        release_reservation(pub);
        if (fsync_path(pub->temp_path, 0) < 0) {
            sp_h5_errf(err, errlen, "%s: flushing the file to disk failed: %s "
                       "(free disk space or write somewhere else)", path, strerror(errno));
            goto fail;
        }
    }
    if (rename(pub->temp_path, path) < 0) {
        sp_h5_errf(err, errlen, "%s: cannot replace the file: %s "
                   "(check permissions on the file and its directory)", path, strerror(errno));
        goto fail;
    }
    free(pub->temp_path);
    pub->temp_path = NULL;
    /* Make the rename itself durable; some file systems cannot fsync a
     * directory, which is no reason to fail a write that succeeded. */
    char *dir = directory_of(path);
    if (dir && fsync_path(dir, 1) < 0 && errno != EINVAL && errno != ENOTSUP &&
        errno != EBADF && errno != EACCES && errno != EROFS) {
        sp_h5_errf(err, errlen, "%s: syncing directory '%s' failed: %s "
                   "(the file was written but may not survive a crash)",
                   path, dir, strerror(errno));
        free(dir);
        sp_h5_publish_abort(pub);
        return -1;
    }
    free(dir);
    sp_h5_publish_abort(pub);
    return 0;
fail:
    sp_h5_publish_abort(pub);
    return -1;
}

void sp_h5_publish_abort(sp_h5_publish *pub)
{
    if (pub->file >= 0)
        H5Fclose(pub->file);
    pub->file = -1;
    if (pub->fd >= 0)
        close(pub->fd);
    pub->fd = -1;
    if (pub->reserve_fd >= 0)
        close(pub->reserve_fd);
    pub->reserve_fd = -1;
    if (pub->temp_path)
        unlink(pub->temp_path);
    free(pub->temp_path);
    free(pub->final_path);
    pub->temp_path = NULL;
    pub->final_path = NULL;
}
