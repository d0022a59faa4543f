/* A test program for spoor-record (not MPI): built with -finstrument-functions.
 *   spin exit CODE [CALLS]  calls work() CALLS (1000) times, prints a checksum, exits with CODE
 *   spin forever      calls work() until killed; prints "ready" once it has started
 *   spin segv         calls work() 1000 times, then dereferences a null pointer
 *   spin fork CODE [CALLS]  like exit, but first forks a child that calls work() 500
 *                     times and exits; the parent waits for it (a forked child is not recorded) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long work(long i) {
    long s = 0;
    for (long k = 0; k < 200; k++) s += (i ^ k) & 7;
    return s;
}

__attribute__((noinline)) void crash(int *p) { *p = 1; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "exit";
    long sum = 0;
    if (!strcmp(mode, "forever")) {
        for (long i = 0;; i++) {
            sum += work(i);
            if (i == 20000) {
                printf("ready\n");
                fflush(stdout);
            }
            sink = sum;
        }
    }
    if (!strcmp(mode, "fork")) {
        pid_t child = fork();
        if (child == 0) {
            for (long i = 0; i < 500; i++) sum += work(i);
            sink = sum;
            _exit(0);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 99;
    }
    long calls = argc > 3 ? atol(argv[3]) : 1000;
    for (long i = 0; i < calls; i++) sum += work(i);
    printf("checksum %ld\n", sum);
    fflush(stdout);
    if (!strcmp(mode, "segv")) crash(NULL);
    return argc > 2 ? atoi(argv[2]) : 0;
}
