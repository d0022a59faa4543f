//! The argument layout of every call record DUMPI writes, by function label
//! (the 16-bit index that starts each record): field names, in stream order,
//! with their widths. DUMPI's records carry no length, so a reader must know
//! every layout to find the next record. The table follows the record
//! definitions of SST DUMPI 1.0.0 (`dumpi/common/dumpiio.c`, the reader side,
//! whose version-dependent variants are [`Ty::ArgvQuirk`] and
//! [`Ty::I32ArrSince`]); labels follow `dumpi/common/funclabels.h`.

/// How an argument is stored (all integers big-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// 8 bits (ops, comparisons, thread levels, ...).
    I8,
    /// 16 bits (communicators, datatypes, groups, windows, files, ...).
    I16,
    /// 32 bits (counts, ranks, tags, requests, ...).
    I32,
    /// 64 bits (file offsets, addresses of profiled functions).
    I64,
    /// A 32-bit count, then that many 32-bit values (none if the count is negative).
    I32Arr,
    /// A 32-bit count, then that many 16-bit values.
    I16Arr,
    /// A 32-bit count, then that many 8-bit values.
    I8Arr,
    /// A 32-bit count of rows, then per row an [`Ty::I32Arr`].
    I32Arr2,
    /// A 32-bit length, then that many bytes.
    Str,
    /// A 32-bit count, then that many [`Ty::Str`].
    StrArr,
    /// A 32-bit count, then that many [`Ty::StrArr`].
    StrArr2,
    /// Statuses, present only if the record's mask has a status bit: a 32-bit
    /// count, then per status 32-bit bytes and source, 8-bit cancelled and
    /// error flags, and (from version 0.6.3) a 32-bit tag.
    Status,
    /// `MPI_Init`'s argv: a 32-bit argc (written twice before version 0.6.2),
    /// then argc [`Ty::Str`].
    ArgvQuirk,
    /// `MPI_Init_thread`'s argv: a 32-bit argc, then argc [`Ty::Str`].
    Argv,
    /// An [`Ty::I32Arr`] from the given version on, a single 32-bit value before.
    I32ArrSince(u8, u8, u8),
}

/// One argument of a record.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub ty: Ty,
    /// Present only when the field of this name equals the `root` field (rooted collectives).
    pub if_root: Option<&'static str>,
}

const fn a(name: &'static str, ty: Ty) -> Arg {
    Arg { name, ty, if_root: None }
}

const fn r(name: &'static str, ty: Ty, rank_field: &'static str) -> Arg {
    Arg { name, ty, if_root: Some(rank_field) }
}

/// The label that ends a record stream.
pub const END_OF_STREAM: u16 = 293;
/// Function labels below this are MPI calls (and their count in the footer is this plus one).
pub const ALL_FUNCTIONS: u16 = 290;
/// `MPI_Finalize`: before function profiling existed, a label 0 after it ended the stream.
pub const FINALIZE: u16 = 125;
/// A profiled function was entered (its 64-bit address follows).
pub const FUNCTION_ENTER: u16 = 291;
/// A profiled function was left.
pub const FUNCTION_EXIT: u16 = 292;

/// The name and argument layout of the call with `label`, or `None` for a
/// label that has no record layout (`MPI_Pcontrol`, the sentinels, unknown).
pub fn layout(label: u16) -> Option<(&'static str, &'static [Arg])> {
    Some(match label {
        0 => ("MPI_Send", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        1 => ("MPI_Recv", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("source", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        2 => ("MPI_Get_count", {
            const L: &[Arg] = &[a("status", Ty::Status), a("datatype", Ty::I16), a("count", Ty::I32)];
            L
        }),
        3 => ("MPI_Bsend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        4 => ("MPI_Ssend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        5 => ("MPI_Rsend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        6 => ("MPI_Buffer_attach", {
            const L: &[Arg] = &[a("size", Ty::I32)];
            L
        }),
        7 => ("MPI_Buffer_detach", {
            const L: &[Arg] = &[a("size", Ty::I32)];
            L
        }),
        8 => ("MPI_Isend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        9 => ("MPI_Ibsend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        10 => ("MPI_Issend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        11 => ("MPI_Irsend", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        12 => ("MPI_Irecv", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("source", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        13 => ("MPI_Wait", {
            const L: &[Arg] = &[a("request", Ty::I32), a("status", Ty::Status)];
            L
        }),
        14 => ("MPI_Test", {
            const L: &[Arg] = &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)];
            L
        }),
        15 => ("MPI_Request_free", {
            const L: &[Arg] = &[a("request", Ty::I32)];
            L
        }),
        16 => ("MPI_Waitany", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("index", Ty::I32),
                a("status", Ty::Status),
            ];
            L
        }),
        17 => ("MPI_Testany", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("index", Ty::I32),
                a("flag", Ty::I32),
                a("status", Ty::Status),
            ];
            L
        }),
        18 => ("MPI_Waitall", {
            const L: &[Arg] = &[a("count", Ty::I32), a("requests", Ty::I32Arr), a("statuses", Ty::Status)];
            L
        }),
        19 => ("MPI_Testall", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("flag", Ty::I32),
                a("statuses", Ty::Status),
            ];
            L
        }),
        20 => ("MPI_Waitsome", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("outcount", Ty::I32),
                a("indices", Ty::I32Arr),
                a("statuses", Ty::Status),
            ];
            L
        }),
        21 => ("MPI_Testsome", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("outcount", Ty::I32),
                a("indices", Ty::I32Arr),
                a("statuses", Ty::Status),
            ];
            L
        }),
        22 => ("MPI_Iprobe", {
            const L: &[Arg] = &[
                a("source", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("flag", Ty::I32),
                a("status", Ty::Status),
            ];
            L
        }),
        23 => ("MPI_Probe", {
            const L: &[Arg] =
                &[a("source", Ty::I32), a("tag", Ty::I32), a("comm", Ty::I16), a("status", Ty::Status)];
            L
        }),
        24 => ("MPI_Cancel", {
            const L: &[Arg] = &[a("request", Ty::I32)];
            L
        }),
        25 => ("MPI_Test_cancelled", {
            const L: &[Arg] = &[a("status", Ty::Status), a("cancelled", Ty::I32)];
            L
        }),
        26 => ("MPI_Send_init", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        27 => ("MPI_Bsend_init", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        28 => ("MPI_Ssend_init", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        29 => ("MPI_Rsend_init", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        30 => ("MPI_Recv_init", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("source", Ty::I32),
                a("tag", Ty::I32),
                a("comm", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        31 => ("MPI_Start", {
            const L: &[Arg] = &[a("request", Ty::I32)];
            L
        }),
        32 => ("MPI_Startall", {
            const L: &[Arg] = &[a("count", Ty::I32), a("requests", Ty::I32Arr)];
            L
        }),
        33 => ("MPI_Sendrecv", {
            const L: &[Arg] = &[
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("dest", Ty::I32),
                a("sendtag", Ty::I32),
                a("recvcount", Ty::I32),
                a("recvtype", Ty::I16),
                a("source", Ty::I32),
                a("recvtag", Ty::I32),
                a("comm", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        34 => ("MPI_Sendrecv_replace", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("dest", Ty::I32),
                a("sendtag", Ty::I32),
                a("source", Ty::I32),
                a("recvtag", Ty::I32),
                a("comm", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        35 => ("MPI_Type_contiguous", {
            const L: &[Arg] = &[a("count", Ty::I32), a("oldtype", Ty::I16), a("newtype", Ty::I16)];
            L
        }),
        36 => ("MPI_Type_vector", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklength", Ty::I32),
                a("stride", Ty::I32),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        37 => ("MPI_Type_hvector", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklength", Ty::I32),
                a("stride", Ty::I32),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        38 => ("MPI_Type_indexed", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("lengths", Ty::I32Arr),
                a("indices", Ty::I32Arr),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        39 => ("MPI_Type_hindexed", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("lengths", Ty::I32Arr),
                a("indices", Ty::I32Arr),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        40 => ("MPI_Type_struct", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("lengths", Ty::I32Arr),
                a("indices", Ty::I32ArrSince(0, 6, 9)),
                a("oldtypes", Ty::I16Arr),
                a("newtype", Ty::I16),
            ];
            L
        }),
        41 => ("MPI_Address", {
            const L: &[Arg] = &[a("address", Ty::I32)];
            L
        }),
        42 => ("MPI_Type_extent", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("extent", Ty::I32)];
            L
        }),
        43 => ("MPI_Type_size", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("size", Ty::I32)];
            L
        }),
        44 => ("MPI_Type_lb", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("lb", Ty::I32)];
            L
        }),
        45 => ("MPI_Type_ub", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("ub", Ty::I32)];
            L
        }),
        46 => ("MPI_Type_commit", {
            const L: &[Arg] = &[a("datatype", Ty::I16)];
            L
        }),
        47 => ("MPI_Type_free", {
            const L: &[Arg] = &[a("datatype", Ty::I16)];
            L
        }),
        48 => ("MPI_Get_elements", {
            const L: &[Arg] = &[a("status", Ty::Status), a("datatype", Ty::I16), a("elements", Ty::I32)];
            L
        }),
        49 => ("MPI_Pack", {
            const L: &[Arg] = &[
                a("incount", Ty::I32),
                a("datatype", Ty::I16),
                a("outcount", Ty::I32),
                a("position_in", Ty::I32),
                a("position_out", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        50 => ("MPI_Unpack", {
            const L: &[Arg] = &[
                a("incount", Ty::I32),
                a("position_in", Ty::I32),
                a("position_out", Ty::I32),
                a("outcount", Ty::I32),
                a("datatype", Ty::I16),
                a("comm", Ty::I16),
            ];
            L
        }),
        51 => ("MPI_Pack_size", {
            const L: &[Arg] =
                &[a("incount", Ty::I32), a("datatype", Ty::I16), a("comm", Ty::I16), a("size", Ty::I32)];
            L
        }),
        52 => ("MPI_Barrier", {
            const L: &[Arg] = &[a("comm", Ty::I16)];
            L
        }),
        53 => ("MPI_Bcast", {
            const L: &[Arg] =
                &[a("count", Ty::I32), a("datatype", Ty::I16), a("root", Ty::I32), a("comm", Ty::I16)];
            L
        }),
        54 => ("MPI_Gather", {
            const L: &[Arg] = &[
                a("commrank", Ty::I32),
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("root", Ty::I32),
                a("comm", Ty::I16),
                r("recvcount", Ty::I32, "commrank"),
                r("recvtype", Ty::I16, "commrank"),
            ];
            L
        }),
        55 => ("MPI_Gatherv", {
            const L: &[Arg] = &[
                a("commrank", Ty::I32),
                a("commsize", Ty::I32),
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("root", Ty::I32),
                a("comm", Ty::I16),
                r("recvcounts", Ty::I32Arr, "commrank"),
                r("displs", Ty::I32Arr, "commrank"),
                a("recvtype", Ty::I16),
            ];
            L
        }),
        56 => ("MPI_Scatter", {
            const L: &[Arg] = &[
                a("commrank", Ty::I32),
                a("recvcount", Ty::I32),
                a("recvtype", Ty::I16),
                a("root", Ty::I32),
                a("comm", Ty::I16),
                r("sendcount", Ty::I32, "commrank"),
                r("sendtype", Ty::I16, "commrank"),
            ];
            L
        }),
        57 => ("MPI_Scatterv", {
            const L: &[Arg] = &[
                a("commrank", Ty::I32),
                a("commsize", Ty::I32),
                a("sendtype", Ty::I16),
                a("recvcount", Ty::I32),
                a("recvtype", Ty::I16),
                a("root", Ty::I32),
                a("comm", Ty::I16),
                r("sendcounts", Ty::I32Arr, "commrank"),
                r("displs", Ty::I32Arr, "commrank"),
            ];
            L
        }),
        58 => ("MPI_Allgather", {
            const L: &[Arg] = &[
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("recvcount", Ty::I32),
                a("recvtype", Ty::I16),
                a("comm", Ty::I16),
            ];
            L
        }),
        59 => ("MPI_Allgatherv", {
            const L: &[Arg] = &[
                a("commsize", Ty::I32),
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("recvcounts", Ty::I32Arr),
                a("displs", Ty::I32Arr),
                a("recvtype", Ty::I16),
                a("comm", Ty::I16),
            ];
            L
        }),
        60 => ("MPI_Alltoall", {
            const L: &[Arg] = &[
                a("sendcount", Ty::I32),
                a("sendtype", Ty::I16),
                a("recvcount", Ty::I32),
                a("recvtype", Ty::I16),
                a("comm", Ty::I16),
            ];
            L
        }),
        61 => ("MPI_Alltoallv", {
            const L: &[Arg] = &[
                a("commsize", Ty::I32),
                a("sendcounts", Ty::I32Arr),
                a("senddispls", Ty::I32Arr),
                a("sendtype", Ty::I16),
                a("recvcounts", Ty::I32Arr),
                a("recvdispls", Ty::I32Arr),
                a("recvtype", Ty::I16),
                a("comm", Ty::I16),
            ];
            L
        }),
        62 => ("MPI_Reduce", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("op", Ty::I8),
                a("root", Ty::I32),
                a("comm", Ty::I16),
            ];
            L
        }),
        63 => ("MPI_Op_create", {
            const L: &[Arg] = &[a("commute", Ty::I32), a("op", Ty::I8)];
            L
        }),
        64 => ("MPI_Op_free", {
            const L: &[Arg] = &[a("op", Ty::I8)];
            L
        }),
        65 => ("MPI_Allreduce", {
            const L: &[Arg] =
                &[a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16)];
            L
        }),
        66 => ("MPI_Reduce_scatter", {
            const L: &[Arg] = &[
                a("commsize", Ty::I32),
                a("recvcounts", Ty::I32Arr),
                a("datatype", Ty::I16),
                a("op", Ty::I8),
                a("comm", Ty::I16),
            ];
            L
        }),
        67 => ("MPI_Scan", {
            const L: &[Arg] =
                &[a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16)];
            L
        }),
        68 => ("MPI_Group_size", {
            const L: &[Arg] = &[a("group", Ty::I16), a("size", Ty::I32)];
            L
        }),
        69 => ("MPI_Group_rank", {
            const L: &[Arg] = &[a("group", Ty::I16), a("rank", Ty::I32)];
            L
        }),
        70 => ("MPI_Group_translate_ranks", {
            const L: &[Arg] = &[
                a("group1", Ty::I16),
                a("count", Ty::I32),
                a("ranks1", Ty::I32Arr),
                a("group2", Ty::I16),
                a("ranks2", Ty::I32Arr),
            ];
            L
        }),
        71 => ("MPI_Group_compare", {
            const L: &[Arg] = &[a("group1", Ty::I16), a("group2", Ty::I16), a("result", Ty::I8)];
            L
        }),
        72 => ("MPI_Comm_group", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("group", Ty::I16)];
            L
        }),
        73 => ("MPI_Group_union", {
            const L: &[Arg] = &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)];
            L
        }),
        74 => ("MPI_Group_intersection", {
            const L: &[Arg] = &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)];
            L
        }),
        75 => ("MPI_Group_difference", {
            const L: &[Arg] = &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)];
            L
        }),
        76 => ("MPI_Group_incl", {
            const L: &[Arg] =
                &[a("group", Ty::I16), a("count", Ty::I32), a("ranks", Ty::I32Arr), a("newgroup", Ty::I16)];
            L
        }),
        77 => ("MPI_Group_excl", {
            const L: &[Arg] =
                &[a("group", Ty::I16), a("count", Ty::I32), a("ranks", Ty::I32Arr), a("newgroup", Ty::I16)];
            L
        }),
        78 => ("MPI_Group_range_incl", {
            const L: &[Arg] =
                &[a("group", Ty::I16), a("count", Ty::I32), a("ranges", Ty::I32Arr2), a("newgroup", Ty::I16)];
            L
        }),
        79 => ("MPI_Group_range_excl", {
            const L: &[Arg] =
                &[a("group", Ty::I16), a("count", Ty::I32), a("ranges", Ty::I32Arr2), a("newgroup", Ty::I16)];
            L
        }),
        80 => ("MPI_Group_free", {
            const L: &[Arg] = &[a("group", Ty::I16)];
            L
        }),
        81 => ("MPI_Comm_size", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("size", Ty::I32)];
            L
        }),
        82 => ("MPI_Comm_rank", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("rank", Ty::I32)];
            L
        }),
        83 => ("MPI_Comm_compare", {
            const L: &[Arg] = &[a("comm1", Ty::I16), a("comm2", Ty::I16), a("result", Ty::I8)];
            L
        }),
        84 => ("MPI_Comm_dup", {
            const L: &[Arg] = &[a("oldcomm", Ty::I16), a("newcomm", Ty::I16)];
            L
        }),
        85 => ("MPI_Comm_create", {
            const L: &[Arg] = &[a("oldcomm", Ty::I16), a("group", Ty::I16), a("newcomm", Ty::I16)];
            L
        }),
        86 => ("MPI_Comm_split", {
            const L: &[Arg] =
                &[a("oldcomm", Ty::I16), a("color", Ty::I32), a("key", Ty::I32), a("newcomm", Ty::I16)];
            L
        }),
        87 => ("MPI_Comm_free", {
            const L: &[Arg] = &[a("comm", Ty::I16)];
            L
        }),
        88 => ("MPI_Comm_test_inter", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("inter", Ty::I32)];
            L
        }),
        89 => ("MPI_Comm_remote_size", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("size", Ty::I32)];
            L
        }),
        90 => ("MPI_Comm_remote_group", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("group", Ty::I16)];
            L
        }),
        91 => ("MPI_Intercomm_create", {
            const L: &[Arg] = &[
                a("localcomm", Ty::I16),
                a("localleader", Ty::I32),
                a("remotecomm", Ty::I16),
                a("remoteleader", Ty::I32),
                a("tag", Ty::I32),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        92 => ("MPI_Intercomm_merge", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("high", Ty::I32), a("newcomm", Ty::I16)];
            L
        }),
        93 => ("MPI_Keyval_create", {
            const L: &[Arg] = &[a("key", Ty::I16)];
            L
        }),
        94 => ("MPI_Keyval_free", {
            const L: &[Arg] = &[a("key", Ty::I16)];
            L
        }),
        95 => ("MPI_Attr_put", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("key", Ty::I32)];
            L
        }),
        96 => ("MPI_Attr_get", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("key", Ty::I32), a("flag", Ty::I32)];
            L
        }),
        97 => ("MPI_Attr_delete", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("key", Ty::I32)];
            L
        }),
        98 => ("MPI_Topo_test", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("topo", Ty::I8)];
            L
        }),
        99 => ("MPI_Cart_create", {
            const L: &[Arg] = &[
                a("oldcomm", Ty::I16),
                a("ndim", Ty::I32),
                a("dims", Ty::I32Arr),
                a("periods", Ty::I32Arr),
                a("reorder", Ty::I32),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        100 => ("MPI_Dims_create", {
            const L: &[Arg] = &[a("nodes", Ty::I32), a("ndim", Ty::I32)];
            L
        }),
        101 => ("MPI_Graph_create", {
            const L: &[Arg] = &[
                a("numedges", Ty::I32),
                a("oldcomm", Ty::I16),
                a("nodes", Ty::I32),
                a("index", Ty::I32Arr),
                a("edges", Ty::I32Arr),
                a("reorder", Ty::I32),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        102 => ("MPI_Graphdims_get", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("nodes", Ty::I32), a("edges", Ty::I32)];
            L
        }),
        103 => ("MPI_Graph_get", {
            const L: &[Arg] = &[
                a("totedges", Ty::I32),
                a("totnodes", Ty::I32),
                a("comm", Ty::I16),
                a("maxindex", Ty::I32),
                a("maxedges", Ty::I32),
                a("index", Ty::I32Arr),
                a("edges", Ty::I32Arr),
            ];
            L
        }),
        104 => ("MPI_Cartdim_get", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("ndim", Ty::I32)];
            L
        }),
        105 => ("MPI_Cart_get", {
            const L: &[Arg] = &[
                a("ndim", Ty::I32),
                a("comm", Ty::I16),
                a("maxdims", Ty::I32),
                a("dims", Ty::I32Arr),
                a("periods", Ty::I32Arr),
                a("coords", Ty::I32ArrSince(0, 6, 8)),
            ];
            L
        }),
        106 => ("MPI_Cart_rank", {
            const L: &[Arg] =
                &[a("ndim", Ty::I32), a("comm", Ty::I16), a("coords", Ty::I32Arr), a("rank", Ty::I32)];
            L
        }),
        107 => ("MPI_Cart_coords", {
            const L: &[Arg] = &[
                a("ndim", Ty::I32),
                a("comm", Ty::I16),
                a("rank", Ty::I32),
                a("maxdims", Ty::I32),
                a("coords", Ty::I32Arr),
            ];
            L
        }),
        108 => ("MPI_Graph_neighbors_count", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("rank", Ty::I32), a("nneigh", Ty::I32)];
            L
        }),
        109 => ("MPI_Graph_neighbors", {
            const L: &[Arg] = &[
                a("nneigh", Ty::I32),
                a("comm", Ty::I16),
                a("rank", Ty::I32),
                a("maxneighbors", Ty::I32),
                a("neighbors", Ty::I32Arr),
            ];
            L
        }),
        110 => ("MPI_Cart_shift", {
            const L: &[Arg] = &[
                a("comm", Ty::I16),
                a("direction", Ty::I32),
                a("displ", Ty::I32),
                a("source", Ty::I32),
                a("dest", Ty::I32),
            ];
            L
        }),
        111 => ("MPI_Cart_sub", {
            const L: &[Arg] = &[
                a("ndim", Ty::I32),
                a("oldcomm", Ty::I16),
                a("remain_dims", Ty::I32Arr),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        112 => ("MPI_Cart_map", {
            const L: &[Arg] = &[
                a("comm", Ty::I16),
                a("ndim", Ty::I32),
                a("dims", Ty::I32Arr),
                a("period", Ty::I32Arr),
                a("newrank", Ty::I32),
            ];
            L
        }),
        113 => ("MPI_Graph_map", {
            const L: &[Arg] = &[
                a("numedges", Ty::I32),
                a("comm", Ty::I16),
                a("nodes", Ty::I32),
                a("index", Ty::I32Arr),
                a("edges", Ty::I32Arr),
                a("newrank", Ty::I32),
            ];
            L
        }),
        114 => ("MPI_Get_processor_name", {
            const L: &[Arg] = &[a("name", Ty::Str), a("resultlen", Ty::I32)];
            L
        }),
        115 => ("MPI_Get_version", {
            const L: &[Arg] = &[a("version", Ty::I32), a("subversion", Ty::I32)];
            L
        }),
        116 => ("MPI_Errhandler_create", {
            const L: &[Arg] = &[a("errhandler", Ty::I16)];
            L
        }),
        117 => ("MPI_Errhandler_set", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        118 => ("MPI_Errhandler_get", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        119 => ("MPI_Errhandler_free", {
            const L: &[Arg] = &[a("errhandler", Ty::I16)];
            L
        }),
        120 => ("MPI_Error_string", {
            const L: &[Arg] = &[a("errorcode", Ty::I32), a("errorstring", Ty::Str), a("resultlen", Ty::I32)];
            L
        }),
        121 => ("MPI_Error_class", {
            const L: &[Arg] = &[a("errorcode", Ty::I32), a("errorclass", Ty::I32)];
            L
        }),
        122 => ("MPI_Wtime", {
            const L: &[Arg] = &[];
            L
        }),
        123 => ("MPI_Wtick", {
            const L: &[Arg] = &[];
            L
        }),
        124 => ("MPI_Init", {
            const L: &[Arg] = &[a("argv", Ty::ArgvQuirk)];
            L
        }),
        125 => ("MPI_Finalize", {
            const L: &[Arg] = &[];
            L
        }),
        126 => ("MPI_Initialized", {
            const L: &[Arg] = &[a("result", Ty::I32)];
            L
        }),
        127 => ("MPI_Abort", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errorcode", Ty::I32)];
            L
        }),
        129 => ("MPI_Close_port", {
            const L: &[Arg] = &[a("portname", Ty::Str)];
            L
        }),
        130 => ("MPI_Comm_accept", {
            const L: &[Arg] = &[
                a("portname", Ty::Str),
                a("info", Ty::I16),
                a("root", Ty::I32),
                a("oldcomm", Ty::I16),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        131 => ("MPI_Comm_connect", {
            const L: &[Arg] = &[
                a("portname", Ty::Str),
                a("info", Ty::I16),
                a("root", Ty::I32),
                a("oldcomm", Ty::I16),
                a("newcomm", Ty::I16),
            ];
            L
        }),
        132 => ("MPI_Comm_disconnect", {
            const L: &[Arg] = &[a("comm", Ty::I16)];
            L
        }),
        133 => ("MPI_Comm_get_parent", {
            const L: &[Arg] = &[a("parent", Ty::I16)];
            L
        }),
        134 => ("MPI_Comm_join", {
            const L: &[Arg] = &[a("fd", Ty::I32), a("comm", Ty::I16)];
            L
        }),
        135 => ("MPI_Comm_spawn", {
            const L: &[Arg] = &[
                a("oldcommrank", Ty::I32),
                a("root", Ty::I32),
                a("oldcomm", Ty::I16),
                a("newcomm", Ty::I16),
                r("command", Ty::Str, "oldcommrank"),
                r("argv", Ty::StrArr, "oldcommrank"),
                r("maxprocs", Ty::I32, "oldcommrank"),
                r("info", Ty::I16, "oldcommrank"),
                r("errcodes", Ty::I32Arr, "oldcommrank"),
            ];
            L
        }),
        136 => ("MPI_Comm_spawn_multiple", {
            const L: &[Arg] = &[
                a("totprocs", Ty::I32),
                a("oldcommrank", Ty::I32),
                a("root", Ty::I32),
                a("oldcomm", Ty::I16),
                a("newcomm", Ty::I16),
                r("count", Ty::I32, "oldcommrank"),
                r("commands", Ty::StrArr, "oldcommrank"),
                r("argvs", Ty::StrArr2, "oldcommrank"),
                r("maxprocs", Ty::I32Arr, "oldcommrank"),
                r("info", Ty::I16Arr, "oldcommrank"),
                r("errcodes", Ty::I32Arr, "oldcommrank"),
            ];
            L
        }),
        137 => ("MPI_Lookup_name", {
            const L: &[Arg] = &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)];
            L
        }),
        138 => ("MPI_Open_port", {
            const L: &[Arg] = &[a("info", Ty::I16), a("portname", Ty::Str)];
            L
        }),
        139 => ("MPI_Publish_name", {
            const L: &[Arg] = &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)];
            L
        }),
        140 => ("MPI_Unpublish_name", {
            const L: &[Arg] = &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)];
            L
        }),
        141 => ("MPI_Accumulate", {
            const L: &[Arg] = &[
                a("origincount", Ty::I32),
                a("origintype", Ty::I16),
                a("targetrank", Ty::I32),
                a("targetdisp", Ty::I32),
                a("targetcount", Ty::I32),
                a("targettype", Ty::I16),
                a("op", Ty::I8),
                a("win", Ty::I16),
            ];
            L
        }),
        142 => ("MPI_Get", {
            const L: &[Arg] = &[
                a("origincount", Ty::I32),
                a("origintype", Ty::I16),
                a("targetrank", Ty::I32),
                a("targetdisp", Ty::I32),
                a("targetcount", Ty::I32),
                a("targettype", Ty::I16),
                a("win", Ty::I16),
            ];
            L
        }),
        143 => ("MPI_Put", {
            const L: &[Arg] = &[
                a("origincount", Ty::I32),
                a("origintype", Ty::I16),
                a("targetrank", Ty::I32),
                a("targetdisp", Ty::I32),
                a("targetcount", Ty::I32),
                a("targettype", Ty::I16),
                a("win", Ty::I16),
            ];
            L
        }),
        144 => ("MPI_Win_complete", {
            const L: &[Arg] = &[a("win", Ty::I16)];
            L
        }),
        145 => ("MPI_Win_create", {
            const L: &[Arg] = &[
                a("size", Ty::I32),
                a("dispunit", Ty::I32),
                a("info", Ty::I16),
                a("comm", Ty::I16),
                a("win", Ty::I16),
            ];
            L
        }),
        146 => ("MPI_Win_fence", {
            const L: &[Arg] = &[a("assertion", Ty::I8), a("win", Ty::I16)];
            L
        }),
        147 => ("MPI_Win_free", {
            const L: &[Arg] = &[a("win", Ty::I16)];
            L
        }),
        148 => ("MPI_Win_get_group", {
            const L: &[Arg] = &[a("win", Ty::I16), a("group", Ty::I16)];
            L
        }),
        149 => ("MPI_Win_lock", {
            const L: &[Arg] =
                &[a("locktype", Ty::I8), a("winrank", Ty::I32), a("assertion", Ty::I8), a("win", Ty::I16)];
            L
        }),
        150 => ("MPI_Win_post", {
            const L: &[Arg] = &[a("group", Ty::I16), a("assertion", Ty::I8), a("win", Ty::I16)];
            L
        }),
        151 => ("MPI_Win_start", {
            const L: &[Arg] = &[a("group", Ty::I16), a("assertion", Ty::I8), a("win", Ty::I16)];
            L
        }),
        152 => ("MPI_Win_test", {
            const L: &[Arg] = &[a("win", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        153 => ("MPI_Win_unlock", {
            const L: &[Arg] = &[a("winrank", Ty::I32), a("win", Ty::I16)];
            L
        }),
        154 => ("MPI_Win_wait", {
            const L: &[Arg] = &[a("win", Ty::I16)];
            L
        }),
        155 => ("MPI_Alltoallw", {
            const L: &[Arg] = &[
                a("commsize", Ty::I32),
                a("sendcounts", Ty::I32Arr),
                a("senddispls", Ty::I32Arr),
                a("sendtypes", Ty::I16Arr),
                a("recvcounts", Ty::I32Arr),
                a("recvdispls", Ty::I32Arr),
                a("recvtypes", Ty::I16Arr),
                a("comm", Ty::I16),
            ];
            L
        }),
        156 => ("MPI_Exscan", {
            const L: &[Arg] =
                &[a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16)];
            L
        }),
        157 => ("MPI_Add_error_class", {
            const L: &[Arg] = &[a("errorclass", Ty::I32)];
            L
        }),
        158 => ("MPI_Add_error_code", {
            const L: &[Arg] = &[a("errorclass", Ty::I32), a("errorcode", Ty::I32)];
            L
        }),
        159 => ("MPI_Add_error_string", {
            const L: &[Arg] = &[a("errorcode", Ty::I32), a("errorstring", Ty::Str)];
            L
        }),
        160 => ("MPI_Comm_call_errhandler", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errorcode", Ty::I32)];
            L
        }),
        161 => ("MPI_Comm_create_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        162 => ("MPI_Comm_delete_attr", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        163 => ("MPI_Comm_free_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        164 => ("MPI_Comm_get_attr", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        165 => ("MPI_Comm_get_name", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)];
            L
        }),
        166 => ("MPI_Comm_set_attr", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        167 => ("MPI_Comm_set_name", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("name", Ty::Str)];
            L
        }),
        168 => ("MPI_File_call_errhandler", {
            const L: &[Arg] = &[a("file", Ty::I16), a("errorcode", Ty::I32)];
            L
        }),
        169 => ("MPI_Grequest_complete", {
            const L: &[Arg] = &[a("request", Ty::I32)];
            L
        }),
        170 => ("MPI_Grequest_start", {
            const L: &[Arg] = &[a("request", Ty::I32)];
            L
        }),
        171 => ("MPI_Init_thread", {
            const L: &[Arg] = &[a("argv", Ty::Argv), a("required", Ty::I8), a("provided", Ty::I8)];
            L
        }),
        172 => ("MPI_Is_thread_main", {
            const L: &[Arg] = &[a("flag", Ty::I32)];
            L
        }),
        173 => ("MPI_Query_thread", {
            const L: &[Arg] = &[a("supported", Ty::I8)];
            L
        }),
        174 => ("MPI_Status_set_cancelled", {
            const L: &[Arg] = &[a("status", Ty::Status), a("flag", Ty::I32)];
            L
        }),
        175 => ("MPI_Status_set_elements", {
            const L: &[Arg] = &[a("status", Ty::Status), a("datatype", Ty::I16), a("count", Ty::I32)];
            L
        }),
        176 => ("MPI_Type_create_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        177 => ("MPI_Type_delete_attr", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        178 => ("MPI_Type_dup", {
            const L: &[Arg] = &[a("oldtype", Ty::I16), a("newtype", Ty::I16)];
            L
        }),
        179 => ("MPI_Type_free_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        180 => ("MPI_Type_get_attr", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        181 => ("MPI_Type_get_contents", {
            const L: &[Arg] = &[
                a("numdatatypes", Ty::I32),
                a("numaddresses", Ty::I32),
                a("numintegers", Ty::I32),
                a("datatype", Ty::I16),
                a("maxintegers", Ty::I32),
                a("maxaddresses", Ty::I32),
                a("maxdatatypes", Ty::I32),
                a("arrintegers", Ty::I32Arr),
                a("arraddresses", Ty::I32Arr),
                a("arrdatatypes", Ty::I16Arr),
            ];
            L
        }),
        182 => ("MPI_Type_get_envelope", {
            const L: &[Arg] = &[
                a("datatype", Ty::I16),
                a("numintegers", Ty::I32),
                a("numaddresses", Ty::I32),
                a("numdatatypes", Ty::I32),
                a("combiner", Ty::I8),
            ];
            L
        }),
        183 => ("MPI_Type_get_name", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)];
            L
        }),
        184 => ("MPI_Type_set_attr", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        185 => ("MPI_Type_set_name", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("name", Ty::Str)];
            L
        }),
        186 => ("MPI_Type_match_size", {
            const L: &[Arg] = &[a("typeclass", Ty::I8), a("size", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        187 => ("MPI_Win_call_errhandler", {
            const L: &[Arg] = &[a("win", Ty::I16), a("errorcode", Ty::I32)];
            L
        }),
        188 => ("MPI_Win_create_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        189 => ("MPI_Win_delete_attr", {
            const L: &[Arg] = &[a("win", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        190 => ("MPI_Win_free_keyval", {
            const L: &[Arg] = &[a("keyval", Ty::I16)];
            L
        }),
        191 => ("MPI_Win_get_attr", {
            const L: &[Arg] = &[a("win", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        192 => ("MPI_Win_get_name", {
            const L: &[Arg] = &[a("win", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)];
            L
        }),
        193 => ("MPI_Win_set_attr", {
            const L: &[Arg] = &[a("win", Ty::I16), a("keyval", Ty::I16)];
            L
        }),
        194 => ("MPI_Win_set_name", {
            const L: &[Arg] = &[a("win", Ty::I16), a("name", Ty::Str)];
            L
        }),
        195 => ("MPI_Alloc_mem", {
            const L: &[Arg] = &[a("size", Ty::I32), a("info", Ty::I16)];
            L
        }),
        196 => ("MPI_Comm_create_errhandler", {
            const L: &[Arg] = &[a("errhandler", Ty::I16)];
            L
        }),
        197 => ("MPI_Comm_get_errhandler", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        198 => ("MPI_Comm_set_errhandler", {
            const L: &[Arg] = &[a("comm", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        199 => ("MPI_File_create_errhandler", {
            const L: &[Arg] = &[a("errhandler", Ty::I16)];
            L
        }),
        200 => ("MPI_File_get_errhandler", {
            const L: &[Arg] = &[a("file", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        201 => ("MPI_File_set_errhandler", {
            const L: &[Arg] = &[a("file", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        202 => ("MPI_Finalized", {
            const L: &[Arg] = &[a("flag", Ty::I32)];
            L
        }),
        203 => ("MPI_Free_mem", {
            const L: &[Arg] = &[];
            L
        }),
        204 => ("MPI_Get_address", {
            const L: &[Arg] = &[a("address", Ty::I32)];
            L
        }),
        205 => ("MPI_Info_create", {
            const L: &[Arg] = &[a("info", Ty::I16)];
            L
        }),
        206 => ("MPI_Info_delete", {
            const L: &[Arg] = &[a("info", Ty::I16), a("key", Ty::Str)];
            L
        }),
        207 => ("MPI_Info_dup", {
            const L: &[Arg] = &[a("oldinfo", Ty::I16), a("newinfo", Ty::I16)];
            L
        }),
        208 => ("MPI_Info_free", {
            const L: &[Arg] = &[a("info", Ty::I16)];
            L
        }),
        209 => ("MPI_Info_get", {
            const L: &[Arg] = &[
                a("info", Ty::I16),
                a("key", Ty::Str),
                a("valuelength", Ty::I32),
                a("value", Ty::Str),
                a("flag", Ty::I32),
            ];
            L
        }),
        210 => ("MPI_Info_get_nkeys", {
            const L: &[Arg] = &[a("info", Ty::I16), a("nkeys", Ty::I32)];
            L
        }),
        211 => ("MPI_Info_get_nthkey", {
            const L: &[Arg] = &[a("info", Ty::I16), a("n", Ty::I32), a("key", Ty::Str)];
            L
        }),
        212 => ("MPI_Info_get_valuelen", {
            const L: &[Arg] =
                &[a("info", Ty::I16), a("key", Ty::Str), a("valuelen", Ty::I32), a("flag", Ty::I32)];
            L
        }),
        213 => ("MPI_Info_set", {
            const L: &[Arg] = &[a("info", Ty::I16), a("key", Ty::Str), a("value", Ty::Str)];
            L
        }),
        214 => ("MPI_Pack_external", {
            const L: &[Arg] = &[
                a("datarep", Ty::Str),
                a("incount", Ty::I32),
                a("intype", Ty::I16),
                a("outcount", Ty::I32),
                a("position_in", Ty::I32),
                a("position_out", Ty::I32),
            ];
            L
        }),
        215 => ("MPI_Pack_external_size", {
            const L: &[Arg] =
                &[a("datarep", Ty::Str), a("incount", Ty::I32), a("datatype", Ty::I16), a("size", Ty::I32)];
            L
        }),
        216 => ("MPI_Request_get_status", {
            const L: &[Arg] = &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)];
            L
        }),
        217 => ("MPI_Type_create_darray", {
            const L: &[Arg] = &[
                a("size", Ty::I32),
                a("rank", Ty::I32),
                a("ndims", Ty::I32),
                a("gsizes", Ty::I32Arr),
                a("distribs", Ty::I8Arr),
                a("dargs", Ty::I32Arr),
                a("psizes", Ty::I32Arr),
                a("order", Ty::I8),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        218 => ("MPI_Type_create_hindexed", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklengths", Ty::I32Arr),
                a("displacements", Ty::I32Arr),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        219 => ("MPI_Type_create_hvector", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklength", Ty::I32),
                a("stride", Ty::I32),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        220 => ("MPI_Type_create_indexed_block", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklength", Ty::I32),
                a("displacments", Ty::I32Arr),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        221 => ("MPI_Type_create_resized", {
            const L: &[Arg] =
                &[a("oldtype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32), a("newtype", Ty::I16)];
            L
        }),
        222 => ("MPI_Type_create_struct", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("blocklengths", Ty::I32Arr),
                a("displacements", Ty::I32Arr),
                a("oldtypes", Ty::I16Arr),
                a("newtype", Ty::I16),
            ];
            L
        }),
        223 => ("MPI_Type_create_subarray", {
            const L: &[Arg] = &[
                a("ndims", Ty::I32),
                a("sizes", Ty::I32Arr),
                a("subsizes", Ty::I32Arr),
                a("starts", Ty::I32Arr),
                a("order", Ty::I8),
                a("oldtype", Ty::I16),
                a("newtype", Ty::I16),
            ];
            L
        }),
        224 => ("MPI_Type_get_extent", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32)];
            L
        }),
        225 => ("MPI_Type_get_true_extent", {
            const L: &[Arg] = &[a("datatype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32)];
            L
        }),
        226 => ("MPI_Unpack_external", {
            const L: &[Arg] = &[
                a("datarep", Ty::Str),
                a("insize", Ty::I32),
                a("position_in", Ty::I32),
                a("position_out", Ty::I32),
                a("outcount", Ty::I32),
                a("datatype", Ty::I16),
            ];
            L
        }),
        227 => ("MPI_Win_create_errhandler", {
            const L: &[Arg] = &[a("errhandler", Ty::I16)];
            L
        }),
        228 => ("MPI_Win_get_errhandler", {
            const L: &[Arg] = &[a("win", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        229 => ("MPI_Win_set_errhandler", {
            const L: &[Arg] = &[a("win", Ty::I16), a("errhandler", Ty::I16)];
            L
        }),
        230 => ("MPI_File_open", {
            const L: &[Arg] = &[
                a("comm", Ty::I16),
                a("filename", Ty::Str),
                a("amode", Ty::I8),
                a("info", Ty::I16),
                a("file", Ty::I16),
            ];
            L
        }),
        231 => ("MPI_File_close", {
            const L: &[Arg] = &[a("file", Ty::I16)];
            L
        }),
        232 => ("MPI_File_delete", {
            const L: &[Arg] = &[a("filename", Ty::Str), a("info", Ty::I16)];
            L
        }),
        233 => ("MPI_File_set_size", {
            const L: &[Arg] = &[a("file", Ty::I16), a("size", Ty::I64)];
            L
        }),
        234 => ("MPI_File_preallocate", {
            const L: &[Arg] = &[a("file", Ty::I16), a("size", Ty::I64)];
            L
        }),
        235 => ("MPI_File_get_size", {
            const L: &[Arg] = &[a("file", Ty::I16), a("size", Ty::I64)];
            L
        }),
        236 => ("MPI_File_get_group", {
            const L: &[Arg] = &[a("file", Ty::I16), a("group", Ty::I16)];
            L
        }),
        237 => ("MPI_File_get_amode", {
            const L: &[Arg] = &[a("file", Ty::I16), a("amode", Ty::I8)];
            L
        }),
        238 => ("MPI_File_set_info", {
            const L: &[Arg] = &[a("file", Ty::I16), a("info", Ty::I16)];
            L
        }),
        239 => ("MPI_File_get_info", {
            const L: &[Arg] = &[a("file", Ty::I16), a("info", Ty::I16)];
            L
        }),
        240 => ("MPI_File_set_view", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("hosttype", Ty::I16),
                a("filetype", Ty::I16),
                a("datarep", Ty::Str),
                a("info", Ty::I16),
            ];
            L
        }),
        241 => ("MPI_File_get_view", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("hosttype", Ty::I16),
                a("filetype", Ty::I16),
                a("datarep", Ty::Str),
            ];
            L
        }),
        242 => ("MPI_File_read_at", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        243 => ("MPI_File_read_at_all", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        244 => ("MPI_File_write_at", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        245 => ("MPI_File_write_at_all", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("status", Ty::Status),
            ];
            L
        }),
        246 => ("MPI_File_iread_at", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        247 => ("MPI_File_iwrite_at", {
            const L: &[Arg] = &[
                a("file", Ty::I16),
                a("offset", Ty::I64),
                a("count", Ty::I32),
                a("datatype", Ty::I16),
                a("request", Ty::I32),
            ];
            L
        }),
        248 => ("MPI_File_read", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        249 => ("MPI_File_read_all", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        250 => ("MPI_File_write", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        251 => ("MPI_File_write_all", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        252 => ("MPI_File_iread", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32)];
            L
        }),
        253 => ("MPI_File_iwrite", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32)];
            L
        }),
        254 => ("MPI_File_seek", {
            const L: &[Arg] = &[a("file", Ty::I16), a("offset", Ty::I64), a("whence", Ty::I8)];
            L
        }),
        255 => ("MPI_File_get_position", {
            const L: &[Arg] = &[a("file", Ty::I16), a("offset", Ty::I64)];
            L
        }),
        256 => ("MPI_File_get_byte_offset", {
            const L: &[Arg] = &[a("file", Ty::I16), a("offset", Ty::I64), a("bytes", Ty::I64)];
            L
        }),
        257 => ("MPI_File_read_shared", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        258 => ("MPI_File_write_shared", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        259 => ("MPI_File_iread_shared", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32)];
            L
        }),
        260 => ("MPI_File_iwrite_shared", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32)];
            L
        }),
        261 => ("MPI_File_read_ordered", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        262 => ("MPI_File_write_ordered", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status)];
            L
        }),
        263 => ("MPI_File_seek_shared", {
            const L: &[Arg] = &[a("file", Ty::I16), a("offset", Ty::I64), a("whence", Ty::I8)];
            L
        }),
        264 => ("MPI_File_get_position_shared", {
            const L: &[Arg] = &[a("file", Ty::I16), a("offset", Ty::I64)];
            L
        }),
        265 => ("MPI_File_read_at_all_begin", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        266 => ("MPI_File_read_at_all_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        267 => ("MPI_File_write_at_all_begin", {
            const L: &[Arg] =
                &[a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        268 => ("MPI_File_write_at_all_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        269 => ("MPI_File_read_all_begin", {
            const L: &[Arg] = &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        270 => ("MPI_File_read_all_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        271 => ("MPI_File_write_all_begin", {
            const L: &[Arg] = &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        272 => ("MPI_File_write_all_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        273 => ("MPI_File_read_ordered_begin", {
            const L: &[Arg] = &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        274 => ("MPI_File_read_ordered_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        275 => ("MPI_File_write_ordered_begin", {
            const L: &[Arg] = &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)];
            L
        }),
        276 => ("MPI_File_write_ordered_end", {
            const L: &[Arg] = &[a("file", Ty::I16), a("status", Ty::Status)];
            L
        }),
        277 => ("MPI_File_get_type_extent", {
            const L: &[Arg] = &[a("file", Ty::I16), a("datatype", Ty::I16), a("extent", Ty::I32)];
            L
        }),
        278 => ("MPI_Register_datarep", {
            const L: &[Arg] = &[a("name", Ty::Str)];
            L
        }),
        279 => ("MPI_File_set_atomicity", {
            const L: &[Arg] = &[a("file", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        280 => ("MPI_File_get_atomicity", {
            const L: &[Arg] = &[a("file", Ty::I16), a("flag", Ty::I32)];
            L
        }),
        281 => ("MPI_File_sync", {
            const L: &[Arg] = &[a("file", Ty::I16)];
            L
        }),
        282 => ("MPIO_Test", {
            const L: &[Arg] = &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)];
            L
        }),
        283 => ("MPIO_Wait", {
            const L: &[Arg] = &[a("request", Ty::I32), a("status", Ty::Status)];
            L
        }),
        284 => ("MPIO_Testall", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("flag", Ty::I32),
                a("statuses", Ty::Status),
            ];
            L
        }),
        285 => ("MPIO_Waitall", {
            const L: &[Arg] = &[a("count", Ty::I32), a("requests", Ty::I32Arr), a("statuses", Ty::Status)];
            L
        }),
        286 => ("MPIO_Testany", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("flag", Ty::I32),
                a("index", Ty::I32),
                a("statuses", Ty::Status),
            ];
            L
        }),
        287 => ("MPIO_Waitany", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("index", Ty::I32),
                a("statuses", Ty::Status),
            ];
            L
        }),
        288 => ("MPIO_Waitsome", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("outcount", Ty::I32),
                a("indices", Ty::I32Arr),
                a("statuses", Ty::Status),
            ];
            L
        }),
        289 => ("MPIO_Testsome", {
            const L: &[Arg] = &[
                a("count", Ty::I32),
                a("requests", Ty::I32Arr),
                a("outcount", Ty::I32),
                a("indices", Ty::I32Arr),
                a("statuses", Ty::Status),
            ];
            L
        }),
        291 => ("MPI_Function_enter", {
            const L: &[Arg] = &[a("fn", Ty::I64)];
            L
        }),
        292 => ("MPI_Function_exit", {
            const L: &[Arg] = &[a("fn", Ty::I64)];
            L
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_but_pcontrol_has_a_layout() {
        let missing: Vec<u16> = (0..ALL_FUNCTIONS).filter(|&l| layout(l).is_none()).collect();
        assert_eq!(missing, vec![128]);
        assert_eq!(layout(FUNCTION_ENTER).unwrap().0, "MPI_Function_enter");
        assert!(layout(ALL_FUNCTIONS).is_none() && layout(END_OF_STREAM).is_none());
        assert_eq!(layout(0).unwrap().0, "MPI_Send");
        assert_eq!(layout(124).unwrap().0, "MPI_Init");
        assert_eq!(layout(FINALIZE).unwrap().0, "MPI_Finalize");
        assert_eq!(layout(289).unwrap().0, "MPIO_Testsome");
    }
}
