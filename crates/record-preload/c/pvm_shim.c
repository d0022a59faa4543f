/* spoor-record's PVM wrappers: pvm_* functions that record and call libpvm3's own.
 *
 * PVM has no profiling interface, so the wrappers are found first through LD_PRELOAD and
 * reach the real functions with dlsym(RTLD_NEXT): the library is not linked to libpvm3
 * (nor libgpvm3), and a program without PVM never loads it. A wrapper that libpvm3 calls
 * from inside another (pvm_precv may call pvm_recv) records nothing: only the outermost
 * PVM call of a thread is recorded.
 *
 * Task ids go to the Rust side (src/pvm.rs) as they are, with their host's name when first
 * seen; message sizes come from the packed buffer (pvm_bufinfo), or the count and data
 * type of pvm_psend / pvm_precv. pvm_spawn passes the recording on to the tasks the daemon
 * starts: the variables spoor-record set, and the spawning task's id, are added to
 * PVM_EXPORT for that call, so the daemon puts them in the new tasks' environments. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rust side (src/pvm.rs). */
extern int spoor_rs_active(void);
extern void spoor_rs_enter(const char *name);
extern void spoor_rs_enter_wait(const char *name);
extern void spoor_rs_leave(const char *name);
extern int spoor_rs_pvm_known(int tid);
extern void spoor_rs_pvm_task(int tid, const char *host);
extern void spoor_rs_pvm_ignore(int tid);
extern void spoor_rs_pvm_enrolled(int tid, const char *host);
extern int spoor_rs_pvm_parent_ctx(void);
extern void spoor_rs_pvm_clock_offset(int64_t offset, uint64_t error);
extern void spoor_rs_pvm_send(int tid, int tag, uint64_t bytes);
extern void spoor_rs_pvm_recv_begin(int tid, int tag);
extern void spoor_rs_pvm_recv_end(int tid, int tag, uint64_t bytes);
extern void spoor_rs_pvm_irecv(int tid, int tag);
extern void spoor_rs_pvm_irecv_complete(int tid, int tag, uint64_t bytes);
extern void spoor_rs_pvm_barrier_begin(const char *group, int size, const int *tids);
extern void spoor_rs_pvm_barrier_end(const char *group, int size, const int *tids);
extern const char *spoor_rs_pvm_app(void);

/* Collective operation code of formats/trace.md. */
enum { BARRIER = 0 };

#define REAL(ret, name, args)                                                                     \
    static ret(*real_##name) args;                                                                \
    static ret(*get_##name(void)) args {                                                          \
        if (!real_##name) real_##name = (ret(*) args)dlsym(RTLD_NEXT, #name);                      \
        return real_##name;                                                                       \
    }

REAL(int, pvm_mytid, (void))
REAL(int, pvm_parent, (void))
REAL(int, pvm_spawn, (char *, char **, int, char *, int, int *))
REAL(int, pvm_send, (int, int))
REAL(int, pvm_psend, (int, int, void *, int, int))
REAL(int, pvm_mcast, (int *, int, int))
REAL(int, pvm_recv, (int, int))
REAL(int, pvm_nrecv, (int, int))
REAL(int, pvm_trecv, (int, int, struct timeval *))
REAL(int, pvm_precv, (int, int, void *, int, int, int *, int *, int *))
REAL(int, pvm_exit, (void))
REAL(int, pvm_bufinfo, (int, int *, int *, int *))
REAL(int, pvm_getsbuf, (void))
REAL(int, pvm_tidtohost, (int))
REAL(int, pvm_config, (int *, int *, struct pvmhostinfo **))
REAL(int, pvm_barrier, (char *, int))
REAL(int, pvm_joingroup, (char *))
REAL(int, pvm_gsize, (char *))
REAL(int, pvm_gettid, (char *, int))
REAL(int, pvm_getinst, (char *, int))
REAL(int, pvm_lvgroup, (char *))
REAL(int, pvm_freezegroup, (char *, int))
REAL(int, pvm_tasks, (int, int *, struct pvmtaskinfo **))
REAL(int, pvm_pstat, (int))
REAL(int, pvm_newcontext, (void))
REAL(int, pvm_setcontext, (int))
REAL(int, pvm_addmhf, (int, int, int, int (*)(int)))
REAL(int, pvm_mkbuf, (int))
REAL(int, pvm_setsbuf, (int))
REAL(int, pvm_setrbuf, (int))
REAL(int, pvm_freebuf, (int))
REAL(int, pvm_pkint, (int *, int, int))
REAL(int, pvm_upkint, (int *, int, int))

/* The function a wrapper stands for is missing (libpvm3 not loaded, or too old): fail as
 * PVM fails, instead of calling through a null pointer. */
#define CALL(name, ...) (get_##name() ? real_##name(__VA_ARGS__) : (missing(#name), PvmSysErr))

static void missing(const char *name) {
    fprintf(stderr, "spoor-record: %s not found in the loaded libraries (libpvm3, libgpvm3)\n", name);
}

/* Depth of PVM calls on this thread: only the outermost one records. */
static __thread int depth;

/* This process's task id once it is enrolled; 0 before, -1 after pvm_exit. */
static int my_tid;

static int enter_call(void) { return depth++ == 0 && spoor_rs_active(); }
static void leave_call(void) { depth--; }

/* The name of the host task `tid` runs on, from the virtual machine's configuration. */
static const char *host_of(int tid, char *buf, size_t len) {
    int nhost = 0, narch = 0;
    struct pvmhostinfo *hi = NULL;
    int dtid = get_pvm_tidtohost() ? real_pvm_tidtohost(tid) : -1;
    buf[0] = 0;
    if (dtid < 0 || !get_pvm_config() || real_pvm_config(&nhost, &narch, &hi) < 0 || !hi) return buf;
    for (int i = 0; i < nhost; i++) {
        if (hi[i].hi_tid == dtid && hi[i].hi_name) {
            snprintf(buf, len, "%s", hi[i].hi_name);
            break;
        }
    }
    return buf;
}

/* Whether task `tid` runs the group server, whose messages implement the group functions
 * and are not the program's (the server is not recorded either). */
static int group_server(int tid) {
    int n = 0;
    struct pvmtaskinfo *ti = NULL;
    if (!get_pvm_tasks() || real_pvm_tasks(tid, &n, &ti) < 0 || n < 1 || !ti || !ti[0].ti_a_out) return 0;
    const char *name = strrchr(ti[0].ti_a_out, '/');
    return strcmp(name ? name + 1 : ti[0].ti_a_out, "pvmgs") == 0;
}

/* Defines task `tid` for the Rust side the first time it is named. */
static void know(int tid) {
    char host[256];
    if (tid <= 0 || spoor_rs_pvm_known(tid)) return;
    if (group_server(tid)) spoor_rs_pvm_ignore(tid);
    else spoor_rs_pvm_task(tid, host_of(tid, host, sizeof host));
}

/* Clock offsets against the parent (formats/trace.md, PVM). At enrolment and at pvm_exit
 * a spawned task pings its parent SYNC_ROUNDS times and keeps the round trip with the
 * smallest delay: offset = t_parent - (t_send + t_recv) / 2, error = half the round trip.
 * The parent answers from a message handler (pvm_addmhf), which libpvm calls during
 * whatever PVM call the parent is in, so the program does not cooperate. The pings and
 * answers travel in a context the parent got from pvm_newcontext (unique in the virtual
 * machine; passed on in SPOOR_RECORD_PVM_CTX): no user message is ever in it, and user
 * receives, made in the user's context, never see them. They go through the real libpvm
 * functions, with `depth` raised, so none of them is recorded. */
enum { SYNC_ROUNDS = 10, PING = 1, PONG = 2, DONE = 3, NEVER = 4 };
/* A parent in no PVM call (computing, or gone) never answers: wait this long per round
 * trip, then record no sample (spoor-align falls back to the messages). */
#define SYNC_WAIT_NS 1000000000LL
/* How long pvm_exit waits for children still to take their exit samples. */
#define EXIT_WAIT_NS 1000000000LL

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the recorder's wall clock */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int my_ctx = -1;     /* the context this task's children ping it in */
static int parent_ctx = -1; /* the parent's, when the parent is recorded */
static int parent_tid;
static int sync_seq;

/* Children that took their enrolment sample, until they say they are done. */
static struct {
    int tid, done;
} *children;
static int nchildren, children_cap;

static void child_seen(int tid, int done) {
    for (int i = 0; i < nchildren; i++) {
        if (children[i].tid == tid) {
            children[i].done |= done;
            return;
        }
    }
    if (done) return; /* done without a sample at enrolment: nothing to wait for */
    if (nchildren == children_cap) {
        int cap = children_cap ? 2 * children_cap : 16;
        void *more = realloc(children, sizeof *children * (size_t)cap);
        if (!more) return;
        children = more;
        children_cap = cap;
    }
    children[nchildren].tid = tid;
    children[nchildren++].done = 0;
}

/* The message handler: a child's ping gets this task's wall clock back at once. */
static int answer(int mid) {
    int seq = 0, bytes = 0, tag = -1, src = -1;
    depth++;
    if (real_pvm_bufinfo(mid, &bytes, &tag, &src) >= 0 && real_pvm_upkint(&seq, 1, 1) >= 0) {
        if (tag == PING) {
            int64_t t = now_ns();
            int reply[3] = {seq, (int)(uint32_t)((uint64_t)t >> 32), (int)(uint32_t)t};
            int ctx = real_pvm_setcontext(my_ctx);
            int sbuf = real_pvm_setsbuf(real_pvm_mkbuf(PvmDataDefault));
            real_pvm_pkint(reply, 3, 1);
            real_pvm_send(src, PONG);
            real_pvm_freebuf(real_pvm_setsbuf(sbuf));
            real_pvm_setcontext(ctx);
            child_seen(src, 0);
        } else if (tag == DONE) {
            child_seen(src, 1);
        }
    }
    depth--;
    return 0;
}

static int sync_ready(void) {
    return get_pvm_setcontext() && get_pvm_setsbuf() && get_pvm_setrbuf() && get_pvm_mkbuf() &&
           get_pvm_freebuf() && get_pvm_pkint() && get_pvm_upkint() && get_pvm_send() && get_pvm_trecv() &&
           get_pvm_bufinfo();
}

/* Sends `tag` with `seq` to the parent (in its context, which is current). */
static int to_parent(int tag, int seq) {
    int sbuf = real_pvm_mkbuf(PvmDataDefault);
    int old = real_pvm_setsbuf(sbuf);
    real_pvm_pkint(&seq, 1, 1);
    int r = real_pvm_send(parent_tid, tag);
    real_pvm_setsbuf(old);
    real_pvm_freebuf(sbuf);
    return r;
}

/* The parent's answer to ping `seq` (late answers to earlier pings are skipped), or 0
 * once `deadline` has passed. */
static int pong(int seq, int64_t deadline, int64_t *t_parent) {
    for (;;) {
        int64_t left = deadline - now_ns();
        if (left <= 0) return 0;
        struct timeval tv = {(time_t)(left / 1000000000), (suseconds_t)(left % 1000000000 / 1000)};
        int reply[3];
        if (real_pvm_trecv(parent_tid, PONG, &tv) <= 0) return 0;
        if (real_pvm_upkint(reply, 3, 1) < 0) continue;
        if (reply[0] != seq) continue;
        *t_parent = (int64_t)(((uint64_t)(uint32_t)reply[1] << 32) | (uint32_t)reply[2]);
        return 1;
    }
}

/* One clock sample against the parent, if it answers; at exit, then tells it so. */
static void clock_sync(int at_exit) {
    if (parent_ctx < 0 || parent_tid <= 0 || !sync_ready()) return;
    int ctx = real_pvm_setcontext(parent_ctx);
    int rbuf = real_pvm_setrbuf(0); /* the program's receive buffer stays as it was */
    int64_t best_rtt = -1, best_off = 0, t_parent = 0;
    for (int i = 0; i < SYNC_ROUNDS; i++) {
        int seq = ++sync_seq;
        int64_t t1 = now_ns();
        if (to_parent(PING, seq) < 0 || !pong(seq, t1 + SYNC_WAIT_NS, &t_parent)) break;
        int64_t t3 = now_ns();
        if (best_rtt < 0 || t3 - t1 < best_rtt) {
            best_rtt = t3 - t1;
            best_off = t_parent - (t1 + (t3 - t1) / 2);
        }
    }
    if (at_exit) to_parent(DONE, ++sync_seq);
    int last = real_pvm_setrbuf(rbuf);
    if (last > 0) real_pvm_freebuf(last);
    real_pvm_setcontext(ctx);
    /* A parent that stopped answering part way: the round trips so far are as good. */
    if (best_rtt >= 0) spoor_rs_pvm_clock_offset(best_off, (uint64_t)(best_rtt / 2));
}

/* Before leaving PVM, lets the children that took a sample at enrolment take theirs at
 * exit: answers their pings until each is done or gone, for at most EXIT_WAIT_NS. */
static void wait_for_children(void) {
    if (my_ctx < 0 || !nchildren || !sync_ready() || !get_pvm_pstat()) return;
    int64_t deadline = now_ns() + EXIT_WAIT_NS;
    int ctx = real_pvm_setcontext(my_ctx);
    int rbuf = real_pvm_setrbuf(0);
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < nchildren; i++) {
            if (children[i].done) continue;
            if (real_pvm_pstat(children[i].tid) == PvmOk) waiting = 1;
            else children[i].done = 1;
        }
        if (!waiting || now_ns() >= deadline) break;
        /* Nothing is ever sent with tag NEVER: this only lets the handler run. */
        struct timeval tv = {0, 10000};
        real_pvm_trecv(-1, NEVER, &tv);
    }
    int last = real_pvm_setrbuf(rbuf);
    if (last > 0) real_pvm_freebuf(last);
    real_pvm_setcontext(ctx);
}

/* This task's enrolment, seen once, after a PVM call succeeded (any call enrols): asking
 * before would repeat PVM's own error when no daemon runs. */
static void enrolled_as(int tid) {
    char host[256];
    if (my_tid != 0 || tid <= 0) return;
    my_tid = tid;
    spoor_rs_pvm_enrolled(tid, host_of(tid, host, sizeof host));
    /* The context this task's children will ping it in, and its handler. */
    if (get_pvm_newcontext() && get_pvm_addmhf() && sync_ready()) {
        my_ctx = real_pvm_newcontext();
        if (my_ctx >= 0 && real_pvm_addmhf(-1, -1, my_ctx, answer) < 0) my_ctx = -1;
    }
    /* The parent was defined at start, on this host: now its host is known. */
    int parent = get_pvm_parent() ? real_pvm_parent() : -1;
    if (parent > 0) {
        spoor_rs_pvm_task(parent, host_of(parent, host, sizeof host));
        parent_tid = parent;
        parent_ctx = spoor_rs_pvm_parent_ctx();
        clock_sync(0);
    }
}

static void enrolled(void) {
    if (my_tid == 0 && get_pvm_mytid()) enrolled_as(real_pvm_mytid());
}

int pvm_mytid(void) {
    int rec = enter_call();
    int r = CALL(pvm_mytid);
    if (rec) enrolled_as(r);
    leave_call();
    return r;
}

static uint64_t type_size(int type) {
    switch (type) {
    case PVM_STR: case PVM_BYTE: return 1;
    case PVM_SHORT: case PVM_USHORT: return sizeof(short);
    case PVM_INT: case PVM_UINT: return sizeof(int);
    case PVM_FLOAT: return sizeof(float);
    case PVM_CPLX: return 2 * sizeof(float);
    case PVM_DOUBLE: return sizeof(double);
    case PVM_DCPLX: return 2 * sizeof(double);
    case PVM_LONG: case PVM_ULONG: return sizeof(long);
    default: return 0;
    }
}

static uint64_t sbuf_bytes(void) {
    int bytes = 0, tag, tid;
    int b = get_pvm_getsbuf() ? real_pvm_getsbuf() : 0;
    if (b <= 0 || !get_pvm_bufinfo() || real_pvm_bufinfo(b, &bytes, &tag, &tid) < 0) return 0;
    return bytes < 0 ? 0 : (uint64_t)bytes;
}

/* A receive that returned buffer `b`: its actual source, tag and size. */
static int rbuf_info(int b, int *tid, int *tag, uint64_t *bytes) {
    int n = 0;
    if (b <= 0 || !get_pvm_bufinfo() || real_pvm_bufinfo(b, &n, tag, tid) < 0) return 0;
    *bytes = n < 0 ? 0 : (uint64_t)n;
    know(*tid);
    return 1;
}

int pvm_send(int tid, int tag) {
    int rec = enter_call();
    if (rec) {
        spoor_rs_enter("pvm_send");
        know(tid);
        spoor_rs_pvm_send(tid, tag, sbuf_bytes());
    }
    int r = CALL(pvm_send, tid, tag);
    if (rec) {
        if (r >= 0) enrolled();
        spoor_rs_leave("pvm_send");
    }
    leave_call();
    return r;
}

int pvm_psend(int tid, int tag, void *buf, int len, int type) {
    int rec = enter_call();
    if (rec) {
        spoor_rs_enter("pvm_psend");
        know(tid);
        spoor_rs_pvm_send(tid, tag, len > 0 ? (uint64_t)len * type_size(type) : 0);
    }
    int r = CALL(pvm_psend, tid, tag, buf, len, type);
    if (rec) {
        if (r >= 0) enrolled();
        spoor_rs_leave("pvm_psend");
    }
    leave_call();
    return r;
}

/* One send per destination; PVM never sends a multicast to the caller itself. */
int pvm_mcast(int *tids, int ntask, int tag) {
    int rec = enter_call();
    if (rec) {
        enrolled(); /* to leave out the caller's own id */
        spoor_rs_enter("pvm_mcast");
        uint64_t bytes = sbuf_bytes();
        for (int i = 0; tids && i < ntask; i++) {
            if (tids[i] == my_tid || tids[i] <= 0) continue;
            know(tids[i]);
            spoor_rs_pvm_send(tids[i], tag, bytes);
        }
    }
    int r = CALL(pvm_mcast, tids, ntask, tag);
    if (rec) spoor_rs_leave("pvm_mcast");
    leave_call();
    return r;
}

int pvm_recv(int tid, int tag) {
    int rec = enter_call();
    if (rec) {
        spoor_rs_enter_wait("pvm_recv");
        know(tid);
        spoor_rs_pvm_recv_begin(tid, tag);
    }
    int b = CALL(pvm_recv, tid, tag);
    if (rec) {
        int src, rtag;
        uint64_t bytes;
        if (rbuf_info(b, &src, &rtag, &bytes)) spoor_rs_pvm_recv_end(src, rtag, bytes);
        if (b >= 0) enrolled();
        spoor_rs_leave("pvm_recv");
    }
    leave_call();
    return b;
}

/* A receive that may return without a message: posted as a non-blocking receive, which
 * completes if a message came (a timed-out one stays open: formats/trace.md, PVM). */
int pvm_trecv(int tid, int tag, struct timeval *timeout) {
    int rec = enter_call();
    if (rec) {
        spoor_rs_enter_wait("pvm_trecv");
        know(tid);
        if (timeout) spoor_rs_pvm_irecv(tid, tag);
        else spoor_rs_pvm_recv_begin(tid, tag);
    }
    int b = CALL(pvm_trecv, tid, tag, timeout);
    if (rec) {
        int src, rtag;
        uint64_t bytes;
        if (rbuf_info(b, &src, &rtag, &bytes)) {
            if (timeout) spoor_rs_pvm_irecv_complete(src, rtag, bytes);
            else spoor_rs_pvm_recv_end(src, rtag, bytes);
        }
        if (b >= 0) enrolled();
        spoor_rs_leave("pvm_trecv");
    }
    leave_call();
    return b;
}

/* A probe that finds nothing records nothing (polling loops would fill the trace); one
 * that gets a message records a receive that waited for nothing. */
int pvm_nrecv(int tid, int tag) {
    int rec = enter_call();
    int b = CALL(pvm_nrecv, tid, tag);
    if (rec) {
        int src, rtag;
        uint64_t bytes;
        if (b >= 0) enrolled();
        if (b > 0 && rbuf_info(b, &src, &rtag, &bytes)) {
            spoor_rs_enter("pvm_nrecv");
            spoor_rs_pvm_recv_begin(tid, tag);
            spoor_rs_pvm_recv_end(src, rtag, bytes);
            spoor_rs_leave("pvm_nrecv");
        }
    }
    leave_call();
    return b;
}

int pvm_precv(int tid, int tag, void *buf, int len, int type, int *rtid, int *rtag, int *rlen) {
    int rec = enter_call();
    int src = -1, got_tag = -1, got_len = 0;
    if (rec) {
        spoor_rs_enter_wait("pvm_precv");
        know(tid);
        spoor_rs_pvm_recv_begin(tid, tag);
    }
    int r = CALL(pvm_precv, tid, tag, buf, len, type, &src, &got_tag, &got_len);
    if (rtid) *rtid = src;
    if (rtag) *rtag = got_tag;
    if (rlen) *rlen = got_len;
    if (rec) {
        if (r >= 0 && src > 0) {
            know(src);
            /* PVM 3.4 returns the length in bytes, whatever the data type. */
            spoor_rs_pvm_recv_end(src, got_tag, got_len > 0 ? (uint64_t)got_len : 0);
        }
        if (r >= 0) enrolled();
        spoor_rs_leave("pvm_precv");
    }
    leave_call();
    return r;
}

/* The variables that carry the recording to a spawned task, added to PVM_EXPORT. */
static const char *const carried[] = {"LD_PRELOAD", "SPOOR_RECORD_DIR", "SPOOR_RECORD_APP",
                                      "SPOOR_RECORD_PID", "SPOOR_RECORD_BLOCK_BYTES",
                                      "SPOOR_RECORD_CPU_INTERVAL_NS", "SPOOR_RECORD_PVM_PARENT",
                                      "SPOOR_RECORD_PVM_CTX"};

/* Sets PVM_EXPORT for one pvm_spawn; returns the old value (malloc'd) to restore. */
static char *export_recording(int *had) {
    const char *old = getenv("PVM_EXPORT");
    char tid[32];
    *had = old != NULL;
    char *saved = old ? strdup(old) : NULL;
    snprintf(tid, sizeof tid, "%x", my_tid);
    setenv("SPOOR_RECORD_PVM_PARENT", tid, 1);
    if (my_ctx >= 0) {
        char ctx[32];
        snprintf(ctx, sizeof ctx, "%d", my_ctx);
        setenv("SPOOR_RECORD_PVM_CTX", ctx, 1);
    } else {
        unsetenv("SPOOR_RECORD_PVM_CTX"); /* no handler: the children do not ping */
    }
    setenv("SPOOR_RECORD_APP", spoor_rs_pvm_app(), 1);
    size_t n = old ? strlen(old) + 1 : 1;
    for (size_t i = 0; i < sizeof carried / sizeof *carried; i++) n += strlen(carried[i]) + 1;
    char *list = malloc(n);
    if (!list) return saved;
    list[0] = 0;
    if (old && *old) strcat(strcpy(list, old), ":");
    for (size_t i = 0; i < sizeof carried / sizeof *carried; i++) {
        if (!getenv(carried[i])) continue;
        strcat(list, carried[i]);
        strcat(list, ":");
    }
    list[strlen(list) - (list[0] ? 1 : 0)] = 0;
    setenv("PVM_EXPORT", list, 1);
    free(list);
    return saved;
}

static void restore_export(int had, char *saved) {
    if (had && saved) setenv("PVM_EXPORT", saved, 1);
    else unsetenv("PVM_EXPORT");
    free(saved);
}

int pvm_spawn(char *task, char **argv, int flag, char *where, int ntask, int *tids) {
    int rec = enter_call();
    int had = 0;
    char *saved = NULL;
    if (rec) {
        enrolled(); /* the children are told this task's id */
        spoor_rs_enter("pvm_spawn");
        if (my_tid > 0) saved = export_recording(&had);
    }
    int r = CALL(pvm_spawn, task, argv, flag, where, ntask, tids);
    if (rec) {
        if (my_tid > 0) restore_export(had, saved);
        /* The children: each one's trace names this task as its parent (the spawn arc). */
        for (int i = 0; tids && i < r && i < ntask; i++) know(tids[i]);
        spoor_rs_leave("pvm_spawn");
    }
    leave_call();
    return r;
}

/* The group's members by instance number, as task ids (malloc'd; NULL when unknown).
 * A member that left leaves a hole in the instance numbers (they are not renumbered),
 * which is skipped. */
static int *members(char *group, int *size) {
    int n = get_pvm_gsize() ? real_pvm_gsize(group) : -1;
    *size = 0;
    if (n <= 0 || !get_pvm_gettid()) return NULL;
    int *tids = malloc(sizeof(int) * (size_t)n);
    if (!tids) return NULL;
    for (int i = 0; i < n; i++) {
        int tid = real_pvm_gettid(group, i);
        if (tid <= 0) continue;
        know(tid);
        tids[(*size)++] = tid;
    }
    return tids;
}

int pvm_barrier(char *group, int count) {
    int rec = enter_call();
    int n = 0;
    int *tids = NULL;
    if (rec) {
        enrolled();
        spoor_rs_enter("pvm_barrier"); /* the group server is asked before the wait */
        tids = group ? members(group, &n) : NULL;
        if (tids) spoor_rs_pvm_barrier_begin(group, n, tids);
    }
    int r = CALL(pvm_barrier, group, count);
    if (rec) {
        if (tids) {
            /* Members that joined while this task waited belong to the barrier too. */
            int m = 0;
            int *after = members(group, &m);
            if (after) spoor_rs_pvm_barrier_end(group, m, after);
            else spoor_rs_pvm_barrier_end(group, n, tids);
            free(after);
        }
        spoor_rs_leave("pvm_barrier");
    }
    free(tids);
    leave_call();
    return r;
}

int pvm_joingroup(char *group) {
    int rec = enter_call();
    if (rec) spoor_rs_enter("pvm_joingroup");
    int r = CALL(pvm_joingroup, group);
    if (rec) {
        if (r >= 0) enrolled();
        spoor_rs_leave("pvm_joingroup");
    }
    leave_call();
    return r;
}

int pvm_exit(void) {
    int rec = enter_call();
    if (rec) {
        enrolled();
        spoor_rs_enter("pvm_exit");
        clock_sync(1);
        wait_for_children();
    }
    int r = CALL(pvm_exit);
    if (rec) spoor_rs_leave("pvm_exit");
    my_tid = -1; /* left the virtual machine: a later call is not a new enrolment */
    leave_call();
    return r;
}

/* Group functions whose messages to the group server are PVM's own: called through, with
 * nothing recorded of what they send and receive. */
#define QUIET(name, params, ...)                                                                  \
    int name params {                                                                             \
        depth++;                                                                                  \
        int r = CALL(name, __VA_ARGS__);                                                          \
        depth--;                                                                                  \
        return r;                                                                                 \
    }

QUIET(pvm_lvgroup, (char *group), group)
QUIET(pvm_getinst, (char *group, int tid), group, tid)
QUIET(pvm_gettid, (char *group, int inum), group, inum)
QUIET(pvm_gsize, (char *group), group)
QUIET(pvm_freezegroup, (char *group, int size), group, size)
