//! Collects every independent error so they are reported together.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// An error context, in the manner of serde_derive's: errors are pushed as
/// they are found, and [`Ctxt::check`] must be called before the context is
/// dropped (a forgotten check is a bug in this crate, so it panics).
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Reports `message` at the tokens of `node`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, node: T, message: M) {
        self.syn_error(syn::Error::new_spanned(node.into_token_stream(), message));
    }

    /// Reports `message` at `span`.
    pub(crate) fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.syn_error(syn::Error::new(span, message));
    }

    pub(crate) fn syn_error(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Consumes the context: `Err` with every error combined, if any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut iter = errors.into_iter();
        let Some(mut combined) = iter.next() else {
            return Ok(());
        };
        for error in iter {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("jsonrpc-macros: errors were collected but never checked");
        }
    }
}
