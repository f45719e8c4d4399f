//! Where a hook applies, and when it runs among the hooks that do.

use http::Method;

use crate::router::request::compiled::Priority;

/// Where a hook applies: methods (or any), a pattern whose subtree it
/// covers, and a priority.
///
/// A pattern string converts into a scope for any method at
/// [`Priority::NORMAL`].
///
/// ```
/// use http::Method;
/// use pronghorn::router::{Priority, Scope};
///
/// let everywhere: Scope = "/".into();
/// let admin_gets = Scope::new("/admin").method(Method::GET).priority(Priority::HIGH);
/// let writes = Scope::new("/items").methods([Method::POST, Method::PUT, Method::DELETE]);
/// # let _ = (everywhere, admin_gets, writes);
/// ```
#[derive(Clone, Debug)]
pub struct Scope {
    /// The methods it applies to; none for any.
    methods: Vec<Method>,
    pattern: String,
    priority: Priority,
}

impl Scope {
    /// Its pattern, its methods (none for any) and its priority.
    pub(super) fn into_parts(self) -> (String, Vec<Method>, Priority) {
        (self.pattern, self.methods, self.priority)
    }

    /// The same scope, its pattern as `rebase` makes it (below a base).
    pub(super) fn rebased(mut self, rebase: impl FnOnce(&str) -> String) -> Self {
        self.pattern = rebase(&self.pattern);
        self
    }

    /// Any method, `pattern`'s subtree, normal priority.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            methods: Vec::new(),
            pattern: pattern.into(),
            priority: Priority::NORMAL,
        }
    }

    /// Only requests with `method`, or one of the methods given before:
    /// `.method(Method::POST).method(Method::DELETE)` takes both.
    pub fn method(mut self, method: Method) -> Self {
        if !self.methods.contains(&method) {
            self.methods.push(method);
        }
        self
    }

    /// Only requests with one of `methods` (and those given before).
    pub fn methods(self, methods: impl IntoIterator<Item = Method>) -> Self {
        methods.into_iter().fold(self, Self::method)
    }

    /// Runs at `priority`.
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
}

impl From<&str> for Scope {
    fn from(pattern: &str) -> Self {
        Self::new(pattern)
    }
}

impl From<String> for Scope {
    fn from(pattern: String) -> Self {
        Self::new(pattern)
    }
}

impl From<(Method, &str)> for Scope {
    fn from((method, pattern): (Method, &str)) -> Self {
        Self::new(pattern).method(method)
    }
}
