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
/// It checks functions without generic parameters (a closure can be
/// written as one to be checked). A handler written for a `Router<S>`,
/// whose `State<T>` is read from its `S` by `FromRef`, names it as axum's
/// does: `#[debug_handler(state = AppState)]`.
#[proc_macro_attribute]
pub fn debug_handler(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let function = parse_macro_input!(item as ItemFn);
    let checks = match state_type(attribute.into()) {
        Ok(state) => checks(&function, &state).unwrap_or_else(syn::Error::into_compile_error),
        Err(error) => error.into_compile_error(),
    };
    quote!(#function #checks).into()
}

/// The state type named by `state = Type`, else the state of a router that
/// names none.
fn state_type(attribute: TokenStream2) -> syn::Result<syn::Type> {
    if attribute.is_empty() {
        return Ok(syn::parse_quote!(::pronghorn::handler::ByType));
    }
    let refused = |tokens: &TokenStream2| {
        syn::Error::new_spanned(
            tokens,
            "`debug_handler` takes one argument, the state type: `state = AppState`",
        )
    };
    let named: syn::MetaNameValue =
        syn::parse2(attribute.clone()).map_err(|_| refused(&attribute))?;
    if !named.path.is_ident("state") {
        return Err(refused(&attribute));
    }
    match named.value {
        syn::Expr::Path(path) => Ok(syn::Type::Path(syn::TypePath {
            qself: path.qself,
            path: path.path,
        })),
        _ => Err(refused(&attribute)),
    }
}

/// A function that is never called, whose body holds a check for each part
/// of the handler, each spanned where the part is written.
fn checks(function: &ItemFn, state: &syn::Type) -> syn::Result<TokenStream2> {
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
            false => quote_spanned!(ty.span()=> ::pronghorn::__private::head_extractor::<#ty, #state>();),
            true => quote_spanned!(ty.span()=> ::pronghorn::__private::last_extractor::<#ty, _, #state>();),
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

/// `#[derive(FromRequest)]`: a body extractor (pronghorn's `FromRequestBody`)
/// for a one-field tuple struct, read through the extractor named in
/// `#[from_request(via(Extractor))]` and refused with its rejection, or with
/// `#[from_request(rejection(MyError))]`'s type made from it, as axum's
/// derive does.
///
/// ```ignore
/// #[derive(FromRequest)]
/// #[from_request(via(pronghorn::handler::Json), rejection(ApiError))]
/// struct Json<T>(T);
/// ```
#[proc_macro_derive(FromRequest, attributes(from_request))]
pub fn derive_from_request(item: TokenStream) -> TokenStream {
    derive(item, Part::Body)
}

/// `#[derive(FromRequestParts)]`: the same as `FromRequest`, for an
/// extractor of the request's head (pronghorn's `FromRequestHead`), read
/// through `via` a head extractor such as `Path` or `Query`.
#[proc_macro_derive(FromRequestParts, attributes(from_request))]
pub fn derive_from_request_parts(item: TokenStream) -> TokenStream {
    derive(item, Part::Head)
}

/// What a derived extractor reads.
#[derive(Clone, Copy)]
enum Part {
    Head,
    Body,
}

fn derive(item: TokenStream, part: Part) -> TokenStream {
    let input = parse_macro_input!(item as syn::DeriveInput);
    derived(&input, part)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn derived(input: &syn::DeriveInput, part: Part) -> syn::Result<TokenStream2> {
    let (mut via, mut rejection) = (None::<syn::Path>, None::<syn::Type>);
    for attribute in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("from_request"))
    {
        attribute.parse_nested_meta(|meta| {
            let content;
            syn::parenthesized!(content in meta.input);
            if meta.path.is_ident("via") {
                via = Some(content.parse()?);
            } else if meta.path.is_ident("rejection") {
                rejection = Some(content.parse()?);
            } else {
                return Err(meta.error("expected `via(Extractor)` or `rejection(Type)`"));
            }
            Ok(())
        })?;
    }
    let Some(via) = via else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "a derived extractor reads through another: add `#[from_request(via(Extractor))]`",
        ));
    };
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Unnamed(fields),
        ..
    }) = &input.data
    else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "a derived extractor is a tuple struct of one field: `struct Json<T>(T);`",
        ));
    };
    let [field] = fields.unnamed.iter().collect::<Vec<_>>()[..] else {
        return Err(syn::Error::new_spanned(
            fields,
            "a derived extractor is a tuple struct of one field",
        ));
    };
    let name = &input.ident;
    let field_ty = &field.ty;
    let read = quote!(#via<#field_ty>);
    let (extracted, unwrap) = match &rejection {
        Some(rejection) => (
            quote!(::pronghorn::handler::WithRejection<#read, #rejection>),
            quote!(|::pronghorn::handler::WithRejection(#via(value), _)| Self(value)),
        ),
        None => (read.clone(), quote!(|#via(value)| Self(value))),
    };
    let mut generics = input.generics.clone();
    let trait_path = match part {
        Part::Head => quote!(::pronghorn::handler::FromRequestHead),
        Part::Body => quote!(::pronghorn::handler::FromRequestBody),
    };
    let where_clause = generics.make_where_clause();
    where_clause
        .predicates
        .push(syn::parse_quote!(#extracted: #trait_path));
    for param in input.generics.type_params() {
        let ident = &param.ident;
        where_clause
            .predicates
            .push(syn::parse_quote!(#ident: ::core::marker::Send + 'static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let body = match part {
        Part::Head => quote! {
            fn from_head(
                context: &::pronghorn::handler::RequestContext<'_>,
            ) -> ::core::result::Result<Self, ::pronghorn::__private::Response> {
                let extracted = <#extracted as #trait_path>::from_head(context)?;
                ::core::result::Result::Ok((#unwrap)(extracted))
            }

            fn needs(needs: &mut ::pronghorn::handler::Needs) {
                <#extracted as #trait_path>::needs(needs);
            }
        },
        Part::Body => quote! {
            type Future = ::pronghorn::__private::Via<
                <#extracted as #trait_path>::Future,
                #extracted,
                Self,
            >;

            fn from_body(
                body: ::pronghorn::Body,
                context: &::pronghorn::handler::RequestContext<'_>,
            ) -> Self::Future {
                ::pronghorn::__private::Via::new(
                    <#extracted as #trait_path>::from_body(body, context),
                    #unwrap,
                )
            }
        },
    };
    Ok(quote! {
        impl #impl_generics #trait_path for #name #ty_generics #where_clause {
            #body
        }
    })
}

/// `#[derive(FromRef)]`: pronghorn's `FromRef<Self>` for the type of each
/// field of a struct, as axum's derive makes it, so that a handler under a
/// `Router<Self>` reads a field as `State<FieldType>`. A field marked
/// `#[from_ref(skip)]` is left out (two fields of one type would make two
/// implementations).
///
/// ```ignore
/// #[derive(Clone, FromRef)]
/// struct AppState {
///     db: Db,
///     #[from_ref(skip)]
///     name: String,
/// }
/// ```
#[proc_macro_derive(FromRef, attributes(from_ref))]
pub fn derive_from_ref(item: TokenStream) -> TokenStream {
    let input = parse_macro_input!(item as syn::DeriveInput);
    from_ref(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn from_ref(input: &syn::DeriveInput) -> syn::Result<TokenStream2> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "`FromRef` is derived for a struct without generic parameters",
        ));
    }
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Named(fields),
        ..
    }) = &input.data
    else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`FromRef` is derived for a struct with named fields",
        ));
    };
    let name = &input.ident;
    let mut impls = TokenStream2::new();
    for field in &fields.named {
        let mut skip = false;
        for attribute in field.attrs.iter().filter(|a| a.path().is_ident("from_ref")) {
            attribute.parse_nested_meta(|meta| match meta.path.is_ident("skip") {
                true => {
                    skip = true;
                    Ok(())
                }
                false => Err(meta.error("expected `skip`")),
            })?;
        }
        if skip {
            continue;
        }
        let (ident, ty) = (&field.ident, &field.ty);
        impls.extend(quote_spanned! {ty.span()=>
            impl ::pronghorn::handler::FromRef<#name> for #ty {
                fn from_ref(state: &#name) -> Self {
                    ::core::clone::Clone::clone(&state.#ident)
                }
            }
        });
    }
    Ok(impls)
}
