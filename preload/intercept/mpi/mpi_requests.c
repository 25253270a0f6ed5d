/* mpi_requests.c - see mpi_requests.h.  An open-addressing table of fixed
 * size under one lock: a program has few requests in flight. */
#include "mpi_requests.h"

#include <pthread.h>

#define REQUEST_SLOTS 4096 /* power of two */
#define PROBE_LIMIT 16

struct slot {
    sp_mpi_handle request;  /* 0: empty */
    struct sp_mpi_request_info info;
};

static struct slot table[REQUEST_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t home(sp_mpi_handle request)
{
    return (size_t)(((uint64_t)request * 0x9e3779b97f4a7c15ull) >> 52) & (REQUEST_SLOTS - 1);
}

void sp_mpi_request_track(sp_mpi_handle request, const struct sp_mpi_request_info *info)
{
    if (!request)
        return;
    size_t h = home(request), at = h;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < PROBE_LIMIT; k++) {
        size_t i = (h + k) & (REQUEST_SLOTS - 1);
        if (table[i].request == request || table[i].request == 0) {
            at = i;
            break;
        }
    }
    table[at].request = request;
    table[at].info = *info;
    pthread_mutex_unlock(&lock);
}

int sp_mpi_request_take(sp_mpi_handle request, struct sp_mpi_request_info *out)
{
    if (!request)
        return 0;
    size_t h = home(request);
    int found = 0;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < PROBE_LIMIT && !found; k++) {
        size_t i = (h + k) & (REQUEST_SLOTS - 1);
        if (table[i].request == request) {
            *out = table[i].info;
            table[i].request = 0;
            found = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}
