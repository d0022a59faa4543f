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

/// A label with no record layout: `MPI_Pcontrol` (its variable arguments are
/// not recorded) and the `ALL_FUNCTIONS` sentinel.
const NONE: Layout = Layout { label: u16::MAX, name: "", args: &[] };

/// One call's record: its label, the call's name and its arguments in stream order.
struct Layout {
    label: u16,
    name: &'static str,
    args: &'static [Arg],
}

const fn l(label: u16, name: &'static str, args: &'static [Arg]) -> Layout {
    Layout { label, name, args }
}

/// Every layout, indexed by label (checked by a test: `LAYOUTS[i].label == i`),
/// one row a call as in DUMPI's reader.
#[rustfmt::skip]
static LAYOUTS: [Layout; END_OF_STREAM as usize] = [
    l(0, "MPI_Send", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16),
    ]),
    l(1, "MPI_Recv", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("source", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("status", Ty::Status),
    ]),
    l(2, "MPI_Get_count", &[a("status", Ty::Status), a("datatype", Ty::I16), a("count", Ty::I32)]),
    l(3, "MPI_Bsend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16),
    ]),
    l(4, "MPI_Ssend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16),
    ]),
    l(5, "MPI_Rsend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16),
    ]),
    l(6, "MPI_Buffer_attach", &[a("size", Ty::I32)]),
    l(7, "MPI_Buffer_detach", &[a("size", Ty::I32)]),
    l(8, "MPI_Isend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(9, "MPI_Ibsend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(10, "MPI_Issend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(11, "MPI_Irsend", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(12, "MPI_Irecv", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("source", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(13, "MPI_Wait", &[a("request", Ty::I32), a("status", Ty::Status)]),
    l(14, "MPI_Test", &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)]),
    l(15, "MPI_Request_free", &[a("request", Ty::I32)]),
    l(16, "MPI_Waitany", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("index", Ty::I32), a("status", Ty::Status),
    ]),
    l(17, "MPI_Testany", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("index", Ty::I32), a("flag", Ty::I32),
        a("status", Ty::Status),
    ]),
    l(18, "MPI_Waitall", &[a("count", Ty::I32), a("requests", Ty::I32Arr), a("statuses", Ty::Status)]),
    l(19, "MPI_Testall", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("flag", Ty::I32), a("statuses", Ty::Status),
    ]),
    l(20, "MPI_Waitsome", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("outcount", Ty::I32), a("indices", Ty::I32Arr),
        a("statuses", Ty::Status),
    ]),
    l(21, "MPI_Testsome", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("outcount", Ty::I32), a("indices", Ty::I32Arr),
        a("statuses", Ty::Status),
    ]),
    l(22, "MPI_Iprobe", &[
        a("source", Ty::I32), a("tag", Ty::I32), a("comm", Ty::I16), a("flag", Ty::I32),
        a("status", Ty::Status),
    ]),
    l(23, "MPI_Probe", &[
        a("source", Ty::I32), a("tag", Ty::I32), a("comm", Ty::I16), a("status", Ty::Status),
    ]),
    l(24, "MPI_Cancel", &[a("request", Ty::I32)]),
    l(25, "MPI_Test_cancelled", &[a("status", Ty::Status), a("cancelled", Ty::I32)]),
    l(26, "MPI_Send_init", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(27, "MPI_Bsend_init", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(28, "MPI_Ssend_init", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(29, "MPI_Rsend_init", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(30, "MPI_Recv_init", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("source", Ty::I32), a("tag", Ty::I32),
        a("comm", Ty::I16), a("request", Ty::I32),
    ]),
    l(31, "MPI_Start", &[a("request", Ty::I32)]),
    l(32, "MPI_Startall", &[a("count", Ty::I32), a("requests", Ty::I32Arr)]),
    l(33, "MPI_Sendrecv", &[
        a("sendcount", Ty::I32), a("sendtype", Ty::I16), a("dest", Ty::I32), a("sendtag", Ty::I32),
        a("recvcount", Ty::I32), a("recvtype", Ty::I16), a("source", Ty::I32), a("recvtag", Ty::I32),
        a("comm", Ty::I16), a("status", Ty::Status),
    ]),
    l(34, "MPI_Sendrecv_replace", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("dest", Ty::I32), a("sendtag", Ty::I32),
        a("source", Ty::I32), a("recvtag", Ty::I32), a("comm", Ty::I16), a("status", Ty::Status),
    ]),
    l(35, "MPI_Type_contiguous", &[a("count", Ty::I32), a("oldtype", Ty::I16), a("newtype", Ty::I16)]),
    l(36, "MPI_Type_vector", &[
        a("count", Ty::I32), a("blocklength", Ty::I32), a("stride", Ty::I32), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(37, "MPI_Type_hvector", &[
        a("count", Ty::I32), a("blocklength", Ty::I32), a("stride", Ty::I32), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(38, "MPI_Type_indexed", &[
        a("count", Ty::I32), a("lengths", Ty::I32Arr), a("indices", Ty::I32Arr), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(39, "MPI_Type_hindexed", &[
        a("count", Ty::I32), a("lengths", Ty::I32Arr), a("indices", Ty::I32Arr), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(40, "MPI_Type_struct", &[
        a("count", Ty::I32), a("lengths", Ty::I32Arr), a("indices", Ty::I32ArrSince(0, 6, 9)),
        a("oldtypes", Ty::I16Arr), a("newtype", Ty::I16),
    ]),
    l(41, "MPI_Address", &[a("address", Ty::I32)]),
    l(42, "MPI_Type_extent", &[a("datatype", Ty::I16), a("extent", Ty::I32)]),
    l(43, "MPI_Type_size", &[a("datatype", Ty::I16), a("size", Ty::I32)]),
    l(44, "MPI_Type_lb", &[a("datatype", Ty::I16), a("lb", Ty::I32)]),
    l(45, "MPI_Type_ub", &[a("datatype", Ty::I16), a("ub", Ty::I32)]),
    l(46, "MPI_Type_commit", &[a("datatype", Ty::I16)]),
    l(47, "MPI_Type_free", &[a("datatype", Ty::I16)]),
    l(48, "MPI_Get_elements", &[a("status", Ty::Status), a("datatype", Ty::I16), a("elements", Ty::I32)]),
    l(49, "MPI_Pack", &[
        a("incount", Ty::I32), a("datatype", Ty::I16), a("outcount", Ty::I32), a("position_in", Ty::I32),
        a("position_out", Ty::I32), a("comm", Ty::I16),
    ]),
    l(50, "MPI_Unpack", &[
        a("incount", Ty::I32), a("position_in", Ty::I32), a("position_out", Ty::I32), a("outcount", Ty::I32),
        a("datatype", Ty::I16), a("comm", Ty::I16),
    ]),
    l(51, "MPI_Pack_size", &[
        a("incount", Ty::I32), a("datatype", Ty::I16), a("comm", Ty::I16), a("size", Ty::I32),
    ]),
    l(52, "MPI_Barrier", &[a("comm", Ty::I16)]),
    l(53, "MPI_Bcast", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("root", Ty::I32), a("comm", Ty::I16),
    ]),
    l(54, "MPI_Gather", &[
        a("commrank", Ty::I32), a("sendcount", Ty::I32), a("sendtype", Ty::I16), a("root", Ty::I32),
        a("comm", Ty::I16), r("recvcount", Ty::I32, "commrank"), r("recvtype", Ty::I16, "commrank"),
    ]),
    l(55, "MPI_Gatherv", &[
        a("commrank", Ty::I32), a("commsize", Ty::I32), a("sendcount", Ty::I32), a("sendtype", Ty::I16),
        a("root", Ty::I32), a("comm", Ty::I16), r("recvcounts", Ty::I32Arr, "commrank"),
        r("displs", Ty::I32Arr, "commrank"), a("recvtype", Ty::I16),
    ]),
    l(56, "MPI_Scatter", &[
        a("commrank", Ty::I32), a("recvcount", Ty::I32), a("recvtype", Ty::I16), a("root", Ty::I32),
        a("comm", Ty::I16), r("sendcount", Ty::I32, "commrank"), r("sendtype", Ty::I16, "commrank"),
    ]),
    l(57, "MPI_Scatterv", &[
        a("commrank", Ty::I32), a("commsize", Ty::I32), a("sendtype", Ty::I16), a("recvcount", Ty::I32),
        a("recvtype", Ty::I16), a("root", Ty::I32), a("comm", Ty::I16),
        r("sendcounts", Ty::I32Arr, "commrank"), r("displs", Ty::I32Arr, "commrank"),
    ]),
    l(58, "MPI_Allgather", &[
        a("sendcount", Ty::I32), a("sendtype", Ty::I16), a("recvcount", Ty::I32), a("recvtype", Ty::I16),
        a("comm", Ty::I16),
    ]),
    l(59, "MPI_Allgatherv", &[
        a("commsize", Ty::I32), a("sendcount", Ty::I32), a("sendtype", Ty::I16), a("recvcounts", Ty::I32Arr),
        a("displs", Ty::I32Arr), a("recvtype", Ty::I16), a("comm", Ty::I16),
    ]),
    l(60, "MPI_Alltoall", &[
        a("sendcount", Ty::I32), a("sendtype", Ty::I16), a("recvcount", Ty::I32), a("recvtype", Ty::I16),
        a("comm", Ty::I16),
    ]),
    l(61, "MPI_Alltoallv", &[
        a("commsize", Ty::I32), a("sendcounts", Ty::I32Arr), a("senddispls", Ty::I32Arr),
        a("sendtype", Ty::I16), a("recvcounts", Ty::I32Arr), a("recvdispls", Ty::I32Arr),
        a("recvtype", Ty::I16), a("comm", Ty::I16),
    ]),
    l(62, "MPI_Reduce", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("root", Ty::I32), a("comm", Ty::I16),
    ]),
    l(63, "MPI_Op_create", &[a("commute", Ty::I32), a("op", Ty::I8)]),
    l(64, "MPI_Op_free", &[a("op", Ty::I8)]),
    l(65, "MPI_Allreduce", &[
        a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16),
    ]),
    l(66, "MPI_Reduce_scatter", &[
        a("commsize", Ty::I32), a("recvcounts", Ty::I32Arr), a("datatype", Ty::I16), a("op", Ty::I8),
        a("comm", Ty::I16),
    ]),
    l(67, "MPI_Scan", &[a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16)]),
    l(68, "MPI_Group_size", &[a("group", Ty::I16), a("size", Ty::I32)]),
    l(69, "MPI_Group_rank", &[a("group", Ty::I16), a("rank", Ty::I32)]),
    l(70, "MPI_Group_translate_ranks", &[
        a("group1", Ty::I16), a("count", Ty::I32), a("ranks1", Ty::I32Arr), a("group2", Ty::I16),
        a("ranks2", Ty::I32Arr),
    ]),
    l(71, "MPI_Group_compare", &[a("group1", Ty::I16), a("group2", Ty::I16), a("result", Ty::I8)]),
    l(72, "MPI_Comm_group", &[a("comm", Ty::I16), a("group", Ty::I16)]),
    l(73, "MPI_Group_union", &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)]),
    l(74, "MPI_Group_intersection", &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)]),
    l(75, "MPI_Group_difference", &[a("group1", Ty::I16), a("group2", Ty::I16), a("newgroup", Ty::I16)]),
    l(76, "MPI_Group_incl", &[
        a("group", Ty::I16), a("count", Ty::I32), a("ranks", Ty::I32Arr), a("newgroup", Ty::I16),
    ]),
    l(77, "MPI_Group_excl", &[
        a("group", Ty::I16), a("count", Ty::I32), a("ranks", Ty::I32Arr), a("newgroup", Ty::I16),
    ]),
    l(78, "MPI_Group_range_incl", &[
        a("group", Ty::I16), a("count", Ty::I32), a("ranges", Ty::I32Arr2), a("newgroup", Ty::I16),
    ]),
    l(79, "MPI_Group_range_excl", &[
        a("group", Ty::I16), a("count", Ty::I32), a("ranges", Ty::I32Arr2), a("newgroup", Ty::I16),
    ]),
    l(80, "MPI_Group_free", &[a("group", Ty::I16)]),
    l(81, "MPI_Comm_size", &[a("comm", Ty::I16), a("size", Ty::I32)]),
    l(82, "MPI_Comm_rank", &[a("comm", Ty::I16), a("rank", Ty::I32)]),
    l(83, "MPI_Comm_compare", &[a("comm1", Ty::I16), a("comm2", Ty::I16), a("result", Ty::I8)]),
    l(84, "MPI_Comm_dup", &[a("oldcomm", Ty::I16), a("newcomm", Ty::I16)]),
    l(85, "MPI_Comm_create", &[a("oldcomm", Ty::I16), a("group", Ty::I16), a("newcomm", Ty::I16)]),
    l(86, "MPI_Comm_split", &[
        a("oldcomm", Ty::I16), a("color", Ty::I32), a("key", Ty::I32), a("newcomm", Ty::I16),
    ]),
    l(87, "MPI_Comm_free", &[a("comm", Ty::I16)]),
    l(88, "MPI_Comm_test_inter", &[a("comm", Ty::I16), a("inter", Ty::I32)]),
    l(89, "MPI_Comm_remote_size", &[a("comm", Ty::I16), a("size", Ty::I32)]),
    l(90, "MPI_Comm_remote_group", &[a("comm", Ty::I16), a("group", Ty::I16)]),
    l(91, "MPI_Intercomm_create", &[
        a("localcomm", Ty::I16), a("localleader", Ty::I32), a("remotecomm", Ty::I16),
        a("remoteleader", Ty::I32), a("tag", Ty::I32), a("newcomm", Ty::I16),
    ]),
    l(92, "MPI_Intercomm_merge", &[a("comm", Ty::I16), a("high", Ty::I32), a("newcomm", Ty::I16)]),
    l(93, "MPI_Keyval_create", &[a("key", Ty::I16)]),
    l(94, "MPI_Keyval_free", &[a("key", Ty::I16)]),
    l(95, "MPI_Attr_put", &[a("comm", Ty::I16), a("key", Ty::I32)]),
    l(96, "MPI_Attr_get", &[a("comm", Ty::I16), a("key", Ty::I32), a("flag", Ty::I32)]),
    l(97, "MPI_Attr_delete", &[a("comm", Ty::I16), a("key", Ty::I32)]),
    l(98, "MPI_Topo_test", &[a("comm", Ty::I16), a("topo", Ty::I8)]),
    l(99, "MPI_Cart_create", &[
        a("oldcomm", Ty::I16), a("ndim", Ty::I32), a("dims", Ty::I32Arr), a("periods", Ty::I32Arr),
        a("reorder", Ty::I32), a("newcomm", Ty::I16),
    ]),
    l(100, "MPI_Dims_create", &[a("nodes", Ty::I32), a("ndim", Ty::I32)]),
    l(101, "MPI_Graph_create", &[
        a("numedges", Ty::I32), a("oldcomm", Ty::I16), a("nodes", Ty::I32), a("index", Ty::I32Arr),
        a("edges", Ty::I32Arr), a("reorder", Ty::I32), a("newcomm", Ty::I16),
    ]),
    l(102, "MPI_Graphdims_get", &[a("comm", Ty::I16), a("nodes", Ty::I32), a("edges", Ty::I32)]),
    l(103, "MPI_Graph_get", &[
        a("totedges", Ty::I32), a("totnodes", Ty::I32), a("comm", Ty::I16), a("maxindex", Ty::I32),
        a("maxedges", Ty::I32), a("index", Ty::I32Arr), a("edges", Ty::I32Arr),
    ]),
    l(104, "MPI_Cartdim_get", &[a("comm", Ty::I16), a("ndim", Ty::I32)]),
    l(105, "MPI_Cart_get", &[
        a("ndim", Ty::I32), a("comm", Ty::I16), a("maxdims", Ty::I32), a("dims", Ty::I32Arr),
        a("periods", Ty::I32Arr), a("coords", Ty::I32ArrSince(0, 6, 8)),
    ]),
    l(106, "MPI_Cart_rank", &[
        a("ndim", Ty::I32), a("comm", Ty::I16), a("coords", Ty::I32Arr), a("rank", Ty::I32),
    ]),
    l(107, "MPI_Cart_coords", &[
        a("ndim", Ty::I32), a("comm", Ty::I16), a("rank", Ty::I32), a("maxdims", Ty::I32),
        a("coords", Ty::I32Arr),
    ]),
    l(108, "MPI_Graph_neighbors_count", &[a("comm", Ty::I16), a("rank", Ty::I32), a("nneigh", Ty::I32)]),
    l(109, "MPI_Graph_neighbors", &[
        a("nneigh", Ty::I32), a("comm", Ty::I16), a("rank", Ty::I32), a("maxneighbors", Ty::I32),
        a("neighbors", Ty::I32Arr),
    ]),
    l(110, "MPI_Cart_shift", &[
        a("comm", Ty::I16), a("direction", Ty::I32), a("displ", Ty::I32), a("source", Ty::I32),
        a("dest", Ty::I32),
    ]),
    l(111, "MPI_Cart_sub", &[
        a("ndim", Ty::I32), a("oldcomm", Ty::I16), a("remain_dims", Ty::I32Arr), a("newcomm", Ty::I16),
    ]),
    l(112, "MPI_Cart_map", &[
        a("comm", Ty::I16), a("ndim", Ty::I32), a("dims", Ty::I32Arr), a("period", Ty::I32Arr),
        a("newrank", Ty::I32),
    ]),
    l(113, "MPI_Graph_map", &[
        a("numedges", Ty::I32), a("comm", Ty::I16), a("nodes", Ty::I32), a("index", Ty::I32Arr),
        a("edges", Ty::I32Arr), a("newrank", Ty::I32),
    ]),
    l(114, "MPI_Get_processor_name", &[a("name", Ty::Str), a("resultlen", Ty::I32)]),
    l(115, "MPI_Get_version", &[a("version", Ty::I32), a("subversion", Ty::I32)]),
    l(116, "MPI_Errhandler_create", &[a("errhandler", Ty::I16)]),
    l(117, "MPI_Errhandler_set", &[a("comm", Ty::I16), a("errhandler", Ty::I16)]),
    l(118, "MPI_Errhandler_get", &[a("comm", Ty::I16), a("errhandler", Ty::I16)]),
    l(119, "MPI_Errhandler_free", &[a("errhandler", Ty::I16)]),
    l(120, "MPI_Error_string", &[
        a("errorcode", Ty::I32), a("errorstring", Ty::Str), a("resultlen", Ty::I32),
    ]),
    l(121, "MPI_Error_class", &[a("errorcode", Ty::I32), a("errorclass", Ty::I32)]),
    l(122, "MPI_Wtime", &[]),
    l(123, "MPI_Wtick", &[]),
    l(124, "MPI_Init", &[a("argv", Ty::ArgvQuirk)]),
    l(125, "MPI_Finalize", &[]),
    l(126, "MPI_Initialized", &[a("result", Ty::I32)]),
    l(127, "MPI_Abort", &[a("comm", Ty::I16), a("errorcode", Ty::I32)]),
    NONE, // MPI_Pcontrol
    l(129, "MPI_Close_port", &[a("portname", Ty::Str)]),
    l(130, "MPI_Comm_accept", &[
        a("portname", Ty::Str), a("info", Ty::I16), a("root", Ty::I32), a("oldcomm", Ty::I16),
        a("newcomm", Ty::I16),
    ]),
    l(131, "MPI_Comm_connect", &[
        a("portname", Ty::Str), a("info", Ty::I16), a("root", Ty::I32), a("oldcomm", Ty::I16),
        a("newcomm", Ty::I16),
    ]),
    l(132, "MPI_Comm_disconnect", &[a("comm", Ty::I16)]),
    l(133, "MPI_Comm_get_parent", &[a("parent", Ty::I16)]),
    l(134, "MPI_Comm_join", &[a("fd", Ty::I32), a("comm", Ty::I16)]),
    l(135, "MPI_Comm_spawn", &[
        a("oldcommrank", Ty::I32), a("root", Ty::I32), a("oldcomm", Ty::I16), a("newcomm", Ty::I16),
        r("command", Ty::Str, "oldcommrank"), r("argv", Ty::StrArr, "oldcommrank"),
        r("maxprocs", Ty::I32, "oldcommrank"), r("info", Ty::I16, "oldcommrank"),
        r("errcodes", Ty::I32Arr, "oldcommrank"),
    ]),
    l(136, "MPI_Comm_spawn_multiple", &[
        a("totprocs", Ty::I32), a("oldcommrank", Ty::I32), a("root", Ty::I32), a("oldcomm", Ty::I16),
        a("newcomm", Ty::I16), r("count", Ty::I32, "oldcommrank"), r("commands", Ty::StrArr, "oldcommrank"),
        r("argvs", Ty::StrArr2, "oldcommrank"), r("maxprocs", Ty::I32Arr, "oldcommrank"),
        r("info", Ty::I16Arr, "oldcommrank"), r("errcodes", Ty::I32Arr, "oldcommrank"),
    ]),
    l(137, "MPI_Lookup_name", &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)]),
    l(138, "MPI_Open_port", &[a("info", Ty::I16), a("portname", Ty::Str)]),
    l(139, "MPI_Publish_name", &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)]),
    l(140, "MPI_Unpublish_name", &[a("servicename", Ty::Str), a("info", Ty::I16), a("portname", Ty::Str)]),
    l(141, "MPI_Accumulate", &[
        a("origincount", Ty::I32), a("origintype", Ty::I16), a("targetrank", Ty::I32),
        a("targetdisp", Ty::I32), a("targetcount", Ty::I32), a("targettype", Ty::I16), a("op", Ty::I8),
        a("win", Ty::I16),
    ]),
    l(142, "MPI_Get", &[
        a("origincount", Ty::I32), a("origintype", Ty::I16), a("targetrank", Ty::I32),
        a("targetdisp", Ty::I32), a("targetcount", Ty::I32), a("targettype", Ty::I16), a("win", Ty::I16),
    ]),
    l(143, "MPI_Put", &[
        a("origincount", Ty::I32), a("origintype", Ty::I16), a("targetrank", Ty::I32),
        a("targetdisp", Ty::I32), a("targetcount", Ty::I32), a("targettype", Ty::I16), a("win", Ty::I16),
    ]),
    l(144, "MPI_Win_complete", &[a("win", Ty::I16)]),
    l(145, "MPI_Win_create", &[
        a("size", Ty::I32), a("dispunit", Ty::I32), a("info", Ty::I16), a("comm", Ty::I16), a("win", Ty::I16),
    ]),
    l(146, "MPI_Win_fence", &[a("assertion", Ty::I8), a("win", Ty::I16)]),
    l(147, "MPI_Win_free", &[a("win", Ty::I16)]),
    l(148, "MPI_Win_get_group", &[a("win", Ty::I16), a("group", Ty::I16)]),
    l(149, "MPI_Win_lock", &[
        a("locktype", Ty::I8), a("winrank", Ty::I32), a("assertion", Ty::I8), a("win", Ty::I16),
    ]),
    l(150, "MPI_Win_post", &[a("group", Ty::I16), a("assertion", Ty::I8), a("win", Ty::I16)]),
    l(151, "MPI_Win_start", &[a("group", Ty::I16), a("assertion", Ty::I8), a("win", Ty::I16)]),
    l(152, "MPI_Win_test", &[a("win", Ty::I16), a("flag", Ty::I32)]),
    l(153, "MPI_Win_unlock", &[a("winrank", Ty::I32), a("win", Ty::I16)]),
    l(154, "MPI_Win_wait", &[a("win", Ty::I16)]),
    l(155, "MPI_Alltoallw", &[
        a("commsize", Ty::I32), a("sendcounts", Ty::I32Arr), a("senddispls", Ty::I32Arr),
        a("sendtypes", Ty::I16Arr), a("recvcounts", Ty::I32Arr), a("recvdispls", Ty::I32Arr),
        a("recvtypes", Ty::I16Arr), a("comm", Ty::I16),
    ]),
    l(156, "MPI_Exscan", &[a("count", Ty::I32), a("datatype", Ty::I16), a("op", Ty::I8), a("comm", Ty::I16)]),
    l(157, "MPI_Add_error_class", &[a("errorclass", Ty::I32)]),
    l(158, "MPI_Add_error_code", &[a("errorclass", Ty::I32), a("errorcode", Ty::I32)]),
    l(159, "MPI_Add_error_string", &[a("errorcode", Ty::I32), a("errorstring", Ty::Str)]),
    l(160, "MPI_Comm_call_errhandler", &[a("comm", Ty::I16), a("errorcode", Ty::I32)]),
    l(161, "MPI_Comm_create_keyval", &[a("keyval", Ty::I16)]),
    l(162, "MPI_Comm_delete_attr", &[a("comm", Ty::I16), a("keyval", Ty::I16)]),
    l(163, "MPI_Comm_free_keyval", &[a("keyval", Ty::I16)]),
    l(164, "MPI_Comm_get_attr", &[a("comm", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)]),
    l(165, "MPI_Comm_get_name", &[a("comm", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)]),
    l(166, "MPI_Comm_set_attr", &[a("comm", Ty::I16), a("keyval", Ty::I16)]),
    l(167, "MPI_Comm_set_name", &[a("comm", Ty::I16), a("name", Ty::Str)]),
    l(168, "MPI_File_call_errhandler", &[a("file", Ty::I16), a("errorcode", Ty::I32)]),
    l(169, "MPI_Grequest_complete", &[a("request", Ty::I32)]),
    l(170, "MPI_Grequest_start", &[a("request", Ty::I32)]),
    l(171, "MPI_Init_thread", &[a("argv", Ty::Argv), a("required", Ty::I8), a("provided", Ty::I8)]),
    l(172, "MPI_Is_thread_main", &[a("flag", Ty::I32)]),
    l(173, "MPI_Query_thread", &[a("supported", Ty::I8)]),
    l(174, "MPI_Status_set_cancelled", &[a("status", Ty::Status), a("flag", Ty::I32)]),
    l(175, "MPI_Status_set_elements", &[
        a("status", Ty::Status), a("datatype", Ty::I16), a("count", Ty::I32),
    ]),
    l(176, "MPI_Type_create_keyval", &[a("keyval", Ty::I16)]),
    l(177, "MPI_Type_delete_attr", &[a("datatype", Ty::I16), a("keyval", Ty::I16)]),
    l(178, "MPI_Type_dup", &[a("oldtype", Ty::I16), a("newtype", Ty::I16)]),
    l(179, "MPI_Type_free_keyval", &[a("keyval", Ty::I16)]),
    l(180, "MPI_Type_get_attr", &[a("datatype", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)]),
    l(181, "MPI_Type_get_contents", &[
        a("numdatatypes", Ty::I32), a("numaddresses", Ty::I32), a("numintegers", Ty::I32),
        a("datatype", Ty::I16), a("maxintegers", Ty::I32), a("maxaddresses", Ty::I32),
        a("maxdatatypes", Ty::I32), a("arrintegers", Ty::I32Arr), a("arraddresses", Ty::I32Arr),
        a("arrdatatypes", Ty::I16Arr),
    ]),
    l(182, "MPI_Type_get_envelope", &[
        a("datatype", Ty::I16), a("numintegers", Ty::I32), a("numaddresses", Ty::I32),
        a("numdatatypes", Ty::I32), a("combiner", Ty::I8),
    ]),
    l(183, "MPI_Type_get_name", &[a("datatype", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)]),
    l(184, "MPI_Type_set_attr", &[a("datatype", Ty::I16), a("keyval", Ty::I16)]),
    l(185, "MPI_Type_set_name", &[a("datatype", Ty::I16), a("name", Ty::Str)]),
    l(186, "MPI_Type_match_size", &[a("typeclass", Ty::I8), a("size", Ty::I32), a("datatype", Ty::I16)]),
    l(187, "MPI_Win_call_errhandler", &[a("win", Ty::I16), a("errorcode", Ty::I32)]),
    l(188, "MPI_Win_create_keyval", &[a("keyval", Ty::I16)]),
    l(189, "MPI_Win_delete_attr", &[a("win", Ty::I16), a("keyval", Ty::I16)]),
    l(190, "MPI_Win_free_keyval", &[a("keyval", Ty::I16)]),
    l(191, "MPI_Win_get_attr", &[a("win", Ty::I16), a("keyval", Ty::I16), a("flag", Ty::I32)]),
    l(192, "MPI_Win_get_name", &[a("win", Ty::I16), a("name", Ty::Str), a("resultlen", Ty::I32)]),
    l(193, "MPI_Win_set_attr", &[a("win", Ty::I16), a("keyval", Ty::I16)]),
    l(194, "MPI_Win_set_name", &[a("win", Ty::I16), a("name", Ty::Str)]),
    l(195, "MPI_Alloc_mem", &[a("size", Ty::I32), a("info", Ty::I16)]),
    l(196, "MPI_Comm_create_errhandler", &[a("errhandler", Ty::I16)]),
    l(197, "MPI_Comm_get_errhandler", &[a("comm", Ty::I16), a("errhandler", Ty::I16)]),
    l(198, "MPI_Comm_set_errhandler", &[a("comm", Ty::I16), a("errhandler", Ty::I16)]),
    l(199, "MPI_File_create_errhandler", &[a("errhandler", Ty::I16)]),
    l(200, "MPI_File_get_errhandler", &[a("file", Ty::I16), a("errhandler", Ty::I16)]),
    l(201, "MPI_File_set_errhandler", &[a("file", Ty::I16), a("errhandler", Ty::I16)]),
    l(202, "MPI_Finalized", &[a("flag", Ty::I32)]),
    l(203, "MPI_Free_mem", &[]),
    l(204, "MPI_Get_address", &[a("address", Ty::I32)]),
    l(205, "MPI_Info_create", &[a("info", Ty::I16)]),
    l(206, "MPI_Info_delete", &[a("info", Ty::I16), a("key", Ty::Str)]),
    l(207, "MPI_Info_dup", &[a("oldinfo", Ty::I16), a("newinfo", Ty::I16)]),
    l(208, "MPI_Info_free", &[a("info", Ty::I16)]),
    l(209, "MPI_Info_get", &[
        a("info", Ty::I16), a("key", Ty::Str), a("valuelength", Ty::I32), a("value", Ty::Str),
        a("flag", Ty::I32),
    ]),
    l(210, "MPI_Info_get_nkeys", &[a("info", Ty::I16), a("nkeys", Ty::I32)]),
    l(211, "MPI_Info_get_nthkey", &[a("info", Ty::I16), a("n", Ty::I32), a("key", Ty::Str)]),
    l(212, "MPI_Info_get_valuelen", &[
        a("info", Ty::I16), a("key", Ty::Str), a("valuelen", Ty::I32), a("flag", Ty::I32),
    ]),
    l(213, "MPI_Info_set", &[a("info", Ty::I16), a("key", Ty::Str), a("value", Ty::Str)]),
    l(214, "MPI_Pack_external", &[
        a("datarep", Ty::Str), a("incount", Ty::I32), a("intype", Ty::I16), a("outcount", Ty::I32),
        a("position_in", Ty::I32), a("position_out", Ty::I32),
    ]),
    l(215, "MPI_Pack_external_size", &[
        a("datarep", Ty::Str), a("incount", Ty::I32), a("datatype", Ty::I16), a("size", Ty::I32),
    ]),
    l(216, "MPI_Request_get_status", &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)]),
    l(217, "MPI_Type_create_darray", &[
        a("size", Ty::I32), a("rank", Ty::I32), a("ndims", Ty::I32), a("gsizes", Ty::I32Arr),
        a("distribs", Ty::I8Arr), a("dargs", Ty::I32Arr), a("psizes", Ty::I32Arr), a("order", Ty::I8),
        a("oldtype", Ty::I16), a("newtype", Ty::I16),
    ]),
    l(218, "MPI_Type_create_hindexed", &[
        a("count", Ty::I32), a("blocklengths", Ty::I32Arr), a("displacements", Ty::I32Arr),
        a("oldtype", Ty::I16), a("newtype", Ty::I16),
    ]),
    l(219, "MPI_Type_create_hvector", &[
        a("count", Ty::I32), a("blocklength", Ty::I32), a("stride", Ty::I32), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(220, "MPI_Type_create_indexed_block", &[
        a("count", Ty::I32), a("blocklength", Ty::I32), a("displacments", Ty::I32Arr), a("oldtype", Ty::I16),
        a("newtype", Ty::I16),
    ]),
    l(221, "MPI_Type_create_resized", &[
        a("oldtype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32), a("newtype", Ty::I16),
    ]),
    l(222, "MPI_Type_create_struct", &[
        a("count", Ty::I32), a("blocklengths", Ty::I32Arr), a("displacements", Ty::I32Arr),
        a("oldtypes", Ty::I16Arr), a("newtype", Ty::I16),
    ]),
    l(223, "MPI_Type_create_subarray", &[
        a("ndims", Ty::I32), a("sizes", Ty::I32Arr), a("subsizes", Ty::I32Arr), a("starts", Ty::I32Arr),
        a("order", Ty::I8), a("oldtype", Ty::I16), a("newtype", Ty::I16),
    ]),
    l(224, "MPI_Type_get_extent", &[a("datatype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32)]),
    l(225, "MPI_Type_get_true_extent", &[a("datatype", Ty::I16), a("lb", Ty::I32), a("extent", Ty::I32)]),
    l(226, "MPI_Unpack_external", &[
        a("datarep", Ty::Str), a("insize", Ty::I32), a("position_in", Ty::I32), a("position_out", Ty::I32),
        a("outcount", Ty::I32), a("datatype", Ty::I16),
    ]),
    l(227, "MPI_Win_create_errhandler", &[a("errhandler", Ty::I16)]),
    l(228, "MPI_Win_get_errhandler", &[a("win", Ty::I16), a("errhandler", Ty::I16)]),
    l(229, "MPI_Win_set_errhandler", &[a("win", Ty::I16), a("errhandler", Ty::I16)]),
    l(230, "MPI_File_open", &[
        a("comm", Ty::I16), a("filename", Ty::Str), a("amode", Ty::I8), a("info", Ty::I16),
        a("file", Ty::I16),
    ]),
    l(231, "MPI_File_close", &[a("file", Ty::I16)]),
    l(232, "MPI_File_delete", &[a("filename", Ty::Str), a("info", Ty::I16)]),
    l(233, "MPI_File_set_size", &[a("file", Ty::I16), a("size", Ty::I64)]),
    l(234, "MPI_File_preallocate", &[a("file", Ty::I16), a("size", Ty::I64)]),
    l(235, "MPI_File_get_size", &[a("file", Ty::I16), a("size", Ty::I64)]),
    l(236, "MPI_File_get_group", &[a("file", Ty::I16), a("group", Ty::I16)]),
    l(237, "MPI_File_get_amode", &[a("file", Ty::I16), a("amode", Ty::I8)]),
    l(238, "MPI_File_set_info", &[a("file", Ty::I16), a("info", Ty::I16)]),
    l(239, "MPI_File_get_info", &[a("file", Ty::I16), a("info", Ty::I16)]),
    l(240, "MPI_File_set_view", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("hosttype", Ty::I16), a("filetype", Ty::I16),
        a("datarep", Ty::Str), a("info", Ty::I16),
    ]),
    l(241, "MPI_File_get_view", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("hosttype", Ty::I16), a("filetype", Ty::I16),
        a("datarep", Ty::Str),
    ]),
    l(242, "MPI_File_read_at", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("status", Ty::Status),
    ]),
    l(243, "MPI_File_read_at_all", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("status", Ty::Status),
    ]),
    l(244, "MPI_File_write_at", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("status", Ty::Status),
    ]),
    l(245, "MPI_File_write_at_all", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("status", Ty::Status),
    ]),
    l(246, "MPI_File_iread_at", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("request", Ty::I32),
    ]),
    l(247, "MPI_File_iwrite_at", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
        a("request", Ty::I32),
    ]),
    l(248, "MPI_File_read", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(249, "MPI_File_read_all", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(250, "MPI_File_write", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(251, "MPI_File_write_all", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(252, "MPI_File_iread", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32),
    ]),
    l(253, "MPI_File_iwrite", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32),
    ]),
    l(254, "MPI_File_seek", &[a("file", Ty::I16), a("offset", Ty::I64), a("whence", Ty::I8)]),
    l(255, "MPI_File_get_position", &[a("file", Ty::I16), a("offset", Ty::I64)]),
    l(256, "MPI_File_get_byte_offset", &[a("file", Ty::I16), a("offset", Ty::I64), a("bytes", Ty::I64)]),
    l(257, "MPI_File_read_shared", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(258, "MPI_File_write_shared", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(259, "MPI_File_iread_shared", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32),
    ]),
    l(260, "MPI_File_iwrite_shared", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("request", Ty::I32),
    ]),
    l(261, "MPI_File_read_ordered", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(262, "MPI_File_write_ordered", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16), a("status", Ty::Status),
    ]),
    l(263, "MPI_File_seek_shared", &[a("file", Ty::I16), a("offset", Ty::I64), a("whence", Ty::I8)]),
    l(264, "MPI_File_get_position_shared", &[a("file", Ty::I16), a("offset", Ty::I64)]),
    l(265, "MPI_File_read_at_all_begin", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
    ]),
    l(266, "MPI_File_read_at_all_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(267, "MPI_File_write_at_all_begin", &[
        a("file", Ty::I16), a("offset", Ty::I64), a("count", Ty::I32), a("datatype", Ty::I16),
    ]),
    l(268, "MPI_File_write_at_all_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(269, "MPI_File_read_all_begin", &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)]),
    l(270, "MPI_File_read_all_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(271, "MPI_File_write_all_begin", &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)]),
    l(272, "MPI_File_write_all_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(273, "MPI_File_read_ordered_begin", &[a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16)]),
    l(274, "MPI_File_read_ordered_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(275, "MPI_File_write_ordered_begin", &[
        a("file", Ty::I16), a("count", Ty::I32), a("datatype", Ty::I16),
    ]),
    l(276, "MPI_File_write_ordered_end", &[a("file", Ty::I16), a("status", Ty::Status)]),
    l(277, "MPI_File_get_type_extent", &[a("file", Ty::I16), a("datatype", Ty::I16), a("extent", Ty::I32)]),
    l(278, "MPI_Register_datarep", &[a("name", Ty::Str)]),
    l(279, "MPI_File_set_atomicity", &[a("file", Ty::I16), a("flag", Ty::I32)]),
    l(280, "MPI_File_get_atomicity", &[a("file", Ty::I16), a("flag", Ty::I32)]),
    l(281, "MPI_File_sync", &[a("file", Ty::I16)]),
    l(282, "MPIO_Test", &[a("request", Ty::I32), a("flag", Ty::I32), a("status", Ty::Status)]),
    l(283, "MPIO_Wait", &[a("request", Ty::I32), a("status", Ty::Status)]),
    l(284, "MPIO_Testall", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("flag", Ty::I32), a("statuses", Ty::Status),
    ]),
    l(285, "MPIO_Waitall", &[a("count", Ty::I32), a("requests", Ty::I32Arr), a("statuses", Ty::Status)]),
    l(286, "MPIO_Testany", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("flag", Ty::I32), a("index", Ty::I32),
        a("statuses", Ty::Status),
    ]),
    l(287, "MPIO_Waitany", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("index", Ty::I32), a("statuses", Ty::Status),
    ]),
    l(288, "MPIO_Waitsome", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("outcount", Ty::I32), a("indices", Ty::I32Arr),
        a("statuses", Ty::Status),
    ]),
    l(289, "MPIO_Testsome", &[
        a("count", Ty::I32), a("requests", Ty::I32Arr), a("outcount", Ty::I32), a("indices", Ty::I32Arr),
        a("statuses", Ty::Status),
    ]),
    NONE, // ALL_FUNCTIONS
    l(291, "MPI_Function_enter", &[a("fn", Ty::I64)]),
    l(292, "MPI_Function_exit", &[a("fn", Ty::I64)]),
];

/// The name and argument layout of the call with `label`, or `None` for a
/// label that has no record layout (`MPI_Pcontrol`, the sentinels, unknown).
pub fn layout(label: u16) -> Option<(&'static str, &'static [Arg])> {
    let l = LAYOUTS.get(label as usize)?;
    (l.label == label).then_some((l.name, l.args))
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

    #[test]
    fn labels_index_the_table() {
        for (i, l) in LAYOUTS.iter().enumerate() {
            assert!(l.label as usize == i || l.label == NONE.label, "label {} at {i}", l.label);
        }
    }
}
