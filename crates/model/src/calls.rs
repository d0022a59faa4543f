//! What a communication library's calls do to the time spent in them.

/// Whether `name` is a call that blocks until a partner acts (a receive, a send that may
/// wait for a rendezvous, a completion or test of a request, a probe, a collective, a
/// PVM receive or barrier). The time inside such a call is communication, however much
/// CPU the library burns there (MPI libraries spin while they wait), so the CPU-mode
/// cost model (formats/pag.md) never counts it as work.
///
/// Names match as MPI's C and Fortran bindings and the profiling layer spell them:
/// case aside, with or without a trailing `_` and the `P` of `PMPI_`.
pub fn blocks(name: &str) -> bool {
    const MPI: [&str; 37] = [
        "recv",
        "mrecv",
        "send",
        "ssend",
        "bsend",
        "rsend",
        "sendrecv",
        "sendrecv_replace",
        "wait",
        "waitall",
        "waitany",
        "waitsome",
        "test",
        "testall",
        "testany",
        "testsome",
        "probe",
        "iprobe",
        "mprobe",
        "improbe",
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "gatherv",
        "scatter",
        "scatterv",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "alltoallw",
        "scan",
        "exscan",
        "reduce_scatter",
        "reduce_scatter_block",
    ];
    const PVM: [&str; 5] = ["recv", "trecv", "precv", "barrier", "probe"];
    if name.len() > 32 {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    let lower = lower.trim_end_matches('_');
    if let Some(call) = lower.strip_prefix("mpi_").or_else(|| lower.strip_prefix("pmpi_")) {
        MPI.contains(&call)
    } else if let Some(call) = lower.strip_prefix("pvm_") {
        PVM.contains(&call)
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::blocks;

    #[test]
    fn blocking_calls_are_known_by_every_spelling() {
        for name in
            ["MPI_Recv", "mpi_recv_", "PMPI_Waitall", "MPI_SEND", "MPI_Allreduce", "pvm_recv", "MPI_Test"]
        {
            assert!(blocks(name), "{name}");
        }
        for name in
            ["MPI_Isend", "MPI_Irecv", "MPI_Init", "MPI_Finalize", "MPI_Comm_rank", "recv", "pvm_send"]
        {
            assert!(!blocks(name), "{name}");
        }
    }
}
