//! What a caller chooses: the algorithm, the backend and the other options of a handle,
//! and the storage of C. Plain data every layer below the typed API reads.

use crate::common::csr::TypeSig;
use crate::types::IndexType;

/// SpGEMM algorithm choice (codes as in the C header's `SPGEMM_ALG_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Chosen per product by the selector (each backend's selector).
    Auto = 0,
    /// Dense accumulator: values and a marker array of length k per thread (KKDENSE).
    Dense = 1,
    /// Two-level open-addressing hash accumulator with linear probing, each level at
    /// most 50% full (KKLP).
    LinearProbe = 2,
    /// Two-level linked-list hash map: Begins/Nexts/Ids/Values (KKMEM).
    LinkedList = 3,
}

impl Algorithm {
    /// Every algorithm a caller can request, `Auto` first (benchmarks and tests iterate
    /// over it, so a new variant must be listed here).
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Auto,
        Algorithm::Dense,
        Algorithm::LinearProbe,
        Algorithm::LinkedList,
    ];

    /// The algorithm whose `name()` is `name` (ASCII case-insensitive).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn from_code(code: i32) -> Option<Algorithm> {
        match code {
            0 => Some(Algorithm::Auto),
            1 => Some(Algorithm::Dense),
            2 => Some(Algorithm::LinearProbe),
            3 => Some(Algorithm::LinkedList),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Dense => "kkdense",
            Algorithm::LinearProbe => "kklp",
            Algorithm::LinkedList => "kkmem",
        }
    }
}

/// Where products run (codes as in the C header's `SPGEMM_BACKEND_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// GPU for large products when a device is usable, else CPU.
    Auto = 0,
    Cpu = 1,
    Cuda = 2,
}

impl Backend {
    pub fn from_code(code: i32) -> Option<Backend> {
        match code {
            0 => Some(Backend::Auto),
            1 => Some(Backend::Cpu),
            2 => Some(Backend::Cuda),
            _ => None,
        }
    }
}

/// Options a caller may set on a handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub algorithm: Algorithm,
    /// Column indices of C sorted within each row (default true).
    pub sorted_output: bool,
    /// Full O(nnz) checks of the inputs (default true).
    pub validate: bool,
    pub backend: Backend,
    /// Hybrid CPU+GPU products (`crate::hybrid`): rows split between the CPU and the GPU
    /// when a GPU is usable (default false).
    pub hybrid: bool,
    /// GPU numeric phases give the same bits on every run (default false; the CPU's
    /// results never depend on thread timing).
    pub reproducible: bool,
    /// Bound in bytes on the extra memory of a call, checked against its estimate before
    /// anything is allocated (0 = no limit; `spgemm_set_memory_limit`).
    pub memory_limit: usize,
    /// Under `Algorithm::Auto` on the CPU, products below the CPU backend's work threshold
    /// run serially on the calling thread (`cpu::small`; default true). False keeps every
    /// product on the parallel path (tests and benchmarks of that path on small inputs).
    pub small_path: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algorithm: Algorithm::Auto,
            sorted_output: true,
            validate: true,
            backend: Backend::Auto,
            hybrid: false,
            reproducible: false,
            memory_limit: 0,
            small_path: true,
        }
    }
}

/// How the caller wants C stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputFormat {
    pub offsets: IndexType,
    pub indices: IndexType,
    /// 0 or 1.
    pub base: usize,
}

/// What the inputs looked like at symbolic time; numeric calls must match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputShape {
    pub sig: TypeSig,
    pub a_nrows: usize,
    pub a_ncols: usize,
    pub b_nrows: usize,
    pub b_ncols: usize,
    pub a_nnz: usize,
    pub b_nnz: usize,
    pub a_base: usize,
    pub b_base: usize,
}

/// Storage order of X and Y.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Entry (i, j) at `i * ld + j`.
    RowMajor = 0,
    /// Entry (i, j) at `j * ld + i`.
    ColMajor = 1,
}

/// op(A) of SpMM, op(A) and op(B) of SpGEMM (codes as in the header's
/// `SPGEMM_OPERATION_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    NonTranspose = 0,
    Transpose = 1,
    /// A^H, the conjugate transpose (A^T for real values).
    ConjugateTranspose = 2,
}

impl Op {
    pub fn from_code(code: i32) -> Option<Op> {
        match code {
            0 => Some(Op::NonTranspose),
            1 => Some(Op::Transpose),
            2 => Some(Op::ConjugateTranspose),
            _ => None,
        }
    }
    /// Whether op(A) is a transpose (plain or conjugate): they share A^T's structure.
    pub fn transposes(self) -> bool {
        self != Op::NonTranspose
    }
    /// Rows and columns of op(A) for A of `nrows` x `ncols`.
    pub fn shape(self, nrows: usize, ncols: usize) -> (usize, usize) {
        if self.transposes() {
            (ncols, nrows)
        } else {
            (nrows, ncols)
        }
    }
    /// op applied to a matrix named `m`, for messages ("A", "A^T", "A^H").
    pub fn of(self, m: &str) -> String {
        match self {
            Op::NonTranspose => m.to_string(),
            Op::Transpose => format!("{m}^T"),
            Op::ConjugateTranspose => format!("{m}^H"),
        }
    }
}

impl Layout {
    pub fn from_code(code: i32) -> Option<Layout> {
        match code {
            0 => Some(Layout::RowMajor),
            1 => Some(Layout::ColMajor),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "column-major",
        }
    }
}
