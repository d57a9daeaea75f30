//! Cache sizes of this machine, for the selectors.

/// Cache sizes of this machine (bytes), read once from sysfs; typical values otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Caches {
    pub l1d: usize,
    pub l2: usize,
    pub l3: usize,
}

fn read_caches() -> Caches {
    let mut c = Caches {
        l1d: 32 << 10,
        l2: 1 << 20,
        l3: 16 << 20,
    };
    for idx in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{idx}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let size = size.trim();
        let bytes = match size.strip_suffix('K') {
            Some(n) => n.parse::<usize>().ok().map(|n| n << 10),
            None => match size.strip_suffix('M') {
                Some(n) => n.parse::<usize>().ok().map(|n| n << 20),
                None => size.parse().ok(),
            },
        };
        let Some(bytes) = bytes else { continue };
        match (level.trim(), kind.trim()) {
            ("1", "Data") => c.l1d = bytes,
            ("2", _) => c.l2 = bytes,
            ("3", _) => c.l3 = bytes,
            _ => {}
        }
    }
    c
}

pub fn caches() -> Caches {
    static C: std::sync::OnceLock<Caches> = std::sync::OnceLock::new();
    *C.get_or_init(read_caches)
}
