//! The chain of stages behind [`Labeler::run`], [`Labeler::run_into`] and [`run_host`]: label,
//! then relabel, statistics, filters and OpenCV's tables as the [`Options`] ask (the stages and
//! their order: [`crate::pipeline`]).

use std::time::Instant;

use super::Labeler;
use crate::pipeline::{Filter, Options, Run, Stats};
use crate::{DeviceImage, DeviceLabels, Phase, PhaseTime, Result};

/// Host in, host out: `upload` the input (e.g. [`crate::Labeler::upload`], or a binarization
/// on the device), [`crate::Labeler::run`] on it, then `download` the labels (e.g.
/// [`crate::Labeler::download`], or [`crate::Labeler::download_into`] caller memory). The upload
/// and the download are timed on the host clock, first and last in the timings. A connectivity
/// the algorithm does not take fails before anything is uploaded.
pub fn run_host<L: Labeler + ?Sized, T>(
    labeler: &mut L,
    options: &Options,
    upload: impl FnOnce(&mut L) -> Result<DeviceImage>,
    download: impl FnOnce(&mut L, &DeviceLabels) -> Result<T>,
) -> Result<Run<T>> {
    labeler.algorithm().check(options.connectivity)?;
    let start = Instant::now();
    let input = upload(labeler)?;
    let upload_ms = start.elapsed().as_secs_f64() * 1e3;
    let run = labeler.run(&input, options)?;
    drop(input);
    let start = Instant::now();
    let labels = download(labeler, &run.labels)?;
    let download_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut run = run.with_labels(labels);
    run.timings.phases.insert(0, PhaseTime { phase: Phase::Upload, ms: upload_ms });
    run.timings.phases.push(PhaseTime { phase: Phase::Download, ms: download_ms });
    Ok(run)
}

/// [`crate::Labeler::run`]: the stages `options` ask for, on new labels.
pub(crate) fn run<L: Labeler + ?Sized>(labeler: &mut L, image: &DeviceImage, options: &Options) -> Result<Run> {
    let connectivity = options.connectivity;
    let wants_table = options.stats == Stats::Components || !options.filters.is_empty();
    let (mut labels, count, stats, timings) = if wants_table {
        // Labeling, relabeling and statistics without a wait in between.
        let (labels, stats, timings) = labeler.label_on_device_with_stats(image, connectivity)?;
        (labels, Some(stats.len() as u32), Some(stats), timings)
    } else if options.is_consecutive() {
        let (labels, count, timings) = labeler.label_on_device_consecutive(image, connectivity)?;
        (labels, Some(count), None, timings)
    } else {
        let (labels, timings) = labeler.label_on_device(image, connectivity)?;
        (labels, None, None, timings)
    };
    let mut done = Run { labels: (), count, stats, opencv: None, timings };
    after_labeling(labeler, &mut labels, options, &mut done)?;
    Ok(done.with_labels(labels))
}

/// [`crate::Labeler::run_into`]: the stages `options` ask for, into existing `labels`.
pub(crate) fn run_into<L: Labeler + ?Sized>(
    labeler: &mut L,
    image: &DeviceImage,
    labels: &mut DeviceLabels,
    options: &Options,
) -> Result<Run<()>> {
    let connectivity = options.connectivity;
    let mut done = if options.is_consecutive() {
        let (count, timings) = labeler.label_on_device_into_consecutive(image, connectivity, labels)?;
        Run { labels: (), count: Some(count), stats: None, opencv: None, timings }
    } else {
        let timings = labeler.label_on_device_into(image, connectivity, labels)?;
        Run { labels: (), count: None, stats: None, opencv: None, timings }
    };
    if options.stats == Stats::Components || !options.filters.is_empty() {
        let (stats, more) = labeler.component_stats(labels)?;
        done.timings.phases.extend(more.phases);
        done.stats = Some(stats);
    }
    after_labeling(labeler, labels, options, &mut done)?;
    Ok(done)
}

/// The stages after labeling (and the statistics filters need, in `done.stats`): the filters,
/// then OpenCV's tables; drops the statistics unless asked for.
fn after_labeling<L: Labeler + ?Sized>(
    labeler: &mut L,
    labels: &mut DeviceLabels,
    options: &Options,
    done: &mut Run<()>,
) -> Result<()> {
    for filter in &options.filters {
        let stats = done.stats.as_mut().expect("computed for the filters");
        let keep = match *filter {
            Filter::MinSize(n) => stats.at_least(n),
            Filter::Largest(k) => stats.largest(k),
        };
        let (kept, more) = labeler.keep_components(labels, &keep)?;
        done.timings.phases.extend(more.phases);
        *stats = stats.kept(&keep);
        done.count = Some(kept);
    }
    if options.stats != Stats::Components {
        done.stats = None;
    }
    if let Stats::OpenCv { dims } = options.stats {
        let (tables, more) = labeler.opencv_stats(labels, dims)?;
        done.timings.phases.extend(more.phases);
        done.opencv = Some(tables);
    }
    Ok(())
}
