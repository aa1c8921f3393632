//! What a tool with errors expands to.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Target, tool_name, tool_struct_decl, tool_struct_ident, toolbox_entry};
use crate::attr::ToolAttrs;
use crate::facade::Private;

/// What is emitted when the tool has errors: the names `toolbox!` and
/// `#[tools]` refer to still exist, so one mistake stays one error.
pub(super) fn fallback(target: &Target<'_>, attrs: &ToolAttrs, private: &Private) -> TokenStream {
    let tool_ident = tool_struct_ident(target);
    let name = tool_name(attrs, target);
    let tool_struct = tool_struct_decl(target, &tool_ident);
    let entry = toolbox_entry(target, &tool_ident, private);
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #tool_struct
        impl #tool_ident {
            #[doc(hidden)]
            pub const NAME: &'static str = #name;
        }
        #entry
        impl #private::Tool for #tool_ident {
            fn spec(&self) -> &#private::ToolSpec {
                ::core::unreachable!("this tool failed to compile")
            }
            fn call<'a>(&'a self, _: &'a #private::Ctx, _: &'a str) -> #private::ToolFuture<'a> {
                ::core::unreachable!("this tool failed to compile")
            }
        }
    }
}
