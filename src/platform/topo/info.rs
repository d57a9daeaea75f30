//! The topology report (`spgemm_topology_info`): what the library sees and what it chose,
//! as JSON. Written by hand: the structure is small and fixed, not worth a dependency.

use std::fmt::Write;

use super::Topo;
use super::chunk::ChunkSummary;
use super::desc::MachineDesc;
use super::placement::Placement;

/// What happened when a worker tried to carry out its binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindOutcome {
    /// The worker has not run its start hook yet.
    Pending,
    /// Not asked to bind (policy none).
    Unbound,
    /// Bound to its planned PUs.
    Bound,
    /// Binding was refused; the worker runs unbound. The message says why.
    Failed(String),
}

/// Where the binding policy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySource {
    Default,
    Option,
    Environment,
}

impl PolicySource {
    pub fn name(self) -> &'static str {
        match self {
            PolicySource::Default => "default",
            PolicySource::Option => "option",
            PolicySource::Environment => "environment",
        }
    }
}

/// Everything the report shows.
pub struct Report<'a> {
    pub topo: &'a Topo,
    /// The description the plan was made from (the caller's CPU mask applied).
    pub desc: &'a MachineDesc,
    pub placement: &'a Placement,
    pub outcomes: &'a [BindOutcome],
    pub policy_source: PolicySource,
    /// Messages about the environment variable or a binding fallback.
    pub messages: &'a [String],
    /// Where each worker's accumulator chunk is (as recorded at allocation).
    pub chunks: &'a [ChunkSummary],
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_opt_str(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => json_str(out, s),
        None => out.push_str("null"),
    }
}

fn json_opt_num(out: &mut String, v: Option<impl std::fmt::Display>) {
    match v {
        Some(v) => {
            let _ = write!(out, "{v}");
        }
        None => out.push_str("null"),
    }
}

fn json_list<T: std::fmt::Display>(out: &mut String, xs: &[T]) {
    out.push('[');
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

fn json_str_list(out: &mut String, xs: &[String]) {
    out.push('[');
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_str(out, x);
    }
    out.push(']');
}

impl Report<'_> {
    /// The JSON text (one line, no trailing newline).
    pub fn to_json(&self) -> String {
        let d = self.desc;
        let p = self.placement;
        let mut o = String::with_capacity(1024);
        o.push_str("{\"source\":");
        json_str(&mut o, &d.source);
        let _ = write!(o, ",\"this_system\":{}", self.topo.is_this_system());
        o.push_str(",\"load_error\":");
        json_opt_str(&mut o, self.topo.load_error.as_deref());
        let _ = write!(o, ",\"packages\":{},\"cores\":[", d.packages);
        for (i, c) in d.cores.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"index\":{i},\"logical\":{},\"package\":{},\"pus\":",
                c.logical, c.package
            );
            json_list(&mut o, &c.pus);
            o.push('}');
        }
        o.push_str("],\"numa_nodes\":[");
        let hbm_nodes: Vec<usize> = (0..d.cores.len()).filter_map(|c| d.hbm_node(c)).collect();
        for (i, n) in d.numa.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(
                o,
                "{{\"os_index\":{},\"capacity_bytes\":{},\"subtype\":",
                n.os_index, n.capacity
            );
            json_opt_str(&mut o, n.subtype.as_deref());
            o.push_str(",\"local_pus\":");
            json_list(&mut o, &n.local_pus);
            let _ = write!(
                o,
                ",\"hbm\":{},\"bandwidth_mib_s\":[",
                hbm_nodes.contains(&i)
            );
            for (j, b) in n.bandwidth.iter().enumerate() {
                if j > 0 {
                    o.push(',');
                }
                o.push_str("{\"from_pus\":");
                json_list(&mut o, &b.from_pus);
                let _ = write!(o, ",\"value\":{}}}", b.mib_s);
            }
            o.push_str("]}");
        }
        let _ = write!(
            o,
            "],\"hbm_present\":{},\"threads\":{},\"binding\":{{\"requested\":\"{}\",\"source\":\"{}\",\"policy\":\"{}\"}},\"hbm_mode\":\"{}\",\"workers\":[",
            d.hbm_present(),
            p.workers.len(),
            p.requested.name(),
            self.policy_source.name(),
            p.policy.name(),
            p.hbm_mode.name()
        );
        for (i, w) in p.workers.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(o, "{{\"worker\":{i},\"core\":");
            json_opt_num(&mut o, w.core);
            o.push_str(",\"pus\":");
            json_list(&mut o, &w.pus);
            o.push_str(",\"numa_node\":");
            json_opt_num(&mut o, w.numa_node);
            o.push_str(",\"memory_node\":");
            json_opt_num(&mut o, w.memory_node);
            let _ = write!(o, ",\"hbm\":{},\"binding\":", w.hbm);
            let (state, err) = match self.outcomes.get(i).unwrap_or(&BindOutcome::Pending) {
                BindOutcome::Pending => ("pending", None),
                BindOutcome::Unbound => ("unbound", None),
                BindOutcome::Bound => ("bound", None),
                BindOutcome::Failed(m) => ("failed", Some(m.as_str())),
            };
            json_str(&mut o, state);
            o.push_str(",\"error\":");
            json_opt_str(&mut o, err);
            o.push('}');
        }
        o.push_str("],\"chunks\":[");
        for (i, c) in self.chunks.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            let _ = write!(o, "{{\"worker\":{},\"planned_node\":", c.worker);
            json_opt_num(&mut o, c.planned_node);
            let _ = write!(
                o,
                ",\"planned_hbm\":{},\"state\":\"{}\",\"buffers\":{},\"bytes\":{},\"small_bytes\":{},\"bound_bytes\":{},\"hbm_bytes\":{},\"requested_nodes\":",
                c.planned_hbm,
                c.state,
                c.buffers,
                c.bytes,
                c.small_bytes,
                c.bound_bytes,
                c.hbm_bytes
            );
            json_list(&mut o, &c.requested_nodes);
            o.push_str(",\"verified_nodes\":");
            json_list(&mut o, &c.verified_nodes);
            let _ = write!(o, ",\"unverified_bytes\":{},\"notes\":", c.unverified_bytes);
            json_str_list(&mut o, &c.notes);
            o.push('}');
        }
        o.push_str("],\"notes\":");
        let mut notes = p.notes.clone();
        notes.extend(self.messages.iter().cloned());
        json_str_list(&mut o, &notes);
        o.push('}');
        o
    }
}
