//! `#[debug_handler]` for [pronghorn](https://docs.rs/pronghorn): enabled by
//! pronghorn's `macros` feature and used as `pronghorn::debug_handler`.
//!
//! A handler with a mistake is refused where it is registered, as "not a
//! handler of pronghorn's": rustc cannot tell which of the handler's forms
//! was meant, so it cannot say what is wrong. On the handler's function,
//! `#[debug_handler]` checks each part on its own, so that the first error
//! names the argument that is not an extractor, the body extractor that is
//! not last, the answer that is not a response, or the value that makes an
//! asynchronous handler's future not `Send`. It changes nothing else: the
//! function is left as written.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::{FnArg, ItemFn, ReturnType, parse_macro_input, spanned::Spanned};

/// Checks a handler function part by part; see the [crate docs](crate).
///
/// It takes no arguments, and checks functions without generic parameters
/// (a closure can be written as one to be checked).
#[proc_macro_attribute]
pub fn debug_handler(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let function = parse_macro_input!(item as ItemFn);
    let checks = if attribute.is_empty() {
        checks(&function).unwrap_or_else(syn::Error::into_compile_error)
    } else {
        let attribute = TokenStream2::from(attribute);
        syn::Error::new_spanned(attribute, "`debug_handler` takes no arguments")
            .into_compile_error()
    };
    quote!(#function #checks).into()
}

/// A function that is never called, whose body holds a check for each part
/// of the handler, each spanned where the part is written.
fn checks(function: &ItemFn) -> syn::Result<TokenStream2> {
    let signature = &function.sig;
    if !signature.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &signature.generics,
            "`debug_handler` checks a handler without generic parameters",
        ));
    }
    let mut types = Vec::new();
    for input in &signature.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                return Err(syn::Error::new_spanned(
                    receiver,
                    "a handler is a function, not a method",
                ));
            }
            FnArg::Typed(typed) => types.push(&*typed.ty),
        }
    }
    if types.len() > 8 {
        return Err(syn::Error::new_spanned(
            &signature.inputs,
            "a handler takes at most eight extractors",
        ));
    }
    let mut body = TokenStream2::new();
    let last = types.len().saturating_sub(1);
    for (index, ty) in types.iter().enumerate() {
        body.extend(match index == last {
            false => quote_spanned!(ty.span()=> ::pronghorn::__private::head_extractor::<#ty>();),
            true => quote_spanned!(ty.span()=> ::pronghorn::__private::last_extractor::<#ty, _>();),
        });
    }
    let name = &signature.ident;
    let arguments: Vec<_> = (0..types.len())
        .map(|n| format_ident!("argument_{n}"))
        .collect();
    let output = match &signature.output {
        ReturnType::Default => name.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let answer = match signature.asyncness {
        Some(_) => quote_spanned!(output=> ::pronghorn::__private::async_answer),
        None => quote_spanned!(output=> ::pronghorn::__private::answer),
    };
    body.extend(quote! {
        let _ = |#(#arguments: #types),*| #answer(#name(#(#arguments),*));
    });
    let check = format_ident!("__pronghorn_debug_handler_{}", name);
    Ok(quote! {
        #[allow(
            non_snake_case,
            unused,
            clippy::all,
            reason = "a check that is never called, in the user's crate"
        )]
        fn #check() {
            #body
        }
    })
}
