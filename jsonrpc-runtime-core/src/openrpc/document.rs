//! The OpenRPC document.

use std::sync::Arc;

use schemars::generate::SchemaSettings;
use schemars::Schema;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::MethodDoc;
use crate::context::Context;
use crate::message::ErrorObject;
use crate::router::{Reply, Router};

/// An OpenRPC 1.3 document: the service's title and version, and the
/// methods of one or more `#[rpc]` traits (`Trait::openrpc_methods()`).
///
/// Schemas are JSON Schema draft 7 throughout, inline ones included, built
/// from the Rust types by `schemars`; types they share are described once,
/// under `components.schemas`, and referenced from each method. Params are
/// listed by name, in order, so a client may send them either way
/// (`paramStructure: "either"`); a method taking one params struct whole
/// (`#[rpc(params)]`) lists the struct's fields by name
/// (`paramStructure: "by-name"`).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::openrpc::Document;
/// use jsonrpc_runtime::{rpc, ErrorObject};
///
/// #[rpc]
/// trait Calculator {
///     /// Adds two integers.
///     #[rpc(request = "add")]
///     async fn add(&self, a: i64, b: i64) -> i64;
/// }
/// struct Service;
/// impl Calculator for Service {
///     async fn add(&self, a: i64, b: i64) -> i64 { a + b }
/// }
///
/// let doc = Document::new("calculator", "1.0.0")
///     .methods(Service::openrpc_methods())
///     .to_value();
/// assert_eq!(doc["openrpc"], "1.3.2");
/// assert_eq!(doc["methods"][0]["name"], "add");
/// assert_eq!(doc["methods"][0]["summary"], "Adds two integers.");
/// assert_eq!(doc["methods"][0]["params"][1]["name"], "b");
/// assert_eq!(doc["methods"][0]["result"]["schema"]["type"], "integer");
/// ```
#[derive(Debug, Clone)]
pub struct Document {
    title: String,
    version: String,
    description: Option<String>,
    methods: Vec<MethodDoc>,
}

impl Document {
    /// A document for the service `title` at `version`, with no methods.
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        Document {
            title: title.into(),
            version: version.into(),
            description: None,
            methods: Vec::new(),
        }
    }

    /// The service's description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds methods (a trait's `openrpc_methods()`).
    #[must_use]
    pub fn methods(mut self, methods: impl IntoIterator<Item = MethodDoc>) -> Self {
        self.methods.extend(methods);
        self
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Value {
        let mut settings = SchemaSettings::draft07();
        settings.definitions_path = "/components/schemas".into();
        settings.meta_schema = None;
        let mut generator = settings.into_generator();
        let methods: Vec<Value> = self
            .methods
            .iter()
            .map(|m| method(m, &mut generator))
            .collect();
        let mut info = Map::new();
        info.insert("title".into(), json!(self.title));
        info.insert("version".into(), json!(self.version));
        if let Some(description) = &self.description {
            info.insert("description".into(), json!(description));
        }
        json!({
            "openrpc": "1.3.2",
            "info": info,
            "methods": methods,
            "components": {"schemas": generator.take_definitions(true)},
        })
    }
}

/// One method object.
fn method(m: &MethodDoc, generator: &mut schemars::SchemaGenerator) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(m.name));
    let docs = m.docs.trim();
    if let Some(summary) = docs.lines().next().filter(|l| !l.is_empty()) {
        out.insert("summary".into(), json!(summary.trim()));
    }
    if docs.lines().count() > 1 {
        out.insert("description".into(), json!(docs));
    }
    let (params, structure) = if m.whole_params {
        whole_params(m, generator)
    } else {
        let params = m
            .params
            .iter()
            .map(|p| json!({"name": p.name, "required": p.required, "schema": schema_of(p.schema, generator)}))
            .collect();
        (params, "either")
    };
    out.insert("params".into(), Value::Array(params));
    out.insert("paramStructure".into(), json!(structure));
    if let Some(result) = m.result {
        out.insert(
            "result".into(),
            json!({"name": "result", "schema": schema_of(result, generator)}),
        );
    }
    if !m.errors.is_empty() {
        let errors: Vec<Value> = m
            .errors
            .iter()
            .map(|(code, message)| json!({"code": code, "message": message}))
            .collect();
        out.insert("errors".into(), Value::Array(errors));
    }
    if m.deprecated {
        out.insert("deprecated".into(), json!(true));
    }
    Value::Object(out)
}

/// The fields of a params struct taken whole, as by-name params (or, for
/// params that are not an object with fields, one param by position).
fn whole_params(
    m: &MethodDoc,
    generator: &mut schemars::SchemaGenerator,
) -> (Vec<Value>, &'static str) {
    let Some(param) = m.params.first() else {
        return (Vec::new(), "either");
    };
    let schema = schema_of(param.schema, generator);
    // Look through a reference to the struct's definition.
    let resolved = match schema.get("$ref").and_then(Value::as_str) {
        Some(path) => match path
            .strip_prefix("#/components/schemas/")
            .and_then(|name| generator.definitions().get(name).cloned())
        {
            Some(definition) => draft07(definition, generator),
            None => schema,
        },
        None => schema,
    };
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match resolved.get("properties").and_then(Value::as_object) {
        Some(properties) => (
            properties
                .iter()
                .map(|(name, schema)| {
                    json!({"name": name, "required": required.contains(&name.as_str()), "schema": schema})
                })
                .collect(),
            "by-name",
        ),
        // Not an object with fields (a sequence, say): one param, whole.
        None => (
            vec![json!({"name": param.name, "required": true, "schema": resolved})],
            "by-position",
        ),
    }
}

/// The schema `f` builds, in draft 7 (see [`draft07`]).
fn schema_of(f: super::SchemaFn, generator: &mut schemars::SchemaGenerator) -> Value {
    let schema = f(generator);
    draft07(schema, generator)
}

/// Applies the generator's draft 7 transforms to a schema that goes inline
/// in the document: tuples as `items` arrays rather than 2020-12's
/// `prefixItems`, no siblings next to a `$ref` (draft 7 ignores them), no
/// `unevaluatedProperties`. `schemars` applies them to the definitions it
/// hands over (`components.schemas`) but not to the schemas it returns for
/// use elsewhere, nor to the definitions read back through `definitions()`.
fn draft07(schema: Value, generator: &mut schemars::SchemaGenerator) -> Value {
    let mut schema = match schema {
        Value::Object(map) => Schema::from(map),
        Value::Bool(b) => Schema::from(b),
        other => return other,
    };
    for transform in generator.transforms_mut() {
        transform.transform(&mut schema);
    }
    schema.to_value()
}

impl Router {
    /// Serves `document` as `rpc.discover` (the OpenRPC service discovery
    /// method), built once now.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::openrpc::Document;
    /// use jsonrpc_runtime::{rpc, Router};
    ///
    /// #[rpc]
    /// trait Echo {
    ///     #[rpc(request = "echo")]
    ///     async fn echo(&self, text: String) -> String;
    /// }
    /// struct Service;
    /// impl Echo for Service {
    ///     async fn echo(&self, text: String) -> String { text }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let document = Document::new("echo", "1.0.0").methods(Service::openrpc_methods());
    /// let router = Service.into_router().discover(&document);
    /// let answer = router.respond(br#"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#).await.unwrap();
    /// let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
    /// assert_eq!(answer["result"]["methods"][0]["name"], "echo");
    /// # });
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if the router already has a route for `rpc.discover`.
    #[track_caller]
    #[must_use]
    pub fn discover(self, document: &Document) -> Router {
        let encoded = serde_json::value::to_raw_value(&document.to_value())
            .expect("a JSON value always encodes");
        let document: Arc<Box<RawValue>> = Arc::new(encoded);
        self.request("rpc.discover", move |(): (), _: Context| {
            let document = (*document).clone();
            async move { Reply::<(), ErrorObject>::Raw(Ok(document)) }
        })
    }
}
