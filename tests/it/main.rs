//! The commands end to end, as a user runs them: one test binary (one link, one run) with
//! a module per command family and the helpers they share in `common`.

mod common;

mod calibrate;
mod cat;
mod cp;
mod cp_recorded;
mod diagnose;
mod exp;
mod guard;
mod import;
mod network;
mod order;
mod record;
mod record_pvm;
mod report;
mod synth;
mod validate;
mod whatif;
