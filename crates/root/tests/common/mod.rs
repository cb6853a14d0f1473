//! What the fixture tests share: the fixtures' paths and expected values, and column data as
//! the JSON the fixture scripts write.
#![allow(dead_code)]

pub mod random;

use std::path::{Path, PathBuf};

use evtc_root::{ColumnData, ColumnKind, RootFile, Values};
use serde_json::Value;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name)).expect("expected values");
    serde_json::from_str(&text).expect("valid JSON")
}

/// One value as JSON (floats widened to f64 exactly).
pub fn scalar(values: &Values, i: usize) -> Value {
    match values {
        Values::Bool(v) => Value::from(v[i]),
        Values::I8(v) => Value::from(v[i]),
        Values::U8(v) => Value::from(v[i]),
        Values::I16(v) => Value::from(v[i]),
        Values::U16(v) => Value::from(v[i]),
        Values::I32(v) => Value::from(v[i]),
        Values::U32(v) => Value::from(v[i]),
        Values::I64(v) => Value::from(v[i]),
        Values::U64(v) => Value::from(v[i]),
        Values::F32(v) => float(f64::from(v[i])),
        Values::F64(v) => float(v[i]),
    }
}

/// A float as the fixtures script writes it: NaN and infinities as Python's `repr`.
pub fn float(x: f64) -> Value {
    match x {
        x if x.is_nan() => Value::from("nan"),
        f64::INFINITY => Value::from("inf"),
        f64::NEG_INFINITY => Value::from("-inf"),
        x => Value::from(x),
    }
}

/// The column's entries as JSON values, nested like uproot's lists.
pub fn entries(data: &ColumnData, kind: ColumnKind, n: usize) -> Vec<Value> {
    let list = |a: usize, b: usize| Value::Array((a..b).map(|i| scalar(&data.values, i)).collect());
    match kind {
        ColumnKind::Scalar(_) => return (0..n).map(|e| scalar(&data.values, e)).collect(),
        ColumnKind::Fixed(_, len) => return (0..n).map(|e| list(e * len, (e + 1) * len)).collect(),
        _ => {}
    }
    // The innermost items (values, or strings), then each level groups those below it, up to
    // the entries.
    let mut bounds = data.levels.iter().chain([&data.offsets]);
    let mut items: Vec<Value> = match kind {
        ColumnKind::String | ColumnKind::Strings(_) => {
            let Values::U8(bytes) = &data.values else {
                panic!("string bytes")
            };
            let strings = bounds.next().expect("string bounds");
            strings
                .windows(2)
                .map(|w| text(&bytes[w[0] as usize..w[1] as usize]))
                .collect()
        }
        _ => (0..data.values.len())
            .map(|i| scalar(&data.values, i))
            .collect(),
    };
    for level in bounds {
        items = level
            .windows(2)
            .map(|w| Value::Array(items[w[0] as usize..w[1] as usize].to_vec()))
            .collect();
    }
    assert_eq!(items.len(), n, "entries of a {kind:?} column");
    items
}

pub fn text(bytes: &[u8]) -> Value {
    Value::from(String::from_utf8(bytes.to_vec()).expect("UTF-8"))
}

/// Flattens nested arrays (uproot keeps `idx[2][2]` two-dimensional; columns are flat).
pub fn flat(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        other => vec![other.clone()],
    }
}

pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-12 * y.abs()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

/// Compares every expected branch of `tree` in `file` with the reader's columns.
pub fn check_tree(file: &RootFile, tree_path: &str, expected: &Value) -> usize {
    let tree = file
        .tree(tree_path)
        .unwrap_or_else(|e| panic!("{tree_path}: {e}"));
    assert_eq!(
        tree.entries,
        expected["entries"].as_u64().expect("entries"),
        "{tree_path}"
    );
    let n = tree.entries as usize;
    let branches = expected["branches"].as_object().expect("branches");
    for (name, want) in branches {
        let column = tree.column(name).unwrap_or_else(|| {
            panic!(
                "{tree_path}: no column {name}; columns {:?}, unsupported {:?}",
                tree.columns.iter().map(|c| &c.name).collect::<Vec<_>>(),
                tree.unsupported
            )
        });
        let data = file
            .read_column(column, 0..tree.entries)
            .unwrap_or_else(|e| panic!("{tree_path}/{name}: {e}"));
        if want.is_object() {
            continue; // a summary, checked by the caller
        }
        let got = entries(&data, column.kind, n);
        let want = want.as_array().expect("entries");
        assert_eq!(got.len(), want.len(), "{tree_path}/{name}");
        for (e, (g, w)) in got.iter().zip(want).enumerate() {
            let w = if matches!(column.kind, ColumnKind::Fixed(..)) {
                Value::Array(flat(w))
            } else {
                w.clone()
            };
            assert!(
                same(g, &w),
                "{tree_path}/{name} entry {e}: read {g}, uproot read {w}"
            );
        }
    }
    branches.len()
}
