/* spoor-calibrate --collectives: times MPI's collective operations on this host.
 *
 * Usage: mpirun -np P collectives REPS SIZE...
 *
 * For every operation and size: a few warm-up calls, then REPS repetitions, each after
 * a barrier, timed with MPI_Wtime on every rank; a repetition takes the slowest rank's
 * time, the row the median of the repetitions. Rank 0 writes `#mpi VERSION` and then
 * one row `op,procs,bytes,ns` per operation and size (the barrier once, at 0 bytes).
 * `bytes` is the most one process sends or receives in the call, as spoor-record records
 * a collective's end: the buffer of bcast, reduce and allreduce, the root's P blocks of
 * gather and scatter, the P blocks every process receives in allgather and sends in
 * alltoall (each block SIZE / P bytes for those four, at least 1).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, OPS };
static const char *names[OPS] = {"barrier", "bcast",   "reduce",    "allreduce",
                                 "gather",  "scatter", "allgather", "alltoall"};

static char *sbuf, *rbuf;

/* One call of `op`: `size` bytes, a block of `size` bytes a process for gather, scatter,
 * allgather and alltoall. */
static void call(int op, long size) {
    /* Reductions over doubles where the size allows, as programs reduce; bytes otherwise. */
    int dbl = size % 8 == 0;
    MPI_Datatype rt = dbl ? MPI_DOUBLE : MPI_BYTE;
    MPI_Op rop = dbl ? MPI_SUM : MPI_BOR;
    int rc = (int)(dbl ? size / 8 : size);
    switch (op) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(sbuf, rbuf, rc, rt, rop, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(sbuf, rbuf, rc, rt, rop, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD); break;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 3) {
        if (me == 0) fprintf(stderr, "usage: collectives REPS SIZE...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int reps = atoi(argv[1]);
    if (reps < 1) reps = 1;
    long max = 1;
    for (int i = 2; i < argc; i++)
        if (atol(argv[i]) > max) max = atol(argv[i]);
    sbuf = calloc((size_t)max * (size_t)p + 8, 1);
    rbuf = calloc((size_t)max * (size_t)p + 8, 1);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!sbuf || !rbuf || !t) MPI_Abort(MPI_COMM_WORLD, 1);
    if (me == 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        v[strcspn(v, "\r\n")] = 0;
        printf("#mpi %s\n", v);
    }
    for (int op = 0; op < OPS; op++) {
        for (int i = 2; i < argc; i++) {
            long size = atol(argv[i]), block = size, bytes = size;
            if (op == BARRIER) {
                if (i > 2) break;
                bytes = 0;
            } else if (op == GATHER || op == SCATTER || op == ALLGATHER || op == ALLTOALL) {
                block = size / p > 0 ? size / p : 1;
                bytes = block * p;
            }
            for (int r = 0; r < 3; r++) call(op, block);
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                call(op, block);
                double dt = MPI_Wtime() - t0, worst;
                MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                t[r] = worst;
            }
            if (me == 0) {
                qsort(t, (size_t)reps, sizeof(double), cmp);
                printf("%s,%d,%ld,%.0f\n", names[op], p, bytes, t[reps / 2] * 1e9);
            }
        }
    }
    fflush(stdout);
    free(sbuf);
    free(rbuf);
    free(t);
    MPI_Finalize();
    return 0;
}
