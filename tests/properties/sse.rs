//! Server-sent events as a browser reads them: the property of
//! `tests/properties/main.rs` writes random [`Event`]s one after the other, as
//! an `Sse` body sends them, and reads the text back with the
//! interpretation of the HTML standard's `EventSource` ("Interpreting an
//! event stream"), written out below. Each event must come back as it was
//! built:
//!
//! - dispatched exactly when it has data, with that data, its line breaks
//!   (`\r\n`, `\n`, a lone `\r`) read as `\n`;
//! - with its type, and setting the stream's last id, minus the characters
//!   that cannot be sent in those one-line fields (line breaks, and NUL in
//!   an id, which makes a client ignore the id);
//! - with its reconnection delay, in milliseconds.

use std::time::Duration;

use pronghorn::sse::Event;

/// One event as built.
#[derive(Clone, Debug)]
pub struct Built {
    pub event: Option<String>,
    pub id: Option<String>,
    pub data: Option<String>,
    pub retry: Option<u32>,
}

impl Built {
    fn event(&self) -> Event {
        let mut event = Event::default();
        if let Some(kind) = &self.event {
            event = event.event(kind);
        }
        if let Some(id) = &self.id {
            event = event.id(id);
        }
        if let Some(data) = &self.data {
            event = event.data(data);
        }
        if let Some(retry) = self.retry {
            event = event.retry(Duration::from_millis(retry.into()));
        }
        event
    }
}

/// What a client sees of the stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Dispatched events: type (empty for the default `message`), data and
    /// the last id when it was dispatched.
    pub events: Vec<(String, String, String)>,
    /// The reconnection delays set, in order.
    pub retries: Vec<u64>,
}

/// The standard's interpretation of an event stream, for a whole stream.
pub fn interpret(stream: &str) -> Seen {
    let mut seen = Seen::default();
    let (mut kind, mut data, mut last_id) = (String::new(), String::new(), String::new());
    let stream = stream.strip_prefix('\u{feff}').unwrap_or(stream);
    // Lines end at CRLF, LF or CR; a final line without an end is dropped.
    let mut rest = stream;
    while let Some(end) = rest.find(['\r', '\n']) {
        let line = &rest[..end];
        let crlf = rest[end..].starts_with("\r\n");
        rest = &rest[end + if crlf { 2 } else { 1 }..];
        if line.is_empty() {
            // Dispatch, if there is data.
            if !data.is_empty() {
                data.pop(); // the last line's `\n`
                seen.events.push((
                    std::mem::take(&mut kind),
                    std::mem::take(&mut data),
                    last_id.clone(),
                ));
            }
            kind.clear();
            data.clear();
            continue;
        }
        if line.starts_with(':') {
            continue; // a comment
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => kind = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => last_id = value.to_owned(),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                seen.retries.push(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
    }
    seen
}

/// What the client must see of `events`, from how they were built.
pub fn expected(events: &[Built]) -> Seen {
    let one_line = |text: &str, drop_nul: bool| -> String {
        text.chars()
            .filter(|c| match c {
                '\r' | '\n' => false,
                '\0' => !drop_nul,
                _ => true,
            })
            .collect()
    };
    let mut seen = Seen::default();
    let mut last_id = String::new();
    for built in events {
        if let Some(id) = &built.id {
            last_id = one_line(id, true);
        }
        if let Some(retry) = built.retry {
            seen.retries.push(retry.into());
        }
        if let Some(data) = &built.data {
            let kind = built
                .event
                .as_deref()
                .map_or(String::new(), |kind| one_line(kind, false));
            let data = data.replace("\r\n", "\n").replace('\r', "\n");
            seen.events.push((kind, data, last_id.clone()));
        }
    }
    seen
}

/// Checks `events` written one after the other against what a client
/// must see; on a difference, fails with the stream and both readings.
pub fn check(events: &[Built]) -> Result<(), String> {
    let stream: String = events
        .iter()
        .map(|built| built.event().to_string())
        .collect();
    let seen = interpret(&stream);
    let expected = expected(events);
    if seen == expected {
        Ok(())
    } else {
        Err(format!(
            "stream {stream:?}: saw {seen:?}, expected {expected:?}"
        ))
    }
}
