//! The message of a caught panic, and the report of a monitor's.

use std::any::Any;

/// The message of a panic, when its payload is a string.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic payload)")
}

/// Logs a monitor hook's panic: the response goes out unchanged.
#[cold]
pub(crate) fn log_monitor_panic(panic: &(dyn Any + Send)) {
    error_limited!(
        panic = panic_message(panic),
        "pronghorn: monitor hook panicked; response unchanged"
    );
}
