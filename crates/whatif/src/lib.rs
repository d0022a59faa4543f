//! What-if prediction over a Program Activity Graph (design.md: spoor-gag, spoor-whatif,
//! spoor-calibrate; the LBF paper).
//!
//! - [`placement`]: which processes share a processor (formats/placement.md).
//! - `gag`: process LBF, the Group Activity Graph of a placement, and NF (message arcs
//!   from a communication-cost table).
//! - [`procedure`]: procedure LBF (moving a procedure from the sending to the receiving
//!   side of messages) beside critical-path zeroing.
//! - [`scenario`]: sweeps of placements × networks × moves × zeroings
//!   (formats/scenarios.md) and the search for a good placement.
//! - `serve`: server loops, whose requests a prediction may serve as they arrive
//!   ([`Wildcards`]).
//! - [`interval`]: how sure a prediction is, from the recorded computation's variation.
//! - [`stretch`]: the stretch of the run a prediction covers (`--phase`, `--window`, or
//!   the run between `MPI_Init` and `MPI_Finalize`).
//! - [`calibrate`]: communication-cost tables measured on this host or fitted from a
//!   trace's messages (formats/nettable.md).
//! - [`netfit`]: a network model (formats/network.md) fitted to a trace's messages:
//!   latency and bandwidth, the fit's quality, saturated links.
//! - [`collectives`]: a collective table measured with real MPI (mpicc, mpirun).
//! - [`mpi`]: compiling and running those MPI programs (`--collectives`, `--mpi`).

pub mod calibrate;
pub mod collectives;
mod gag;
pub mod interval;
pub mod mpi;
pub mod netfit;
pub mod placement;
pub mod procedure;
pub mod scenario;
pub mod search;
mod serve;
pub mod stretch;

pub use gag::{build_gag, load_network, predict, predict_then, Costs, Prediction, Sharing, Waits};
pub use placement::{PlaceBy, Placement};
pub use serve::{arrival_note, Wildcards};
pub use stretch::Stretch;
