//! Lowering support for the IPU compiler.
//!
//! For now this crate holds self-contained, IR-independent libraries that the
//! lowering passes call: [`exchange_schedule`] turns an exchange phase (a list
//! of tile-to-tile transfers) into a cycle-exact, verified schedule.

pub mod exchange_schedule;
