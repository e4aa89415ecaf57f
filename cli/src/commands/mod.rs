//! The subcommands of the `ccl` binary.

pub mod args;
pub mod bench;
pub mod binarize;
pub mod clock;
pub mod console;
pub mod device_choice;
pub mod eval;
pub mod folder;
pub mod generate;
pub mod label;
pub mod label_args;
pub mod outputs;
pub mod slabs;
