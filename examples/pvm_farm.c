/* PVM task farm with one slow worker (spoor-record example).
 *
 * The master (the task started from the shell) joins group "farm", spawns WORKERS copies
 * of this program, multicasts the work size to them (pvm_mcast, tag 1), sends each its
 * item (pvm_send, tag 2) and gathers the results in any order (pvm_precv from any task,
 * tag 3). A worker receives the size (pvm_recv), its item (pvm_trecv, any tag, with a time
 * limit), computes for FAST_MS, or SLOW_MS if it got item SLOW, and sends its result
 * (pvm_psend). All then meet at a barrier of the group and leave PVM. The master prints
 * the results; the workers' output goes to the daemon's log.
 *
 * The workers are spawned by this program's file name: the daemon looks for it along its
 * ep= path (the hostfile's ep= option, by default $HOME/pvm3/bin/$PVM_ARCH), which must
 * also hold the group server pvmgs (Debian: /usr/lib/pvm3/lib).
 *
 * Build: gcc -O1 -o pvm_farm pvm_farm.c -lgpvm3 -lpvm3
 * Run:   (a pvmd running)  spoor-record -o traces -- ./pvm_farm */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define WORKERS 3
#define SLOW 1
#define FAST_MS 30
#define SLOW_MS 300
#define GROUP "farm"

static void compute(int ms) {
    struct timespec t0, t;
    volatile double x = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 1000; i++) x += 1.0;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static int fail(const char *what) {
    pvm_perror((char *)what);
    pvm_exit();
    return 1;
}

static int master(const char *self) {
    int tids[WORKERS], size = 1000;
    if (pvm_joingroup(GROUP) < 0) return fail("pvm_joingroup");
    int n = pvm_spawn((char *)self, NULL, PvmTaskDefault, "", WORKERS, tids);
    if (n != WORKERS) {
        fprintf(stderr, "pvm_farm: spawned %d of %d workers (first error %d)\n", n, WORKERS, tids[0]);
        return fail("pvm_spawn");
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&size, 1, 1);
    if (pvm_mcast(tids, WORKERS, 1) < 0) return fail("pvm_mcast");
    for (int i = 0; i < WORKERS; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&i, 1, 1);
        if (pvm_send(tids[i], 2) < 0) return fail("pvm_send");
    }
    long sum = 0;
    for (int i = 0; i < WORKERS; i++) {
        long result[2];
        int src, tag, len;
        if (pvm_precv(-1, 3, result, 2, PVM_LONG, &src, &tag, &len) < 0) return fail("pvm_precv");
        printf("item %ld: %ld from t%x\n", result[0], result[1], src);
        sum += result[1];
    }
    if (pvm_barrier(GROUP, WORKERS + 1) < 0) return fail("pvm_barrier");
    printf("sum %ld\n", sum);
    pvm_lvgroup(GROUP);
    pvm_exit();
    return 0;
}

static int worker(int parent) {
    int size, item;
    struct timeval limit = {30, 0};
    if (pvm_joingroup(GROUP) < 0) return fail("pvm_joingroup");
    if (pvm_recv(parent, 1) < 0) return fail("pvm_recv");
    pvm_upkint(&size, 1, 1);
    if (pvm_trecv(parent, -1, &limit) <= 0) return fail("pvm_trecv");
    pvm_upkint(&item, 1, 1);
    compute(item == SLOW ? SLOW_MS : FAST_MS);
    long result[2] = {item, (long)size * (item + 1)};
    if (pvm_psend(parent, 3, result, 2, PVM_LONG) < 0) return fail("pvm_psend");
    if (pvm_barrier(GROUP, WORKERS + 1) < 0) return fail("pvm_barrier");
    pvm_lvgroup(GROUP);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv) {
    (void)argc;
    if (pvm_mytid() < 0) {
        pvm_perror(argv[0]);
        return 1;
    }
    int parent = pvm_parent();
    if (parent == PvmNoParent) {
        const char *self = strrchr(argv[0], '/');
        return master(self ? self + 1 : argv[0]);
    }
    return worker(parent);
}
