//! Behaviour of `Message::parse`, the classifier of one inbound frame, and of
//! `Message::to_json`, the envelope writer.
//!
//! The tests follow the nine classification rules of the design in order,
//! then the envelope details (whitespace, extras, escaped names, duplicate
//! members), then writing, then a determinism sweep over tricky inputs.

use jsonrpc_runtime::message::{
    Batches, Dialect, Message, Notification, NullId, NullParams, ParseOptions, Parsed,
    RefusedMessage, Request, Response,
};
use jsonrpc_runtime::{ErrorCode, ErrorObject, Id};
use serde_json::value::RawValue;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// Helpers.

fn strict() -> ParseOptions {
    ParseOptions::default()
}

fn lenient() -> ParseOptions {
    ParseOptions {
        dialect: Dialect::Lenient,
        ..ParseOptions::default()
    }
}

fn no_batches() -> ParseOptions {
    ParseOptions {
        batches: Batches::Refuse,
        ..ParseOptions::default()
    }
}

fn no_null_id() -> ParseOptions {
    ParseOptions {
        null_id: NullId::Refuse,
        ..ParseOptions::default()
    }
}

fn no_null_params() -> ParseOptions {
    ParseOptions {
        null_params: NullParams::Refuse,
        ..ParseOptions::default()
    }
}

/// Parses `text` with `options` and expects a single message.
fn single_with(text: &str, options: ParseOptions) -> Message {
    match Message::parse(text, &options) {
        Parsed::Single(message) => message,
        other => panic!("expected a single message for {text:?}, got {other:?}"),
    }
}

/// Parses `text` with the default (strict) options and expects a single
/// message.
fn single(text: &str) -> Message {
    single_with(text, strict())
}

fn refusal(message: Message) -> RefusedMessage {
    match message {
        Message::Refused(refusal) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn request(message: Message) -> Request {
    match message {
        Message::Request(request) => request,
        other => panic!("expected a request, got {other:?}"),
    }
}

fn notification(message: Message) -> Notification {
    match message {
        Message::Notification(notification) => notification,
        other => panic!("expected a notification, got {other:?}"),
    }
}

fn response(message: Message) -> Response {
    match message {
        Message::Response(response) => response,
        other => panic!("expected a response, got {other:?}"),
    }
}

/// Asserts that `message` is a refusal answering with `code` and `id`.
#[track_caller]
fn assert_refused(message: Message, code: ErrorCode, id: &Id) {
    let refusal = refusal(message);
    assert_eq!(refusal.error.code, code, "wrong code in {refusal:?}");
    assert_eq!(&refusal.id, id, "wrong id in {refusal:?}");
}

/// Asserts that `text`, parsed with `options`, is a single refusal answering
/// with `code` and `id`.
#[track_caller]
fn assert_text_refused(text: &str, options: ParseOptions, code: ErrorCode, id: &Id) {
    assert_refused(single_with(text, options), code, id);
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("valid raw JSON in the test")
}

fn to_value(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "to_json wrote invalid JSON ({e}): {}",
            String::from_utf8_lossy(bytes)
        )
    })
}

/// A short description of a classification, for comparing two parses.
fn kind_of_message(message: &Message) -> String {
    match message {
        Message::Request(r) => format!("request {} {}", r.id, r.method),
        Message::Notification(n) => format!("notification {}", n.method),
        Message::Response(r) => match &r.outcome {
            Ok(_) => format!("result {}", r.id),
            Err(e) => format!("error {} {}", r.id, e.code),
        },
        Message::Refused(r) => format!("refused {} {}", r.id, r.error.code),
        other => format!("unknown {other:?}"),
    }
}

fn kind(parsed: &Parsed) -> String {
    match parsed {
        Parsed::Single(message) => kind_of_message(message),
        Parsed::Batch(messages) => {
            let kinds: Vec<String> = messages.iter().map(kind_of_message).collect();
            format!("batch [{}]", kinds.join(", "))
        }
        other => format!("unknown {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Rule 1: not valid JSON.

#[test]
fn invalid_json_is_parse_error_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1,"method":"x""#,
        strict(),
        ErrorCode::PARSE_ERROR,
        &Id::NULL,
    );
}

#[test]
fn empty_frame_is_parse_error_with_null_id() {
    assert_text_refused("", strict(), ErrorCode::PARSE_ERROR, &Id::NULL);
}

#[test]
fn whitespace_only_frame_is_parse_error_with_null_id() {
    assert_text_refused(" \t\r\n ", strict(), ErrorCode::PARSE_ERROR, &Id::NULL);
}

#[test]
fn trailing_text_after_the_object_is_parse_error_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1,"method":"x"} {}"#,
        strict(),
        ErrorCode::PARSE_ERROR,
        &Id::NULL,
    );
}

#[test]
fn invalid_utf8_bytes_are_parse_error_with_null_id() {
    let bytes = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}";
    match Message::parse_bytes(bytes, &strict()) {
        Parsed::Single(message) => assert_refused(message, ErrorCode::PARSE_ERROR, &Id::NULL),
        other => panic!("expected a single refusal, got {other:?}"),
    }
}

#[test]
fn valid_utf8_bytes_classify_like_text() {
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"héllo"}"#;
    let from_bytes = match Message::parse_bytes(text.as_bytes(), &strict()) {
        Parsed::Single(message) => request(message),
        other => panic!("expected a single request, got {other:?}"),
    };
    assert_eq!(from_bytes.method, "héllo");
    assert_eq!(from_bytes.id, Id::from(1));
}

// ---------------------------------------------------------------------------
// Rule 2: batches.

#[test]
fn accepted_batch_classifies_each_element_in_order() {
    let text = r#"[
        {"jsonrpc":"2.0","id":1,"method":"a"},
        {"jsonrpc":"2.0","method":"b"},
        {"jsonrpc":"2.0","id":2,"result":true},
        {"jsonrpc":"2.0","id":3,"method":7}
    ]"#;
    let Parsed::Batch(elements) = Message::parse(text, &strict()) else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 4);
    let mut elements = elements.into_iter();
    let first = request(elements.next().unwrap());
    assert_eq!((first.id, first.method.as_str()), (Id::from(1), "a"));
    assert_eq!(notification(elements.next().unwrap()).method, "b");
    assert_eq!(response(elements.next().unwrap()).id, Id::from(2));
    assert_refused(
        elements.next().unwrap(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(3),
    );
}

#[test]
fn empty_batch_is_single_invalid_request_with_null_id() {
    assert_text_refused("[]", strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

#[test]
fn refused_batches_turn_any_array_into_single_invalid_request_with_null_id() {
    for text in [
        "[]",
        "[1]",
        r#"[{"jsonrpc":"2.0","id":1,"method":"a"}]"#,
        r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#,
    ] {
        assert_text_refused(text, no_batches(), ErrorCode::INVALID_REQUEST, &Id::NULL);
    }
}

#[test]
fn nested_array_in_batch_is_invalid_request_element_with_null_id() {
    let text = r#"[[{"jsonrpc":"2.0","id":1,"method":"a"}],{"jsonrpc":"2.0","id":2,"method":"b"}]"#;
    let Parsed::Batch(elements) = Message::parse(text, &strict()) else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 2);
    let mut elements = elements.into_iter();
    assert_refused(
        elements.next().unwrap(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
    assert_eq!(request(elements.next().unwrap()).id, Id::from(2));
}

#[test]
fn scalar_batch_elements_are_each_invalid_request_with_null_id() {
    let Parsed::Batch(elements) = Message::parse(r#"[1, "x", null, true, 2.5]"#, &strict()) else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 5);
    for element in elements {
        assert_refused(element, ErrorCode::INVALID_REQUEST, &Id::NULL);
    }
}

#[test]
fn invalid_json_inside_a_batch_is_one_parse_error_for_the_frame() {
    assert_text_refused(
        r#"[{"jsonrpc":"2.0","method":"a"}, {"jsonrpc":"2.0","method"]"#,
        strict(),
        ErrorCode::PARSE_ERROR,
        &Id::NULL,
    );
}

// ---------------------------------------------------------------------------
// Rule 3: not an object.

#[test]
fn number_frame_is_invalid_request_with_null_id() {
    assert_text_refused("1", strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

#[test]
fn string_frame_is_invalid_request_with_null_id() {
    assert_text_refused(r#""x""#, strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

#[test]
fn null_frame_is_invalid_request_with_null_id() {
    assert_text_refused("null", strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

#[test]
fn boolean_frame_is_invalid_request_with_null_id() {
    assert_text_refused("true", strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
    assert_text_refused("false", strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

// ---------------------------------------------------------------------------
// Rule 4: the id.

/// Parses a request whose id member is `id_json` and returns its id.
fn request_id(id_json: &str) -> Id {
    let text = format!(r#"{{"jsonrpc":"2.0","id":{id_json},"method":"m"}}"#);
    request(single(&text)).id
}

/// Asserts that a request with the integer id `digits` keeps it exactly,
/// and that writing it back gives the same digits.
#[track_caller]
fn assert_integer_id_round_trips(digits: &str, expected: Id) {
    let text = format!(r#"{{"jsonrpc":"2.0","id":{digits},"method":"m"}}"#);
    let parsed = request(single(&text));
    assert_eq!(parsed.id, expected);
    assert_eq!(parsed.id.to_string(), digits);
    let written = String::from_utf8(Message::Request(parsed).to_json(Dialect::Strict)).unwrap();
    assert!(
        written.contains(&format!(r#""id":{digits},"#)),
        "{written} does not carry the id {digits} verbatim"
    );
    assert_eq!(request(single(&written)).id, expected);
}

/// Asserts that a request whose id member is `id_json` is refused with
/// -32600 and a null id.
#[track_caller]
fn assert_id_refused(id_json: &str) {
    let text = format!(r#"{{"jsonrpc":"2.0","id":{id_json},"method":"m"}}"#);
    assert_text_refused(&text, strict(), ErrorCode::INVALID_REQUEST, &Id::NULL);
}

#[test]
fn integer_id_is_kept() {
    let id = request_id("42");
    assert_eq!(id, Id::from(42));
    assert_eq!(id.as_i64(), Some(42));
}

#[test]
fn negative_integer_id_is_kept() {
    assert_eq!(request_id("-7"), Id::from(-7));
}

#[test]
fn string_id_is_kept() {
    let id = request_id(r#""abc-1""#);
    assert_eq!(id, Id::from("abc-1"));
    assert_eq!(id.as_str(), Some("abc-1"));
}

#[test]
fn escaped_string_id_is_unescaped() {
    assert_eq!(request_id(r#""a\"b\u0063""#), Id::from("a\"bc"));
}

#[test]
fn integer_id_and_string_id_with_same_digits_differ() {
    let int = request_id("1");
    let string = request_id(r#""1""#);
    assert_ne!(int, string);
    assert_eq!(int.to_string(), "1");
    assert_eq!(string.to_string(), r#""1""#);
}

#[test]
fn i64_min_id_is_kept_exactly() {
    assert_integer_id_round_trips("-9223372036854775808", Id::from(i64::MIN));
}

#[test]
fn i64_max_id_is_kept_exactly() {
    assert_integer_id_round_trips("9223372036854775807", Id::from(i64::MAX));
}

#[test]
fn u64_max_id_is_kept_exactly() {
    assert_integer_id_round_trips("18446744073709551615", Id::from(u64::MAX));
}

#[test]
fn id_past_two_to_the_53_is_kept_exactly() {
    assert_integer_id_round_trips("9007199254740993", Id::from((1i64 << 53) + 1));
}

#[test]
fn fractional_id_is_invalid_request_with_null_id() {
    assert_id_refused("1.5");
}

#[test]
fn integral_float_id_is_invalid_request_with_null_id() {
    assert_id_refused("1.0");
}

#[test]
fn exponent_id_is_invalid_request_with_null_id() {
    assert_id_refused("1e3");
}

#[test]
fn id_beyond_u64_is_invalid_request_with_null_id() {
    assert_id_refused("18446744073709551616");
}

#[test]
fn object_id_is_invalid_request_with_null_id() {
    assert_id_refused(r#"{"n":1}"#);
}

#[test]
fn array_id_is_invalid_request_with_null_id() {
    assert_id_refused("[1]");
}

#[test]
fn boolean_id_is_invalid_request_with_null_id() {
    assert_id_refused("true");
    assert_id_refused("false");
}

#[test]
fn invalid_id_on_a_response_is_invalid_request_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn null_id_is_served_as_request_with_null_id_by_default() {
    let request = request(single(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#));
    assert!(request.id.is_null());
    assert_eq!(request.id, Id::NULL);
}

#[test]
fn null_id_is_invalid_request_when_null_ids_are_refused() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        no_null_id(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn null_id_error_response_is_a_response_by_default() {
    let response = response(single(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    ));
    assert!(response.id.is_null());
    assert_eq!(response.outcome.unwrap_err().code, ErrorCode::PARSE_ERROR);
}

#[test]
fn null_id_error_response_is_a_response_even_when_null_ids_are_refused() {
    let message = single_with(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        no_null_id(),
    );
    let response = response(message);
    assert!(response.id.is_null());
    assert_eq!(response.outcome.unwrap_err().code, ErrorCode::PARSE_ERROR);
}

// ---------------------------------------------------------------------------
// Rule 5: the version.

#[test]
fn missing_jsonrpc_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"id":5,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
}

#[test]
fn missing_jsonrpc_carries_a_string_id() {
    assert_text_refused(
        r#"{"id":"q","method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from("q"),
    );
}

#[test]
fn missing_jsonrpc_on_a_notification_is_invalid_request_with_null_id() {
    assert_text_refused(
        r#"{"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn jsonrpc_1_0_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":"1.0","id":5,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
}

#[test]
fn jsonrpc_as_number_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":2.0,"id":5,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
}

#[test]
fn jsonrpc_null_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":null,"id":5,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
}

#[test]
fn lenient_dialect_accepts_missing_jsonrpc() {
    let request = request(single_with(r#"{"id":5,"method":"m"}"#, lenient()));
    assert_eq!((request.id, request.method.as_str()), (Id::from(5), "m"));
    assert_eq!(
        notification(single_with(r#"{"method":"n"}"#, lenient())).method,
        "n"
    );
}

#[test]
fn lenient_dialect_still_refuses_a_wrong_jsonrpc() {
    assert_text_refused(
        r#"{"jsonrpc":"1.0","id":5,"method":"m"}"#,
        lenient(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
    assert_text_refused(
        r#"{"jsonrpc":2.0,"id":5,"method":"m"}"#,
        lenient(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(5),
    );
}

#[test]
fn escaped_jsonrpc_version_is_accepted() {
    let request = request(single(r#"{"jsonrpc":"2\u002e0","id":5,"method":"m"}"#));
    assert_eq!(request.id, Id::from(5));
}

// ---------------------------------------------------------------------------
// Rule 6: responses.

#[test]
fn response_with_result_keeps_the_raw_result() {
    let response = response(single(r#"{"jsonrpc":"2.0","id":9,"result":{ "sum" : 3 }}"#));
    assert_eq!(response.id, Id::from(9));
    assert_eq!(response.outcome.unwrap().get(), r#"{ "sum" : 3 }"#);
}

#[test]
fn response_with_null_result_is_a_response() {
    let response = response(single(r#"{"jsonrpc":"2.0","id":"r","result":null}"#));
    assert_eq!(response.id, Id::from("r"));
    assert_eq!(response.outcome.unwrap().get(), "null");
}

#[test]
fn response_with_error_keeps_code_message_and_raw_data() {
    let response = response(single(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32010,"message":"Negative input","data":[ 1,2 ]}}"#,
    ));
    assert_eq!(response.id, Id::from(9));
    let error = response.outcome.unwrap_err();
    assert_eq!(error.code, ErrorCode(-32010));
    assert_eq!(error.message, "Negative input");
    assert_eq!(error.data.as_deref().map(RawValue::get), Some("[ 1,2 ]"));
}

#[test]
fn response_with_both_result_and_error_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":9,"result":1,"error":{"code":-1,"message":"m"}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn response_with_both_result_and_error_and_no_id_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","result":1,"error":{"code":-1,"message":"m"}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn result_response_without_id_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","result":1}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn error_response_without_id_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn response_whose_error_is_not_an_object_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":9,"error":"boom"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn response_whose_error_lacks_a_message_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32000}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn response_whose_error_code_is_not_an_integer_is_refused_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":"bad","message":"m"}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":1.5,"message":"m"}}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn response_missing_jsonrpc_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"id":9,"result":1}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(9),
    );
}

// ---------------------------------------------------------------------------
// Rule 7: the method.

#[test]
fn non_string_method_is_invalid_request_carrying_the_id() {
    for method in ["7", "null", "true", r#"{"name":"m"}"#, r#"["m"]"#] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":"a","method":{method}}}"#);
        assert_text_refused(&text, strict(), ErrorCode::INVALID_REQUEST, &Id::from("a"));
    }
}

#[test]
fn non_string_method_on_a_notification_is_invalid_request_with_null_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","method":7}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn missing_method_without_result_or_error_is_invalid_request_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":3,"params":[]}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::from(3),
    );
}

#[test]
fn escaped_method_name_is_unescaped() {
    let request = request(single(r#"{"jsonrpc":"2.0","id":1,"method":"a\/b\u0021"}"#));
    assert_eq!(request.method, "a/b!");
}

// ---------------------------------------------------------------------------
// Rule 8: the params.

#[test]
fn object_params_are_kept_as_exact_raw_text() {
    let request = request(single(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":  { \"a\" :\n 1 , \"b\":[ ] }  }",
    ));
    assert_eq!(
        request.params.as_deref().map(RawValue::get),
        Some("{ \"a\" :\n 1 , \"b\":[ ] }")
    );
}

#[test]
fn array_params_are_kept_as_exact_raw_text() {
    let request = request(single(
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[ 1 ,  "two" , 3.50 ]}"#,
    ));
    assert_eq!(
        request.params.as_deref().map(RawValue::get),
        Some(r#"[ 1 ,  "two" , 3.50 ]"#)
    );
}

#[test]
fn params_on_a_notification_are_kept_as_exact_raw_text() {
    let notification = notification(single(
        r#"{"jsonrpc":"2.0","method":"m","params":{"x" : [1]}}"#,
    ));
    assert_eq!(
        notification.params.as_deref().map(RawValue::get),
        Some(r#"{"x" : [1]}"#)
    );
}

#[test]
fn absent_params_are_none() {
    assert!(request(single(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#))
        .params
        .is_none());
}

#[test]
fn string_params_on_a_request_are_invalid_params_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":"x"}"#,
        strict(),
        ErrorCode::INVALID_PARAMS,
        &Id::from(4),
    );
}

#[test]
fn number_params_on_a_request_are_invalid_params_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":12}"#,
        strict(),
        ErrorCode::INVALID_PARAMS,
        &Id::from(4),
    );
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":-1.5}"#,
        strict(),
        ErrorCode::INVALID_PARAMS,
        &Id::from(4),
    );
}

#[test]
fn boolean_params_on_a_request_are_invalid_params_carrying_the_id() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":false}"#,
        strict(),
        ErrorCode::INVALID_PARAMS,
        &Id::from(4),
    );
}

#[test]
fn scalar_params_on_a_notification_are_dropped() {
    for params in [r#""x""#, "12", "true"] {
        let text = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
        let notification = notification(single(&text));
        assert_eq!(notification.method, "m");
        assert!(notification.params.is_none(), "params kept for {text}");
    }
}

#[test]
fn null_params_on_a_request_are_absent_by_default() {
    let request = request(single(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":null}"#,
    ));
    assert!(request.params.is_none());
}

#[test]
fn null_params_on_a_request_are_invalid_params_when_refused() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":4,"method":"m","params":null}"#,
        no_null_params(),
        ErrorCode::INVALID_PARAMS,
        &Id::from(4),
    );
}

#[test]
fn null_params_on_a_notification_are_absent() {
    for options in [strict(), no_null_params()] {
        let text = r#"{"jsonrpc":"2.0","method":"m","params":null}"#;
        assert!(notification(single_with(text, options)).params.is_none());
    }
}

// ---------------------------------------------------------------------------
// Rule 9: request or notification.

#[test]
fn message_with_id_is_a_request() {
    let request = request(single(
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
    ));
    assert_eq!(request.id, Id::from(1));
    assert_eq!(request.method, "m");
}

#[test]
fn message_without_id_is_a_notification() {
    let notification = notification(single(r#"{"jsonrpc":"2.0","method":"m","params":[]}"#));
    assert_eq!(notification.method, "m");
}

// ---------------------------------------------------------------------------
// Envelope details.

#[test]
fn whitespace_and_newlines_around_the_json_are_accepted() {
    let request = request(single(
        " \r\n\t {\"jsonrpc\" : \"2.0\" ,\n \"id\" : 1 ,\r\n \"method\" : \"m\" } \r\n\t ",
    ));
    assert_eq!((request.id, request.method.as_str()), (Id::from(1), "m"));
}

#[test]
fn whitespace_around_a_batch_is_accepted() {
    let parsed = Message::parse(
        "\n [ {\"jsonrpc\":\"2.0\",\"method\":\"m\"} ] \n",
        &strict(),
    );
    let Parsed::Batch(elements) = parsed else {
        panic!("expected a batch");
    };
    assert_eq!(elements.len(), 1);
}

#[test]
fn unknown_top_level_members_are_kept_as_extras() {
    let request = request(single(
        r#"{"sessionId":"s-1","jsonrpc":"2.0","id":1,"method":"m","trace":{"depth":[1,2]},"n":null}"#,
    ));
    assert_eq!(request.extras.len(), 3);
    assert_eq!(request.extras["sessionId"], json!("s-1"));
    assert_eq!(request.extras["trace"], json!({"depth": [1, 2]}));
    assert_eq!(request.extras["n"], Value::Null);
}

#[test]
fn known_members_are_not_extras() {
    let request = request(single(
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
    ));
    assert!(request.extras.is_empty());
}

#[test]
fn extras_are_kept_on_notifications_and_responses() {
    let notification = notification(single(r#"{"jsonrpc":"2.0","method":"m","x":1}"#));
    assert_eq!(notification.extras["x"], json!(1));
    let response = response(single(r#"{"jsonrpc":"2.0","id":1,"result":2,"y":[true]}"#));
    assert_eq!(response.extras["y"], json!([true]));
}

#[test]
fn escaped_member_names_are_recognised() {
    let request = request(single(
        r#"{"\u006asonrpc":"2.0","i\u0064":7,"m\u0065thod":"m","p\u0061rams":[1],"x\u0079":2}"#,
    ));
    assert_eq!(request.id, Id::from(7));
    assert_eq!(request.method, "m");
    assert_eq!(request.params.as_deref().map(RawValue::get), Some("[1]"));
    assert_eq!(request.extras.len(), 1);
    assert_eq!(request.extras["xy"], json!(2));
}

#[test]
fn duplicate_id_member_is_invalid_request() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn duplicate_id_member_spelled_with_an_escape_is_invalid_request() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1,"i\u0064":1,"method":"m"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

#[test]
fn duplicate_method_member_is_invalid_request() {
    assert_text_refused(
        r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
        strict(),
        ErrorCode::INVALID_REQUEST,
        &Id::NULL,
    );
}

// ---------------------------------------------------------------------------
// Writing envelopes.

fn sample_request() -> Message {
    Message::Request(Request {
        id: Id::from(3),
        method: "add".into(),
        params: Some(raw("[1,2]")),
        extras: Default::default(),
    })
}

fn sample_notification() -> Message {
    Message::Notification(Notification {
        method: "log".into(),
        params: Some(raw(r#"{"level":"info"}"#)),
        extras: Default::default(),
    })
}

fn sample_result() -> Message {
    Message::Response(Response::result(Id::from("r1"), &json!({"ok": true})).unwrap())
}

fn sample_error() -> Message {
    let error = ErrorObject::new(-32010, "Negative input")
        .with_data(&[1, 2])
        .unwrap();
    Message::Response(Response::error(Id::from(8), error))
}

fn sample_refusal() -> Message {
    Message::Refused(RefusedMessage {
        id: Id::from(12),
        error: ErrorObject::invalid_params("`params` must be an object or an array"),
    })
}

fn samples() -> [Message; 5] {
    [
        sample_request(),
        sample_notification(),
        sample_result(),
        sample_error(),
        sample_refusal(),
    ]
}

#[test]
fn strict_to_json_writes_the_version_on_every_kind() {
    for message in samples() {
        let value = to_value(&message.to_json(Dialect::Strict));
        assert_eq!(value["jsonrpc"], json!("2.0"), "{value}");
    }
}

#[test]
fn lenient_to_json_omits_the_version_on_every_kind() {
    for message in samples() {
        let value = to_value(&message.to_json(Dialect::Lenient));
        assert!(value.get("jsonrpc").is_none(), "{value}");
    }
}

#[test]
fn request_to_json_is_exact_and_parses_back_as_the_same_request() {
    let bytes = sample_request().to_json(Dialect::Strict);
    assert_eq!(
        to_value(&bytes),
        json!({"jsonrpc": "2.0", "id": 3, "method": "add", "params": [1, 2]})
    );
    let back = request(single(std::str::from_utf8(&bytes).unwrap()));
    assert_eq!(back.id, Id::from(3));
    assert_eq!(back.method, "add");
    assert_eq!(back.params.as_deref().map(RawValue::get), Some("[1,2]"));
}

#[test]
fn notification_to_json_is_exact_and_parses_back_as_a_notification() {
    let bytes = sample_notification().to_json(Dialect::Strict);
    assert_eq!(
        to_value(&bytes),
        json!({"jsonrpc": "2.0", "method": "log", "params": {"level": "info"}})
    );
    let back = notification(single(std::str::from_utf8(&bytes).unwrap()));
    assert_eq!(back.method, "log");
    assert_eq!(
        back.params.as_deref().map(RawValue::get),
        Some(r#"{"level":"info"}"#)
    );
}

#[test]
fn notification_without_params_writes_no_params_member() {
    let message = Message::Notification(Notification {
        method: "ping".into(),
        params: None,
        extras: Default::default(),
    });
    assert_eq!(
        to_value(&message.to_json(Dialect::Strict)),
        json!({"jsonrpc": "2.0", "method": "ping"})
    );
}

#[test]
fn result_response_to_json_parses_back_as_a_response() {
    let bytes = sample_result().to_json(Dialect::Strict);
    assert_eq!(
        to_value(&bytes),
        json!({"jsonrpc": "2.0", "id": "r1", "result": {"ok": true}})
    );
    let back = response(single(std::str::from_utf8(&bytes).unwrap()));
    assert_eq!(back.id, Id::from("r1"));
    assert_eq!(
        serde_json::from_str::<Value>(back.outcome.unwrap().get()).unwrap(),
        json!({"ok": true})
    );
}

#[test]
fn error_response_to_json_parses_back_as_a_response() {
    let bytes = sample_error().to_json(Dialect::Strict);
    assert_eq!(
        to_value(&bytes),
        json!({
            "jsonrpc": "2.0",
            "id": 8,
            "error": {"code": -32010, "message": "Negative input", "data": [1, 2]}
        })
    );
    let back = response(single(std::str::from_utf8(&bytes).unwrap()));
    assert_eq!(back.id, Id::from(8));
    let error = back.outcome.unwrap_err();
    assert_eq!(error.code, ErrorCode(-32010));
    assert_eq!(error.data_as::<Vec<i32>>().unwrap(), Some(vec![1, 2]));
}

#[test]
fn refused_to_json_is_an_error_response_with_its_id() {
    let bytes = sample_refusal().to_json(Dialect::Strict);
    let value = to_value(&bytes);
    assert_eq!(value["id"], json!(12));
    assert_eq!(value["error"]["code"], json!(-32602));
    assert!(value["error"]["message"].is_string());
    assert!(value.get("result").is_none());
    let back = response(single(std::str::from_utf8(&bytes).unwrap()));
    assert_eq!(back.id, Id::from(12));
    assert_eq!(back.outcome.unwrap_err().code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn refusal_from_the_classifier_writes_its_null_id() {
    let refused = single("{");
    let value = to_value(&refused.to_json(Dialect::Strict));
    assert_eq!(value["id"], Value::Null);
    assert_eq!(value["error"]["code"], json!(-32700));
}

#[test]
fn extras_are_written_at_top_level() {
    let mut extras = serde_json::Map::new();
    extras.insert("sessionId".into(), json!("s-1"));
    extras.insert("trace".into(), json!({"depth": 2}));
    let message = Message::Request(Request {
        id: Id::from(1),
        method: "m".into(),
        params: None,
        extras,
    });
    for dialect in [Dialect::Strict, Dialect::Lenient] {
        let value = to_value(&message.to_json(dialect));
        assert_eq!(value["sessionId"], json!("s-1"));
        assert_eq!(value["trace"], json!({"depth": 2}));
        assert_eq!(value["method"], json!("m"));
    }
}

#[test]
fn extras_survive_a_parse_and_write_round_trip() {
    let parsed = single(r#"{"jsonrpc":"2.0","method":"m","sessionId":"s-1"}"#);
    let value = to_value(&parsed.to_json(Dialect::Strict));
    assert_eq!(
        value,
        json!({"jsonrpc": "2.0", "method": "m", "sessionId": "s-1"})
    );
}

#[test]
fn lenient_to_json_parses_back_as_the_same_kind_in_the_lenient_dialect() {
    for message in [
        sample_request(),
        sample_notification(),
        sample_result(),
        sample_error(),
    ] {
        let bytes = message.to_json(Dialect::Lenient);
        let back = single_with(std::str::from_utf8(&bytes).unwrap(), lenient());
        assert_eq!(kind_of_message(&back), kind_of_message(&message));
    }
}

#[test]
fn strict_to_json_parses_back_as_the_same_kind() {
    for message in [
        sample_request(),
        sample_notification(),
        sample_result(),
        sample_error(),
    ] {
        let bytes = message.to_json(Dialect::Strict);
        let back = single(std::str::from_utf8(&bytes).unwrap());
        assert_eq!(kind_of_message(&back), kind_of_message(&message));
    }
}

// ---------------------------------------------------------------------------
// Determinism over tricky inputs.

const TRICKY: &[&str] = &[
    "",
    " ",
    "\n",
    "{",
    "}",
    "[",
    "[]",
    "[[]]",
    "[{}]",
    "[1,{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]",
    "{}",
    "null",
    "\"\\ud800\"",
    "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999999,\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[1e400]}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"x\":1e400}",
    "1e400",
    "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\0",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":null}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":null}",
    "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":1}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null,\"result\":1}",
    "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
    "{\"\":0,\"jsonrpc\":\"2.0\",\"method\":\"\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":{\"b\":{\"c\":[[[]]]}}}}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
];

#[test]
fn tricky_inputs_never_panic_and_classify_the_same_way_twice() {
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let inputs = TRICKY.iter().copied().chain([deep.as_str()]);
    for text in inputs {
        for options in [
            strict(),
            lenient(),
            no_batches(),
            no_null_id(),
            no_null_params(),
        ] {
            let first = kind(&Message::parse(text, &options));
            let second = kind(&Message::parse(text, &options));
            assert_eq!(first, second, "{text:?} classified two ways");
            let from_bytes = kind(&Message::parse_bytes(text.as_bytes(), &options));
            assert_eq!(
                first, from_bytes,
                "{text:?} classified differently as bytes"
            );
        }
    }
}

#[test]
fn tricky_inputs_write_back_as_valid_json() {
    for text in TRICKY {
        let messages = match Message::parse(text, &strict()) {
            Parsed::Single(message) => vec![message],
            Parsed::Batch(messages) => messages,
            other => panic!("unexpected {other:?}"),
        };
        for message in messages {
            for dialect in [Dialect::Strict, Dialect::Lenient] {
                // A grammar check: serde_json's `Value` refuses numbers out of
                // `f64` range such as `1e400`, which raw params may carry.
                let bytes = message.to_json(dialect);
                let written = std::str::from_utf8(&bytes).expect("to_json writes UTF-8");
                assert!(
                    serde_json::from_str::<&RawValue>(written).is_ok(),
                    "{text:?} was written as invalid JSON: {written}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The MCP preset: the MCP server's nine rules (shared/seeds), where they
// differ from plain JSON-RPC 2.0.

fn mcp() -> ParseOptions {
    jsonrpc_runtime::Config::mcp().parse_options()
}

/// What a line becomes under the MCP preset, in a word and a value.
fn mcp_outcome(text: &str) -> (&'static str, Value) {
    match single_with(text, mcp()) {
        Message::Request(r) => (
            "request",
            json!({"id": r.id, "params": r.params.map(|p| serde_json::from_str::<Value>(p.get()).unwrap())}),
        ),
        Message::Notification(n) => (
            "notification",
            json!({"params": n.params.map(|p| serde_json::from_str::<Value>(p.get()).unwrap())}),
        ),
        Message::Response(r) => ("response", json!({"id": r.id})),
        Message::Refused(r) => ("refused", json!({"id": r.id, "code": r.error.code.0})),
        Message::Ignored(r) => ("ignored", json!({"id": r.id})),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn mcp_preset_follows_the_seed_rules_in_order() {
    let table: &[(&str, &str, Value)] = &[
        // Rule 8: params are objects, `{}` when absent.
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
            "request",
            json!({"id": 1, "params": {}}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}"#,
            "request",
            json!({"id": 1, "params": {"a": 1}}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            "refused",
            json!({"id": 1, "code": -32602}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            "refused",
            json!({"id": 1, "code": -32602}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            "refused",
            json!({"id": 1, "code": -32602}),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#,
            "notification",
            json!({"params": {}}),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"n","params":"x"}"#,
            "notification",
            json!({"params": {}}),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"n"}"#,
            "notification",
            json!({"params": {}}),
        ),
        // Rule 4 before 5-8: a null id is refused first, with id null.
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"m","params":[1]}"#,
            "refused",
            json!({"id": null, "code": -32600}),
        ),
        (
            r#"{"jsonrpc":"1.0","id":null,"method":"m"}"#,
            "refused",
            json!({"id": null, "code": -32600}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
            "refused",
            json!({"id": null, "code": -32600}),
        ),
        // Rule 6: a client response is never answered, however malformed.
        (
            r#"{"jsonrpc":"2.0","id":1,"result":1}"#,
            "response",
            json!({"id": 1}),
        ),
        (
            r#"{"jsonrpc":"2.0","result":1}"#,
            "ignored",
            json!({"id": null}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"result":1,"error":{"code":1,"message":"x"}}"#,
            "ignored",
            json!({"id": 2}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"error":"not an object"}"#,
            "ignored",
            json!({"id": 3}),
        ),
        // Neither a method nor a response: still refused.
        (
            r#"{"jsonrpc":"2.0","id":4}"#,
            "refused",
            json!({"id": 4, "code": -32600}),
        ),
    ];
    for (text, kind, value) in table {
        assert_eq!(mcp_outcome(text), (*kind, value.clone()), "{text}");
    }
}

#[test]
fn the_default_configuration_keeps_plain_json_rpc_rules() {
    let array = single(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#);
    assert!(
        matches!(array, Message::Request(r) if r.params.as_deref().map(RawValue::get) == Some("[1]"))
    );
    let absent = single(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
    assert!(matches!(absent, Message::Request(r) if r.params.is_none()));
    let no_id = single(r#"{"jsonrpc":"2.0","result":1}"#);
    assert!(matches!(no_id, Message::Refused(r) if r.error.code == ErrorCode::INVALID_REQUEST));
}
