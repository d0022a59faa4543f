#!/usr/bin/python3
"""Writes a synthetic OTF2 archive with Debian's python3-otf2 (the OTF2 C
library's own writer), for the tests and the benchmark of spoor's OTF2 reader.

    /usr/bin/python3 gen_otf2.py DIR [--ranks N] [--iters N] [--regions N]
        [--threads N] [--resolution TICKS_PER_S] [--chunk-size BYTES] [--seed N]

DIR/traces.otf2 is the anchor. N MPI ranks (one location each, on two nodes)
run --iters iterations of: a compute region with metric samples (a class of
a UINT64 and a DOUBLE member, and an INT64 member), a ring of blocking
MPI_Send/MPI_Recv (on MPI_COMM_WORLD), an MPI_Irecv/MPI_Isend exchange
completed in MPI_Test and MPI_Waitall, an MPI_Barrier, an MPI_Bcast with a
rotating root, an MPI_Allreduce on the EVENS sub-communicator (even ranks),
every 4th iteration a message to itself on MPI_COMM_SELF, every 50th an
MPI_Irecv that is cancelled, every 10th a parameter record. About 35 events
per rank and iteration. Rank 1 also creates --threads pthreads (locations of
their own with THREAD_BEGIN/END and a worker region). Every rank has a
PROGRAM_BEGIN with an attribute list (rank 0's with 150 arguments: a record
longer than 255 bytes) and a PROGRAM_END; rank 2 writes local region and
communicator ids (mapping tables), rank 3 local metric ids; every rank but 0
has two CLOCK_OFFSET samples. --regions adds that many unused regions.
"""

import argparse
import os
import random
import shutil
import sys

try:
    import _otf2
except ImportError:
    sys.exit("gen_otf2.py: needs Debian's python3-otf2 under /usr/bin/python3 (apt-get install python3-otf2)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--regions", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resolution", type=int, default=2_500_000_000)
    ap.add_argument("--chunk-size", type=int, default=256 * 1024)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.ranks < 1:
        sys.exit("gen_otf2.py: --ranks must be at least 1")
    Gen(a).run()


class Strings:
    def __init__(self):
        self.ids = {}

    def __call__(self, s):
        if s not in self.ids:
            self.ids[s] = len(self.ids)
        return self.ids[s]


REGIONS = ["main", "MPI_Init", "MPI_Finalize", "compute", "MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend",
           "MPI_Test", "MPI_Waitall", "MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "worker", "int main(int, char**)",
           "MPI_Cancel"]
R = {name: i for i, name in enumerate(REGIONS)}
WORLD, EVENS, SELF, PTHREADS = 0, 1, 2, 3
OP_BARRIER, OP_BCAST, OP_ALLREDUCE = 0, 1, 11
T0 = 1_000_000


class Gen:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.s = Strings()
        self.s("")
        self.nregions = len(REGIONS) + a.regions
        self.threads = a.threads if a.ranks > 1 else 0
        self.locations = a.ranks + self.threads
        self.counts = {}
        self.first, self.last = None, None
        self.offsets = {}

    def run(self):
        a = self.a
        shutil.rmtree(a.dir, ignore_errors=True)
        os.makedirs(a.dir)
        self.ar = _otf2.Archive_Open(a.dir, "traces", _otf2.FILEMODE_WRITE, a.chunk_size, 4 * 1024 * 1024,
                                     _otf2.SUBSTRATE_POSIX, _otf2.COMPRESSION_NONE)
        self.flush = _otf2.FlushCallbacks(pre_flush=lambda *x: _otf2.FLUSH, post_flush=None)
        _otf2.Archive_SetFlushCallbacks(self.ar, self.flush, None)
        _otf2.Archive_SetSerialCollectiveCallbacks(self.ar)
        _otf2.Archive_SetCreator(self.ar, "spoor gen_otf2.py")
        _otf2.Archive_OpenEvtFiles(self.ar)
        self.attr = _otf2.AttributeList_New()
        for r in range(a.ranks):
            self.rank(r)
        for k in range(self.threads):
            self.thread(k)
        _otf2.Archive_CloseEvtFiles(self.ar)
        _otf2.Archive_OpenDefFiles(self.ar)
        for loc in range(self.locations):
            self.local_defs(loc)
        _otf2.Archive_CloseDefFiles(self.ar)
        self.global_defs()
        _otf2.Archive_Close(self.ar)
        print(sum(self.counts.values()))

    # Events ---------------------------------------------------------------

    def open(self, loc):
        self.w = _otf2.Archive_GetEvtWriter(self.ar, loc)
        self.loc = loc
        self.t = T0 + 1 + 5 * loc

    def tick(self, lo=1, hi=4):
        self.t += self.rng.randint(lo, hi)
        if self.first is None or self.t < self.first:
            self.first = self.t
        if self.last is None or self.t > self.last:
            self.last = self.t
        return self.t

    def close(self):
        self.counts[self.loc] = _otf2.EvtWriter_GetNumberOfEvents(self.w)
        _otf2.Archive_CloseEvtWriter(self.ar, self.w)

    def region(self, name):
        g = R[name]
        return self.nregions - 1 - g if self.loc == 2 else g

    def comm(self, c):
        return 100 + c if self.loc == 2 else c

    def metric(self, m):
        return 1 - m if self.loc == 3 else m

    def enter(self, name):
        _otf2.EvtWriter_Enter(self.w, None, self.tick(), self.region(name))

    def leave(self, name):
        _otf2.EvtWriter_Leave(self.w, None, self.tick(), self.region(name))

    def coll(self, name, op, comm, root, sent, received):
        w = self.w
        self.enter(name)
        _otf2.EvtWriter_MpiCollectiveBegin(w, None, self.tick())
        _otf2.EvtWriter_MpiCollectiveEnd(w, None, self.tick(5, 30), op, self.comm(comm), root, sent, received)
        self.leave(name)

    def rank(self, r):
        a, w = self.a, None
        n = a.ranks
        self.open(r)
        w = self.w
        _otf2.AttributeList_AddUint64(self.attr, 0, 4000 + r)
        args = [self.s(f"--arg={k}") for k in range(150)] if r == 0 else [self.s(f"--size={n}")]
        _otf2.EvtWriter_ProgramBegin(w, self.attr, self.tick(), self.s("./prog"), args)
        self.enter("int main(int, char**)")
        self.enter("MPI_Init")
        self.leave("MPI_Init")
        _otf2.EvtWriter_MeasurementOnOff(w, None, self.tick(), _otf2.MEASUREMENT_ON)
        if r == 1:
            for k in range(self.threads):
                _otf2.EvtWriter_ThreadCreate(w, None, self.tick(), self.comm(PTHREADS), k + 1)
        req = 0
        for i in range(a.iters):
            self.t = max(self.t, T0 + 400 * (i + 1) + 3 * r)
            # Compute, with metric samples.
            self.enter("compute")
            vals = [_otf2.MetricValue(unsigned_int=1000 * i + r), _otf2.MetricValue(floating_point=20.5 + i / 4 + r / 8)]
            _otf2.EvtWriter_Metric(w, None, self.tick(), self.metric(0), [_otf2.TYPE_UINT64, _otf2.TYPE_DOUBLE], vals)
            _otf2.EvtWriter_Metric(w, None, self.tick(), self.metric(1), [_otf2.TYPE_INT64],
                                   [_otf2.MetricValue(signed_int=(i * 101 - 50 * r) * (-1) ** i)])
            self.leave("compute")
            # A ring of blocking messages on MPI_COMM_WORLD.
            tag, size = i % 1000, 8 * (1 + i % 7)
            nxt, prv = (r + 1) % n, (r - 1) % n
            send = lambda: (self.enter("MPI_Send"),
                            _otf2.EvtWriter_MpiSend(w, None, self.tick(), nxt, self.comm(WORLD), tag, size),
                            self.leave("MPI_Send"))
            recv = lambda: (self.enter("MPI_Recv"),
                            _otf2.EvtWriter_MpiRecv(w, None, self.tick(2, 9), prv, self.comm(WORLD), tag, size),
                            self.leave("MPI_Recv"))
            if r == 0:
                send()
                recv()
            else:
                recv()
                send()
            # A non-blocking exchange with the neighbours.
            req += 2
            itag = 1000 + i % 100
            self.enter("MPI_Irecv")
            _otf2.EvtWriter_MpiIrecvRequest(w, None, self.tick(), req)
            self.leave("MPI_Irecv")
            self.enter("MPI_Isend")
            _otf2.EvtWriter_MpiIsend(w, None, self.tick(), prv, self.comm(WORLD), itag, 4 * i % 4096, req + 1)
            self.leave("MPI_Isend")
            self.enter("MPI_Test")
            _otf2.EvtWriter_MpiRequestTest(w, None, self.tick(), req)
            self.leave("MPI_Test")
            self.enter("MPI_Waitall")
            _otf2.EvtWriter_MpiIsendComplete(w, None, self.tick(), req + 1)
            _otf2.EvtWriter_MpiIrecv(w, None, self.tick(), nxt, self.comm(WORLD), itag, 4 * i % 4096, req)
            self.leave("MPI_Waitall")
            # Collectives.
            self.coll("MPI_Barrier", OP_BARRIER, WORLD, _otf2.UNDEFINED_UINT32, 0, 0)
            root = i % n
            self.coll("MPI_Bcast", OP_BCAST, WORLD, root, 64 * (n - 1) if r == root else 0, 0 if r == root else 64)
            if r % 2 == 0:
                self.coll("MPI_Allreduce", OP_ALLREDUCE, EVENS, _otf2.UNDEFINED_UINT32, 8, 8)
            if i % 4 == 3:
                self.enter("MPI_Send")
                _otf2.EvtWriter_MpiSend(w, None, self.tick(), 0, self.comm(SELF), 77, 1)
                self.leave("MPI_Send")
                self.enter("MPI_Recv")
                _otf2.EvtWriter_MpiRecv(w, None, self.tick(), 0, self.comm(SELF), 77, 1)
                self.leave("MPI_Recv")
            if i % 50 == 49:
                req += 2
                self.enter("MPI_Irecv")
                _otf2.EvtWriter_MpiIrecvRequest(w, None, self.tick(), req)
                self.leave("MPI_Irecv")
                self.enter("MPI_Cancel")
                _otf2.EvtWriter_MpiRequestCancelled(w, None, self.tick(), req)
                self.leave("MPI_Cancel")
            if i % 10 == 9:
                _otf2.EvtWriter_ParameterInt(w, None, self.tick(), 0, -i)
        if r == 1:
            for k in range(self.threads):
                _otf2.EvtWriter_ThreadWait(w, None, self.tick(), self.comm(PTHREADS), k + 1)
        self.enter("MPI_Finalize")
        self.leave("MPI_Finalize")
        self.leave("int main(int, char**)")
        _otf2.EvtWriter_ProgramEnd(w, None, self.tick(), 0)
        if r > 0:
            self.offsets[r] = [(T0, -7 * r, 0.5 * r), (self.t + 1, -4 * r, 0.25 * r)]
        self.close()

    def thread(self, k):
        self.open(self.a.ranks + k)
        w = self.w
        self.t = T0 + 4000 + 10 * k
        _otf2.EvtWriter_ThreadBegin(w, None, self.tick(), PTHREADS, k + 1)
        for i in range(self.a.iters):
            self.enter("worker")
            self.tick(5, 10)
            self.leave("worker")
        _otf2.EvtWriter_ThreadEnd(w, None, self.tick(), PTHREADS, k + 1)
        self.close()

    # Definitions ----------------------------------------------------------

    def local_defs(self, loc):
        dw = _otf2.Archive_GetDefWriter(self.ar, loc)
        if loc == 2:
            m = _otf2.IdMap_CreateFromUint64Array([self.nregions - 1 - i for i in range(self.nregions)], False)
            _otf2.DefWriter_WriteMappingTable(dw, _otf2.MAPPING_REGION, m)
            m = _otf2.IdMap_Create(_otf2.ID_MAP_SPARSE, 4)
            for c in range(4):
                _otf2.IdMap_AddIdPair(m, 100 + c, c)
            _otf2.DefWriter_WriteMappingTable(dw, _otf2.MAPPING_COMM, m)
        if loc == 3:
            m = _otf2.IdMap_CreateFromUint64Array([1, 0], False)
            _otf2.DefWriter_WriteMappingTable(dw, _otf2.MAPPING_METRIC, m)
        for (t, o, sd) in self.offsets.get(loc, []):
            _otf2.DefWriter_WriteClockOffset(dw, t, o, sd)
        _otf2.Archive_CloseDefWriter(self.ar, dw)

    def global_defs(self):
        a, s = self.a, self.s
        n = a.ranks
        names = {}
        names["nodes"] = [("cluster", "machine", _otf2.UNDEFINED_SYSTEM_TREE_NODE)]
        for k in range(min(2, n)):
            names["nodes"].append((f"node{k}", "node", 0))
        region_names = REGIONS + [f"user_region_{k}" for k in range(a.regions)]
        for x in region_names:
            s(x)
        for x in ["Master thread", "MPI_COMM_WORLD", "EVENS", "MPI_COMM_SELF", "Pthread contingent", "WORLD", "SELF",
                  "MPI_LOCATIONS", "PTHREAD_LOCATIONS", "PTHREAD_GROUP", "PAPI_TOT_INS", "instructions", "#",
                  "temperature", "degrees", "C", "memory", "resident set", "bytes", "ProcessId", "Process identifier",
                  "iteration"]:
            s(x)
        for (nm, cl, _) in names["nodes"]:
            s(nm), s(cl)
        for r in range(n):
            s(f"MPI Rank {r}")
        for k in range(self.threads):
            s(f"Pthread {k + 1}")
        g = _otf2.Archive_GetGlobalDefWriter(self.ar)
        first = self.first if self.first is not None else T0
        last = self.last if self.last is not None else T0
        _otf2.GlobalDefWriter_WriteClockProperties(g, a.resolution, first - 1, last - first + 1, 1_700_000_000_000_000_000)
        for text, i in sorted(s.ids.items(), key=lambda x: x[1]):
            _otf2.GlobalDefWriter_WriteString(g, i, text)
        _otf2.GlobalDefWriter_WriteAttribute(g, 0, s("ProcessId"), s("Process identifier"), _otf2.TYPE_UINT64)
        for i, (nm, cl, parent) in enumerate(names["nodes"]):
            _otf2.GlobalDefWriter_WriteSystemTreeNode(g, i, s(nm), s(cl), parent)
        for r in range(n):
            _otf2.GlobalDefWriter_WriteLocationGroup(g, r, s(f"MPI Rank {r}"), _otf2.LOCATION_GROUP_TYPE_PROCESS,
                                                     1 + r % 2, _otf2.UNDEFINED_LOCATION_GROUP)
        for r in range(n):
            _otf2.GlobalDefWriter_WriteLocation(g, r, s("Master thread"), _otf2.LOCATION_TYPE_CPU_THREAD,
                                                self.counts[r], r)
        for k in range(self.threads):
            loc = n + k
            _otf2.GlobalDefWriter_WriteLocation(g, loc, s(f"Pthread {k + 1}"), _otf2.LOCATION_TYPE_CPU_THREAD,
                                                self.counts[loc], 1)
        for i, x in enumerate(region_names):
            role = _otf2.REGION_ROLE_FUNCTION
            _otf2.GlobalDefWriter_WriteRegion(g, i, s(x), s(x), 0, role, _otf2.PARADIGM_NONE, _otf2.REGION_FLAG_NONE,
                                              _otf2.UNDEFINED_STRING, 0, 0)
        mpi, pth = _otf2.PARADIGM_MPI, _otf2.PARADIGM_PTHREAD
        none = _otf2.GROUP_FLAG_NONE
        _otf2.GlobalDefWriter_WriteGroup(g, 0, s("MPI_LOCATIONS"), _otf2.GROUP_TYPE_COMM_LOCATIONS, mpi, none,
                                         list(range(n)))
        _otf2.GlobalDefWriter_WriteGroup(g, 1, s("WORLD"), _otf2.GROUP_TYPE_COMM_GROUP, mpi, none, list(range(n)))
        _otf2.GlobalDefWriter_WriteGroup(g, 2, s("EVENS"), _otf2.GROUP_TYPE_COMM_GROUP, mpi, none,
                                         list(range(0, n, 2)))
        _otf2.GlobalDefWriter_WriteGroup(g, 3, s("SELF"), _otf2.GROUP_TYPE_COMM_SELF, mpi, none, [])
        if self.threads:
            members = [1] + [n + k for k in range(self.threads)]
            _otf2.GlobalDefWriter_WriteGroup(g, 4, s("PTHREAD_LOCATIONS"), _otf2.GROUP_TYPE_COMM_LOCATIONS, pth,
                                             none, members)
            _otf2.GlobalDefWriter_WriteGroup(g, 5, s("PTHREAD_GROUP"), _otf2.GROUP_TYPE_COMM_GROUP, pth, none,
                                             list(range(len(members))))
        _otf2.GlobalDefWriter_WriteMetricMember(g, 0, s("PAPI_TOT_INS"), s("instructions"), _otf2.METRIC_TYPE_PAPI,
                                                _otf2.METRIC_ACCUMULATED_START, _otf2.TYPE_UINT64,
                                                _otf2.BASE_DECIMAL, 0, s("#"))
        _otf2.GlobalDefWriter_WriteMetricMember(g, 1, s("temperature"), s("degrees"), _otf2.METRIC_TYPE_OTHER,
                                                _otf2.METRIC_ABSOLUTE_POINT, _otf2.TYPE_DOUBLE,
                                                _otf2.BASE_DECIMAL, 0, s("C"))
        _otf2.GlobalDefWriter_WriteMetricMember(g, 2, s("memory"), s("resident set"), _otf2.METRIC_TYPE_OTHER,
                                                _otf2.METRIC_ABSOLUTE_POINT, _otf2.TYPE_INT64,
                                                _otf2.BASE_BINARY, 10, s("bytes"))
        _otf2.GlobalDefWriter_WriteMetricClass(g, 0, [0, 1], _otf2.METRIC_SYNCHRONOUS_STRICT,
                                               _otf2.RECORDER_KIND_UNKNOWN)
        _otf2.GlobalDefWriter_WriteMetricClass(g, 1, [2], _otf2.METRIC_ASYNCHRONOUS, _otf2.RECORDER_KIND_UNKNOWN)
        _otf2.GlobalDefWriter_WriteComm(g, WORLD, s("MPI_COMM_WORLD"), 1, _otf2.UNDEFINED_COMM, _otf2.COMM_FLAG_NONE)
        _otf2.GlobalDefWriter_WriteComm(g, EVENS, s("EVENS"), 2, WORLD, _otf2.COMM_FLAG_NONE)
        _otf2.GlobalDefWriter_WriteComm(g, SELF, s("MPI_COMM_SELF"), 3, _otf2.UNDEFINED_COMM, _otf2.COMM_FLAG_NONE)
        if self.threads:
            _otf2.GlobalDefWriter_WriteComm(g, PTHREADS, s("Pthread contingent"), 5, _otf2.UNDEFINED_COMM,
                                            _otf2.COMM_FLAG_NONE)
        _otf2.GlobalDefWriter_WriteParameter(g, 0, s("iteration"), _otf2.PARAMETER_TYPE_INT64)
        _otf2.Archive_CloseGlobalDefWriter(self.ar, g)


if __name__ == "__main__":
    main()
