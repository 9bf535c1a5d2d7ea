//! A typed model of the annotated trait or enum, borrowing from syn.

use proc_macro2::Span;

use crate::attr::{self, Code, Kind, ServiceArgs, Spanned};
use crate::case;
use crate::ctxt::Ctxt;

/// An `#[rpc]` trait.
pub(crate) struct Service<'a> {
    pub(crate) item: &'a syn::ItemTrait,
    pub(crate) args: ServiceArgs,
    pub(crate) methods: Vec<Method<'a>>,
    /// The supertraits whose routes the trait serves: every trait bound on
    /// `Self` (after the colon or in the `where` clause) but std's markers.
    pub(crate) supertraits: Vec<&'a syn::Path>,
}

/// std's marker and auto traits, which a supertrait list names without
/// their being `#[rpc]` traits. They are recognized by their last path
/// segment: they have no methods to serve, cannot be `#[rpc]` traits, and
/// this is the one place where matching a trait by its name is acceptable
/// (every other supertrait is asked for its routes by the compiler).
const MARKER_TRAITS: [&str; 8] = [
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Clone",
    "Copy",
    "UnwindSafe",
    "RefUnwindSafe",
];

/// The supertraits of `item` that are served with it.
fn supertraits(item: &syn::ItemTrait) -> Vec<&syn::Path> {
    let on_self = item
        .generics
        .where_clause
        .iter()
        .flat_map(|w| &w.predicates)
        .filter_map(|p| match p {
            syn::WherePredicate::Type(t) => match &t.bounded_ty {
                syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self") => {
                    Some(&t.bounds)
                }
                _ => None,
            },
            _ => None,
        })
        .flatten();
    item.supertraits
        .iter()
        .chain(on_self)
        .filter_map(|bound| match bound {
            syn::TypeParamBound::Trait(t)
                if matches!(t.modifier, syn::TraitBoundModifier::None) =>
            {
                Some(&t.path)
            }
            // Lifetimes, `?Sized`, `use<..>`.
            _ => None,
        })
        .filter(|path| {
            path.segments
                .last()
                .is_some_and(|s| !MARKER_TRAITS.contains(&s.ident.to_string().as_str()))
        })
        .collect()
}

/// One method of the trait.
pub(crate) struct Method<'a> {
    pub(crate) item: &'a syn::TraitItemFn,
    pub(crate) kind: Kind,
    /// The wire name, with the span to report it at.
    pub(crate) wire: Spanned<String>,
    /// The injected context argument (always first), if any.
    pub(crate) context: Option<ContextArg<'a>>,
    pub(crate) args: Vec<Arg<'a>>,
    /// The single argument is the whole params object.
    pub(crate) whole_params: bool,
    pub(crate) output: Output<'a>,
    /// The type of progress reports (`progress = T`).
    pub(crate) progress: Option<syn::Type>,
    /// The type of partial results (`partial = T`).
    pub(crate) partial: Option<syn::Type>,
    /// What a subscription has beyond a request.
    pub(crate) subscription: Option<SubscriptionParts<'a>>,
}

/// A subscription method's names and its `PendingSubscription<T>`
/// argument.
pub(crate) struct SubscriptionParts<'a> {
    /// The method its items arrive under.
    pub(crate) items: String,
    pub(crate) unsubscribe: String,
    /// `T` of the `PendingSubscription<T>` argument.
    pub(crate) item: &'a syn::Type,
}

/// How the context argument is written.
pub(crate) enum ContextArg<'a> {
    /// `Context`.
    Plain(&'a syn::Type),
    /// `TypedContext<P>`.
    Typed(&'a syn::Type),
    /// Any type marked `#[rpc(context)]` (an alias): checked by the
    /// compiler.
    Marked(&'a syn::Type),
}

impl<'a> ContextArg<'a> {
    pub(crate) fn ty(&self) -> &'a syn::Type {
        match self {
            ContextArg::Plain(ty) | ContextArg::Typed(ty) | ContextArg::Marked(ty) => ty,
        }
    }
}

/// A decoded argument.
pub(crate) struct Arg<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) ty: &'a syn::Type,
    /// The member's name in by-name params, after `rename` and
    /// `rename_all`, with the span to report it at.
    pub(crate) wire: Spanned<String>,
    /// An `Option<T>` argument may be left out.
    pub(crate) optional: bool,
}

/// What the method's future yields, as written. Whether it is a `Result`
/// on the wire is decided by the compiler (see `expand::ReturnGen`); the
/// written form only chooses how the client's types are spelled.
pub(crate) enum Output<'a> {
    /// `()` (or nothing written).
    Unit,
    /// Written `Result<T, E>`: the client spells `T` and `E` (and checks
    /// that this is the `Result` it looks like).
    Result {
        ty: &'a syn::Type,
        ok: &'a syn::Type,
        err: &'a syn::Type,
    },
    /// Any other type: a value, or an alias of `Result`.
    Other(&'a syn::Type),
}

impl Output<'_> {
    /// The tokens to report a return type at, when there is one.
    pub(crate) fn ty(&self) -> Option<&syn::Type> {
        match self {
            Output::Unit => None,
            Output::Result { ty, .. } | Output::Other(ty) => Some(ty),
        }
    }
}

impl<'a> Service<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, args: ServiceArgs, item: &'a syn::ItemTrait) -> Self {
        for param in &item.generics.params {
            match param {
                syn::GenericParam::Type(_) => {}
                syn::GenericParam::Lifetime(l) => cx.error_spanned_by(
                    l,
                    "lifetime parameters are not supported on `#[rpc]` traits; params are decoded into owned values",
                ),
                syn::GenericParam::Const(c) => {
                    cx.error_spanned_by(c, "const parameters are not supported on `#[rpc]` traits")
                }
            }
        }
        let mut methods = Vec::new();
        for trait_item in &item.items {
            match trait_item {
                syn::TraitItem::Fn(f) => {
                    let rename_all = args.rename_all.as_ref().map(|r| r.value.as_str());
                    if let Some(method) = Method::from_syn(cx, f, rename_all) {
                        methods.push(method);
                    }
                }
                other => cx.error_spanned_by(
                    other,
                    "`#[rpc]` traits may only contain methods; move associated types and consts to another trait",
                ),
            }
        }
        Service {
            item,
            args,
            methods,
            supertraits: supertraits(item),
        }
    }

    /// The client type's name: `<Trait>Client` unless renamed.
    pub(crate) fn client_ident(&self) -> syn::Ident {
        self.args.client.clone().unwrap_or_else(|| {
            // At the trait's name, so that a type of the same name is
            // reported there.
            quote::format_ident!(
                "{}Client",
                unraw(&self.item.ident),
                span = self.item.ident.span()
            )
        })
    }
}

impl<'a> Method<'a> {
    fn from_syn(cx: &Ctxt, item: &'a syn::TraitItemFn, rename_all: Option<&str>) -> Option<Self> {
        let sig = &item.sig;
        let args = attr::method_args(cx, &item.attrs);
        let kind = method_kind(cx, sig, &args);
        let wire = args.name.clone().unwrap_or_else(|| Spanned {
            value: unraw(&sig.ident),
            span: args.kind.as_ref().map_or(sig.ident.span(), |k| k.span),
        });

        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &sig.generics,
                "generic methods are not supported in `#[rpc]` traits; put the type parameter on the trait",
            );
        }
        check_receiver(cx, sig);
        let output = output(cx, sig);
        check_owned_output(cx, &output);

        let mut context = None;
        let mut pending = None;
        let mut decoded = Vec::new();
        let mut whole_params: Option<Span> = None;
        for (index, input) in sig.inputs.iter().enumerate() {
            let syn::FnArg::Typed(typed) = input else {
                continue;
            };
            let arg_args = attr::arg_args(cx, &typed.attrs);
            reject_serde_attributes(cx, typed);
            if let Some(by_ref) = context_by_reference(&typed.ty) {
                cx.error_spanned_by(
                    by_ref,
                    "take the `Context` by value, like `ctx: Context`: each request gets its own, moved into the handler",
                );
                continue;
            }
            if arg_args.context.is_some() || is_context(&typed.ty) {
                if index != 1 || context.is_some() {
                    cx.error_spanned_by(
                        typed,
                        "the `Context` argument must come first, right after `&self`",
                    );
                }
                context = Some(if arg_args.context.is_some() {
                    ContextArg::Marked(&typed.ty)
                } else if is_typed_context(&typed.ty) {
                    ContextArg::Typed(&typed.ty)
                } else {
                    ContextArg::Plain(&typed.ty)
                });
                continue;
            }
            if let Some(item) = pending_item(&typed.ty) {
                let first = index == 1 + usize::from(context.is_some());
                if kind != Kind::Subscription {
                    cx.error_spanned_by(
                        &typed.ty,
                        "only a `#[rpc(subscription = \"...\")]` method takes a `PendingSubscription`",
                    );
                } else if !first || pending.is_some() {
                    cx.error_spanned_by(
                        typed,
                        "the `PendingSubscription` argument must come first, after `&self` and the `Context` if there is one",
                    );
                }
                pending = Some(item);
                continue;
            }
            let Some(ident) = decoded_ident(cx, typed) else {
                continue;
            };
            if let Some(span) = arg_args.whole_params {
                whole_params = Some(span);
            }
            let wire = match arg_args.rename {
                Some(rename) => rename,
                None => Spanned {
                    value: case::rename_field(&unraw(ident), rename_all),
                    span: ident.span(),
                },
            };
            decoded.push(Arg {
                ident,
                ty: &typed.ty,
                wire,
                optional: is_option(&typed.ty),
            });
        }
        if let Some(span) = whole_params {
            if decoded.len() != 1 {
                cx.error_at(
                    span,
                    "`#[rpc(params)]` takes the whole params object, so it must be the method's only argument besides a `Context`",
                );
            }
        }
        let subscription = (kind == Kind::Subscription)
            .then(|| match pending {
                Some(item) => Some(SubscriptionParts {
                    items: args
                        .items
                        .as_ref()
                        .map_or_else(|| wire.value.clone(), |n| n.value.clone()),
                    unsubscribe: args
                        .unsubscribe
                        .as_ref()
                        .map(|n| n.value.clone())
                        .unwrap_or_default(),
                    item,
                }),
                None => {
                    cx.error_spanned_by(
                        &sig.ident,
                        "a subscription method takes a `PendingSubscription<T>` argument, \
                         right after `&self`, where `T` is the type of its items",
                    );
                    None
                }
            })
            .flatten();
        Some(Method {
            subscription,
            item,
            kind,
            wire,
            context,
            args: decoded,
            whole_params: whole_params.is_some(),
            output,
            progress: args.progress,
            partial: args.partial,
        })
    }

    /// The method's documentation attributes, to copy onto generated items.
    pub(crate) fn docs(&self) -> impl Iterator<Item = &syn::Attribute> {
        self.item.attrs.iter().filter(|a| a.path().is_ident("doc"))
    }

    /// The method's `#[cfg(...)]` attributes, to copy onto its route and
    /// client method.
    pub(crate) fn cfgs(&self) -> impl Iterator<Item = &syn::Attribute> {
        self.item.attrs.iter().filter(|a| a.path().is_ident("cfg"))
    }

    /// The method's `#[deprecated]` attribute, to copy onto its client
    /// method.
    pub(crate) fn deprecated(&self) -> impl Iterator<Item = &syn::Attribute> {
        self.item
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("deprecated"))
    }
}

fn check_receiver(cx: &Ctxt, sig: &syn::Signature) {
    match sig.inputs.first() {
        Some(syn::FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
        Some(syn::FnArg::Receiver(r)) if r.reference.is_some() => cx.error_spanned_by(
            r,
            "`#[rpc]` methods take `&self`, not `&mut self`: requests run concurrently, so keep mutable state behind a lock or atomics",
        ),
        Some(syn::FnArg::Receiver(r)) => cx.error_spanned_by(
            r,
            "`#[rpc]` methods take `&self`, not `self`: one service value answers every request, so methods borrow it",
        ),
        _ => cx.error_spanned_by(
            &sig.ident,
            format!("`#[rpc]` method `{}` must take `&self` as its first argument", sig.ident),
        ),
    }
}

/// Reports a result written as a reference (`&'static str`): results are
/// decoded into owned values on the calling side.
fn check_owned_output(cx: &Ctxt, output: &Output<'_>) {
    let ty = match output {
        Output::Unit => return,
        Output::Result { ok, .. } => *ok,
        Output::Other(ty) => *ty,
    };
    if let syn::Type::Reference(r) = ty {
        cx.error_spanned_by(
            r,
            "`#[rpc]` methods return owned values, decoded on the calling side; \
             return `String` for `&str`, `Vec<T>` for `&[T]`",
        );
    }
}

/// Reads the output of an `async fn`, or of a `fn` returning
/// `impl Future<Output = T>`.
fn output<'a>(cx: &Ctxt, sig: &'a syn::Signature) -> Output<'a> {
    let written = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some(&**ty),
    };
    if sig.asyncness.is_some() {
        return written.map_or(Output::Unit, classify_output);
    }
    match written.and_then(future_output) {
        Some(Some(ty)) => classify_output(ty),
        Some(None) => Output::Unit,
        None => {
            cx.error_spanned_by(
                sig.fn_token,
                format!(
                    "`#[rpc]` methods must be async: write `async fn {}`, or return `impl Future<Output = T> + Send`",
                    sig.ident
                ),
            );
            Output::Unit
        }
    }
}

/// `impl Future<Output = T> + ...`: `Some(Some(T))`; `impl Future + ...`
/// with no `Output` written: `Some(None)`; anything else: `None`.
fn future_output(ty: &syn::Type) -> Option<Option<&syn::Type>> {
    let syn::Type::ImplTrait(imp) = ty else {
        return None;
    };
    imp.bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let last = t.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return Some(None);
        };
        Some(args.args.iter().find_map(|arg| match arg {
            syn::GenericArgument::AssocType(a) if a.ident == "Output" => Some(&a.ty),
            _ => None,
        }))
    })
}

fn classify_output(ty: &syn::Type) -> Output<'_> {
    if let syn::Type::Tuple(t) = ty {
        if t.elems.is_empty() {
            return Output::Unit;
        }
    }
    if let Some((ok, err)) = result_args(ty) {
        return Output::Result { ty, ok, err };
    }
    Output::Other(ty)
}

/// `Result<T, E>` (any path ending in `Result` with two type arguments).
fn result_args(ty: &syn::Type) -> Option<(&syn::Type, &syn::Type)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// A context argument, written `Context` or `TypedContext<P>` (or with a
/// path ending in either). Under another name, `#[rpc(context)]` marks it.
fn is_context(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => {
            p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| {
                    (s.ident == "Context" && s.arguments.is_empty()) || s.ident == "TypedContext"
                })
        }
        _ => false,
    }
}

/// `T` of a `PendingSubscription<T>` argument.
fn pending_item(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || last.ident != "PendingSubscription" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    }
}

fn is_typed_context(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "TypedContext"))
}

/// `&Context` or `&mut Context`: the reference, to report it at.
fn context_by_reference(ty: &syn::Type) -> Option<&syn::TypeReference> {
    match ty {
        syn::Type::Reference(r) if is_context(&r.elem) => Some(r),
        _ => None,
    }
}

/// An identifier as peers see it: `r#move` is `move`.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    match name.strip_prefix("r#") {
        Some(unrawed) => unrawed.to_owned(),
        None => name,
    }
}

fn is_option(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option")
        }
        _ => false,
    }
}

/// A `#[derive(RpcError)]` enum.
pub(crate) struct ErrorEnum<'a> {
    pub(crate) item: &'a syn::DeriveInput,
    pub(crate) variants: Vec<ErrorVariant<'a>>,
}

/// One variant and its wire mapping.
pub(crate) struct ErrorVariant<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) fields: &'a syn::Fields,
    pub(crate) code: Code,
    pub(crate) message: String,
}

impl<'a> ErrorEnum<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, item: &'a syn::DeriveInput) -> Option<Self> {
        let data = match &item.data {
            syn::Data::Enum(data) => data,
            syn::Data::Struct(s) => {
                cx.error_spanned_by(
                    s.struct_token,
                    "`#[derive(RpcError)]` works on enums: one variant per error code",
                );
                return None;
            }
            syn::Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "`#[derive(RpcError)]` works on enums: one variant per error code",
                );
                return None;
            }
        };
        let mut variants = Vec::new();
        for variant in &data.variants {
            let args = attr::error_args(cx, &variant.attrs);
            let Some(code) = args.code else {
                if args.code_written {
                    // The wrong value was reported by `attr`.
                } else if let (None, Some((_, discriminant))) = (args.span, &variant.discriminant) {
                    let code = quote::ToTokens::to_token_stream(discriminant)
                        .to_string()
                        .replace("- ", "-");
                    cx.error_spanned_by(
                        discriminant,
                        format!(
                            "an enum discriminant is not an error code; write \
                             `#[rpc(error(code = {code}))]` on variant `{}` instead",
                            variant.ident
                        ),
                    );
                } else if let Some(span) = args.span {
                    cx.error_at(
                        span,
                        "missing `code` in `error(...)`, like `error(code = -32010)`",
                    );
                } else {
                    cx.error_spanned_by(
                        &variant.ident,
                        format!(
                            "missing `#[rpc(error(code = ...))]` on variant `{}`: every variant needs its own code",
                            variant.ident
                        ),
                    );
                }
                continue;
            };
            let message = args
                .message
                .map_or_else(|| case::sentence(&unraw(&variant.ident)), |m| m.value);
            variants.push(ErrorVariant {
                ident: &variant.ident,
                fields: &variant.fields,
                code,
                message,
            });
        }
        Some(ErrorEnum { item, variants })
    }
}

/// Reports `serde` attributes on an argument, which the macro does not read.
fn reject_serde_attributes(cx: &Ctxt, typed: &syn::PatType) {
    for attr in typed.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        cx.error_spanned_by(
            attr,
            "`serde` attributes do not apply to `#[rpc]` arguments; \
             rename a params member with `#[rpc(rename = \"name\")]`, \
             or take the whole params as one type with `#[rpc(params)]`",
        );
    }
}

/// The name of an argument decoded from params: a plain name, of an owned
/// type; anything else is reported.
fn decoded_ident<'a>(cx: &Ctxt, typed: &'a syn::PatType) -> Option<&'a syn::Ident> {
    let ident = match &*typed.pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => &p.ident,
        pat => {
            cx.error_spanned_by(
                pat,
                "patterns are not supported in `#[rpc]` arguments; use a plain name like `point: Point`: it is the member's name in by-name params",
            );
            return None;
        }
    };
    match &*typed.ty {
        syn::Type::Reference(r) => {
            cx.error_spanned_by(
                r,
                "`#[rpc]` arguments are decoded from params and must be owned types; use `String` for `&str`, `Vec<T>` for `&[T]`",
            );
            return None;
        }
        syn::Type::ImplTrait(i) => {
            cx.error_spanned_by(
                i,
                "`impl Trait` arguments are not supported in `#[rpc]` traits; name the type, or put a type parameter on the trait",
            );
            return None;
        }
        _ => {}
    }
    Some(ident)
}

/// Whether a method is a request or a notification; a method without
/// either is reported (and read as a request, so expansion goes on).
fn method_kind(cx: &Ctxt, sig: &syn::Signature, args: &attr::MethodArgs) -> Kind {
    match &args.kind {
        Some(kind) => kind.value,
        // An `#[rpc]` attribute without a kind was reported by `attr`.
        None if args.has_attr => Kind::Request,
        None => {
            cx.error_spanned_by(
                &sig.ident,
                format!(
                    "missing `#[rpc(request = \"...\")]` or `#[rpc(notification = \"...\")]` on `{}`",
                    sig.ident
                ),
            );
            Kind::Request
        }
    }
}
