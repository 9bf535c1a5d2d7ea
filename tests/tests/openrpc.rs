//! OpenRPC documents from `#[rpc]` traits, served as `rpc.discover`.

use jsonrpc_runtime::openrpc::Document;
use jsonrpc_runtime::{rpc, Config, Peer, RpcError, Transport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A point on the plane.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// The area of a shape, with its unit.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Area {
    value: f64,
    unit: String,
}

/// `draw`'s params, taken whole.
#[derive(Serialize, Deserialize, JsonSchema)]
struct DrawParams {
    at: Point,
    label: Option<String>,
}

/// No schema for this one.
#[derive(Serialize, Deserialize)]
struct Opaque(u8);

#[derive(Debug, RpcError, Serialize, Deserialize)]
enum GeometryError {
    #[rpc(error(code = -32010, message = "degenerate polygon"))]
    Degenerate,
    #[rpc(error(code = -32011, message = "too many corners"))]
    TooMany { limit: u32 },
}

#[rpc]
trait Geometry {
    /// The area of a polygon.
    ///
    /// Corners go counter-clockwise.
    #[rpc(request = "polygon/area")]
    async fn area(&self, corners: Vec<Point>, unit: Option<String>) -> Result<Area, GeometryError>;

    /// Draws a point.
    #[rpc(request = "draw")]
    async fn draw(&self, #[rpc(params)] p: DrawParams) -> bool;

    #[rpc(request = "opaque")]
    async fn opaque(&self, value: Opaque) -> Opaque;

    /// Forgets everything.
    #[rpc(notification = "reset")]
    async fn reset(&self);
}

/// A label placed on the plane.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Label {
    /// Where the label goes.
    at: Point,
    text: String,
}

/// Schemas that `schemars` writes in 2020-12 unless told otherwise: tuples,
/// and references with a description beside them.
#[rpc]
trait Labels {
    /// Swaps a pair given by position.
    #[rpc(request = "swap")]
    async fn swap(&self, #[rpc(params)] pair: (i64, String)) -> (String, i64);

    /// Places a label, taken whole.
    #[rpc(request = "label")]
    async fn label(&self, #[rpc(params)] label: Label) -> bool;

    /// Joins two points.
    #[rpc(request = "join")]
    async fn join(&self, ends: (Point, Point), label: Option<Label>) -> f64;
}

struct Service;

struct Labeller;

impl Labels for Labeller {
    async fn swap(&self, (a, b): (i64, String)) -> (String, i64) {
        (b, a)
    }
    async fn label(&self, _label: Label) -> bool {
        true
    }
    async fn join(&self, _ends: (Point, Point), _label: Option<Label>) -> f64 {
        0.0
    }
}

impl Geometry for Service {
    async fn area(&self, corners: Vec<Point>, unit: Option<String>) -> Result<Area, GeometryError> {
        if corners.len() < 3 {
            return Err(GeometryError::Degenerate);
        }
        Ok(Area {
            value: 0.0,
            unit: unit.unwrap_or_default(),
        })
    }
    async fn draw(&self, _p: DrawParams) -> bool {
        true
    }
    async fn opaque(&self, value: Opaque) -> Opaque {
        value
    }
    async fn reset(&self) {}
}

fn document() -> Value {
    Document::new("geometry", "2.1.0")
        .description("Shapes on the plane.")
        .methods(Service::openrpc_methods())
        .to_value()
}

fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no method {name} in {doc}"))
}

/// Follows a `$ref` within the document.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(path) => {
            let pointer = path.strip_prefix('#').expect("a local reference");
            doc.pointer(pointer)
                .unwrap_or_else(|| panic!("{path} does not resolve"))
        }
        None => schema,
    }
}

#[test]
fn the_document_has_the_services_info_and_every_method() {
    let doc = document();
    assert_eq!(doc["openrpc"], "1.3.2");
    assert_eq!(doc["info"]["title"], "geometry");
    assert_eq!(doc["info"]["version"], "2.1.0");
    assert_eq!(doc["info"]["description"], "Shapes on the plane.");
    let names: Vec<&str> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["polygon/area", "draw", "opaque", "reset"]);
}

#[test]
fn params_results_errors_and_docs_come_from_the_trait() {
    let doc = document();
    let area = method(&doc, "polygon/area");
    assert_eq!(area["summary"], "The area of a polygon.");
    assert!(area["description"]
        .as_str()
        .unwrap()
        .contains("Corners go counter-clockwise."));
    assert_eq!(area["paramStructure"], "either");
    assert_eq!(area["params"][0]["name"], "corners");
    assert_eq!(area["params"][0]["required"], true);
    assert_eq!(area["params"][1]["name"], "unit");
    assert_eq!(area["params"][1]["required"], false);
    let corners = &area["params"][0]["schema"];
    assert_eq!(corners["type"], "array");
    let point = resolve(&doc, &corners["items"]);
    assert_eq!(point["properties"]["x"]["type"], "number");
    let result = resolve(&doc, &area["result"]["schema"]);
    assert_eq!(result["properties"]["unit"]["type"], "string");
    assert_eq!(
        area["errors"],
        serde_json::json!([
            {"code": -32010, "message": "degenerate polygon"},
            {"code": -32011, "message": "too many corners"},
        ])
    );
    assert_eq!(GeometryError::documented_errors().len(), 2);
}

#[test]
fn a_params_struct_taken_whole_is_listed_by_name() {
    let doc = document();
    let draw = method(&doc, "draw");
    assert_eq!(draw["paramStructure"], "by-name");
    let params: Vec<(&str, bool)> = draw["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(params, [("at", true), ("label", false)]);
    assert_eq!(draw["result"]["schema"]["type"], "boolean");
}

#[test]
fn a_type_without_a_schema_is_any_value_and_a_notification_has_no_result() {
    let doc = document();
    let opaque = method(&doc, "opaque");
    assert_eq!(opaque["params"][0]["schema"], serde_json::json!({}));
    assert_eq!(opaque["result"]["schema"], serde_json::json!({}));
    let reset = method(&doc, "reset");
    assert!(reset.get("result").is_none(), "{reset}");
    assert_eq!(reset["summary"], "Forgets everything.");
}

/// The shape the OpenRPC 1.3 specification requires of a document: every
/// required member, every content descriptor named with a schema, every
/// error with an integer code and a message, every reference resolving.
#[test]
fn the_document_has_the_shape_the_specification_requires() {
    let doc = document();
    assert!(doc["openrpc"].as_str().unwrap().starts_with("1.3"));
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let mut names = std::collections::HashSet::new();
    for m in doc["methods"].as_array().unwrap() {
        assert!(
            names.insert(m["name"].as_str().unwrap()),
            "method names are unique"
        );
        assert!(
            ["by-name", "by-position", "either"].contains(&m["paramStructure"].as_str().unwrap())
        );
        let mut param_names = std::collections::HashSet::new();
        for p in m["params"].as_array().unwrap() {
            assert!(param_names.insert(p["name"].as_str().unwrap()), "{m}");
            assert!(p["schema"].is_object(), "{p}");
        }
        if let Some(result) = m.get("result") {
            assert!(
                result["name"].is_string() && result["schema"].is_object(),
                "{m}"
            );
        }
        for e in m
            .get("errors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert!(e["code"].is_i64() && e["message"].is_string(), "{e}");
        }
    }
    // Every reference points inside the document.
    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        assert!(r.starts_with("#/components/schemas/"), "{r}");
        assert!(doc.pointer(&r[1..]).is_some(), "{r} does not resolve");
    }
}

/// JSON Schema keywords draft 7 does not have: a draft 7 validator ignores
/// them, so a schema that uses one constrains less than it says.
const NOT_IN_DRAFT_07: [&str; 7] = [
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$defs",
    "dependentRequired",
    "dependentSchemas",
    "$anchor",
];

/// Every object in `value` (itself included), with its JSON pointer.
fn objects<'a>(
    value: &'a Value,
    at: String,
    out: &mut Vec<(String, &'a serde_json::Map<String, Value>)>,
) {
    match value {
        Value::Object(map) => {
            out.push((at.clone(), map));
            for (key, v) in map {
                objects(v, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                objects(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The document says its schemas are draft 7: that holds for the schemas
/// inlined in params and results too, not only under `components`. Tuples
/// are `items` arrays, and a reference stands alone (draft 7 ignores
/// anything beside a `$ref`, so a description goes next to it in an
/// `allOf`).
#[test]
fn every_schema_is_draft_07_inline_ones_included() {
    let doc = Document::new("labels", "1.0.0")
        .methods(Labeller::openrpc_methods())
        .to_value();
    let mut all = Vec::new();
    objects(&doc, String::new(), &mut all);
    for (at, object) in &all {
        for keyword in NOT_IN_DRAFT_07 {
            assert!(
                !object.contains_key(keyword),
                "`{keyword}` at {at}: {doc:#}"
            );
        }
        if object.contains_key("$ref") {
            assert_eq!(object.len(), 1, "a `$ref` with siblings at {at}: {doc:#}");
        }
    }

    let swap = method(&doc, "swap");
    assert_eq!(swap["paramStructure"], "by-position");
    for schema in [&swap["params"][0]["schema"], &swap["result"]["schema"]] {
        let items = schema["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema}"));
        assert_eq!(items.len(), 2, "{schema}");
    }
    let join = method(&doc, "join");
    let ends = &join["params"][0]["schema"];
    assert_eq!(
        ends["items"][1]["$ref"], "#/components/schemas/Point",
        "{ends}"
    );

    let label = method(&doc, "label");
    assert_eq!(label["paramStructure"], "by-name");
    let at = &label["params"][0];
    assert_eq!(at["name"], "at");
    assert_eq!(
        at["schema"]["allOf"][0]["$ref"], "#/components/schemas/Point",
        "{at}"
    );
    assert_eq!(at["schema"]["description"], "Where the label goes.", "{at}");
}

#[tokio::test]
async fn rpc_discover_serves_the_document_over_a_connection() {
    let document = Document::new("geometry", "2.1.0").methods(Service::openrpc_methods());
    let router = Service.into_router().discover(&document);
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder()
        .config(Config::default())
        .router(router)
        .spawn(b);
    let client = Peer::spawn(a);
    let discovered: Value = client.call("rpc.discover", ()).await.unwrap();
    assert_eq!(discovered, document.to_value());
}

#[tokio::test]
async fn spec_server_answers_rpc_discover_with_its_methods() {
    let command = tokio::process::Command::new(tests::example_path("spec_server"));
    let config = Config::default();
    let (transport, _child) = jsonrpc_runtime::transport::ChildProcess::spawn(command, &config)
        .unwrap()
        .into_parts();
    let client = Peer::spawn(transport);
    let doc: Value = client.call("rpc.discover", ()).await.unwrap();
    assert_eq!(doc["info"]["title"], "spec_server");
    let subtract = method(&doc, "subtract");
    assert_eq!(subtract["paramStructure"], "by-name");
    assert_eq!(subtract["params"][0]["name"], "minuend");
    assert_eq!(method(&doc, "sum")["paramStructure"], "by-position");
    assert!(method(&doc, "notify_hello").get("result").is_none());
}
