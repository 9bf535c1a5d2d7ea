//! Multi-round requests (2026-07-28): a handler that needs the client's
//! input (sampling, elicitation, roots) cannot call the client; the request
//! is answered `input_required` with what it asks, and the client sends it
//! again with the answers. The handler runs again from the start, and each
//! question now finds its answer.
//!
//! The answers of earlier rounds travel in `requestState`, signed with
//! HMAC-SHA-256 under the server's key and bound to the method and the
//! tool, prompt or resource, so a client can neither forge nor move them.

use std::sync::{Mutex, PoisonError};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use jsonrpc_runtime::ErrorObject;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::Sha256;

/// The key `requestState` is signed with.
#[derive(Clone)]
pub(super) struct StateKey([u8; 32]);

impl StateKey {
    /// A key from the operating system's random source.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn random() -> StateKey {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No random source: a key no client can know is still better
            // than none, from the process's hash seeds.
            key = seeded();
        }
        StateKey(key)
    }

    /// A key from the process's hash seeds: a browser has no random source
    /// this crate can use without a backend flag, so give the server a key
    /// ([`McpServer::request_state_key`](super::McpServer::request_state_key)).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn random() -> StateKey {
        StateKey(seeded())
    }

    pub(super) fn new(key: [u8; 32]) -> StateKey {
        StateKey(key)
    }

    fn mac(&self, bound: Bound<'_>, payload: &[u8]) -> Hmac<Sha256> {
        // HMAC takes a key of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("any key length");
        for part in [bound.method.as_bytes(), bound.about.as_bytes(), payload] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac
    }

    /// The state holding `answers`, for the request `bound` names.
    fn seal(&self, bound: Bound<'_>, answers: &Map<String, Value>) -> String {
        let payload = Value::Object(answers.clone()).to_string();
        let tag = self.mac(bound, payload.as_bytes()).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The answers a state holds, if this key signed it for `bound`.
    fn open(&self, bound: Bound<'_>, state: &str) -> Option<Map<String, Value>> {
        let (payload, tag) = state.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.mac(bound, &payload).verify_slice(&tag).ok()?;
        match serde_json::from_slice(&payload).ok()? {
            Value::Object(answers) => Some(answers),
            _ => None,
        }
    }
}

/// The request a state belongs to: its method, and the tool, prompt or
/// resource it is about.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bound<'a> {
    pub(super) method: &'a str,
    pub(super) about: &'a str,
}

/// 32 bytes from the process's random hash seeds.
fn seeded() -> [u8; 32] {
    use std::hash::{BuildHasher, RandomState};
    let mut key = [0u8; 32];
    for (i, chunk) in key.chunks_mut(8).enumerate() {
        let word = RandomState::new().hash_one(i);
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    key
}

/// One request's questions and answers, across its rounds.
#[derive(Debug)]
pub(super) struct Inputs {
    /// The method it is of.
    method: &'static str,
    /// The tool, prompt or resource it is about.
    about: String,
    /// The client's answers, this round's and the earlier rounds'.
    answers: Map<String, Value>,
    /// What this round asked and found no answer to, by key.
    asked: Mutex<Map<String, Value>>,
    /// How many questions without a key of their own were asked, for the
    /// next one's key.
    unnamed: Mutex<u32>,
}

impl Inputs {
    /// The inputs of a request of `method` about `about` that may ask: the
    /// state's answers, if `key` signed it for this request, then this
    /// round's.
    pub(super) fn new(
        key: &StateKey,
        method: &'static str,
        about: String,
        state: Option<&str>,
        responses: Option<&Value>,
    ) -> Result<Inputs, ErrorObject> {
        let bound = Bound {
            method,
            about: &about,
        };
        let mut answers = match state {
            None => Map::new(),
            Some(state) => key.open(bound, state).ok_or_else(|| {
                ErrorObject::invalid_params("Invalid requestState: integrity check failed")
            })?,
        };
        match responses {
            None | Some(Value::Null) => {}
            Some(Value::Object(responses)) => answers.extend(responses.clone()),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "`inputResponses` must be an object of answers by key",
                ))
            }
        }
        Ok(Inputs {
            method,
            about,
            answers,
            asked: Mutex::default(),
            unnamed: Mutex::default(),
        })
    }

    /// The key of the next question without one: `method` and a number,
    /// the same on every round while the handler asks the same things.
    pub(super) fn next_key(&self, method: &str) -> String {
        let mut unnamed = self.unnamed.lock().unwrap_or_else(PoisonError::into_inner);
        *unnamed += 1;
        format!("{method}#{unnamed}")
    }

    /// The answer to `key`, else `None` with the question kept for the
    /// `input_required` answer.
    pub(super) fn answer(&self, key: &str, method: &str, params: Value) -> Option<&Value> {
        if let Some(answer) = self.answers.get(key) {
            return Some(answer);
        }
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), json!({"method": method, "params": params}));
        None
    }

    /// The `input_required` result when this round asked something it had
    /// no answer to.
    pub(super) fn input_required(&self, key: &StateKey) -> Option<InputRequired> {
        let asked = std::mem::take(&mut *self.asked.lock().unwrap_or_else(PoisonError::into_inner));
        if asked.is_empty() {
            return None;
        }
        Some(InputRequired {
            result_type: "input_required",
            input_requests: asked,
            request_state: key.seal(
                Bound {
                    method: self.method,
                    about: &self.about,
                },
                &self.answers,
            ),
        })
    }
}

/// The answer of a round with questions: what the client must answer,
/// and the state to send back with the answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputRequired {
    result_type: &'static str,
    input_requests: Map<String, Value>,
    request_state: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_unchanged_and_for_its_request() {
        let key = StateKey::new([7; 32]);
        let answers = json!({"name": {"action": "accept"}});
        let answers = answers.as_object().unwrap();
        let bound = |about| Bound {
            method: "tools/call",
            about,
        };
        let state = key.seal(bound("greet"), answers);
        assert_eq!(key.open(bound("greet"), &state).as_ref(), Some(answers));
        assert_eq!(key.open(bound("other"), &state), None);
        assert_eq!(key.open(bound("greet"), &format!("{state}-TAMPERED")), None);
        assert_eq!(StateKey::new([8; 32]).open(bound("greet"), &state), None);
        assert_eq!(key.open(bound("greet"), "no-dot"), None);
    }

    #[test]
    fn answers_accumulate_across_rounds() {
        let key = StateKey::new([1; 32]);
        let first = Inputs::new(&key, "tools/call", "b".into(), None, None).unwrap();
        assert!(first.answer("a", "roots/list", json!({})).is_none());
        let asked = serde_json::to_value(first.input_required(&key).unwrap()).unwrap();
        assert_eq!(asked["inputRequests"]["a"]["method"], "roots/list");
        let state = asked["requestState"].as_str().unwrap();
        let second = Inputs::new(
            &key,
            "tools/call",
            "b".into(),
            Some(state),
            Some(&json!({"a": 1})),
        )
        .unwrap();
        assert_eq!(second.answer("a", "roots/list", json!({})), Some(&json!(1)));
        assert!(second.answer("c", "roots/list", json!({})).is_none());
        let state = second.input_required(&key).unwrap().request_state;
        let third = Inputs::new(
            &key,
            "tools/call",
            "b".into(),
            Some(&state),
            Some(&json!({"c": 2})),
        )
        .unwrap();
        assert_eq!(third.answer("a", "x", json!({})), Some(&json!(1)));
        assert_eq!(third.answer("c", "x", json!({})), Some(&json!(2)));
        assert!(third.input_required(&key).is_none());
        let forged = Inputs::new(&key, "tools/call", "b".into(), Some("e30.AAAA"), None);
        assert!(forged.is_err());
    }
}
