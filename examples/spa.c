/* The SPA of the LBF paper over MPI (spoor-record example): one server (rank 0) and three
 * clients (ranks 1-3). Each client computes, then sends a request to the server and waits
 * for the reply, REQUESTS times. The server takes requests from any client
 * (MPI_ANY_SOURCE); servBusy1 serves client 1 and servBusy2 the other two.
 *
 * Build with procedure hooks: mpicc -O1 -finstrument-functions -o spa spa.c
 * Run:   mpirun -np 4 spoor-record -o traces -- ./spa
 *
 * Variants (scripts/validate builds them; without these flags the program is the one above):
 *   -DSPA_REQUESTS=N       N requests per client instead of 8.
 *   -DSPA_CPU_SPIN         spin counts the thread's CPU time instead of elapsed time: the
 *                          work is then a fixed amount of computation, however many
 *                          processes share the processor.
 *   -DSPA_MOVE_SERVBUSY1   servBusy1's work moves from the server into client 1: the server
 *                          replies at once and the client calls servBusy1 on the reply (what
 *                          `spoor whatif procedure servBusy1` predicts).
 *   -DSPA_MOVE_SERVBUSY2   the same for servBusy2 and clients 2 and up. */
#include <mpi.h>
#include <stdio.h>
#ifdef SPA_CPU_SPIN
#include <time.h>
#endif

#ifdef SPA_REQUESTS
#define REQUESTS SPA_REQUESTS
#else
#define REQUESTS 8
#endif
#define TAG_REQUEST 1
#define TAG_REPLY 2

#ifdef SPA_CPU_SPIN
__attribute__((no_instrument_function)) static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void spin(double seconds) {
    double t0 = cpu_seconds();
    volatile double x = 0;
    while (cpu_seconds() - t0 < seconds) x += 1.0;
}
#else
static void spin(double seconds) {
    double t0 = MPI_Wtime();
    volatile double x = 0;
    while (MPI_Wtime() - t0 < seconds) x += 1.0;
}
#endif

double servBusy1(double x) { spin(0.002); return x * 2; }
double servBusy2(double x) { spin(0.001); return x + 1; }
void clientWork(int rank) { spin(0.001 * rank); }

/* Where servBusy1 and servBusy2 run: in the server (the program as it is) or, moved, in
 * the client, on the reply. */
#ifdef SPA_MOVE_SERVBUSY1
#define SERVER_BUSY1(x) (x)
#define CLIENT_BUSY1(y) servBusy1(y)
#else
#define SERVER_BUSY1(x) servBusy1(x)
#define CLIENT_BUSY1(y) (y)
#endif
#ifdef SPA_MOVE_SERVBUSY2
#define SERVER_BUSY2(x) (x)
#define CLIENT_BUSY2(y) servBusy2(y)
#else
#define SERVER_BUSY2(x) servBusy2(x)
#define CLIENT_BUSY2(y) (y)
#endif

void server(int clients) {
    int served[8] = {0};
    for (int k = 0; k < clients * REQUESTS; k++) {
        double x;
        MPI_Status st;
        MPI_Recv(&x, 1, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &st);
        double y = st.MPI_SOURCE == 1 ? SERVER_BUSY1(x) : SERVER_BUSY2(x);
        MPI_Send(&y, 1, MPI_DOUBLE, st.MPI_SOURCE, TAG_REPLY, MPI_COMM_WORLD);
        served[st.MPI_SOURCE]++;
    }
    for (int c = 1; c <= clients; c++) printf("server: served client %d %d times\n", c, served[c]);
}

void client(int rank) {
    double sum = 0;
    for (int k = 0; k < REQUESTS; k++) {
        double x = rank * 10 + k, y;
        clientWork(rank);
        MPI_Send(&x, 1, MPI_DOUBLE, 0, TAG_REQUEST, MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_DOUBLE, 0, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += rank == 1 ? CLIENT_BUSY1(y) : CLIENT_BUSY2(y);
    }
    printf("client %d: %g\n", rank, sum);
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > 8) {
        if (rank == 0) fprintf(stderr, "spa: run with 2 to 8 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        server(size - 1);
    else
        client(rank);
    MPI_Finalize();
    return 0;
}
