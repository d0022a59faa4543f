/* spoor-record's PMPI shim: the thin layer the MPI ABI needs.
 *
 * Each wrapper calls the PMPI function and tells the Rust side (src/mpi.rs) what happened
 * in plain integers: communicators and requests as opaque 64-bit handles, ranks of the
 * communicator, tags, byte counts. What only MPI can answer is asked here: ranks of a new
 * communicator in MPI_COMM_WORLD (group translation), byte counts (type sizes, statuses),
 * and the clock-offset ping-pong with rank 0. Everything else is in Rust. */

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define H(x) ((uint64_t)(uintptr_t)(x))
#define HOST_LEN 64
#define SYNC_ROUNDS 10

/* Rust side (src/mpi.rs). */
extern int spoor_rs_active(void);
extern void spoor_rs_enter(const char *name);
extern void spoor_rs_enter_wait(const char *name); /* the next event begins a wait */
extern void spoor_rs_leave(const char *name);
extern void spoor_rs_world(int rank, int size, const char *hosts, int stride);
extern int64_t spoor_rs_comm_known(uint64_t comm);
extern void spoor_rs_comm_add(uint64_t comm, const char *name, int size, const int *world_ranks);
extern void spoor_rs_comm_forget(uint64_t comm);
extern void spoor_rs_send(uint64_t comm, int dest, int tag, uint64_t bytes);
extern void spoor_rs_recv_begin(uint64_t comm, int src, int tag);
extern void spoor_rs_recv_end(uint64_t comm, int src, int tag, uint64_t bytes);
extern void spoor_rs_isend(uint64_t comm, int dest, int tag, uint64_t bytes, uint64_t request);
extern void spoor_rs_irecv(uint64_t comm, int src, int tag, uint64_t request);
extern void spoor_rs_complete(uint64_t request, int src, int tag, const void *status);
extern void spoor_rs_coll_begin(int op, uint64_t comm);
extern void spoor_rs_coll_end(int op, uint64_t comm, int root, uint64_t sent, uint64_t received);
extern void spoor_rs_clock_offset(int reference_world_rank, int64_t offset, uint64_t error);
extern void spoor_rs_after_init(int thread_level_multiple);
/* Phase marks (src/phases.rs; the functions spoor.h declares). */
extern void spoor_phase_begin(const char *name);
extern void spoor_phase_end(const char *name);

/* Collective operation codes of formats/trace.md. */
enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER,
       ALLGATHERV, ALLTOALL, ALLTOALLV, SCAN, REDUCE_SCATTER };

static MPI_Comm sync_comm = MPI_COMM_NULL;
static int world_rank = 0, world_size = 1;
static unsigned long long comms_created = 0;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t tbytes(MPI_Datatype t, int count) {
    int size = 0;
    if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
    PMPI_Type_size(t, &size);
    return (uint64_t)size * (uint64_t)count;
}

static uint64_t status_bytes(const MPI_Status *st) {
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    return n < 0 ? 0 : (uint64_t)n;
}

/* The bytes a completed receive's status says arrived; the Rust side asks only for the
 * receives it recorded (sends and unrecorded requests cost no MPI call). */
uint64_t spoor_c_status_bytes(const void *st) { return status_bytes((const MPI_Status *)st); }

static int src_of(int src) { return src == MPI_ANY_SOURCE ? -1 : src == MPI_PROC_NULL ? -2 : src; }
static int tag_of(int tag) { return tag == MPI_ANY_TAG ? -1 : tag; }
static int dest_of(int dest) { return dest == MPI_PROC_NULL ? -2 : dest; }

/* Defines a communicator for the Rust side: its members as world ranks. */
static void define_comm(MPI_Comm c, const char *name) {
    int inter = 0, n = 0;
    MPI_Group g, wg;
    if (c == MPI_COMM_NULL) return;
    PMPI_Comm_test_inter(c, &inter);
    if (inter) return;
    PMPI_Comm_size(c, &n);
    int *ranks = malloc(sizeof(int) * (size_t)n * 2);
    if (!ranks) return;
    for (int i = 0; i < n; i++) ranks[i] = i;
    PMPI_Comm_group(c, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, n, ranks, wg, ranks + n);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    spoor_rs_comm_add(H(c), name, n, ranks + n);
    free(ranks);
}

/* Communicators the Rust side knows, by handle: a small cache that spares every wrapper
 * two calls into Rust. A handle MPI_Comm_free releases leaves it. */
#define KNOWN 8
static _Atomic uint64_t known[KNOWN];
static _Atomic uint64_t *known_slot(uint64_t h) { return &known[((h >> 4) ^ (h >> 12)) % KNOWN]; }

/* A communicator the wrappers meet that was not created through them: named by its members. */
static uint64_t comm_h(MPI_Comm c) {
    uint64_t h = H(c);
    _Atomic uint64_t *k = known_slot(h);
    if (atomic_load_explicit(k, memory_order_relaxed) == h) return h;
    if (spoor_rs_active()) {
        if (spoor_rs_comm_known(h) < 0) define_comm(c, NULL);
        if (spoor_rs_comm_known(h) >= 0) atomic_store_explicit(k, h, memory_order_relaxed);
    }
    return h;
}

/* A communicator just created (collectively): its rank 0 gives it a name unique in the run. */
static void created_comm(MPI_Comm *c) {
    long long id[2] = {world_rank, (long long)comms_created++};
    char name[64];
    if (!spoor_rs_active() || *c == MPI_COMM_NULL) return;
    int inter = 0;
    PMPI_Comm_test_inter(*c, &inter);
    if (inter) return;
    PMPI_Bcast(id, 2, MPI_LONG_LONG, 0, *c);
    snprintf(name, sizeof name, "comm %lld.%lld", id[0], id[1]);
    define_comm(*c, name);
}

/* Clock offsets to rank 0: SYNC_ROUNDS ping-pongs per rank, the shortest round trip kept.
 * offset = t_ref - (t_send + t_recv) / 2, error = half the round trip. */
static void clock_sync(void) {
    int64_t t;
    if (sync_comm == MPI_COMM_NULL) return;
    if (world_rank == 0) {
        for (int r = 1; r < world_size; r++) {
            for (int i = 0; i < SYNC_ROUNDS; i++) {
                PMPI_Recv(&t, 1, MPI_INT64_T, r, 1, sync_comm, MPI_STATUS_IGNORE);
                t = now_ns();
                PMPI_Send(&t, 1, MPI_INT64_T, r, 2, sync_comm);
            }
        }
        spoor_rs_clock_offset(0, 0, 0);
    } else {
        int64_t best_rtt = -1, best_off = 0;
        for (int i = 0; i < SYNC_ROUNDS; i++) {
            int64_t t1 = now_ns();
            PMPI_Send(&t1, 1, MPI_INT64_T, 0, 1, sync_comm);
            PMPI_Recv(&t, 1, MPI_INT64_T, 0, 2, sync_comm, MPI_STATUS_IGNORE);
            int64_t t3 = now_ns();
            if (best_rtt < 0 || t3 - t1 < best_rtt) {
                best_rtt = t3 - t1;
                best_off = t - (t1 + (t3 - t1) / 2);
            }
        }
        spoor_rs_clock_offset(0, best_off, (uint64_t)(best_rtt / 2));
    }
}

static void after_init(void) {
    char host[HOST_LEN];
    int level = MPI_THREAD_SINGLE;
    if (!spoor_rs_active()) return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    memset(host, 0, sizeof host);
    int len = 0;
    PMPI_Get_processor_name(host, &len); /* at most MPI_MAX_PROCESSOR_NAME; truncated below */
    host[HOST_LEN - 1] = 0;
    char *hosts = calloc((size_t)world_size, HOST_LEN);
    if (!hosts) return;
    PMPI_Allgather(host, HOST_LEN, MPI_CHAR, hosts, HOST_LEN, MPI_CHAR, MPI_COMM_WORLD);
    spoor_rs_world(world_rank, world_size, hosts, HOST_LEN);
    free(hosts);
    define_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    define_comm(MPI_COMM_SELF, "MPI_COMM_SELF");
    PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm);
    clock_sync();
    PMPI_Query_thread(&level);
    spoor_rs_after_init(level == MPI_THREAD_MULTIPLE);
}

int MPI_Init(int *argc, char ***argv) {
    spoor_rs_enter("MPI_Init");
    int r = PMPI_Init(argc, argv);
    if (r == MPI_SUCCESS) after_init();
    spoor_rs_leave("MPI_Init");
    return r;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    spoor_rs_enter("MPI_Init_thread");
    int r = PMPI_Init_thread(argc, argv, required, provided);
    if (r == MPI_SUCCESS) after_init();
    spoor_rs_leave("MPI_Init_thread");
    return r;
}

int MPI_Finalize(void) {
    spoor_rs_enter("MPI_Finalize");
    if (spoor_rs_active()) {
        clock_sync();
        if (sync_comm != MPI_COMM_NULL) PMPI_Comm_free(&sync_comm);
    }
    int r = PMPI_Finalize();
    spoor_rs_leave("MPI_Finalize");
    return r;
}

/* IPM's convention: MPI_Pcontrol(1, "name") begins phase `name`, MPI_Pcontrol(-1, "name")
 * ends it; other levels record nothing. Only those two levels carry a name, so only they
 * read one (the function is variadic); every call is passed on, the name with it. */
int MPI_Pcontrol(const int level, ...) {
    if (level != 1 && level != -1) return PMPI_Pcontrol(level);
    va_list ap;
    va_start(ap, level);
    const char *name = va_arg(ap, const char *);
    va_end(ap);
    if (level == 1)
        spoor_phase_begin(name);
    else
        spoor_phase_end(name);
    return PMPI_Pcontrol(level, name);
}

/* ---- point to point ---- */

#define SEND_WRAPPER(NAME)                                                                     \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm c) { \
        spoor_rs_enter("MPI_" #NAME);                                                          \
        spoor_rs_send(comm_h(c), dest_of(dest), tag, tbytes(t, count));                        \
        int r = PMPI_##NAME(buf, count, t, dest, tag, c);                                      \
        spoor_rs_leave("MPI_" #NAME);                                                          \
        return r;                                                                              \
    }
SEND_WRAPPER(Send)
SEND_WRAPPER(Ssend)
SEND_WRAPPER(Bsend)
SEND_WRAPPER(Rsend)

#define ISEND_WRAPPER(NAME)                                                                    \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm c,   \
                   MPI_Request *req) {                                                         \
        spoor_rs_enter("MPI_" #NAME);                                                          \
        int r = PMPI_##NAME(buf, count, t, dest, tag, c, req);                                 \
        if (r == MPI_SUCCESS)                                                                  \
            spoor_rs_isend(comm_h(c), dest_of(dest), tag, tbytes(t, count), H(*req));          \
        spoor_rs_leave("MPI_" #NAME);                                                          \
        return r;                                                                              \
    }
ISEND_WRAPPER(Isend)
ISEND_WRAPPER(Issend)
ISEND_WRAPPER(Ibsend)
ISEND_WRAPPER(Irsend)

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *status) {
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    spoor_rs_enter_wait("MPI_Recv");
    uint64_t ch = comm_h(c);
    spoor_rs_recv_begin(ch, src_of(src), tag_of(tag));
    int r = PMPI_Recv(buf, count, t, src, tag, c, st);
    if (r == MPI_SUCCESS && src != MPI_PROC_NULL)
        spoor_rs_recv_end(ch, st->MPI_SOURCE, st->MPI_TAG, status_bytes(st));
    spoor_rs_leave("MPI_Recv");
    return r;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *req) {
    spoor_rs_enter("MPI_Irecv");
    int r = PMPI_Irecv(buf, count, t, src, tag, c, req);
    if (r == MPI_SUCCESS) spoor_rs_irecv(comm_h(c), src_of(src), tag_of(tag), H(*req));
    spoor_rs_leave("MPI_Irecv");
    return r;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm c, MPI_Status *status) {
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    spoor_rs_enter_wait("MPI_Sendrecv");
    uint64_t ch = comm_h(c);
    spoor_rs_send(ch, dest_of(dest), stag, tbytes(stype, scount));
    spoor_rs_recv_begin(ch, src_of(src), tag_of(rtag));
    int r = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, c, st);
    if (r == MPI_SUCCESS && src != MPI_PROC_NULL)
        spoor_rs_recv_end(ch, st->MPI_SOURCE, st->MPI_TAG, status_bytes(st));
    spoor_rs_leave("MPI_Sendrecv");
    return r;
}

int MPI_Probe(int src, int tag, MPI_Comm c, MPI_Status *status) {
    spoor_rs_enter("MPI_Probe");
    int r = PMPI_Probe(src, tag, c, status);
    spoor_rs_leave("MPI_Probe");
    return r;
}

int MPI_Iprobe(int src, int tag, MPI_Comm c, int *flag, MPI_Status *status) {
    spoor_rs_enter("MPI_Iprobe");
    int r = PMPI_Iprobe(src, tag, c, flag, status);
    spoor_rs_leave("MPI_Iprobe");
    return r;
}

/* ---- completions: the request handles are read before MPI resets them ---- */

static void complete(uint64_t req, const MPI_Status *st) {
    spoor_rs_complete(req, st->MPI_SOURCE, st->MPI_TAG, st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t h = H(*req);
    spoor_rs_enter("MPI_Wait");
    int r = PMPI_Wait(req, st);
    if (r == MPI_SUCCESS) complete(h, st);
    spoor_rs_leave("MPI_Wait");
    return r;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t h = H(*req);
    spoor_rs_enter("MPI_Test");
    int r = PMPI_Test(req, flag, st);
    if (r == MPI_SUCCESS && *flag) complete(h, st);
    spoor_rs_leave("MPI_Test");
    return r;
}

/* Handles and statuses for n requests: on the stack for a few, else on the heap. */
#define SMALL 32
struct many {
    uint64_t hs[SMALL];
    MPI_Status ss[SMALL];
    uint64_t *h;
    MPI_Status *s;
};
static int many_init(struct many *m, int n, MPI_Request *reqs, MPI_Status *statuses) {
    m->h = n <= SMALL ? m->hs : malloc(sizeof(uint64_t) * (size_t)n);
    m->s = statuses != MPI_STATUSES_IGNORE ? statuses : n <= SMALL ? m->ss : malloc(sizeof(MPI_Status) * (size_t)n);
    if (!m->h || !m->s) return 0;
    for (int i = 0; i < n; i++) m->h[i] = H(reqs[i]);
    return 1;
}
static void many_free(struct many *m, MPI_Status *statuses) {
    if (m->h && m->h != m->hs) free(m->h);
    if (m->s && m->s != m->ss && m->s != statuses) free(m->s);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    struct many m;
    spoor_rs_enter("MPI_Waitall");
    if (!many_init(&m, n, reqs, statuses)) {
        many_free(&m, statuses);
        int r = PMPI_Waitall(n, reqs, statuses);
        spoor_rs_leave("MPI_Waitall");
        return r;
    }
    int r = PMPI_Waitall(n, reqs, m.s);
    if (r == MPI_SUCCESS)
        for (int i = 0; i < n; i++) complete(m.h[i], &m.s[i]);
    many_free(&m, statuses);
    spoor_rs_leave("MPI_Waitall");
    return r;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    struct many m;
    spoor_rs_enter("MPI_Testall");
    if (!many_init(&m, n, reqs, statuses)) {
        many_free(&m, statuses);
        int r = PMPI_Testall(n, reqs, flag, statuses);
        spoor_rs_leave("MPI_Testall");
        return r;
    }
    int r = PMPI_Testall(n, reqs, flag, m.s);
    if (r == MPI_SUCCESS && *flag)
        for (int i = 0; i < n; i++) complete(m.h[i], &m.s[i]);
    many_free(&m, statuses);
    spoor_rs_leave("MPI_Testall");
    return r;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    struct many m;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    spoor_rs_enter("MPI_Waitany");
    int ok = many_init(&m, n, reqs, MPI_STATUSES_IGNORE);
    int r = PMPI_Waitany(n, reqs, index, st);
    if (ok && r == MPI_SUCCESS && *index != MPI_UNDEFINED) complete(m.h[*index], st);
    many_free(&m, MPI_STATUSES_IGNORE);
    spoor_rs_leave("MPI_Waitany");
    return r;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    struct many m;
    spoor_rs_enter("MPI_Waitsome");
    if (!many_init(&m, n, reqs, statuses)) {
        many_free(&m, statuses);
        int r = PMPI_Waitsome(n, reqs, outcount, indices, statuses);
        spoor_rs_leave("MPI_Waitsome");
        return r;
    }
    int r = PMPI_Waitsome(n, reqs, outcount, indices, m.s);
    if (r == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++) complete(m.h[indices[i]], &m.s[i]);
    many_free(&m, statuses);
    spoor_rs_leave("MPI_Waitsome");
    return r;
}

/* ---- collectives ---- */

static int rank_in(MPI_Comm c) {
    int r = 0;
    PMPI_Comm_rank(c, &r);
    return r;
}
static int size_of(MPI_Comm c) {
    int n = 0;
    PMPI_Comm_size(c, &n);
    return n;
}
static uint64_t sum_bytes(MPI_Datatype t, const int *counts, int n) {
    uint64_t s = 0;
    for (int i = 0; i < n; i++) s += tbytes(t, counts[i]);
    return s;
}

#define COLL(NAME, OP, ROOT, SENT, RECV, CALL)                                             \
    do {                                                                                   \
        spoor_rs_enter_wait("MPI_" NAME);                                                  \
        uint64_t ch = comm_h(c);                                                           \
        spoor_rs_coll_begin(OP, ch);                                                       \
        int r = CALL;                                                                      \
        if (r == MPI_SUCCESS) spoor_rs_coll_end(OP, ch, ROOT, SENT, RECV);                 \
        spoor_rs_leave("MPI_" NAME);                                                       \
        return r;                                                                          \
    } while (0)

int MPI_Barrier(MPI_Comm c) { COLL("Barrier", BARRIER, -1, 0, 0, PMPI_Barrier(c)); }

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm c) {
    int me = rank_in(c);
    uint64_t b = tbytes(t, count);
    COLL("Bcast", BCAST, root, me == root ? b : 0, me == root ? 0 : b, PMPI_Bcast(buf, count, t, root, c));
}

int MPI_Reduce(const void *s, void *rb, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
    int me = rank_in(c);
    uint64_t b = tbytes(t, count);
    COLL("Reduce", REDUCE, root, b, me == root ? b : 0, PMPI_Reduce(s, rb, count, t, op, root, c));
}

int MPI_Allreduce(const void *s, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    uint64_t b = tbytes(t, count);
    COLL("Allreduce", ALLREDUCE, -1, b, b, PMPI_Allreduce(s, rb, count, t, op, c));
}

int MPI_Scan(const void *s, void *rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    uint64_t b = tbytes(t, count);
    COLL("Scan", SCAN, -1, b, b, PMPI_Scan(s, rb, count, t, op, c));
}

int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
               MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    uint64_t sent = s == MPI_IN_PLACE ? tbytes(rt, rc) : tbytes(st, sc);
    COLL("Gather", GATHER, root, sent, me == root ? tbytes(rt, rc) * (uint64_t)n : 0,
         PMPI_Gather(s, sc, st, rb, rc, rt, root, c));
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
                MPI_Datatype rt, int root, MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    uint64_t sent = s == MPI_IN_PLACE ? tbytes(rt, rcs[me]) : tbytes(st, sc);
    COLL("Gatherv", GATHERV, root, sent, me == root ? sum_bytes(rt, rcs, n) : 0,
         PMPI_Gatherv(s, sc, st, rb, rcs, displs, rt, root, c));
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    uint64_t recv = rb == MPI_IN_PLACE ? tbytes(st, sc) : tbytes(rt, rc);
    COLL("Scatter", SCATTER, root, me == root ? tbytes(st, sc) * (uint64_t)n : 0, recv,
         PMPI_Scatter(s, sc, st, rb, rc, rt, root, c));
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype st, void *rb, int rc,
                 MPI_Datatype rt, int root, MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    uint64_t recv = rb == MPI_IN_PLACE ? (me == root ? tbytes(st, scs[me]) : 0) : tbytes(rt, rc);
    COLL("Scatterv", SCATTERV, root, me == root ? sum_bytes(st, scs, n) : 0, recv,
         PMPI_Scatterv(s, scs, displs, st, rb, rc, rt, root, c));
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm c) {
    int n = size_of(c);
    uint64_t sent = s == MPI_IN_PLACE ? tbytes(rt, rc) : tbytes(st, sc);
    COLL("Allgather", ALLGATHER, -1, sent, tbytes(rt, rc) * (uint64_t)n,
         PMPI_Allgather(s, sc, st, rb, rc, rt, c));
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *rb, const int rcs[], const int displs[],
                   MPI_Datatype rt, MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    uint64_t sent = s == MPI_IN_PLACE ? tbytes(rt, rcs[me]) : tbytes(st, sc);
    COLL("Allgatherv", ALLGATHERV, -1, sent, sum_bytes(rt, rcs, n),
         PMPI_Allgatherv(s, sc, st, rb, rcs, displs, rt, c));
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm c) {
    int n = size_of(c);
    uint64_t recv = tbytes(rt, rc) * (uint64_t)n;
    COLL("Alltoall", ALLTOALL, -1, s == MPI_IN_PLACE ? recv : tbytes(st, sc) * (uint64_t)n, recv,
         PMPI_Alltoall(s, sc, st, rb, rc, rt, c));
}

int MPI_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype st, void *rb,
                  const int rcs[], const int rd[], MPI_Datatype rt, MPI_Comm c) {
    int n = size_of(c);
    uint64_t recv = sum_bytes(rt, rcs, n);
    COLL("Alltoallv", ALLTOALLV, -1, s == MPI_IN_PLACE ? recv : sum_bytes(st, scs, n), recv,
         PMPI_Alltoallv(s, scs, sd, st, rb, rcs, rd, rt, c));
}

int MPI_Reduce_scatter(const void *s, void *rb, const int rcs[], MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    int me = rank_in(c), n = size_of(c);
    COLL("Reduce_scatter", REDUCE_SCATTER, -1, sum_bytes(t, rcs, n), tbytes(t, rcs[me]),
         PMPI_Reduce_scatter(s, rb, rcs, t, op, c));
}

/* ---- communicators ---- */

#define CREATE(NAME, CALL, OUT)                                                            \
    do {                                                                                   \
        spoor_rs_enter("MPI_" NAME);                                                       \
        int r = CALL;                                                                      \
        if (r == MPI_SUCCESS) created_comm(OUT);                                           \
        spoor_rs_leave("MPI_" NAME);                                                       \
        return r;                                                                          \
    } while (0)

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out) { CREATE("Comm_dup", PMPI_Comm_dup(c, out), out); }
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out) {
    CREATE("Comm_split", PMPI_Comm_split(c, color, key, out), out);
}
int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *out) {
    CREATE("Comm_create", PMPI_Comm_create(c, g, out), out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out) {
    CREATE("Comm_split_type", PMPI_Comm_split_type(c, type, key, info, out), out);
}
int MPI_Cart_create(MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *out) {
    CREATE("Cart_create", PMPI_Cart_create(c, nd, dims, periods, reorder, out), out);
}
int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *out) {
    CREATE("Cart_sub", PMPI_Cart_sub(c, remain, out), out);
}

int MPI_Comm_free(MPI_Comm *c) {
    spoor_rs_enter("MPI_Comm_free");
    uint64_t h = H(*c);
    atomic_compare_exchange_strong(known_slot(h), &h, 0);
    spoor_rs_comm_forget(H(*c));
    int r = PMPI_Comm_free(c);
    spoor_rs_leave("MPI_Comm_free");
    return r;
}
