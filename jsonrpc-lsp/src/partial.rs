//! LSP's rule for partial results: once a request has sent any (on its
//! `partialResultToken`), its final answer is empty, the whole result
//! having gone out in the partial results.

use jsonrpc_runtime::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// What the layer keeps of a request to finish it: its context when the
/// caller sent a `partialResultToken` (else nothing, at no cost).
pub(crate) fn watch(ctx: &Context) -> Option<Context> {
    ctx.partial_result_token().map(|_| ctx.clone())
}

/// The answer to send for `result`. When partial results went out, what
/// `result` still holds is sent as one more (a list's items, a report's
/// `items`, semantic tokens' `data`, a lone location as a list of one) and
/// the answer is the empty form of its type (`[]`, `null`, an empty
/// list member).
pub(crate) fn finish<R: Serialize + DeserializeOwned>(watched: Option<Context>, result: R) -> R {
    let Some(ctx) = watched.filter(Context::partial_results_sent) else {
        return result;
    };
    let Ok(value) = serde_json::to_value(&result) else {
        return result;
    };
    let Some((rest, empty)) = split(value) else {
        return result;
    };
    if let Some(rest) = rest {
        if let Err(e) = ctx.partial_result(rest) {
            tracing::warn!("the last partial result was not sent: {e}");
            return result;
        }
    }
    serde_json::from_value(empty).unwrap_or(result)
}

/// `(what is left to send as a partial result, the empty answer)`, or
/// `None` when the result is already empty or has no shape a partial
/// result can carry (it is then answered as it is).
fn split(value: Value) -> Option<(Option<Value>, Value)> {
    match value {
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some((Some(Value::Array(items)), Value::Array(Vec::new()))),
        // A document diagnostic report (`kind`): its partial results are
        // of another shape (`relatedDocuments`); answered as it is.
        Value::Object(object) if object.contains_key("kind") => None,
        Value::Object(mut object) => {
            // A report's `items` (workspace diagnostics) or semantic
            // tokens' `data`: the member is what the partial results add to.
            for member in ["items", "data"] {
                if let Some(Value::Array(items)) = object.get_mut(member) {
                    if items.is_empty() {
                        return None;
                    }
                    let rest = std::mem::take(items);
                    let mut partial = serde_json::Map::new();
                    partial.insert(member.to_owned(), Value::Array(rest));
                    return Some((Some(Value::Object(partial)), Value::Object(object)));
                }
            }
            // A lone location (a definition): a list of one, then `null`.
            let location = object.contains_key("uri") || object.contains_key("targetUri");
            location.then(|| (Some(Value::Array(vec![Value::Object(object)])), Value::Null))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::split;
    use serde_json::json;

    #[test]
    fn each_shape_splits_into_a_last_partial_and_an_empty_answer() {
        assert_eq!(split(json!([1, 2])), Some((Some(json!([1, 2])), json!([]))));
        assert_eq!(split(json!([])), None);
        assert_eq!(split(json!(null)), None);
        assert_eq!(
            split(json!({"items": [1]})),
            Some((Some(json!({"items": [1]})), json!({"items": []})))
        );
        assert_eq!(
            split(json!({"resultId": "r", "data": [1, 2]})),
            Some((
                Some(json!({"data": [1, 2]})),
                json!({"resultId": "r", "data": []})
            ))
        );
        let location = json!({"uri": "file:///a", "range": {}});
        assert_eq!(
            split(location.clone()),
            Some((Some(json!([location])), json!(null)))
        );
        assert_eq!(split(json!({"kind": "full"})), None);
    }
}
