/* mpi_parallel_hdf5.c - an application that writes its own file with
 * parallel HDF5 (MPI-IO) while the shim profiles it: the two HDF5 libraries
 * must not meet.  Each rank writes its rank number into its slot of the
 * dataset "ranks" of app.h5, inside a region "write". */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int write = sp_region("write");
    sp_begin(write);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate("app.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims[1] = {(hsize_t)size};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dset = H5Dcreate2(file, "ranks", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    hsize_t offset[1] = {(hsize_t)rank}, count[1] = {1};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, offset, NULL, count, NULL);
    hid_t mem = H5Screate_simple(1, count, NULL);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    herr_t status = H5Dwrite(dset, H5T_NATIVE_INT, mem, space, xfer, &rank);
    H5Pclose(xfer);
    H5Sclose(mem);
    H5Dclose(dset);
    H5Sclose(space);
    H5Fclose(file);
    H5Pclose(fapl);
    sp_end(write);

    printf("rank %d wrote %s\n", rank, status < 0 ? "FAILED" : "ok");
    MPI_Finalize();
    return status < 0;
}
