//! `spgemm-bench dist-model`: the distributed SpMM cost model at rank counts this machine
//! cannot run (docs/DISTRIBUTED.md, "Projections to 4096 ranks"); no MPI needed.
//!
//! ```text
//! spgemm-bench dist-model --a A.mtx|gen:NAME --ranks 64,256,1024,4096 [--k 1,8,64]
//!     --alpha S --beta S_PER_BYTE --rate CALL_S,R1,R8,R64 [--layout row|col]
//!     [--async-gets 1|0]
//! ```
//!
//! A is held whole; each rank's rows and X rows are the even split `dist-spmm` uses. The
//! network (seconds per message and per byte) and the local rate (a call's fixed seconds
//! and seconds per entry of A and column of X at k = 1, 8, 64) are stated: `dist-spmm`
//! prints the ones it measured (`alpha_s`, `beta_s_per_byte`, `async_gets`, `rate`);
//! `--async-gets` (default 1: an RDMA network, as the paper's) says whether one-sided gets
//! progress while their target computes. One JSON line per
//! rank count and k: the model's choice, then every candidate (algorithm, grid, predicted
//! seconds split into communication and local products, bytes received per rank on
//! average, the largest per-rank footprint).

use spgemm::{DistLocalRate, DistNetParams, DistPlanOptions, Layout, dist_spmm_project};

struct Cfg {
    a: String,
    ranks: Vec<usize>,
    ks: Vec<usize>,
    net: Option<DistNetParams>,
    rate: Option<DistLocalRate>,
    layout: Layout,
}

const USAGE: &str = "usage: spgemm-bench dist-model --a A.mtx|gen:NAME --ranks 64,256,1024,4096 \
[--k 1,8,64] --alpha S --beta S_PER_BYTE --rate CALL_S,R1,R8,R64 [--layout row|col] \
[--async-gets 1|0]";

fn parse(args: &[String]) -> Result<Cfg, String> {
    let mut c = Cfg {
        a: String::new(),
        ranks: Vec::new(),
        ks: vec![1, 8, 64],
        net: None,
        rate: None,
        layout: Layout::RowMajor,
    };
    let (mut alpha, mut beta, mut async_gets) = (None, None, true);
    let mut it = args.iter();
    while let Some(f) = it.next() {
        let v = it.next().ok_or(format!("{f} needs a value"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|e| format!("{f} {s}: {e}"))
        };
        let sec = |s: &str| match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(format!("{f} {s}: a non-negative number of seconds")),
        };
        match f.as_str() {
            "--a" => c.a = v.clone(),
            "--ranks" => c.ranks = v.split(',').map(num).collect::<Result<_, _>>()?,
            "--k" => c.ks = v.split(',').map(num).collect::<Result<_, _>>()?,
            "--alpha" => alpha = Some(sec(v)?),
            "--beta" => beta = Some(sec(v)?),
            "--async-gets" => {
                async_gets = match v.as_str() {
                    "1" => true,
                    "0" => false,
                    s => return Err(format!("--async-gets {s}: 1 or 0")),
                }
            }
            "--rate" => {
                let r: Vec<f64> = v.split(',').map(sec).collect::<Result<_, _>>()?;
                let [call_s, r1, r8, r64] = r[..] else {
                    return Err(format!("--rate {v}: four numbers CALL_S,R1,R8,R64"));
                };
                c.rate = Some(DistLocalRate {
                    call_s,
                    per_entry_col_s: [r1, r8, r64],
                });
            }
            "--layout" => {
                c.layout = match v.as_str() {
                    "row" => Layout::RowMajor,
                    "col" => Layout::ColMajor,
                    s => return Err(format!("--layout {s}: row or col")),
                }
            }
            _ => return Err(format!("unknown option {f}\n{USAGE}")),
        }
    }
    if let (Some(alpha_s), Some(beta_s_per_byte)) = (alpha, beta) {
        c.net = Some(DistNetParams {
            alpha_s,
            beta_s_per_byte,
            async_gets,
        });
    }
    if c.a.is_empty() || c.ranks.is_empty() || c.net.is_none() || c.rate.is_none() {
        return Err(USAGE.into());
    }
    if c.ranks.contains(&0) {
        return Err("--ranks: every count must be positive".into());
    }
    Ok(c)
}

fn run(c: &Cfg) -> Result<(), String> {
    let m = crate::load_all(std::slice::from_ref(&c.a))?
        .pop()
        .ok_or("no matrix")?;
    let a = crate::any(&m, &m.val);
    let (net, rate) = (c.net.expect("parsed"), c.rate.expect("parsed"));
    for &p in &c.ranks {
        for &k in &c.ks {
            let opts = DistPlanOptions::new(k, c.layout);
            let (cands, chosen) =
                dist_spmm_project(&a, p, &opts, net, &rate).map_err(|e| e.to_string())?;
            let list: Vec<String> = cands
                .iter()
                .map(|x| {
                    format!(
                        "{{\"algo\":\"{}\",\"grid\":[{},{}],\"time_s\":{:.4e},\"comm_s\":{:.4e},\
\"comp_s\":{:.4e},\"bytes_recv_mean\":{:.1},\"memory_max\":{}}}",
                        x.algorithm.name(),
                        x.grid.pr,
                        x.grid.pc,
                        x.time_s,
                        x.comm_s,
                        x.comp_s,
                        x.bytes_total / p as f64,
                        x.memory_max
                    )
                })
                .collect();
            let ch = &cands[chosen];
            println!(
                "{{\"mode\":\"dist-model\",\"A\":\"{}\",\"m\":{},\"n\":{},\"nnzA\":{},\"np\":{p},\"k\":{k},\
\"alpha_s\":{:.3e},\"beta_s_per_byte\":{:.3e},\"async_gets\":{},\"rate\":[{:.3e},{:.3e},{:.3e},{:.3e}],\
\"choice\":\"{}\",\"grid\":[{},{}],\"time_s\":{:.4e},\"gflops\":{:.3},\"candidates\":[{}]}}",
                crate::input_name(&c.a),
                m.nrows,
                m.ncols,
                m.nnz(),
                net.alpha_s,
                net.beta_s_per_byte,
                net.async_gets,
                rate.call_s,
                rate.per_entry_col_s[0],
                rate.per_entry_col_s[1],
                rate.per_entry_col_s[2],
                ch.algorithm.name(),
                ch.grid.pr,
                ch.grid.pc,
                ch.time_s,
                2.0 * m.nnz() as f64 * k as f64 / ch.time_s / 1e9,
                list.join(",")
            );
        }
    }
    Ok(())
}

pub fn main(args: &[String]) -> i32 {
    match parse(args).and_then(|c| run(&c)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("spgemm-bench dist-model: {e}");
            2
        }
    }
}
