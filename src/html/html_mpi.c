/* html_mpi.c - the MPI section: shown only when MPI calls were recorded,
 * i.e. regions named like the C bindings ("MPI_Allreduce"), as the MPI
 * interception writes them.  Per MPI region: calls and time over the
 * selected ranks, its share of the ranks' wall time, and per rank the share
 * of wall time in MPI.  Nested MPI regions (none in practice) would count
 * twice; the outermost-only rule of the per-rank times avoids it per region. */
#include <string.h>

#include "html_model.h"

int html_is_mpi_region(const char *name)
{
    return !strncmp(name, "MPI_", 4) || !strncmp(name, "PMPI_", 5);
}

/* Sum over ranks of the MPI regions' time / sum of the ranks' wall; -1 when
 * no MPI region was recorded. */
double html_mpi_share(const html_run *run)
{
    const sp_profile *p = run->profile;
    size_t names = p->num_names;
    int any = 0;
    double mpi = 0, wall = 0;
    for (size_t k = 0; k < run->report.num_ranks; k++) {
        for (size_t r = 0; r < names; r++)
            if (html_is_mpi_region(p->names[r]) && run->rank_region_ns[k * names + r] > 0) {
                any = 1;
                mpi += (double)run->rank_region_ns[k * names + r];
            }
        wall += (double)(run->rank_wall_ns[k] > 0 ? run->rank_wall_ns[k] : run->report.wall_ns);
    }
    return any && wall > 0 ? mpi / wall : -1;
}

void html_mpi_json(sp_json *j, const html_run *run)
{
    if (html_mpi_share(run) < 0) {
        sp_json_null(j);
        return;
    }
    const sp_profile *p = run->profile;
    size_t names = p->num_names;
    sp_json_begin_object(j);
    sp_json_key(j, "regions");
    sp_json_begin_array(j);
    for (size_t k = 0; k < run->report.num_flat; k++) {
        const sp_report_flat_row *f = &run->report.flat[k];
        if (html_is_mpi_region(p->names[f->region]))
            sp_json_uint(j, f->region);
    }
    sp_json_end_array(j);
    sp_json_key(j, "rankShare");
    sp_json_begin_array(j);
    for (size_t k = 0; k < run->report.num_ranks; k++) {
        double mpi = 0;
        for (size_t r = 0; r < names; r++)
            if (html_is_mpi_region(p->names[r]) && run->rank_region_ns[k * names + r] > 0)
                mpi += (double)run->rank_region_ns[k * names + r];
        int64_t wall = run->rank_wall_ns[k] > 0 ? run->rank_wall_ns[k] : run->report.wall_ns;
        sp_json_double(j, wall > 0 ? mpi / (double)wall : -1);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);
}
