//! A `POST`'s body read into the messages it carries: requests (owed an
//! answer), notifications and responses, batches split, `initialize`
//! recognised.

use super::*;

/// One POST's body, read.
pub(super) struct Posted {
    /// Whether it was a batch (answers then go back as an array).
    pub(super) batch: bool,
    pub(super) messages: Vec<Posting>,
}

/// One message of a POST.
pub(super) enum Posting {
    Request {
        raw: Bytes,
        id: Id,
        token: Option<Id>,
        cancellable: bool,
    },
    Notification {
        raw: Bytes,
        /// The request it cancels, when it is a cancellation that the
        /// protocol answers with nothing.
        cancels: Option<Id>,
    },
    Response {
        raw: Bytes,
    },
    /// Refused by the classifier: the answer to send back.
    Refused {
        answer: Bytes,
    },
}

impl Posted {
    /// Splits a body into messages, classified by the session config's
    /// rules. A batch is split here, whatever the config says about
    /// batches (Streamable HTTP carries them in 2025-03-26). `Err`: the
    /// whole body is refused with this answer.
    pub(super) fn read(body: &Bytes, manager: &Manager) -> Result<Posted, Bytes> {
        let dialect = manager.dialect();
        let refuse = |error: ErrorObject| message::error_response(dialect, &Id::NULL, &error);
        let Ok(text) = std::str::from_utf8(body) else {
            return Err(refuse(ErrorObject::parse_error("the body is not UTF-8")));
        };
        let parse = manager.config.parse_options();
        let (batch, elements): (bool, Vec<&str>) = if text.trim_start().starts_with('[') {
            let elements: Vec<&RawValue> =
                serde_json::from_str(text).map_err(|e| refuse(ErrorObject::parse_error(e)))?;
            if elements.is_empty() {
                return Err(refuse(ErrorObject::invalid_request("an empty batch")));
            }
            if elements.len() > parse.max_batch_len {
                return Err(refuse(ErrorObject::invalid_request(format!(
                    "a batch of more than {} elements is over the limit; send it in smaller batches",
                    parse.max_batch_len
                ))));
            }
            (true, elements.iter().map(|e| e.get()).collect())
        } else {
            (false, vec![text])
        };
        let options = ParseOptions {
            batches: Batches::Refuse,
            ..parse
        };
        let messages: Vec<Posting> = elements
            .into_iter()
            .map(|element| {
                let raw = body.slice_ref(element.as_bytes());
                match message::classify_frame(element, &options) {
                    ClassifiedFrame::Single(classified) => manager.incoming(classified, raw),
                    ClassifiedFrame::Batch(_) => Posting::Refused {
                        answer: refuse(ErrorObject::invalid_request("a batch in a batch")),
                    },
                }
            })
            .collect();
        if messages
            .iter()
            .all(|m| matches!(m, Posting::Refused { .. }))
        {
            let answers = messages
                .into_iter()
                .filter_map(|m| match m {
                    Posting::Refused { answer } => Some(answer),
                    _ => None,
                })
                .collect();
            return Err(answer_body(batch, answers));
        }
        Ok(Posted { batch, messages })
    }

    /// Whether it is one `initialize` request, alone.
    pub(super) fn is_initialize(&self) -> bool {
        !self.batch
            && matches!(self.messages.as_slice(), [Posting::Request { raw, .. }] if is_initialize(raw))
    }
}

/// Whether a request's method is `initialize`.
pub(super) fn is_initialize(raw: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
    }
    serde_json::from_slice::<Method<'_>>(raw).is_ok_and(|m| m.method == "initialize")
}

impl Manager {
    fn incoming(&self, classified: Classified<'_>, raw: Bytes) -> Posting {
        match classified {
            Classified::Request {
                id, method, params, ..
            } => Posting::Request {
                raw,
                id,
                token: self.progress().and_then(|p| p.tokens(params).0),
                cancellable: self
                    .cancellation()
                    .is_some_and(|p| !p.is_protected(&method)),
            },
            Classified::Notification { method, params, .. } => Posting::Notification {
                raw,
                cancels: self
                    .cancellation()
                    .filter(|p| p.method == method && p.answer.is_none())
                    .and_then(|p| p.target(params)),
            },
            Classified::Response { .. }
            | Classified::BadResponse { .. }
            | Classified::Ignored { .. } => Posting::Response { raw },
            Classified::Refused(refusal) => Posting::Refused {
                answer: message::error_response(self.dialect(), &refusal.id, &refusal.error),
            },
        }
    }
}

/// Answers as one body: the answer alone, or an array for a batch.
pub(super) fn answer_body(batch: bool, answers: Vec<Bytes>) -> Bytes {
    if !batch && answers.len() == 1 {
        return answers.into_iter().next().unwrap_or_default();
    }
    let mut body = Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 2);
    body.push(b'[');
    for (i, answer) in answers.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(answer);
    }
    body.push(b']');
    Bytes::from(body)
}
