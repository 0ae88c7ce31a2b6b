//! Byte budgets for outputs: how much text an outcome's output holds, and cutting it to a
//! budget with a marker that says so.
//!
//! The measure is the text of the output: the UTF-8 length of every string in it (object
//! keys included), and [`SCALAR_BYTES`] for each number, boolean and null. It grows as the
//! serialized JSON does, without serializing anything.

use serde_json::Value;

/// What a number, a boolean or a null counts in [`text_bytes`].
const SCALAR_BYTES: usize = 8;

/// The field that carries the marker in an object whose later fields were dropped.
const TRUNCATED_FIELD: &str = "truncated";

/// The text an output holds (see the module docs).
pub(crate) fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => SCALAR_BYTES,
    }
}

/// Cut `value` so that its text stays within `max` bytes (plus `marker`), when it holds
/// more: the string where the budget runs out is cut at a character boundary and ends with
/// `marker`, and whatever follows it (later array items, later object fields) is dropped.
/// Returns whether anything was cut.
pub(crate) fn truncate(value: &mut Value, max: usize, marker: &str) -> bool {
    if text_bytes(value) <= max {
        return false;
    }
    let mut left = max;
    cut(value, &mut left, marker);
    true
}

/// Spend `left` on `value` in order; true when the budget ran out inside it (and it was cut).
fn cut(value: &mut Value, left: &mut usize, marker: &str) -> bool {
    match value {
        Value::String(s) => {
            if s.len() <= *left {
                *left -= s.len();
                return false;
            }
            let mut at = *left;
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            s.truncate(at);
            s.push_str(marker);
            *left = 0;
            true
        }
        Value::Array(items) => {
            for i in 0..items.len() {
                if *left == 0 {
                    // Spent before this item: the rest goes, the marker says so.
                    items.truncate(i);
                    items.push(Value::String(marker.to_owned()));
                    return true;
                }
                let Some(item) = items.get_mut(i) else { break };
                if cut(item, left, marker) {
                    items.truncate(i + 1);
                    return true;
                }
            }
            false
        }
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let mut over = false;
            let mut spent = false;
            for key in keys {
                if over {
                    map.remove(&key);
                    continue;
                }
                if *left == 0 {
                    // Spent before this field: the rest goes, and the marker says so once
                    // every field is gone (a later field of its name would remove it).
                    map.remove(&key);
                    spent = true;
                    over = true;
                    continue;
                }
                *left = left.saturating_sub(key.len());
                if let Some(v) = map.get_mut(&key) {
                    over = cut(v, left, marker);
                }
            }
            if spent {
                map.insert(TRUNCATED_FIELD.to_owned(), Value::String(marker.to_owned()));
            }
            over
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {
            *left = left.saturating_sub(SCALAR_BYTES);
            false
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_is_counted_by_its_strings() {
        assert_eq!(text_bytes(&json!("héllo")), 6);
        assert_eq!(
            text_bytes(&json!({"ab": "cd", "n": 1})),
            2 + 2 + 1 + SCALAR_BYTES
        );
        assert_eq!(text_bytes(&json!(["a", null])), 1 + SCALAR_BYTES);
    }

    #[test]
    fn a_string_is_cut_at_the_budget_and_marked() {
        let mut v = json!("abcdef");
        assert!(!truncate(&mut v, 6, "[cut]"), "at the budget: kept");
        assert_eq!(v, "abcdef");
        assert!(truncate(&mut v, 5, "[cut]"));
        assert_eq!(v, "abcde[cut]");
        // Never inside a character.
        let mut v = json!("aé");
        assert!(truncate(&mut v, 2, "[cut]"));
        assert_eq!(v, "a[cut]");
    }

    /// A later field named like the marker's does not take the marker away with it.
    #[test]
    fn the_marker_survives_a_later_field_of_its_name() {
        let mut v = json!({"a": "xx", "b": "y", "truncated": false});
        assert!(truncate(&mut v, 3, "~"));
        assert_eq!(v, json!({"a": "xx", "truncated": "~"}));
    }

    #[test]
    fn json_is_cut_where_the_budget_runs_out_and_the_rest_dropped() {
        let mut v = json!({"a": "1234", "b": "5678", "c": "9"});
        assert!(truncate(&mut v, 7, "~"));
        assert_eq!(v, json!({"a": "1234", "b": "5~"}));
        let mut v = json!(["12", "34", "56"]);
        assert!(truncate(&mut v, 3, "~"));
        assert_eq!(v, json!(["12", "3~"]));
        // Numbers cannot be cut: what follows the budget is dropped, marked.
        let mut v = json!([1, 2, 3]);
        assert!(truncate(&mut v, SCALAR_BYTES, "~"));
        assert_eq!(v, json!([1, "~"]));
        let mut v = json!({"a": 1, "b": 2});
        assert!(truncate(&mut v, 1 + SCALAR_BYTES, "~"));
        assert_eq!(v, json!({"a": 1, "truncated": "~"}));
    }
}
