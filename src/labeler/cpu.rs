//! The CPU reference as a [`Labeler`].

use std::time::Instant;

use super::{check_bytes, check_destination, Labeler, Stages};
use crate::array::{DeviceArray, Numbering, Storage};
use crate::regions::{Intensity, IntensityValue, RegionRequest, RegionSums};
use crate::{
    reference, Algorithm, ComponentStats, Connectivity, DeviceImage, DeviceInfo, DeviceLabels, Error, ImageKind,
    OpenCvStats, Phase, PhaseTime, Result, Shape, Timings,
};

/// The CPU reference labeler ([`reference::label_as`]); it accepts every algorithm name, with
/// the algorithm's connectivity rules and raw label convention, so its raw labels equal the GPU
/// algorithm's.
pub struct CpuLabeler {
    algorithm: Algorithm,
    info: DeviceInfo,
    owner: u64,
}

impl CpuLabeler {
    /// A CPU labeler standing in for `algorithm`.
    pub fn new(algorithm: Algorithm) -> Self {
        // Host arrays are valid for every CPU labeler: they share one owner id.
        Self { algorithm, info: DeviceInfo::cpu(), owner: 0 }
    }

    /// The error of borrowing device memory, which the CPU reference cannot use.
    pub(crate) fn cannot_borrow(&self) -> Error {
        ccl_backend::Error::Unsupported {
            device: self.info.name.clone(),
            what: "borrowing device memory (CUDA devices only)".into(),
        }
        .into()
    }

    /// The raw labels of `image` with `connectivity`, checked as every labeling is.
    fn raw_labels(&self, image: &DeviceImage, connectivity: Connectivity) -> Result<Vec<u32>> {
        super::check_shape_connectivity(image.shape(), connectivity)?;
        self.algorithm.check(connectivity)?;
        self.algorithm.check_kind(image.kind(), connectivity)?;
        let Storage::Host(bytes) = &image.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let convention = self.algorithm.raw_labels();
        Ok(reference::raw_labels_of_kind(image.shape(), bytes, image.kind(), connectivity, convention))
    }

    /// The values of an intensity image in host memory, as `f64` (`None`: not a host array).
    fn host_values<T: IntensityValue>(&self, image: &DeviceArray<T>) -> Option<Vec<f64>> {
        match &image.storage {
            Storage::Host(values) => Some(values.iter().map(|&v| v.into()).collect()),
            Storage::Device(_) => None,
        }
    }

    fn timings(start: Instant) -> Timings {
        let ms = start.elapsed().as_secs_f64() * 1e3;
        Timings { phases: vec![PhaseTime { phase: Phase::CpuLabeling, ms }], iterations: None }
    }
}

impl Labeler for CpuLabeler {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    fn device(&self) -> &DeviceInfo {
        &self.info
    }

    fn upload_bytes(&mut self, shape: Shape, bytes: &[u8], kind: ImageKind) -> Result<DeviceImage> {
        check_bytes(shape, bytes, kind)?;
        Ok(DeviceArray::new(shape, self.owner, Storage::Host(bytes.to_vec())).with_kind(kind))
    }

    fn download_into(&mut self, labels: &DeviceLabels, out: &mut [u32]) -> Result<()> {
        check_destination(labels, out)?;
        match &labels.storage {
            Storage::Host(v) => {
                out.copy_from_slice(v);
                Ok(())
            }
            Storage::Device(_) => Err(Error::DeviceMismatch { device: self.info.name.clone() }),
        }
    }

    /// The labels are host memory already: their pieces go to `sink` without a copy.
    fn download_pieces(&mut self, labels: &DeviceLabels, sink: &mut dyn FnMut(&[u32]) -> Result<()>) -> Result<()> {
        match &labels.storage {
            Storage::Host(v) => v.chunks(super::LABEL_PIECE).try_for_each(sink),
            Storage::Device(_) => Err(Error::DeviceMismatch { device: self.info.name.clone() }),
        }
    }
}

impl Stages for CpuLabeler {
    fn label_on_device(&mut self, image: &DeviceImage, connectivity: Connectivity) -> Result<(DeviceLabels, Timings)> {
        let start = Instant::now();
        let labels = self.raw_labels(image, connectivity)?;
        let numbering = Numbering::Raw(self.algorithm.raw_labels());
        let out = DeviceArray::labels(image.shape(), self.owner, Storage::Host(labels), numbering);
        Ok((out, Self::timings(start)))
    }

    fn label_on_device_into(
        &mut self,
        image: &DeviceImage,
        connectivity: Connectivity,
        labels: &mut DeviceLabels,
    ) -> Result<Timings> {
        let start = Instant::now();
        super::check_same_shape(image, labels)?;
        let values = self.raw_labels(image, connectivity)?;
        let Storage::Host(out) = &mut labels.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        out.copy_from_slice(&values);
        labels.numbering = Some(Numbering::Raw(self.algorithm.raw_labels()));
        Ok(Self::timings(start))
    }

    fn relabel(&mut self, labels: &mut DeviceLabels) -> Result<(u32, Timings)> {
        let start = Instant::now();
        if let Numbering::Consecutive(n) = super::numbering_of(labels)? {
            return Ok((n, Timings::default()));
        }
        let Storage::Host(values) = &mut labels.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let n = crate::host_array::renumber(values);
        labels.numbering = Some(Numbering::Consecutive(n));
        let ms = start.elapsed().as_secs_f64() * 1e3;
        Ok((n, Timings { phases: vec![PhaseTime { phase: Phase::Relabel, ms }], iterations: None }))
    }

    fn component_stats(&mut self, labels: &mut DeviceLabels) -> Result<(ComponentStats, Timings)> {
        let (n, mut timings) = self.relabel(labels)?;
        let start = Instant::now();
        let Storage::Host(values) = &labels.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let stats = ComponentStats::of_labels(values, labels.shape(), n);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        timings.phases.push(PhaseTime { phase: Phase::ComponentStats, ms });
        Ok((stats, timings))
    }

    fn keep_components(&mut self, labels: &mut DeviceLabels, keep: &[bool]) -> Result<(u32, Timings)> {
        super::check_keep(labels, keep)?;
        let start = Instant::now();
        let Storage::Host(values) = &mut labels.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let (map, kept) = crate::stats::keep_map(keep);
        for l in values.iter_mut().filter(|l| **l != 0) {
            *l = map[*l as usize - 1];
        }
        labels.numbering = Some(Numbering::Consecutive(kept));
        let ms = start.elapsed().as_secs_f64() * 1e3;
        Ok((kept, Timings { phases: vec![PhaseTime { phase: Phase::ComponentStats, ms }], iterations: None }))
    }

    /// Relabels on the host, then sums there from the labels.
    fn region_sums(
        &mut self,
        labels: &mut DeviceLabels,
        axes: u8,
        request: &RegionRequest<'_>,
    ) -> Result<(RegionSums, Timings)> {
        super::check_region_request(labels, axes, request)?;
        let (n, mut timings) = self.relabel(labels)?;
        let start = Instant::now();
        let mismatch = || Error::DeviceMismatch { device: self.info.name.clone() };
        let intensity: Option<Vec<f64>> = match request.intensity {
            None => None,
            Some(Intensity::F32(image)) => Some(self.host_values(image).ok_or_else(mismatch)?),
            Some(Intensity::F64(image)) => Some(self.host_values(image).ok_or_else(mismatch)?),
        };
        let Storage::Host(values) = &labels.storage else {
            return Err(mismatch());
        };
        let sums = RegionSums::of_labels(values, labels.shape(), n, axes, request, intensity.as_deref());
        let ms = start.elapsed().as_secs_f64() * 1e3;
        timings.phases.push(PhaseTime { phase: Phase::RegionProps, ms });
        Ok((sums, timings))
    }

    /// Relabels on the host, then builds the tables there from the labels.
    fn opencv_stats(&mut self, labels: &mut DeviceLabels, dims: u8) -> Result<(OpenCvStats, Timings)> {
        super::gpu::check_opencv_dims(labels, dims)?;
        let (n, mut timings) = self.relabel(labels)?;
        let start = Instant::now();
        let Storage::Host(values) = &labels.storage else {
            return Err(Error::DeviceMismatch { device: self.info.name.clone() });
        };
        let tables = OpenCvStats::of_labels(values, labels.shape(), usize::from(dims), n);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        timings.phases.push(PhaseTime { phase: Phase::ComponentStats, ms });
        Ok((tables, timings))
    }
}
