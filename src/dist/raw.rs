//! The MPI calls rsmpi 0.8 does not wrap (handle conversion from Fortran, the state
//! queries, `MPI_Reduce_scatter` with per-rank counts, passive-target RMA), each behind a
//! safe function that checks what the call relies on. All `unsafe` of the backend is here.

use std::mem::ManuallyDrop;
use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;

use super::options::Fint;
use crate::error::{Result, Status, err};

/// Whether MPI may be called now: initialised and not yet finalised.
pub fn mpi_usable() -> Result<()> {
    let mut init: c_int = 0;
    let mut fin: c_int = 0;
    // SAFETY: both queries may be called at any time, even before MPI_Init and after
    // MPI_Finalize; they write one int each.
    unsafe {
        ffi::MPI_Initialized(&mut init);
        ffi::MPI_Finalized(&mut fin);
    }
    if init == 0 {
        return err(
            Status::InvalidValue,
            "MPI is not initialised (the caller must call MPI_Init before using the distributed backend)",
        );
    }
    if fin != 0 {
        return err(Status::InvalidValue, "MPI has already been finalised");
    }
    Ok(())
}

fn finalized() -> bool {
    let mut fin: c_int = 0;
    // SAFETY: callable at any time; writes one int.
    unsafe { ffi::MPI_Finalized(&mut fin) };
    fin != 0
}

/// A communicator the library created (a duplicate or a split), freed on drop unless MPI
/// was finalised meanwhile (freeing then would be an error; the handle is then gone anyway).
pub struct OwnedComm(ManuallyDrop<SimpleCommunicator>);

impl OwnedComm {
    pub fn new(c: SimpleCommunicator) -> OwnedComm {
        OwnedComm(ManuallyDrop::new(c))
    }
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Drop for OwnedComm {
    fn drop(&mut self) {
        if !finalized() {
            // SAFETY: dropped once, here; the communicator is not used afterwards.
            unsafe { ManuallyDrop::drop(&mut self.0) };
        }
    }
}

/// A duplicate of the caller's communicator given by its Fortran handle. The caller's
/// communicator is only read (never freed); an invalid or null handle, or an
/// inter-communicator, is an error on this rank.
pub fn dup_from_fint(handle: Fint) -> Result<OwnedComm> {
    mpi_usable()?;
    // SAFETY: MPI_Comm_f2c accepts any integer; an invalid one gives an invalid C handle
    // (all-zero in Open MPI, MPI_COMM_NULL elsewhere), both rejected before any other use.
    let raw = unsafe { ffi::RSMPI_Comm_f2c(handle) };
    // SAFETY: reading an extern static handle constant.
    let null = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: the handle is plain data (a pointer or an int); its bytes are read, not used.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&raw as *const ffi::MPI_Comm).cast::<u8>(),
            std::mem::size_of::<ffi::MPI_Comm>(),
        )
    };
    if raw == null || bytes.iter().all(|&b| b == 0) {
        return err(
            Status::InvalidValue,
            format!("Fortran communicator handle {handle} is not a valid communicator"),
        );
    }
    let mut inter: c_int = 0;
    // SAFETY: `raw` is a live communicator handle (checked above); writes one int.
    unsafe { ffi::MPI_Comm_test_inter(raw, &mut inter) };
    if inter != 0 {
        return err(
            Status::NotSupported,
            "inter-communicators are not supported; pass an intra-communicator",
        );
    }
    let mut dup = null;
    // SAFETY: `raw` is a live intra-communicator; MPI_Comm_dup writes a new handle that we
    // own from here on (and free through OwnedComm).
    unsafe { ffi::MPI_Comm_dup(raw, &mut dup) };
    // SAFETY: `dup` is a fresh user intra-communicator, not a system handle, used only
    // through the wrapper.
    Ok(OwnedComm::new(unsafe { SimpleCommunicator::from_raw(dup) }))
}

/// A duplicate of an rsmpi communicator.
pub fn dup_of(c: &SimpleCommunicator) -> Result<OwnedComm> {
    mpi_usable()?;
    Ok(OwnedComm::new(c.duplicate()))
}

fn check_count(n: usize, what: &str) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| {
        crate::error::Error::new(
            Status::IndexOverflow,
            format!("{what}: {n} elements exceed an MPI count (int)"),
        )
    })
}

/// `MPI_Reduce_scatter` with sum: `send` holds the members' segments in member order
/// (`counts[r]` entries for member r), `recv` receives this member's summed segment.
pub fn reduce_scatter_sum<V: Equivalence>(
    comm: &SimpleCommunicator,
    send: &[V],
    recv: &mut [V],
    counts: &[c_int],
) -> Result<()> {
    let me = comm.rank() as usize;
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    if counts.len() != comm.size() as usize
        || send.len() < total
        || recv.len() < counts[me] as usize
        || counts.iter().any(|&c| c < 0)
    {
        return err(
            Status::Internal,
            "reduce-scatter buffers do not match their counts",
        );
    }
    // SAFETY: `send` holds the sum of `counts` elements and `recv` this member's count
    // (checked above), of the datatype V maps to; `counts` has one entry per member.
    unsafe {
        ffi::MPI_Reduce_scatter(
            send.as_ptr().cast(),
            recv.as_mut_ptr().cast(),
            counts.as_ptr(),
            V::equivalent_datatype().as_raw(),
            ffi::RSMPI_SUM,
            comm.as_raw(),
        );
    }
    Ok(())
}

/// An RMA window over a buffer the window owns (so it cannot move or be freed while
/// exposed), with a passive-target epoch to every member open for the window's life
/// (`MPI_Win_lock_all`): gets need no action of the target. Creation and drop are
/// collective over the communicator.
pub struct Window<T: Equivalence + Copy> {
    win: ffi::MPI_Win,
    buf: Vec<T>,
}

impl<T: Equivalence + Copy> Window<T> {
    /// Collective: exposes `buf` to every member of `comm`.
    pub fn new(comm: &SimpleCommunicator, mut buf: Vec<T>) -> Result<Window<T>> {
        let bytes = std::mem::size_of_val(buf.as_slice());
        let size = ffi::MPI_Aint::try_from(bytes)
            .map_err(|_| crate::error::Error::new(Status::IndexOverflow, "window too large"))?;
        let unit = std::mem::size_of::<T>() as c_int;
        // SAFETY: reading extern static handle constants.
        let (info, mut win) = unsafe { (ffi::RSMPI_INFO_NULL, ffi::RSMPI_WIN_NULL) };
        // An empty Vec's pointer is dangling but non-null; MPI never dereferences a
        // zero-size window. The Vec is moved into the Window below without reallocating
        // (moving a Vec keeps its heap buffer), so the exposed address stays valid.
        // A window is the one call here whose failure is an environment's limit (no
        // one-sided component, as with Open MPI's UCX component without a UCX network)
        // rather than a bug: the communicator returns its error code for this call
        // instead of aborting.
        let mut prev = std::mem::MaybeUninit::<ffi::MPI_Errhandler>::uninit();
        // SAFETY: `buf` is `bytes` bytes of T owned by the returned Window until MPI_Win_free
        // in drop; `comm` is a live intra-communicator; `win` receives the new handle; the
        // communicator's error handler is read, replaced for the one call, restored and
        // the reference obtained by get_errhandler released.
        let rc = unsafe {
            ffi::MPI_Comm_get_errhandler(comm.as_raw(), prev.as_mut_ptr());
            let mut prev = prev.assume_init();
            ffi::MPI_Comm_set_errhandler(comm.as_raw(), ffi::RSMPI_ERRORS_RETURN);
            let rc = ffi::MPI_Win_create(
                buf.as_mut_ptr().cast(),
                size,
                unit,
                info,
                comm.as_raw(),
                &mut win,
            );
            ffi::MPI_Comm_set_errhandler(comm.as_raw(), prev);
            ffi::MPI_Errhandler_free(&mut prev);
            rc
        };
        if rc != 0 {
            return err(
                Status::NotSupported,
                format!("MPI_Win_create failed (error {rc}): one-sided MPI is not available"),
            );
        }
        // SAFETY: `win` is the window just created.
        unsafe { ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as c_int, win) };
        Ok(Window { win, buf })
    }

    pub fn local(&self) -> &[T] {
        &self.buf
    }

    /// The exposed memory, for local writes between [`Self::sync_and_barrier`] calls.
    pub fn local_mut(&mut self) -> &mut [T] {
        &mut self.buf
    }

    /// Makes local writes visible to later remote gets: `MPI_Win_sync`, then a barrier on
    /// `comm` (the window's communicator) so no member reads before every member wrote.
    pub fn sync_and_barrier(&mut self, comm: &SimpleCommunicator) {
        // SAFETY: `win` is live and inside its lock_all epoch.
        unsafe { ffi::MPI_Win_sync(self.win) };
        mpi::collective::CommunicatorCollectives::barrier(comm);
        // SAFETY: as above; orders the barrier before this member's later reads.
        unsafe { ffi::MPI_Win_sync(self.win) };
    }

    /// Starts `MPI_Rget` of `len` elements at element offset `disp` of `target`'s window
    /// into the start of `dst`. The data is there only after [`Pending::wait`], which the
    /// borrow of `dst` enforces (dropping the `Pending` also completes the get). Each get
    /// completes by its own request: Open MPI's pt2pt one-sided component (the fallback
    /// where no RDMA one works) hangs in `MPI_Win_flush_local` to one target while a get to
    /// another is outstanding, which is exactly the prefetch pattern.
    pub fn get<'w, 'd>(
        &'w self,
        target: usize,
        disp: usize,
        dst: &'d mut [T],
        len: usize,
    ) -> Result<Pending<'w, 'd, T>> {
        if len > dst.len() {
            return err(Status::Internal, "RMA get larger than its buffer");
        }
        let n = check_count(len, "RMA get")?;
        let d = ffi::MPI_Aint::try_from(disp)
            .map_err(|_| crate::error::Error::new(Status::IndexOverflow, "RMA displacement"))?;
        let dt = T::equivalent_datatype();
        // SAFETY: reading an extern static handle constant.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: `dst` is writable for n elements and stays borrowed (not read, not moved)
        // until the request completes in `Pending::wait` or its drop; the target range lies
        // inside the target's window (the plan computes it from the same sizes as the
        // target's buffer); the window is inside its lock_all epoch.
        unsafe {
            ffi::MPI_Rget(
                dst.as_mut_ptr().cast(),
                n,
                dt.as_raw(),
                target as c_int,
                d,
                n,
                dt.as_raw(),
                self.win,
                &mut req,
            );
        }
        Ok(Pending {
            _win: self,
            req,
            len,
            dst: Some(dst),
        })
    }
}

impl<T: Equivalence + Copy> Drop for Window<T> {
    fn drop(&mut self) {
        if finalized() {
            return;
        }
        // SAFETY: `win` is live; unlock ends the epoch opened in `new`; MPI_Win_free is
        // collective (windows are dropped by every member together, like the plan owning
        // them) and happens before `buf` is freed (fields drop after this body).
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// An RMA get in flight; its destination is readable after [`Pending::wait`].
pub struct Pending<'w, 'd, T: Equivalence + Copy> {
    _win: &'w Window<T>,
    req: ffi::MPI_Request,
    len: usize,
    dst: Option<&'d mut [T]>,
}

impl<T: Equivalence + Copy> Pending<'_, '_, T> {
    fn complete(&mut self) {
        // SAFETY: `req` is the request of this get (or already null, which MPI_Wait
        // accepts); the window it accesses is alive (borrowed).
        unsafe { ffi::MPI_Wait(&mut self.req, ffi::RSMPI_STATUS_IGNORE) };
    }
}

impl<'d, T: Equivalence + Copy> Pending<'_, 'd, T> {
    /// Completes the get and hands back the whole destination buffer and the length of
    /// the data at its start.
    pub fn wait(mut self) -> (&'d mut [T], usize) {
        self.complete();
        let d = self
            .dst
            .take()
            .expect("a pending get holds its destination until waited on");
        (d, self.len)
    }
}

impl<T: Equivalence + Copy> Drop for Pending<'_, '_, T> {
    fn drop(&mut self) {
        if self.dst.is_some() {
            self.complete();
        }
    }
}

/// Plain element types stored in the `u64` words of a packed tile (offsets, column ids,
/// values): every bit pattern is a valid value and the alignment is at most 8.
pub trait Word: Copy + sealed::Sealed {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}
impl Word for i64 {}
impl Word for i32 {}
impl Word for f32 {}
impl Word for f64 {}

/// The first `n` elements of type T stored in `w`.
pub fn words_as<T: Word>(w: &[u64], n: usize) -> &[T] {
    assert!(n * std::mem::size_of::<T>() <= std::mem::size_of_val(w));
    // SAFETY: `w` is u64-aligned (at least T's alignment, `Word`), spans at least n T's
    // (asserted), and any bits are a valid T (`Word`); the borrow is shared like `w`.
    unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<T>(), n) }
}

/// The first `n` elements of type T stored in `w`, writable.
pub fn words_as_mut<T: Word>(w: &mut [u64], n: usize) -> &mut [T] {
    assert!(n * std::mem::size_of::<T>() <= std::mem::size_of_val(w));
    // SAFETY: as in `words_as`; the borrow is exclusive like `w`'s, and any T written is
    // some valid u64 bits.
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<T>(), n) }
}
