//! Parse-level comparison of the Fortran module include/spgemm.f90 with the C header
//! include/spgemm.h: every C function must have a bind(C) interface with the same name,
//! dummy arguments in the same order with the types, passing (value or reference) and
//! intent that the C prototype implies, and the same result type; every `SPGEMM_*`
//! constant must be a named constant with the same value. Written independently of the
//! generator (scripts/gen_fortran.py), so a generator bug or a hand edit shows up here.
//! Regenerate the module with `python3 scripts/gen_fortran.py`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// How one argument or result crosses the interface.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arg {
    name: String,
    /// Fortran type spelling, e.g. "integer(c_int64_t)" or "type(c_ptr)".
    ftype: String,
    by_value: bool,
    /// "in", "out", "inout" or "" (none).
    intent: String,
}

#[derive(Debug, Default)]
struct Api {
    functions: BTreeMap<String, (Option<String>, Vec<Arg>)>,
    constants: BTreeMap<String, i64>,
}

// ---------------------------------------------------------------- C side

fn strip_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits "const spgemm_matrix_t **name" into (const, base type, pointer depth, name).
fn c_decl(decl: &str) -> (bool, String, usize, String) {
    let depth = decl.matches('*').count();
    let words: Vec<&str> = decl
        .split(|c: char| c.is_whitespace() || c == '*')
        .filter(|w| !w.is_empty())
        .collect();
    let is_const = words.contains(&"const");
    let words: Vec<&str> = words.into_iter().filter(|w| *w != "const").collect();
    assert!(words.len() >= 2, "cannot read C declaration {decl:?}");
    (
        is_const,
        words[words.len() - 2].to_string(),
        depth,
        words[words.len() - 1].to_string(),
    )
}

fn c_scalar(t: &str) -> Option<&'static str> {
    Some(match t {
        "int32_t" => "integer(c_int32_t)",
        "int64_t" => "integer(c_int64_t)",
        "size_t" => "integer(c_size_t)",
        "int" => "integer(c_int)",
        "double" => "real(c_double)",
        "float" => "real(c_float)",
        _ => return None,
    })
}

fn parse_c(header: &str) -> Result<Api, String> {
    let mut api = Api::default();
    let mut typedefs: HashMap<String, String> = HashMap::new();
    let mut opaque: HashSet<String> = HashSet::new();
    for line in header.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() == 3 && w[0] == "#define" && w[1].starts_with("SPGEMM_") {
            let v = w[2]
                .parse::<i64>()
                .map_err(|_| format!("constant {} = {}", w[1], w[2]))?;
            api.constants.insert(w[1].to_string(), v);
        }
    }
    let body: String = strip_c_comments(header)
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ")
        .replace("extern \"C\" {", " ")
        .replace('}', " ");
    for stmt in body.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let stmt = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(t) = stmt.strip_prefix("typedef struct ") {
            opaque.insert(t.split(' ').nth(1).unwrap_or_default().to_string());
            continue;
        }
        if let Some(t) = stmt.strip_prefix("typedef ") {
            let w: Vec<&str> = t.split(' ').collect();
            typedefs.insert(w[1].to_string(), w[0].to_string());
            continue;
        }
        let open = stmt
            .find('(')
            .ok_or_else(|| format!("not a prototype: {stmt}"))?;
        let close = stmt
            .rfind(')')
            .ok_or_else(|| format!("not a prototype: {stmt}"))?;
        let (_, rbase, rdepth, fname) = c_decl(&stmt[..open]);
        let resolve = |t: &str| typedefs.get(t).cloned().unwrap_or_else(|| t.to_string());
        let result = match (rbase.as_str(), rdepth) {
            ("void", 0) => None,
            ("char", 1) | ("void", 1) => Some("type(c_ptr)".to_string()),
            (t, 0) => Some(
                c_scalar(&resolve(t))
                    .ok_or(format!("{fname}: result {t}"))?
                    .to_string(),
            ),
            _ => return Err(format!("{fname}: unsupported result type")),
        };
        let mut args = Vec::new();
        let plist = stmt[open + 1..close].trim();
        if !plist.is_empty() && plist != "void" {
            for p in plist.split(',') {
                let (is_const, base, depth, name) = c_decl(p);
                let ptr_like = base == "void" || opaque.contains(&base);
                let scalar = c_scalar(&resolve(&base));
                let (ftype, by_value, intent) = match (ptr_like, scalar, depth) {
                    (true, _, 1) => ("type(c_ptr)", true, ""),
                    (true, _, 2) => ("type(c_ptr)", false, "out"),
                    (false, Some(s), 0) => (s, true, ""),
                    (false, Some(s), 1) => (s, false, if is_const { "in" } else { "out" }),
                    // A NUL-terminated string: a character array by reference.
                    (false, None, 1) if base == "char" && is_const => {
                        ("character(kind=c_char)", false, "in")
                    }
                    _ => return Err(format!("{fname}({name}): no Fortran counterpart for {p:?}")),
                };
                args.push(Arg {
                    name,
                    ftype: ftype.to_string(),
                    by_value,
                    intent: intent.to_string(),
                });
            }
        }
        api.functions.insert(fname, (result, args));
    }
    Ok(api)
}

// ---------------------------------------------------------------- Fortran side

/// Free-form source as logical lines: comments removed, '&' continuations joined, lower case.
fn fortran_lines(src: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for raw in src.lines() {
        let line = match raw.find('!') {
            Some(i) if !raw[..i].contains('"') && !raw[..i].contains('\'') => &raw[..i],
            _ => raw,
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix('&').unwrap_or(line);
        if let Some(l) = line.strip_suffix('&') {
            pending.push_str(l);
            pending.push(' ');
        } else {
            pending.push_str(line);
            out.push(
                pending
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase(),
            );
            pending.clear();
        }
    }
    out
}

fn parse_fortran(src: &str) -> Result<(Api, HashSet<String>), String> {
    let mut api = Api::default();
    let mut public = HashSet::new();
    let lines = fortran_lines(src);
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if let Some(p) = l.strip_prefix("public ::") {
            public.extend(p.split(',').map(|s| s.trim().to_string()));
        }
        if l.starts_with("integer(") && l.contains(", parameter ::") {
            let (_, rest) = l.split_once("::").unwrap();
            let (name, value) = rest.split_once('=').ok_or(format!("constant: {l}"))?;
            let value = value.trim().split('_').next().unwrap_or_default();
            let v = value
                .parse::<i64>()
                .map_err(|_| format!("constant value: {l}"))?;
            api.constants.insert(name.trim().to_uppercase(), v);
        }
        if (l.starts_with("function ") || l.starts_with("subroutine ")) && l.contains("bind(c") {
            let open = l.find('(').unwrap();
            let close = l[open..].find(')').unwrap() + open;
            let dummies: Vec<String> = l[open + 1..close]
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let bind = l
                .split("name=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .ok_or(format!("bind name: {l}"))?;
            let result_name = l
                .split("result(")
                .nth(1)
                .map(|s| s.trim_end_matches(')').trim().to_string());
            let mut decls: HashMap<String, Arg> = HashMap::new();
            i += 1;
            while i < lines.len()
                && !lines[i].starts_with("end function")
                && !lines[i].starts_with("end subroutine")
            {
                let d = &lines[i];
                if let Some((spec, names)) = d.split_once("::")
                    && !spec.trim().starts_with("import")
                {
                    let parts: Vec<&str> = split_top(spec);
                    let ftype = parts[0].replace(' ', "");
                    let by_value = parts.contains(&"value");
                    let intent = parts
                        .iter()
                        .find_map(|a| {
                            a.strip_prefix("intent(")
                                .map(|s| s.trim_end_matches(')').replace(' ', ""))
                        })
                        .unwrap_or_default();
                    for n in names.split(',') {
                        let n = n.trim().to_string();
                        decls.insert(
                            n.clone(),
                            Arg {
                                name: n,
                                ftype: ftype.clone(),
                                by_value,
                                intent: intent.clone(),
                            },
                        );
                    }
                }
                i += 1;
            }
            let mut args = Vec::new();
            for d in &dummies {
                args.push(
                    decls
                        .get(d)
                        .cloned()
                        .ok_or(format!("{bind}: dummy {d} is not declared"))?,
                );
            }
            let result = match result_name {
                Some(r) => Some(
                    decls
                        .get(&r)
                        .ok_or(format!("{bind}: result {r} is not declared"))?
                        .ftype
                        .clone(),
                ),
                None if l.starts_with("function ") => {
                    return Err(format!("{bind}: function without result(...)"));
                }
                None => None,
            };
            if api
                .functions
                .insert(bind.to_string(), (result, args))
                .is_some()
            {
                return Err(format!("{bind}: two interfaces"));
            }
        }
        i += 1;
    }
    Ok((api, public))
}

/// Splits "integer(c_int32_t), intent(out)" at top-level commas.
fn split_top(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(spec[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(spec[start..].trim());
    parts
}

// ---------------------------------------------------------------- comparison

/// Every disagreement between the header and the module, one line each.
fn compare(header: &str, module: &str) -> Vec<String> {
    let c = match parse_c(header) {
        Ok(c) => c,
        Err(e) => return vec![format!("header: {e}")],
    };
    let (f, public) = match parse_fortran(module) {
        Ok(f) => f,
        Err(e) => return vec![format!("module: {e}")],
    };
    let mut errors = Vec::new();
    for (name, (cres, cargs)) in &c.functions {
        let Some((fres, fargs)) = f.functions.get(name) else {
            errors.push(format!("{name}: no Fortran interface"));
            continue;
        };
        if !public.contains(name) {
            errors.push(format!("{name}: interface is not public"));
        }
        if cres != fres {
            errors.push(format!("{name}: result {cres:?} in C, {fres:?} in Fortran"));
        }
        if cargs.len() != fargs.len() {
            errors.push(format!(
                "{name}: {} arguments in C, {} in Fortran",
                cargs.len(),
                fargs.len()
            ));
            continue;
        }
        for (k, (ca, fa)) in cargs.iter().zip(fargs).enumerate() {
            let ca = Arg {
                name: ca.name.to_lowercase(),
                ..ca.clone()
            };
            if ca != *fa {
                errors.push(format!(
                    "{name}: argument {}: C implies {ca:?}, Fortran has {fa:?}",
                    k + 1
                ));
            }
        }
    }
    for name in f.functions.keys() {
        if !c.functions.contains_key(name) {
            errors.push(format!("{name}: Fortran interface without a C function"));
        }
    }
    for (name, v) in &c.constants {
        match f.constants.get(name) {
            Some(fv) if fv == v => {}
            Some(fv) => errors.push(format!("{name} = {v} in C, {fv} in Fortran")),
            None => errors.push(format!("{name}: no Fortran constant")),
        }
        if !public.contains(&name.to_lowercase()) {
            errors.push(format!("{name}: constant is not public"));
        }
    }
    for name in f.constants.keys() {
        if !c.constants.contains_key(name) {
            errors.push(format!("{name}: Fortran constant without a C macro"));
        }
    }
    errors
}

fn sources() -> (String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/spgemm.h")).expect("include/spgemm.h");
    let module =
        std::fs::read_to_string(root.join("include/spgemm.f90")).expect("include/spgemm.f90");
    (header, module)
}

#[test]
fn module_matches_header() {
    let (header, module) = sources();
    let c = parse_c(&header).expect("header parses");
    assert!(
        c.functions.len() >= 20,
        "only {} C functions found",
        c.functions.len()
    );
    assert!(
        c.functions.contains_key("spgemm_numeric")
            && c.constants.contains_key("SPGEMM_INDEX_INT64")
    );
    let errors = compare(&header, &module);
    assert!(
        errors.is_empty(),
        "include/spgemm.f90 disagrees with include/spgemm.h (run python3 scripts/gen_fortran.py):\n{}",
        errors.join("\n")
    );
}

// The comparison must be able to fail: mutate one side and expect the exact complaint.

#[test]
fn detects_a_c_function_without_interface() {
    let (header, module) = sources();
    let header = header.replace(
        "#ifdef __cplusplus\n}",
        "spgemm_status_t spgemm_made_up(spgemm_handle_t *handle, const void *x, void *y);\n\n#ifdef __cplusplus\n}",
    );
    let errors = compare(&header, &module);
    assert_eq!(
        errors,
        vec!["spgemm_made_up: no Fortran interface".to_string()]
    );
}

#[test]
fn detects_an_argument_of_the_wrong_kind() {
    let (header, module) = sources();
    let module = module.replacen(
        "integer(c_int64_t), value :: nrows",
        "integer(c_int32_t), value :: nrows",
        1,
    );
    let errors = compare(&header, &module);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("spgemm_matrix_create_csr: argument 2"),
        "{errors:?}"
    );
}

#[test]
fn detects_reference_instead_of_value_and_wrong_intent() {
    let (header, module) = sources();
    let m1 = module.replacen(
        "type(c_ptr), value :: row_offsets",
        "type(c_ptr) :: row_offsets",
        1,
    );
    assert_eq!(compare(&header, &m1).len(), 1);
    let m2 = module.replacen(
        "integer(c_int64_t), intent(out) :: nnz",
        "integer(c_int64_t), intent(in) :: nnz",
        1,
    );
    assert!(!compare(&header, &m2).is_empty());
}

#[test]
fn detects_a_missing_or_changed_constant_and_a_dropped_argument() {
    let (header, module) = sources();
    let m1 = module.replace(
        "SPGEMM_ALG_KKLP = 2_c_int32_t",
        "SPGEMM_ALG_KKLP = 3_c_int32_t",
    );
    assert_eq!(
        compare(&header, &m1),
        vec!["SPGEMM_ALG_KKLP = 2 in C, 3 in Fortran".to_string()]
    );
    let h2 = header.replace(
        "spgemm_status_t spgemm_plan_destroy(spgemm_plan_t *plan);",
        "spgemm_status_t spgemm_plan_destroy(spgemm_plan_t *plan, int32_t flags);",
    );
    assert_eq!(
        compare(&h2, &module),
        vec!["spgemm_plan_destroy: 2 arguments in C, 1 in Fortran".to_string()]
    );
}
