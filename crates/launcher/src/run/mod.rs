//! Running the plan: bwrap found and proven, the mediated network set up,
//! bwrap spawned with its descriptors, the byte pumps, the owner's handle,
//! the supervision runtime and the stop ladder. The supervision of one run
//! (supervisor/) drives these, then observation and the receipt.

pub mod backend;
pub mod child_fds;
pub mod deadline_timer;
pub mod execution;
pub mod late_writes;
pub mod network_setup;
pub mod owner_reader;
pub mod pumps;
pub mod spawn;
pub mod stop_ladder;
pub mod supervision_runtime;
