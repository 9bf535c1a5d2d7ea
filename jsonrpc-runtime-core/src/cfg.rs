//! Items that exist only with a cargo feature, marked so in the docs: one
//! macro instead of a pair of attributes on each item. Exported (hidden)
//! for `jsonrpc-runtime`: a `cfg` in an expansion reads the features of
//! the crate that calls it.

/// `cfg_feature! { "tcp", items... }`: each item compiled with the feature
/// on, and shown in the docs as needing it.
#[doc(hidden)]
#[macro_export]
macro_rules! cfg_feature {
    ($feature:literal, $($item:item)*) => {
        $(
            #[cfg(feature = $feature)]
            #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
            $item
        )*
    };
}

/// `cfg_unix! { items... }`: Unix domain sockets, on Unix with the `unix`
/// feature.
#[doc(hidden)]
#[macro_export]
macro_rules! cfg_unix {
    ($($item:item)*) => {
        $(
            #[cfg(all(unix, feature = "unix"))]
            #[cfg_attr(docsrs, doc(cfg(all(unix, feature = "unix"))))]
            $item
        )*
    };
}
