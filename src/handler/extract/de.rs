//! A serde deserializer over `(key, value)` string pairs: route parameters
//! for [`Path`](super::Path) and query pairs for [`Query`](super::Query).
//!
//! Written here rather than taken from a crate: route parameters are byte
//! ranges into the path, decoded lazily and borrowed when clean, which no
//! general-purpose deserializer reads; and one small deserializer serves the
//! query string too.

use std::{borrow::Cow, fmt, iter::Peekable};

use http::Response;
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
    value::StrDeserializer,
};

use super::{Rejection, RequestContext};
use crate::body::Body;

/// Why a value could not be deserialized; the message names the key.
#[derive(Debug)]
pub(crate) struct Error {
    message: String,
    /// Whether the keys, or their number, do not fit the type: no values
    /// would do, only other keys.
    shape: bool,
    /// The value that did not read, where one did not.
    failed: Option<Box<Failed>>,
}

impl Error {
    /// What went wrong, naming the key.
    #[inline]
    pub(super) fn message(&self) -> &str {
        &self.message
    }

    /// The value that did not read, where one did not.
    #[inline]
    pub(super) fn failure(&self) -> Option<&Failed> {
        self.failed.as_deref()
    }
}

/// A value that did not read: its key, where it stood, the type it was
/// read as (if it was parsed as one), and why it did not read.
#[derive(Debug)]
pub(crate) struct Failed {
    key: String,
    value: String,
    at: At,
    expected: Option<&'static str>,
    /// Why, without the key: the parser's own words.
    detail: String,
    /// Whether the value did not decode to UTF-8.
    not_utf8: bool,
}

impl Failed {
    /// The value of `key`, `value` as it came, that did not decode to
    /// UTF-8, the decoder saying why (`detail`).
    pub(super) fn not_utf8(key: String, value: String, detail: String) -> Self {
        Failed {
            key,
            value,
            at: At::Key,
            expected: None,
            detail,
            not_utf8: true,
        }
    }

    /// Its key.
    #[inline]
    pub(super) fn key(&self) -> &str {
        &self.key
    }

    /// Its value, as it came.
    #[inline]
    pub(super) fn value(&self) -> &str {
        &self.value
    }

    /// Where it stood.
    #[inline]
    pub(super) fn at(&self) -> At {
        self.at
    }

    /// The type it was read as, if it was parsed as one.
    #[inline]
    pub(super) fn expected(&self) -> Option<&'static str> {
        self.expected
    }

    /// Why, without the key: the parser's own words.
    #[inline]
    pub(super) fn detail(&self) -> &str {
        &self.detail
    }

    /// Whether it did not decode to UTF-8.
    #[inline]
    pub(super) fn is_not_utf8(&self) -> bool {
        self.not_utf8
    }
}

/// Where a value stood in what it was read into.
#[derive(Clone, Copy, Debug)]
pub(crate) enum At {
    /// The only value, read as a value of its own (`Path<u32>`).
    Single,
    /// The value at this index of a sequence or tuple.
    Index(usize),
    /// The value of its key, in a map or struct.
    Key,
}

impl Error {
    /// A value that did not decode or parse.
    pub(crate) fn value(message: String) -> Self {
        Self {
            message,
            shape: false,
            failed: None,
        }
    }

    /// The value `failed` did not read; the message names its key.
    pub(crate) fn failed(failed: Failed) -> Self {
        Self {
            message: format!("`{}`: {}", failed.key, failed.detail),
            shape: false,
            failed: Some(Box::new(failed)),
        }
    }

    fn shape(message: String) -> Self {
        Self {
            message,
            shape: true,
            failed: None,
        }
    }

    /// The error as serde's path-naming crates word it: the key, then the
    /// parser's words (`limit: invalid digit found in string`).
    pub(crate) fn with_path(&self) -> String {
        match &self.failed {
            Some(failed) => format!("{}: {}", failed.key, failed.detail),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error::value(message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        Error::shape(de::value::Error::missing_field(field).to_string())
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Error::shape(de::value::Error::unknown_field(field, expected).to_string())
    }
}

pub(crate) type Pair<'a> = Result<(Cow<'a, str>, Cow<'a, str>), Error>;

/// Deserializes a map or struct from the pairs by key, a sequence or tuple
/// from the values in order (or from the pairs, as `(key, value)` tuples),
/// and a single value from a lone pair.
pub(crate) struct Pairs<'a, I: Iterator<Item = Pair<'a>>> {
    pairs: Peekable<I>,
    count: usize,
    /// The index of the next element, read as a sequence.
    index: usize,
    /// The value whose key `next_key_seed` just gave out.
    value: Option<(Cow<'a, str>, Cow<'a, str>)>,
    /// Whether the values are stand-ins, for [`misfit`].
    probe: bool,
    /// Whether a lone pair read as any type is its value, as a route's
    /// one parameter is (`Path<serde_json::Value>` on `/{a}` is `"abc"`);
    /// else the pairs are a map, as a query's are.
    lone_is_value: bool,
}

impl<'a, I: Iterator<Item = Pair<'a>>> Pairs<'a, I> {
    pub(crate) fn new(pairs: I, count: usize) -> Self {
        Self {
            pairs: pairs.peekable(),
            count,
            index: 0,
            value: None,
            probe: false,
            lone_is_value: false,
        }
    }

    /// The pairs of a route's parameters: a lone one, read as any type,
    /// is its value.
    pub(crate) fn of_path(pairs: I, count: usize) -> Self {
        Self {
            lone_is_value: true,
            ..Self::new(pairs, count)
        }
    }

    /// Pairs whose values stand in for any: a `bool` reads `false`, an enum
    /// its first variant, so that only the keys can fail.
    fn probe(pairs: I, count: usize) -> Self {
        Self {
            probe: true,
            ..Self::new(pairs, count)
        }
    }

    fn value(&self, key: Cow<'a, str>, value: Cow<'a, str>, at: At) -> Value<'a> {
        Value {
            key,
            value,
            at,
            probe: self.probe,
        }
    }

    fn single(mut self) -> Result<Value<'a>, Error> {
        if self.count != 1 {
            return Err(Error::shape(format!(
                "expected 1 value, found {}",
                self.count
            )));
        }
        let (key, value) = self.pairs.next().expect("one pair")?;
        Ok(self.value(key, value, At::Single))
    }
}

macro_rules! single_value {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.single()?.$method(visitor)
        }
    )*};
}

impl<'de, I: Iterator<Item = Pair<'de>>> Deserializer<'de> for Pairs<'de, I> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.lone_is_value && self.count == 1 {
            true => self.single()?.deserialize_any(visitor),
            false => self.deserialize_map(visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_map(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        if len != self.count {
            return Err(Error::shape(format!(
                "expected {len} values, found {}",
                self.count
            )));
        }
        visitor.visit_seq(self)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.single()?.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.count == 0 {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    single_value! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_bytes deserialize_byte_buf deserialize_identifier
    }
}

impl<'de, I: Iterator<Item = Pair<'de>>> MapAccess<'de> for Pairs<'de, I> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(pair) = self.pairs.next() else {
            return Ok(None);
        };
        let (key, value) = pair?;
        let result = seed.deserialize(Text(key.clone())).map(Some);
        self.value = Some((key, value));
        result
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (key, value) = self.value.take().expect("a key comes before its value");
        seed.deserialize(self.value(key, value, At::Key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.count)
    }
}

impl<'de, I: Iterator<Item = Pair<'de>>> SeqAccess<'de> for Pairs<'de, I> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some(pair) = self.pairs.next() else {
            return Ok(None);
        };
        let (key, value) = pair?;
        let at = At::Index(self.index);
        self.index += 1;
        seed.deserialize(self.value(key, value, at)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.count)
    }
}

/// A key: plain text.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserializer<'de> for Text<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Cow::Borrowed(text) => visitor.visit_borrowed_str(text),
            Cow::Owned(text) => visitor.visit_string(text),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// One value, parsed as the visitor asks; errors name its key.
struct Value<'a> {
    key: Cow<'a, str>,
    value: Cow<'a, str>,
    at: At,
    /// A stand-in value, for [`misfit`].
    probe: bool,
}

impl Value<'_> {
    fn parse<T: std::str::FromStr>(&self, what: &'static str) -> Result<T, Error>
    where
        T::Err: fmt::Display,
    {
        self.value.parse::<T>().map_err(|error| {
            let detail = error.to_string();
            let message = format!(
                "`{}`: cannot parse `{}` as {what}: {detail}",
                self.key, self.value
            );
            Error {
                message,
                ..self.failed(Some(what), detail)
            }
        })
    }

    /// The error of this value, read as `expected` if it was parsed.
    fn failed(&self, expected: Option<&'static str>, detail: String) -> Error {
        Error::failed(Failed {
            key: self.key.clone().into_owned(),
            value: self.value.clone().into_owned(),
            at: self.at,
            expected,
            detail,
            not_utf8: false,
        })
    }
}

macro_rules! parse_value {
    ($($method:ident $visit:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            visitor.$visit(self.parse::<$ty>(stringify!($ty))?)
        }
    )*};
}

impl<'de> Deserializer<'de> for Value<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let failed = |error: Error| Error {
            shape: error.shape,
            ..self.failed(None, error.message)
        };
        Text(self.value.clone())
            .deserialize_any(visitor)
            .map_err(failed)
    }

    /// A pair as a 2-tuple `(key, value)`, as serde_urlencoded reads
    /// `Vec<(String, String)>`; the value of a key (a struct's field) is
    /// no tuple or array, as axum refuses it.
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        match len {
            _ if matches!(self.at, At::Key) => {
                Err(Error::value("array types are not supported".to_owned()))
            }
            2 => visitor.visit_seq(Entry {
                key: Some(self.key.clone()),
                value: Some(self),
            }),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.probe {
            true => visitor.visit_bool(false),
            false => visitor.visit_bool(self.parse("bool")?),
        }
    }

    parse_value! {
        deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64,
        deserialize_i128 visit_i128 i128,
        deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32, deserialize_u64 visit_u64 u64,
        deserialize_u128 visit_u128 u128,
        deserialize_f32 visit_f32 f32, deserialize_f64 visit_f64 f64,
        deserialize_char visit_char char
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let value = match (self.probe, variants.first()) {
            (true, Some(first)) => first,
            _ => self.value.as_ref(),
        };
        let text: StrDeserializer<'_, Error> = value.into_deserializer();
        text.deserialize_enum(name, variants, visitor)
            .map_err(|error| self.failed(None, error.to_string()))
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct seq tuple_struct map
        struct identifier ignored_any
    }
}

/// A pair read as a 2-tuple: its key, then its value.
struct Entry<'a> {
    key: Option<Cow<'a, str>>,
    value: Option<Value<'a>>,
}

impl<'de> SeqAccess<'de> for Entry<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if let Some(key) = self.key.take() {
            return seed.deserialize(Text(key)).map(Some);
        }
        self.value
            .take()
            .map(|value| seed.deserialize(value))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.key.is_some()) + usize::from(self.value.is_some()))
    }
}

/// Why a `T` cannot be deserialized from parameters named `names`, whatever
/// their values: a number of them it does not take, a field none of them
/// names. Found by deserializing `T` from those names, each with a value
/// that stands in for any (`0`, `false`, an enum's first variant); an error
/// that depends on the value (`0` is no IP address) says nothing, and
/// neither does success.
pub(crate) fn misfit<T: de::DeserializeOwned>(names: &[Box<str>]) -> Option<String> {
    let pairs = names
        .iter()
        .map(|name| Ok((Cow::Borrowed(&**name), Cow::Borrowed("0"))));
    match T::deserialize(Pairs::probe(pairs, names.len())) {
        Err(Error {
            message,
            shape: true,
            ..
        }) => Some(message),
        _ => None,
    }
}

/// An optional extractor's answer: `None` when the keys do not fit the
/// type, whatever their values; a rejection when a value is malformed.
pub(super) fn optional<T>(
    context: &RequestContext<'_>,
    result: Result<T, Error>,
    rejection: impl FnOnce(Error) -> Rejection,
) -> Result<Option<T>, Response<Body>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.shape => Ok(None),
        Err(error) => Err(context.reject(rejection(error))),
    }
}
