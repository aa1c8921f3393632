//! The one recipe behind gate's opaque error types, after `hyper::Error`.
//!
//! An error that callers branch on (the ledger's, the model client's, the
//! builder's, …) is declared with [`opaque_error!`]. The public type is one
//! box holding a private kind, the message and the underlying error: a
//! `Result` is no wider for it, and nothing is allocated until something
//! fails. Callers ask `is_*` predicates instead of matching variants, so a
//! new kind breaks no one, and the underlying error stays behind `source()`
//! for operators' logs.
//!
//! It is a crate of its own because the lowest crates with such an error,
//! gate-ledger and gate-model, have no gate crate below them in common; it
//! has no dependencies.

use std::convert::Infallible;
use std::error::Error;

/// The error underneath an opaque error, boxed as hyper boxes it.
pub type Cause = Box<dyn Error + Send + Sync + 'static>;

/// What an opaque error can hold behind `source()`: a [`Cause`], or
/// [`Infallible`] for an error that never has one (which lets it stay
/// `Clone` and `Eq`). Named by [`opaque_error!`]'s expansion only.
#[doc(hidden)]
pub trait Source {
    /// The held error, as [`Error::source`] returns it.
    fn as_source(&self) -> &(dyn Error + 'static);
}

impl Source for Cause {
    fn as_source(&self) -> &(dyn Error + 'static) {
        &**self
    }
}

impl Source for Infallible {
    fn as_source(&self) -> &(dyn Error + 'static) {
        match *self {}
    }
}

/// Compiles only for a type that can be returned across threads and boxed
/// as `dyn Error + Send + Sync + 'static`, as every caller of gate's errors
/// does. Called by [`opaque_error!`]'s expansion only.
#[doc(hidden)]
pub const fn assert_send_sync_static<T: Send + Sync + 'static>() {}

/// Declares an opaque error type.
///
/// ```
/// toolgate_error::opaque_error! {
///     /// Why a part could not be fetched.
///     pub struct FetchError(Box<FetchErrorImpl>);
///     enum Kind {
///         /// No part has that name.
///         NotFound => is_not_found,
///         /// The server answered with an error status.
///         Status { code: u16 } => is_status,
///     }
/// }
///
/// impl FetchError {
///     fn not_found(name: &str) -> Self {
///         Self::new(Kind::NotFound, format!("no part named `{name}`"), None)
///     }
///
///     fn status(code: u16, cause: std::io::Error) -> Self {
///         Self::new(Kind::Status { code }, format!("HTTP {code}"), Some(Box::new(cause)))
///     }
/// }
///
/// use std::error::Error;
///
/// let e = FetchError::not_found("sprocket");
/// assert!(e.is_not_found() && !e.is_status());
/// assert_eq!(e.to_string(), "no part named `sprocket`");
/// assert!(e.source().is_none());
/// assert_eq!(size_of::<Result<(), FetchError>>(), size_of::<usize>());
///
/// let e = FetchError::status(503, std::io::Error::other("reset"));
/// assert!(e.is_status());
/// assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("reset"));
/// ```
///
/// declares, in the calling module:
///
/// - `pub struct FetchError { inner: Box<FetchErrorImpl> }`, one pointer
///   wide, and `struct FetchErrorImpl { kind: Kind, message: String,
///   source: Option<Cause> }`;
/// - `enum Kind` with the variants listed (`Clone, Debug, PartialEq, Eq`);
/// - `fn new(kind, message, source) -> FetchError`, private: the type's own
///   constructors name the kind and write the message;
/// - for each variant followed by `=> is_x`, `pub fn is_x(&self) -> bool`,
///   true for that variant whatever its fields, documented and configured by
///   the variant's attributes (a variant without one gets no predicate, for
///   a predicate written by hand);
/// - `Display` (the message, whole: compose it in the constructor), `Debug`
///   (kind, message, source) and `std::error::Error` with `source()`.
///
/// An error that never has an underlying error ends its struct line with
/// `, source: Infallible`; it may then `#[derive(Clone, PartialEq, Eq)]`
/// (written after its doc comment), which applies to the box's contents too.
/// Further methods go in an `impl` block of their own, reading
/// `self.inner.kind`.
#[macro_export]
macro_rules! opaque_error {
    (@source) => { $crate::Cause };
    (@source $source:ty) => { $source };
    (@predicate $kind:ident $variant:ident [$($attr:tt)*]) => {};
    (@predicate $kind:ident $variant:ident [$($attr:tt)*] $predicate:ident) => {
        $($attr)*
        pub fn $predicate(&self) -> bool {
            ::std::matches!(self.inner.kind, $kind::$variant { .. })
        }
    };
    (
        $(#[doc = $doc:expr])*
        $(#[derive($($derive:ident),* $(,)?)])?
        $vis:vis struct $name:ident(Box<$repr:ident> $(, source: $source:ty)?);
        enum $kind:ident {
            $(
                $(#[$variant_attr:meta])*
                $variant:ident $({ $($field:ident: $field_ty:ty),* $(,)? })? $(=> $predicate:ident)?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        $(#[derive($($derive),*)])?
        $vis struct $name {
            inner: ::std::boxed::Box<$repr>,
        }

        $(#[derive($($derive),*)])?
        struct $repr {
            kind: $kind,
            message: ::std::string::String,
            source: ::std::option::Option<$crate::opaque_error!(@source $($source)?)>,
        }

        #[derive(Clone, Debug, PartialEq, Eq)]
        enum $kind {
            $(
                $(#[$variant_attr])*
                $variant $({ $($field: $field_ty),* })?
            ),*
        }

        const _: () = $crate::assert_send_sync_static::<$name>();

        impl $name {
            fn new(
                kind: $kind,
                message: impl ::std::convert::Into<::std::string::String>,
                source: ::std::option::Option<$crate::opaque_error!(@source $($source)?)>,
            ) -> Self {
                $name {
                    inner: ::std::boxed::Box::new($repr {
                        kind,
                        message: message.into(),
                        source,
                    }),
                }
            }

            $(
                $crate::opaque_error!(@predicate $kind $variant [$(#[$variant_attr])*] $($predicate)?);
            )*
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let mut debug = f.debug_struct(::std::stringify!($name));
                debug.field("kind", &self.inner.kind).field("message", &self.inner.message);
                if let ::std::option::Option::Some(source) = &self.inner.source {
                    debug.field("source", source);
                }
                debug.finish()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.inner.message)
            }
        }

        impl ::std::error::Error for $name {
            fn source(&self) -> ::std::option::Option<&(dyn ::std::error::Error + 'static)> {
                self.inner.source.as_ref().map($crate::Source::as_source)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::error::Error;

    opaque_error! {
        /// A cause-less error, comparable and cloneable like a value.
        #[derive(Clone, PartialEq, Eq)]
        pub struct ParseError(Box<ParseErrorImpl>, source: Infallible);
        enum Kind {
            /// The text ended early.
            Truncated { at: usize } => is_truncated,
            /// A character is out of place.
            Unexpected => is_unexpected,
        }
    }

    #[test]
    fn a_cause_less_error_is_a_value_without_a_source() {
        let truncated = ParseError::new(Kind::Truncated { at: 3 }, "ended at 3", None);
        let unexpected = ParseError::new(Kind::Unexpected, "`}` at 1", None);
        assert!(truncated.is_truncated() && !truncated.is_unexpected());
        assert!(unexpected.is_unexpected() && !unexpected.is_truncated());
        assert_eq!(truncated.clone(), truncated);
        assert_ne!(
            truncated,
            ParseError::new(Kind::Truncated { at: 4 }, "ended at 3", None)
        );
        assert!(truncated.source().is_none());
        assert_eq!(
            format!("{truncated:?}"),
            r#"ParseError { kind: Truncated { at: 3 }, message: "ended at 3" }"#
        );
        assert_eq!(size_of::<Result<(), ParseError>>(), size_of::<usize>());
    }

    mod with_cause {
        use std::error::Error;

        opaque_error! {
            /// An error with an underlying one.
            pub struct OpenError(Box<OpenErrorImpl>);
            enum Kind {
                /// The file is missing.
                Missing => is_missing,
            }
        }

        #[test]
        fn the_cause_is_the_source_and_shows_in_debug() {
            let e = OpenError::new(
                Kind::Missing,
                "cannot open `a.db`",
                Some(Box::new(std::io::Error::other("gone"))),
            );
            assert!(e.is_missing());
            assert_eq!(e.to_string(), "cannot open `a.db`");
            assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("gone"));
            assert!(
                format!("{e:?}").starts_with(r#"OpenError { kind: Missing, message: "cannot open `a.db`", source: "#)
            );
        }
    }
}
