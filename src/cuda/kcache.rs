//! Compiled kernels kept on disk across processes, so a new process skips NVRTC (tens to
//! hundreds of milliseconds per module). An entry is found by a hash of its key and holds
//! the whole key (library version, NVRTC version, options, architecture, source with its
//! value type) and a checksum of the code: a corrupt, truncated or foreign entry is
//! detected, rebuilt and rewritten. The cache never fails a call: any I/O problem only
//! costs a compilation.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::error::Result;

const MAGIC: &[u8; 8] = b"SPGKC001";

/// Where the cache lives when nothing was set: `SPGEMM_KERNEL_CACHE` (empty or `off`
/// disables it), else `$XDG_CACHE_HOME/libspgemm`, else `$HOME/.cache/libspgemm`.
static DIR_SETTING: Mutex<Option<Setting>> = Mutex::new(None);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Setting {
    Off,
    Dir(PathBuf),
}

/// Sets the process-wide cache directory (`None`: no disk cache); overrides the environment.
pub fn set_dir(dir: Option<PathBuf>) {
    *DIR_SETTING.lock() = Some(match dir {
        Some(d) => Setting::Dir(d),
        None => Setting::Off,
    });
}

/// The directory in use, if any.
pub fn dir() -> Option<PathBuf> {
    if let Some(s) = DIR_SETTING.lock().clone() {
        return match s {
            Setting::Off => None,
            Setting::Dir(d) => Some(d),
        };
    }
    dir_from_env(
        std::env::var_os("SPGEMM_KERNEL_CACHE"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

fn dir_from_env(
    explicit: Option<std::ffi::OsString>,
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(e) = explicit {
        if e.is_empty() || e == "off" || e == "0" {
            return None;
        }
        return Some(PathBuf::from(e));
    }
    if let Some(x) = xdg.filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("libspgemm"));
    }
    home.filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("libspgemm"))
}

/// What happened to one lookup (counted for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read from disk.
    Hit,
    /// Compiled; no entry existed (or no cache directory).
    Built,
    /// Compiled because the entry was corrupt, truncated or for another key.
    Rebuilt,
}

static HITS: AtomicU64 = AtomicU64::new(0);
static BUILDS: AtomicU64 = AtomicU64::new(0);
static REBUILDS: AtomicU64 = AtomicU64::new(0);

/// (hits, builds, rebuilds) in this process.
#[cfg(test)]
pub fn counts() -> (u64, u64, u64) {
    (
        HITS.load(Ordering::Relaxed),
        BUILDS.load(Ordering::Relaxed),
        REBUILDS.load(Ordering::Relaxed),
    )
}

/// 64-bit FNV-1a: names the entry and checks its code (not a security boundary: the
/// directory is the user's own).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The file of `key` in `dir`.
pub fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("kernels-{:016x}.bin", fnv1a(key.as_bytes())))
}

fn encode(key: &str, code: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 + key.len() + 16 + code.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(code.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(code).to_le_bytes());
    out.extend_from_slice(code);
    out
}

/// The code of an entry if it is whole and was written for `key`.
fn decode(bytes: &[u8], key: &str) -> Option<Vec<u8>> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (klen, rest) = take_u64(rest)?;
    let klen = usize::try_from(klen).ok()?;
    if rest.len() < klen || &rest[..klen] != key.as_bytes() {
        return None;
    }
    let rest = &rest[klen..];
    let (clen, rest) = take_u64(rest)?;
    let (sum, code) = take_u64(rest)?;
    if code.len() as u64 != clen || fnv1a(code) != sum {
        return None;
    }
    Some(code.to_vec())
}

fn take_u64(b: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = b.split_at_checked(8)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), rest))
}

/// Writes through a temporary file and a rename, so a reader in another process sees a
/// whole entry or none.
fn store(path: &Path, key: &str, code: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = path.with_extension(format!("tmp.{}.{nanos}", std::process::id()));
    let mut f = fs::File::create(&tmp)?;
    let r = f.write_all(&encode(key, code)).and_then(|_| f.sync_all());
    drop(f);
    match r.and_then(|_| fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The code for `key`: from `dir` when a valid entry is there, else from `build` (then
/// stored). `build` errors are returned; cache errors are not.
pub fn load_or_build(
    dir: Option<&Path>,
    key: &str,
    build: impl FnOnce() -> Result<Vec<u8>>,
) -> Result<(Vec<u8>, Origin)> {
    let Some(dir) = dir else {
        BUILDS.fetch_add(1, Ordering::Relaxed);
        return Ok((build()?, Origin::Built));
    };
    let path = entry_path(dir, key);
    let origin = match fs::read(&path) {
        Ok(bytes) => match decode(&bytes, key) {
            Some(code) => {
                HITS.fetch_add(1, Ordering::Relaxed);
                return Ok((code, Origin::Hit));
            }
            None => Origin::Rebuilt,
        },
        Err(_) => Origin::Built,
    };
    let code = build()?;
    let _ = store(&path, key, &code);
    match origin {
        Origin::Rebuilt => REBUILDS.fetch_add(1, Ordering::Relaxed),
        _ => BUILDS.fetch_add(1, Ordering::Relaxed),
    };
    Ok((code, origin))
}

/// Forgets the entry of `key` (its code did not load: written for another device or
/// driver); the caller builds again.
pub fn discard(dir: Option<&Path>, key: &str) {
    if let Some(d) = dir {
        let _ = fs::remove_file(entry_path(d, key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, Status};

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("spgemm-kcache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn hit_after_build_and_rebuild_after_damage() {
        let d = tmpdir("damage");
        let key = "v1 | sm_90 | #define VALUE_T double\n...";
        let calls = std::cell::Cell::new(0);
        let build = || {
            calls.set(calls.get() + 1);
            Ok(vec![1u8, 2, 3, 4, 5])
        };
        let (c, o) = load_or_build(Some(&d), key, build).unwrap();
        assert_eq!((c.as_slice(), o), (&[1u8, 2, 3, 4, 5][..], Origin::Built));
        let (c, o) = load_or_build(Some(&d), key, build).unwrap();
        assert_eq!((c.as_slice(), o), (&[1u8, 2, 3, 4, 5][..], Origin::Hit));
        assert_eq!(calls.get(), 1);
        let p = entry_path(&d, key);
        // Every single flipped byte and every truncation is detected.
        let good = fs::read(&p).unwrap();
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(&bad, key), None, "flip at {i}");
            assert_eq!(decode(&good[..i], key), None, "cut at {i}");
        }
        let mut bad = good.clone();
        *bad.last_mut().unwrap() ^= 1;
        fs::write(&p, &bad).unwrap();
        let (c, o) = load_or_build(Some(&d), key, build).unwrap();
        assert_eq!((c.len(), o), (5, Origin::Rebuilt));
        assert_eq!(calls.get(), 2);
        // Rewritten whole.
        assert_eq!(fs::read(&p).unwrap(), good);
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn foreign_entry_under_the_same_name_is_rebuilt() {
        let d = tmpdir("foreign");
        let key = "key A";
        fs::create_dir_all(&d).unwrap();
        // An entry written for another key (a hash collision, or a copied file).
        fs::write(entry_path(&d, key), encode("key B", &[9, 9])).unwrap();
        let (c, o) = load_or_build(Some(&d), key, || Ok(vec![7])).unwrap();
        assert_eq!((c, o), (vec![7], Origin::Rebuilt));
        let (c, o) = load_or_build(Some(&d), key, || Ok(vec![8])).unwrap();
        assert_eq!((c, o), (vec![7], Origin::Hit));
        discard(Some(&d), key);
        let (_, o) = load_or_build(Some(&d), key, || Ok(vec![8])).unwrap();
        assert_eq!(o, Origin::Built);
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn unusable_directory_or_failed_build() {
        // A file where the directory should be: every call compiles, none fails.
        let f = tmpdir("notadir");
        fs::write(&f, b"x").unwrap();
        for _ in 0..2 {
            let (c, o) = load_or_build(Some(&f.join("sub")), "k", || Ok(vec![1])).unwrap();
            assert_eq!((c, o), (vec![1], Origin::Built));
        }
        let _ = fs::remove_file(&f);
        let e =
            load_or_build(None, "k", || Err(Error::new(Status::Internal, "nvrtc"))).unwrap_err();
        assert_eq!(e.status, Status::Internal);
    }

    #[test]
    fn directory_from_the_environment() {
        let s = |x: &str| Some(std::ffi::OsString::from(x));
        assert_eq!(dir_from_env(s("off"), s("/x"), s("/h")), None);
        assert_eq!(dir_from_env(s(""), None, s("/h")), None);
        assert_eq!(dir_from_env(s("/c"), s("/x"), s("/h")), Some("/c".into()));
        assert_eq!(
            dir_from_env(None, s("/x"), s("/h")),
            Some("/x/libspgemm".into())
        );
        assert_eq!(
            dir_from_env(None, None, s("/h")),
            Some("/h/.cache/libspgemm".into())
        );
        assert_eq!(dir_from_env(None, None, None), None);
    }
}
