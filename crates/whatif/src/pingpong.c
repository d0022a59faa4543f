/* spoor-calibrate --mpi: MPI_Send/MPI_Recv ping-pong between ranks 0 and 1.
 *
 * Usage: mpirun -np 2 pingpong REPS WARMUPS SIZE...
 *
 * A pass of WARMUPS round trips of every size first; then for every size: WARMUPS
 * warm-up round trips, then REPS timed ones (MPI_Wtime on
 * rank 0: send SIZE bytes to rank 1, receive them back). Before anything else, rank 0
 * times one round trip of the first SIZE: the pair's first message, which waits for
 * their connection where the MPI library connects lazily (Open MPI over TCP). Rank 0
 * writes `#mpi VERSION`, `#hosts HOST0 HOST1` (MPI_Get_processor_name of both ranks),
 * `#first NS` (that first round trip) and then one row `pingpong,bytes,ns` per size:
 * half the median round trip. Other ranks only wait.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 4 || p < 2) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np 2 pingpong REPS WARMUPS SIZE...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int reps = atoi(argv[1]);
    if (reps < 1) reps = 1;
    int warm = atoi(argv[2]);
    if (warm < 0) warm = 0;
    long max = 1;
    for (int i = 3; i < argc; i++)
        if (atol(argv[i]) > max) max = atol(argv[i]);
    char *buf = calloc((size_t)max, 1);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!buf || !t) MPI_Abort(MPI_COMM_WORLD, 1);
    int first = (int)atol(argv[3]);
    double first_ns = 0;
    if (me == 0) {
        double t0 = MPI_Wtime();
        MPI_Send(buf, first, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        MPI_Recv(buf, first, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        first_ns = (MPI_Wtime() - t0) * 1e9;
    } else if (me == 1) {
        MPI_Recv(buf, first, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, first, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    char name[2][MPI_MAX_PROCESSOR_NAME + 1];
    int len;
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name[0], &len);
    if (me == 1) MPI_Send(name[0], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Recv(name[1], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(v, &len);
        v[strcspn(v, "\r\n")] = 0;
        printf("#mpi %s\n#hosts %s %s\n#first %.1f\n", v, name[0], name[1], first_ns);
    }
    /* A warm-up pass over every size first (connections, buffers, caches), then each
     * size's own warm-ups and timed round trips. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 3; i < argc; i++) {
            int size = (int)atol(argv[i]);
            int n = pass == 0 ? warm : warm + reps;
            for (int r = 0; r < n; r++) {
                if (me == 0) {
                    double t0 = MPI_Wtime();
                    MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (pass == 1 && r >= warm) t[r - warm] = MPI_Wtime() - t0;
                } else if (me == 1) {
                    MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            if (me == 0 && pass == 1) {
                qsort(t, (size_t)reps, sizeof(double), cmp);
                printf("pingpong,%d,%.1f\n", size, t[reps / 2] / 2 * 1e9);
            }
        }
    }
    fflush(stdout);
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
