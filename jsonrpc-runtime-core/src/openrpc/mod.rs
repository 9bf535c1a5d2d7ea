//! Descriptions of methods, from `#[rpc]` traits, and (feature `openrpc`)
//! the OpenRPC document built from them, served as `rpc.discover`.
//!
//! Every `#[rpc]` trait gets an associated function `openrpc_methods()`
//! (called on a type that implements it: `Service::openrpc_methods()`)
//! listing its methods as [`MethodDoc`]s: wire names, doc comments, params
//! by name and position, results, and the errors its error type declares
//! (codes and messages from `#[derive(RpcError)]`). With the `openrpc`
//! feature, `Document` turns them into an OpenRPC 1.3 document whose
//! JSON Schemas come from the Rust types through `schemars` (a type that
//! does not implement `JsonSchema` is described as any value), and
//! `Router::discover` serves it.

use std::fmt;

use serde_json::Value;

/// Builds the JSON Schema of one type into a generator (see
/// [`MethodDoc`]).
#[doc(hidden)]
pub type SchemaFn = fn(&mut SchemaGen) -> Value;

/// What schemas are built with: `schemars`' generator with the `openrpc`
/// feature, nothing without.
#[cfg(feature = "openrpc")]
#[doc(hidden)]
pub type SchemaGen = schemars::SchemaGenerator;

/// What schemas are built with: `schemars`' generator with the `openrpc`
/// feature, nothing without.
#[cfg(not(feature = "openrpc"))]
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct SchemaGen(());

/// One method of an `#[rpc]` trait, as `openrpc_methods()` lists it.
// Without the `openrpc` feature nothing builds a document from the schemas.
#[cfg_attr(not(feature = "openrpc"), allow(dead_code))]
#[derive(Clone)]
pub struct MethodDoc {
    pub(crate) name: &'static str,
    pub(crate) docs: &'static str,
    pub(crate) notification: bool,
    pub(crate) whole_params: bool,
    pub(crate) deprecated: bool,
    pub(crate) params: Vec<ParamDoc>,
    pub(crate) result: Option<SchemaFn>,
    pub(crate) errors: Vec<(i64, &'static str)>,
}

/// One argument of a [`MethodDoc`].
#[cfg_attr(not(feature = "openrpc"), allow(dead_code))]
#[derive(Clone)]
pub struct ParamDoc {
    pub(crate) name: &'static str,
    pub(crate) required: bool,
    pub(crate) schema: SchemaFn,
}

impl MethodDoc {
    /// The method's name on the wire.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Its doc comment.
    pub fn docs(&self) -> &str {
        self.docs
    }

    /// Whether it is a notification (no result).
    pub fn is_notification(&self) -> bool {
        self.notification
    }

    /// Its params' names on the wire, in order.
    pub fn param_names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|p| p.name)
    }

    /// The error codes and messages its error type declares.
    pub fn errors(&self) -> &[(i64, &'static str)] {
        &self.errors
    }
}

impl fmt::Debug for MethodDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodDoc")
            .field("name", &self.name)
            .field("notification", &self.notification)
            .field(
                "params",
                &self.params.iter().map(|p| p.name).collect::<Vec<_>>(),
            )
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ParamDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParamDoc")
            .field("name", &self.name)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

/// Asks for a type's schema: [`Described`] when it implements `JsonSchema`
/// (feature `openrpc`), else [`Undescribed`], which says "any value".
/// Generated code calls `(&Probe::<T>::new()).schema(gen)`.
#[doc(hidden)]
pub struct Probe<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Probe")
    }
}

impl<T: ?Sized> Probe<T> {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Probe(std::marker::PhantomData)
    }
}

/// A type with a schema.
#[doc(hidden)]
pub trait Described {
    fn schema(&self, generator: &mut SchemaGen) -> Value;
}

#[cfg(feature = "openrpc")]
impl<T: schemars::JsonSchema + ?Sized> Described for Probe<T> {
    fn schema(&self, generator: &mut SchemaGen) -> Value {
        generator.subschema_for::<T>().to_value()
    }
}

/// A type without one: any value.
#[doc(hidden)]
pub trait Undescribed {
    fn schema(&self, generator: &mut SchemaGen) -> Value;
}

impl<T: ?Sized> Undescribed for &Probe<T> {
    fn schema(&self, _: &mut SchemaGen) -> Value {
        Value::Object(serde_json::Map::new())
    }
}

/// A [`MethodDoc`], for generated code.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn method_doc(
    name: &'static str,
    docs: &'static str,
    notification: bool,
    whole_params: bool,
    deprecated: bool,
    params: Vec<ParamDoc>,
    result: Option<SchemaFn>,
    errors: Vec<(i64, &'static str)>,
) -> MethodDoc {
    MethodDoc {
        name,
        docs,
        notification,
        whole_params,
        deprecated,
        params,
        result,
        errors,
    }
}

/// A [`ParamDoc`], for generated code.
#[doc(hidden)]
pub fn param_doc(name: &'static str, required: bool, schema: SchemaFn) -> ParamDoc {
    ParamDoc {
        name,
        required,
        schema,
    }
}

#[cfg(feature = "openrpc")]
mod document;

#[cfg(feature = "openrpc")]
#[cfg_attr(docsrs, doc(cfg(feature = "openrpc")))]
pub use self::document::Document;
