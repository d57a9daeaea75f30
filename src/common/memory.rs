//! Estimates of the extra memory a call will allocate, checked against the handle's
//! memory limit (`spgemm_set_memory_limit`) before the call allocates anything. Each
//! backend computes its parts from the sizes its kernels allocate, next to that code.

use crate::error::{Error, Result, Status};

/// Bytes of `n` elements of `size` bytes (saturating: an estimate never wraps).
pub fn bytes(n: usize, size: usize) -> u64 {
    (n as u64).saturating_mul(size as u64)
}

/// Bytes of `n` elements of `T`.
pub fn bytes_of<T>(n: usize) -> u64 {
    bytes(n, std::mem::size_of::<T>())
}

/// The parts of a call's peak extra memory: (what, bytes each, how many).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    parts: Vec<(&'static str, u64, usize)>,
}

impl Footprint {
    /// One array or structure of `bytes` bytes.
    pub fn add(&mut self, what: &'static str, bytes: u64) -> &mut Self {
        self.add_each(what, bytes, 1)
    }

    /// `count` buffers of `bytes_each` (one per worker thread, or per transposed operand).
    pub fn add_each(&mut self, what: &'static str, bytes_each: u64, count: usize) -> &mut Self {
        if bytes_each > 0 && count > 0 {
            self.parts.push((what, bytes_each, count));
        }
        self
    }

    /// Adds every part of `other`.
    pub fn merge(&mut self, other: Footprint) -> &mut Self {
        self.parts.extend(other.parts);
        self
    }

    /// The estimate in bytes (saturating).
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |t, &(_, b, n)| {
            t.saturating_add(b.saturating_mul(n as u64))
        })
    }

    /// `AllocFailed` naming the estimate, its parts and the limit when the estimate
    /// exceeds `limit` (0: no limit). `call` names what would have allocated it.
    pub fn check(&self, limit: usize, call: &str) -> Result<()> {
        let total = self.total();
        if limit == 0 || total <= limit as u64 {
            return Ok(());
        }
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|&(what, b, n)| match n {
                1 => format!("{what} {b}"),
                _ => format!("{what} {n} x {b}"),
            })
            .collect();
        Err(Error::new(
            Status::AllocFailed,
            format!(
                "{call} needs an estimated {total} bytes ({}), over the memory limit of {limit} \
                 bytes (spgemm_set_memory_limit); nothing was allocated",
                parts.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_compares_the_total_with_the_limit() {
        let mut f = Footprint::default();
        f.add("row offsets", 80).add_each("accumulators", 100, 4);
        assert_eq!(f.total(), 480);
        assert!(f.check(0, "x").is_ok());
        assert!(f.check(480, "x").is_ok());
        let e = f.check(479, "the symbolic phase").unwrap_err();
        assert_eq!(e.status, Status::AllocFailed);
        assert!(e.message.contains("480 bytes"), "{}", e.message);
        assert!(e.message.contains("479 bytes"), "{}", e.message);
        assert!(e.message.contains("accumulators 4 x 100"), "{}", e.message);
        f.add("huge", u64::MAX);
        assert_eq!(f.total(), u64::MAX);
    }
}
