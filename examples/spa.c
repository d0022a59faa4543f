/* The SPA of the LBF paper over MPI (spoor-record example): one server (rank 0) and three
 * clients (ranks 1-3). Each client computes, then sends a request to the server and waits
 * for the reply, REQUESTS times. The server takes requests from any client
 * (MPI_ANY_SOURCE); servBusy1 serves client 1 and servBusy2 the other two.
 *
 * Build with procedure hooks: mpicc -O1 -finstrument-functions -o spa spa.c
 * Run:   mpirun -np 4 spoor-record -o traces -- ./spa */
#include <mpi.h>
#include <stdio.h>

#define REQUESTS 8
#define TAG_REQUEST 1
#define TAG_REPLY 2

static void spin(double seconds) {
    double t0 = MPI_Wtime();
    volatile double x = 0;
    while (MPI_Wtime() - t0 < seconds) x += 1.0;
}

double servBusy1(double x) { spin(0.002); return x * 2; }
double servBusy2(double x) { spin(0.001); return x + 1; }
void clientWork(int rank) { spin(0.001 * rank); }

void server(int clients) {
    int served[8] = {0};
    for (int k = 0; k < clients * REQUESTS; k++) {
        double x;
        MPI_Status st;
        MPI_Recv(&x, 1, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &st);
        double y = st.MPI_SOURCE == 1 ? servBusy1(x) : servBusy2(x);
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
        sum += y;
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
