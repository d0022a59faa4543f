//! What the DUMPI and Paraver readers share: MPI call names and the warnings they count.

use spoor_model::CollOp;
use std::collections::BTreeMap;

/// The collective operation of an MPI function name (case-insensitive), if it is a blocking collective.
pub(crate) fn mpi_collective(name: &str) -> Option<CollOp> {
    let lower = name.trim().to_ascii_lowercase();
    Some(match lower.as_str() {
        "mpi_barrier" => CollOp::Barrier,
        "mpi_bcast" => CollOp::Bcast,
        "mpi_reduce" => CollOp::Reduce,
        "mpi_allreduce" => CollOp::Allreduce,
        "mpi_gather" => CollOp::Gather,
        "mpi_gatherv" => CollOp::Gatherv,
        "mpi_scatter" => CollOp::Scatter,
        "mpi_scatterv" => CollOp::Scatterv,
        "mpi_allgather" => CollOp::Allgather,
        "mpi_allgatherv" => CollOp::Allgatherv,
        "mpi_alltoall" => CollOp::Alltoall,
        "mpi_alltoallv" => CollOp::Alltoallv,
        "mpi_scan" => CollOp::Scan,
        "mpi_reduce_scatter" | "mpi_reduce_scatter_block" => CollOp::ReduceScatter,
        "mpi_alltoallw" | "mpi_exscan" => CollOp::Other,
        _ => return None,
    })
}

/// Warnings, counted by message.
#[derive(Default)]
pub(crate) struct Warnings(BTreeMap<String, u64>);

impl Warnings {
    pub(crate) fn add(&mut self, msg: impl Into<String>) {
        *self.0.entry(msg.into()).or_insert(0) += 1;
    }

    pub(crate) fn merge(&mut self, other: Warnings) {
        for (m, n) in other.0 {
            *self.0.entry(m).or_insert(0) += n;
        }
    }

    pub(crate) fn into_vec(self) -> Vec<String> {
        self.0.into_iter().map(|(m, n)| if n == 1 { m } else { format!("{m} ({n} times)") }).collect()
    }
}
