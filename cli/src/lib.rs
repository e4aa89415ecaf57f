//! `ccl-cli`: the `ccl` command line (`src/main.rs`) and the benchmark it runs, over the `ccl`
//! library. The benchmark is a library module so that its tests and the command share it; the
//! `ccl` library itself depends on none of this crate's dependencies (clap, indicatif, plotters,
//! csv).

pub mod benchmark;
