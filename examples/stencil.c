/* MPI 2-D stencil (spoor-record example): Jacobi iterations on a grid split over a
 * px x py process grid (MPI_Dims_create, MPI_Cart_create), a non-blocking halo exchange
 * with the four neighbours (MPI_Irecv, MPI_Isend, MPI_Waitall; none beyond the edges) and
 * an MPI_Allreduce of the residual every iteration. Rank 0 prints the final residual.
 * Two phases: `setup` (the grid and its buffers) marked with spoor.h's macros, `solve`
 * (the iterations) with MPI_Pcontrol, which needs no header.
 *
 * Build: mpicc -O2 -I"$(spoor-record --include-dir)" -o stencil stencil.c
 *        (without -I it builds too, without the `setup` marks)
 * Run:   mpirun -np 4 spoor-record -o traces -- ./stencil [ITERATIONS [N]]
 *        (N x N points per rank; defaults 50 and 64)
 * Then:  spoor-cp --phase solve run.o, spoor-whatif --phase solve ... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Phase marks: they do nothing in a run without spoor-record, and nothing at all when
 * spoor.h is not on the include path. */
#if defined(__has_include)
#if __has_include(<spoor.h>)
#include <spoor.h>
#endif
#endif
#ifndef SPOOR_PHASE_BEGIN
#define SPOOR_PHASE_BEGIN(name) ((void)0)
#define SPOOR_PHASE_END(name) ((void)0)
#endif

#define AT(i, j) ((i) * (n + 2) + (j))

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 50;
    int n = argc > 2 ? atoi(argv[2]) : 64;
    int size, rank, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Comm grid;
    MPI_Init(&argc, &argv);
    SPOOR_PHASE_BEGIN("setup");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);

    double *u = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    double *v = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
    double *sendl = malloc(sizeof(double) * n), *sendr = malloc(sizeof(double) * n);
    double *recvl = malloc(sizeof(double) * n), *recvr = malloc(sizeof(double) * n);
    /* A hot boundary on the global top edge. */
    if (coords[0] == 0)
        for (int j = 0; j < n + 2; j++) u[AT(0, j)] = 1.0;

    SPOOR_PHASE_END("setup");

    double residual = 0;
    MPI_Pcontrol(1, "solve");
    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        int k = 0;
        for (int i = 0; i < n; i++) {
            sendl[i] = u[AT(i + 1, 1)];
            sendr[i] = u[AT(i + 1, n)];
        }
        MPI_Irecv(&u[AT(0, 1)], n, MPI_DOUBLE, up, 1, grid, &req[k++]);
        MPI_Irecv(&u[AT(n + 1, 1)], n, MPI_DOUBLE, down, 0, grid, &req[k++]);
        MPI_Irecv(recvl, n, MPI_DOUBLE, left, 3, grid, &req[k++]);
        MPI_Irecv(recvr, n, MPI_DOUBLE, right, 2, grid, &req[k++]);
        MPI_Isend(&u[AT(1, 1)], n, MPI_DOUBLE, up, 0, grid, &req[k++]);
        MPI_Isend(&u[AT(n, 1)], n, MPI_DOUBLE, down, 1, grid, &req[k++]);
        MPI_Isend(sendl, n, MPI_DOUBLE, left, 2, grid, &req[k++]);
        MPI_Isend(sendr, n, MPI_DOUBLE, right, 3, grid, &req[k++]);
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        if (left != MPI_PROC_NULL)
            for (int i = 0; i < n; i++) u[AT(i + 1, 0)] = recvl[i];
        if (right != MPI_PROC_NULL)
            for (int i = 0; i < n; i++) u[AT(i + 1, n + 1)] = recvr[i];
        double local = 0;
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) {
                v[AT(i, j)] = 0.25 * (u[AT(i - 1, j)] + u[AT(i + 1, j)] + u[AT(i, j - 1)] + u[AT(i, j + 1)]);
                double d = v[AT(i, j)] - u[AT(i, j)];
                local += d * d;
            }
        for (int i = 1; i <= n; i++)
            for (int j = 1; j <= n; j++) u[AT(i, j)] = v[AT(i, j)];
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
    }
    MPI_Pcontrol(-1, "solve");
    if (rank == 0) printf("stencil %dx%d ranks, %d iterations: residual %.12e\n", dims[0], dims[1], iters, residual);
    free(u), free(v), free(sendl), free(sendr), free(recvl), free(recvr);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
