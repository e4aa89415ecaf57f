//! Files in and out: input images decided on their own samples ([`read_image`]), label images
//! and other outputs written atomically ([`write_labels`], [`write_atomically`]), volumes as
//! `.npy`, multi-page TIFF or a folder of slices ([`read_volume`], [`write_volume`]).

mod folder;
mod gray_float;
mod input;
mod npy;
mod npy_input;
mod npy_map;
mod output;
mod read;
mod targets;
mod temp;
mod volume;
mod volume_folder;
mod volume_tiff;
#[cfg(feature = "zarr")]
mod zarr;

pub use folder::{list_images, FolderListing};
pub use input::{
    available_memory, dibco_pages, estimated_peak_bytes, probe, read_gray, Binarize, DecodedImage, Frames, ReadOptions,
    SampleType, SourceInfo,
};
pub use npy::is_npy;
pub use npy_input::{npy_shape, read_binary_npy, read_values_npy, read_volume_npy, BinaryArray, NpyValues};
pub use npy_map::{NpyArray, NpyLabel, NpyLabels};
pub use output::{
    check_output, colorize, set_synced_writes, synced_writes, write_atomically, write_binary, write_labels,
    write_labels_npy_from, write_npy_u8, write_region_table_csv, write_stats_csv, LabelFormat,
};
pub use read::{read_binary, read_image};
pub use targets::{check_targets, input_files};
pub use temp::{remove_live_temporaries, remove_stale_temporaries};
pub use volume::{read_volume, write_volume, write_volume_npy};
pub use volume_folder::read_volume_folder;
pub use volume_tiff::{read_volume_tiff, tiff_pages, write_volume_tiff};
#[cfg(feature = "zarr")]
pub use zarr::{is_zarr, ZarrInput, ZarrLabel, ZarrLabels};
