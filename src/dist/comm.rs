//! The backend's communicator: a duplicate of the caller's, with the network parameters
//! and local SpMM rates measured on it once and cached. Also the status agreement every
//! collective entry point uses.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::model::{LocalRate, NetParams};
use super::node::{DistScalar, Layout, NodeSpmm};
use super::options::Fint;
use super::raw::{self, OwnedComm};
use crate::common::csr::CsrRef;
use crate::error::{Error, Result, Status};

/// A communicator for distributed products. Made from the caller's communicator, which is
/// duplicated (the caller's is never freed and its traffic never mixes with ours); MPI must
/// be initialised by the caller and is never initialised or finalised here. Creation and
/// drop are collective over the communicator, as for any MPI communicator.
pub struct DistComm {
    pub(crate) comm: OwnedComm,
    rank: usize,
    size: usize,
    net: Cell<Option<NetParams>>,
    rma: Cell<Option<bool>>,
    rates: RefCell<Vec<(&'static str, usize, LocalRate)>>,
}

impl DistComm {
    /// From a Fortran handle (`MPI_Fint`); a C caller passes `MPI_Comm_c2f(comm)`. Every
    /// rank must pass a valid handle of the same communicator: an invalid handle is
    /// reported on its rank, but the ranks whose handle was valid then wait in the
    /// duplication (no communicator exists to agree on).
    pub fn from_fortran(handle: Fint) -> Result<DistComm> {
        Ok(Self::wrap(raw::dup_from_fint(handle)?))
    }

    /// From an rsmpi communicator (Rust callers).
    pub fn from_communicator(c: &SimpleCommunicator) -> Result<DistComm> {
        Ok(Self::wrap(raw::dup_of(c)?))
    }

    fn wrap(comm: OwnedComm) -> DistComm {
        let rank = comm.comm().rank() as usize;
        let size = comm.comm().size() as usize;
        DistComm {
            comm,
            rank,
            size,
            net: Cell::new(None),
            rma: Cell::new(None),
            rates: RefCell::new(Vec::new()),
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub(crate) fn raw(&self) -> &SimpleCommunicator {
        self.comm.comm()
    }

    /// The same outcome on every rank (see [`agree`]): a caller's local checks made
    /// before a collective call, so that one rank's bad argument fails every rank alike
    /// instead of leaving the others waiting. Collective.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        raw::mpi_usable()?;
        agree(self.raw(), r)
    }

    /// Sets the network parameters instead of measuring them (same values on every rank).
    pub fn set_net_params(&self, p: NetParams) {
        self.net.set(Some(p));
    }

    /// Alpha and beta of this communicator, measured on the first call (collective then):
    /// a ping-pong between ranks 0 and 1 of 8 bytes (20 round trips) and of 256 KiB (4),
    /// a few milliseconds; the other ranks wait in the broadcast of the result. Then
    /// whether one-sided gets progress while their target computes ([`probe_async_gets`]).
    pub fn net_params(&self) -> Result<NetParams> {
        raw::mpi_usable()?;
        if let Some(p) = self.net.get() {
            return Ok(p);
        }
        let p = measure_net(self.raw());
        self.net.set(Some(p));
        Ok(p)
    }

    /// Whether one-sided MPI works here (the one-sided algorithms need it): a window is
    /// created and freed once, on the first call (collective), and every rank must
    /// succeed.
    pub fn rma_available(&self) -> Result<bool> {
        raw::mpi_usable()?;
        if let Some(b) = self.rma.get() {
            return Ok(b);
        }
        let ok = window_on_all(self.raw(), vec![0u64; 1]).is_some();
        self.rma.set(Some(ok));
        Ok(ok)
    }

    /// Sets the local rate used for `node`'s type and values of `value_bytes` bytes.
    pub fn set_local_rate<N: NodeSpmm>(&self, value_bytes: usize, r: LocalRate) {
        let key = std::any::type_name::<N>();
        let mut rates = self.rates.borrow_mut();
        rates.retain(|e| !(e.0 == key && e.1 == value_bytes));
        rates.push((key, value_bytes, r));
    }

    /// The node's local SpMM rate: its hint, or measured once per node type and value type
    /// on a synthetic tile (2048 rows, 16 entries each, k = 1, 8, 64; milliseconds) and
    /// agreed as the slowest rank's. Collective.
    pub fn local_rate<N: NodeSpmm, V: DistScalar>(&self, node: &N) -> Result<LocalRate> {
        let w = std::mem::size_of::<V>();
        if let Some(r) = node.rate_hint(w) {
            return Ok(r);
        }
        let key = std::any::type_name::<N>();
        if let Some(e) = self.rates.borrow().iter().find(|e| e.0 == key && e.1 == w) {
            return Ok(e.2);
        }
        raw::mpi_usable()?;
        let local = measure_rate::<N, V>(node);
        let mine = match &local {
            Ok(r) => [
                r.call_s,
                r.per_entry_col_s[0],
                r.per_entry_col_s[1],
                r.per_entry_col_s[2],
            ],
            Err(_) => [0.0; 4],
        };
        agree(self.raw(), local.map(|_| ()))?;
        let mut all = [0.0f64; 4];
        self.raw()
            .all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
        let r = LocalRate {
            call_s: all[0],
            per_entry_col_s: [all[1], all[2], all[3]],
        };
        self.rates.borrow_mut().push((key, w, r));
        Ok(r)
    }
}

fn measure_net(c: &SimpleCommunicator) -> NetParams {
    let p = c.size();
    let me = c.rank();
    let mut out = [0.0f64; 2];
    if p > 1 && me < 2 {
        let peer = c.process_at_rank(1 - me);
        let mut small = [0u8; 8];
        let mut big = vec![0u8; 256 << 10];
        let round = |buf: &mut [u8], n: usize| -> f64 {
            let t = Instant::now();
            for _ in 0..n {
                if me == 0 {
                    peer.send(&buf[..]);
                    peer.receive_into(&mut buf[..]);
                } else {
                    peer.receive_into(&mut buf[..]);
                    peer.send(&buf[..]);
                }
            }
            t.elapsed().as_secs_f64() / n as f64
        };
        round(&mut small, 2);
        let ts = round(&mut small, 20);
        round(&mut big, 1);
        let tb = round(&mut big, 4);
        let alpha = ts / 2.0;
        let beta = ((tb - ts) / 2.0 / (big.len() - small.len()) as f64).max(0.0);
        out = [alpha, beta];
    }
    if p > 1 {
        c.process_at_rank(0).broadcast_into(&mut out[..]);
    }
    NetParams {
        alpha_s: out[0],
        beta_s_per_byte: out[1],
        async_gets: probe_async_gets(c),
    }
}

/// A window over `buf` on every rank, or None on every rank when one failed to make it
/// (one-sided MPI unavailable). Collective.
fn window_on_all(c: &SimpleCommunicator, buf: Vec<u64>) -> Option<raw::Window<u64>> {
    let win = raw::Window::new(c, buf);
    let mut all = 0i32;
    c.all_reduce_into(&(win.is_ok() as i32), &mut all, SystemOperation::min());
    win.ok().filter(|_| all == 1)
}

/// How long the target computes (no MPI call) while the probe's get is in flight.
const PROBE_BUSY_S: f64 = 3e-3;

/// Whether a one-sided get from rank 1 completes while rank 1 computes without calling
/// MPI (an RDMA network or a progress thread), instead of waiting for its next MPI call
/// (Open MPI's pt2pt one-sided component on shared memory, this VM's): rank 1 spins for
/// [`PROBE_BUSY_S`] while rank 0, a tenth of that later, gets 128 KiB from it; the better
/// of two rounds must finish within a third of the spin. Collective; false where windows
/// do not work or with one rank (nothing to overlap).
fn probe_async_gets(c: &SimpleCommunicator) -> bool {
    let (p, me) = (c.size(), c.rank());
    if p < 2 {
        return false;
    }
    const WORDS: usize = 16 << 10;
    let Some(win) = window_on_all(c, vec![0u64; WORDS]) else {
        return false;
    };
    let spin = |s: f64| {
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < s {
            std::hint::spin_loop();
        }
    };
    let mut dst = vec![0u64; if me == 0 { WORDS } else { 0 }];
    let mut best = f64::INFINITY;
    for _ in 0..2 {
        c.barrier();
        match me {
            0 => {
                spin(PROBE_BUSY_S / 10.0);
                let t = Instant::now();
                let done = win.get(1, 0, &mut dst, WORDS).map(|g| g.wait().1);
                if done.is_ok() {
                    best = best.min(t.elapsed().as_secs_f64());
                }
            }
            1 => spin(PROBE_BUSY_S),
            _ => {}
        }
        c.barrier();
    }
    let mut verdict = (best < PROBE_BUSY_S / 3.0) as i32;
    c.process_at_rank(0).broadcast_into(&mut verdict);
    verdict == 1
}

fn measure_rate<N: NodeSpmm, V: DistScalar>(node: &N) -> Result<LocalRate> {
    const N_ROWS: usize = 2048;
    const PER_ROW: usize = 16;
    const KMAX: usize = 64;
    let offs: Vec<i64> = (0..=N_ROWS).map(|r| (r * PER_ROW) as i64).collect();
    let cols: Vec<i32> = (0..N_ROWS * PER_ROW)
        .map(|e| ((e * 7919 + (e / PER_ROW) * 104_729) % N_ROWS) as i32)
        .collect();
    let vals = vec![V::ONE; cols.len()];
    let a = CsrRef::new(N_ROWS, N_ROWS, 0, &offs, &cols, Some(&vals))?;
    // On the heap: 1 MiB each at f64.
    let x: Vec<V> = std::iter::repeat_n(V::ONE, N_ROWS * KMAX).collect();
    let mut y: Vec<V> = std::iter::repeat_n(V::ZERO, N_ROWS * KMAX).collect();
    let mut best = |a: CsrRef<'_, i64, i32, V>, k: usize, reps: usize| -> Result<f64> {
        let mut t_min = f64::INFINITY;
        for _ in 0..reps {
            let t = Instant::now();
            node.spmm(
                a,
                Layout::RowMajor,
                k,
                &x[..a.ncols() * k],
                k,
                V::ONE,
                V::ZERO,
                &mut y[..a.nrows() * k],
                k,
            )?;
            t_min = t_min.min(t.elapsed().as_secs_f64());
        }
        Ok(t_min)
    };
    let one_offs = [0i64, 1];
    let one = CsrRef::new(1, 1, 0, &one_offs, &cols[..1], Some(&vals[..1]))?;
    let call_s = best(one, 1, 20)?;
    let mut per = [0.0; 3];
    for (slot, k) in [1usize, 8, 64].into_iter().enumerate() {
        let t = best(a, k, 3)?;
        per[slot] = ((t - call_s) / (a.nnz() * k) as f64).max(1e-13);
    }
    Ok(LocalRate {
        call_s,
        per_entry_col_s: per,
    })
}

/// Makes every rank return the same outcome: `Ok` everywhere if `r` is `Ok` on every rank,
/// else the error of the lowest failing rank (status and message, prefixed with its rank)
/// on every rank. One allreduce of one integer when all is well; a broadcast of the
/// message otherwise. Call it before any collective whose arguments depend on `r`.
pub(crate) fn agree<T>(c: &SimpleCommunicator, r: Result<T>) -> Result<T> {
    let mut extra = [];
    agree_max(c, r, &mut extra)
}

/// [`agree`], also replacing each entry of `extra` by its maximum over the ranks (in the
/// same allreduce).
pub(crate) fn agree_max<T>(c: &SimpleCommunicator, r: Result<T>, extra: &mut [i64]) -> Result<T> {
    let p = c.size() as i64;
    let me = c.rank() as i64;
    let code = match &r {
        Ok(_) => 0,
        Err(e) => ((p - me) << 8) | e.status as i64,
    };
    let mut send = Vec::with_capacity(1 + extra.len());
    send.push(code);
    send.extend_from_slice(extra);
    let mut recv = vec![0i64; send.len()];
    c.all_reduce_into(&send[..], &mut recv[..], SystemOperation::max());
    extra.copy_from_slice(&recv[1..]);
    if recv[0] == 0 {
        return r;
    }
    let root = p - (recv[0] >> 8);
    let status = Status::from_code((recv[0] & 0xff) as i32).unwrap_or(Status::Internal);
    let mut msg: Vec<u8> = match (&r, me == root) {
        (Err(e), true) => e.message.clone().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = msg.len() as u64;
    let rootp = c.process_at_rank(root as i32);
    rootp.broadcast_into(&mut len);
    msg.resize(len as usize, 0);
    rootp.broadcast_into(&mut msg[..]);
    Err(Error::new(
        status,
        format!("rank {root}: {}", String::from_utf8_lossy(&msg)),
    ))
}
