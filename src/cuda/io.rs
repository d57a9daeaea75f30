//! Where a GPU numeric call takes its values from and writes C to.

use crate::common::device::{DeviceOut, DevicePtr};
use crate::common::slices::IndexSliceMut;

/// Where a numeric call's values of A and B come from.
pub enum ValuesIn<'x, V> {
    /// Host arrays (all of A's values: the plan picks its part).
    Host(Option<&'x [V]>, Option<&'x [V]>),
    /// The caller's device arrays.
    Device(Option<DevicePtr>, Option<DevicePtr>),
}

/// Where C goes: host arrays holding exactly the part's entries, or the caller's device
/// arrays.
pub enum COut<'o, V> {
    Host {
        cols: IndexSliceMut<'o>,
        vals: Option<&'o mut [V]>,
    },
    Device(DeviceOut),
}
