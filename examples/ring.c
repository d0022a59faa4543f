/* MPI ring with one late sender (spoor-record example).
 *
 * A token travels ROUNDS times around the ring 0 -> 1 -> ... -> size-1 -> 0. Rank 1 is
 * late: it computes for LATE_MS before passing the token on, so rank 2 (or rank 0 with two
 * ranks) waits in MPI_Recv. Round r carries 100 + r ints with tag r; odd rounds are
 * received with MPI_ANY_SOURCE and MPI_ANY_TAG. Each rank prints what it received.
 *
 * Build: mpicc -O1 -o ring ring.c
 * Run:   mpirun -np 4 spoor-record -o traces -- ./ring */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 6
#define LATE_MS 20

static void compute(double seconds) {
    double t0 = MPI_Wtime();
    volatile double x = 0;
    while (MPI_Wtime() - t0 < seconds) x += 1.0;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long checksum = 0;
    int received = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int count = 100 + round;
        int *token = calloc((size_t)count, sizeof(int));
        int src = round % 2 ? MPI_ANY_SOURCE : prev;
        int tag = round % 2 ? MPI_ANY_TAG : round;
        MPI_Status st;
        if (rank == 0) {
            token[0] = round;
            MPI_Send(token, count, MPI_INT, next, round, MPI_COMM_WORLD);
            MPI_Recv(token, count, MPI_INT, src, tag, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(token, count, MPI_INT, src, tag, MPI_COMM_WORLD, &st);
            token[0] += rank;
            if (rank == 1) compute(LATE_MS / 1000.0);
            MPI_Send(token, count, MPI_INT, next, round, MPI_COMM_WORLD);
        }
        if (st.MPI_SOURCE != prev || st.MPI_TAG != round) {
            fprintf(stderr, "rank %d: round %d came from %d with tag %d\n", rank, round, st.MPI_SOURCE, st.MPI_TAG);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        checksum += token[0];
        received++;
        free(token);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d: %d tokens, checksum %ld\n", rank, size, received, checksum);
    MPI_Finalize();
    return 0;
}
