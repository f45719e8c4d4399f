//! Where a client's bytes stand among its WebSocket frames.
//!
//! tungstenite keeps a message it has begun to read — a frame not yet
//! whole, or the fragments of a message not yet ended — and says nothing
//! of it until the message is whole. [`Progress`] follows the same bytes
//! as they are read, frame header by frame header, so that the socket
//! knows whether a message is underway and how much of it there is: what
//! the message timeout and the server's allowance for bodies go by.
//!
//! It reads only the frame headers (RFC 6455, 5.2) and skips payloads by
//! their length: a few operations a frame, whatever its size.

/// The longest frame header: two bytes, a 64-bit length, a mask.
const LONGEST_HEADER: usize = 2 + 8 + 4;

/// Where a client's byte stream stands among its frames.
#[derive(Debug, Default)]
pub(super) struct Progress {
    /// The current frame's header, as far as it came.
    header: [u8; LONGEST_HEADER],
    header_read: usize,
    /// The current frame's payload bytes still to come.
    payload_left: u64,
    /// Whether a data message stays open once the current frame ends: a
    /// fragment without FIN began it, and no final one came yet.
    open_after_frame: bool,
    /// Whether a data message is open between its frames.
    open: bool,
    /// The bytes read since the stream was last between messages.
    since_boundary: u64,
    /// Whether the current frame, once whole, ends what tungstenite yields
    /// as one item: a message (its final frame) or a control frame.
    ends_item: bool,
    /// How many such items have been read whole.
    items: u64,
    /// The largest frame payload since [`Progress::forget_largest`].
    largest: u64,
}

impl Progress {
    /// Whether the stream is between messages: no frame begun, no
    /// fragmented message left open.
    pub(super) fn between_messages(&self) -> bool {
        self.header_read == 0 && self.payload_left == 0 && !self.open
    }

    /// The bytes read since the stream was last between messages: those of
    /// the message underway, and of the control frames among its frames.
    pub(super) fn underway(&self) -> u64 {
        self.since_boundary
    }

    /// How many messages and control frames have been read whole: each is
    /// one item tungstenite yields.
    pub(super) fn items(&self) -> u64 {
        self.items
    }

    /// The largest frame payload read since the last call to
    /// [`forget_largest`](Self::forget_largest).
    pub(super) fn largest(&self) -> u64 {
        self.largest
    }

    pub(super) fn forget_largest(&mut self) {
        self.largest = 0;
    }

    /// Follows `bytes`, the next the client sent.
    pub(super) fn read(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let taken = if self.payload_left > 0 {
                let taken = usize::try_from(self.payload_left)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                self.payload_left -= taken as u64;
                if self.payload_left == 0 {
                    self.frame_ended();
                }
                taken
            } else {
                self.header[self.header_read] = bytes[0];
                self.header_read += 1;
                self.header_progressed();
                1
            };
            bytes = &bytes[taken..];
            self.since_boundary += taken as u64;
            if self.between_messages() {
                self.since_boundary = 0;
            }
        }
    }

    /// A byte of the header came: once it is whole, the payload follows.
    fn header_progressed(&mut self) {
        if self.header_read < 2 {
            return;
        }
        let [first, second, ..] = self.header;
        let length_bytes = match second & 0x7f {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let mask_bytes = if second & 0x80 != 0 { 4 } else { 0 };
        if self.header_read < 2 + length_bytes + mask_bytes {
            return;
        }
        self.payload_left = match length_bytes {
            0 => u64::from(second & 0x7f),
            _ => self.header[2..2 + length_bytes]
                .iter()
                .fold(0, |length, &byte| (length << 8) | u64::from(byte)),
        };
        let fin = first & 0x80 != 0;
        let control = first & 0x08 != 0;
        // A control frame may come between the fragments of a message and
        // leaves it as it was; a data frame opens it, or ends it with FIN.
        self.open_after_frame = if control { self.open } else { !fin };
        self.ends_item = control || fin;
        self.largest = self.largest.max(self.payload_left);
        // The header is whole: the payload follows, if the frame has one.
        self.header_read = 0;
        if self.payload_left == 0 {
            self.frame_ended();
        }
    }

    fn frame_ended(&mut self) {
        self.open = self.open_after_frame;
        self.items += u64::from(self.ends_item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked frame: FIN or not, its opcode and its payload's length.
    fn frame(fin: bool, opcode: u8, length: usize) -> Vec<u8> {
        let mut frame = vec![(u8::from(fin) << 7) | opcode];
        match length {
            0..=125 => frame.push(0x80 | length as u8),
            126..=0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(length as u16).to_be_bytes());
            }
            _ => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(length as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&[1, 2, 3, 4]);
        frame.resize(frame.len() + length, b'x');
        frame
    }

    const TEXT: u8 = 1;
    const BINARY: u8 = 2;
    const CONTINUATION: u8 = 0;
    const PING: u8 = 9;

    /// Reads `bytes` a chunk of `chunk` at a time, and says after each
    /// whether the stream was between messages.
    fn boundaries(bytes: &[u8], chunk: usize) -> Vec<bool> {
        let mut progress = Progress::default();
        bytes
            .chunks(chunk)
            .map(|chunk| {
                progress.read(chunk);
                progress.between_messages()
            })
            .collect()
    }

    #[test]
    fn whole_messages_of_every_length_end_between_messages() {
        for length in [0, 1, 125, 126, 1000, 0xffff, 0x10000, 200_000] {
            let bytes = frame(true, BINARY, length);
            for chunk in [1, 7, 4096, bytes.len()] {
                let seen = boundaries(&bytes, chunk);
                assert_eq!(seen.last(), Some(&true), "length {length}, chunk {chunk}");
                assert!(
                    seen[..seen.len() - 1].iter().all(|between| !between),
                    "length {length}, chunk {chunk}: between messages mid-frame"
                );
            }
        }
    }

    #[test]
    fn a_message_in_fragments_is_underway_until_its_final_one() {
        let mut progress = Progress::default();
        progress.read(&frame(false, TEXT, 300));
        assert!(!progress.between_messages());
        // A ping among the fragments does not end the message.
        progress.read(&frame(true, PING, 4));
        assert!(!progress.between_messages());
        progress.read(&frame(false, CONTINUATION, 10));
        assert!(!progress.between_messages());
        assert_eq!(
            progress.underway(),
            (2 + 2 + 4 + 300) + (2 + 4 + 4) + (2 + 4 + 10)
        );
        progress.read(&frame(true, CONTINUATION, 0));
        assert!(progress.between_messages());
        assert_eq!(progress.underway(), 0);
    }

    #[test]
    fn a_ping_between_messages_is_underway_only_while_it_is_read() {
        let ping = frame(true, PING, 10);
        let mut progress = Progress::default();
        progress.read(&ping[..5]);
        assert!(!progress.between_messages());
        assert_eq!(progress.underway(), 5);
        progress.read(&ping[5..]);
        assert!(progress.between_messages());
    }

    /// A frame of a generated stream: a data frame that is the last of its
    /// message or not, or a ping (a control frame, among a message's
    /// frames or between messages).
    #[derive(Clone, Debug)]
    enum Generated {
        Data { last: bool, length: usize },
        Ping { length: usize },
    }

    fn generated() -> impl proptest::strategy::Strategy<Value = Generated> {
        use proptest::prelude::*;
        let length = prop_oneof![0..126usize, 126..2000usize, 65_530..65_600usize];
        prop_oneof![
            (any::<bool>(), length).prop_map(|(last, length)| Generated::Data { last, length }),
            (0..126usize).prop_map(|length| Generated::Ping { length }),
        ]
    }

    proptest::proptest! {
        /// However the bytes of any stream of frames are cut, the stream is
        /// between messages exactly where a message, or a control frame
        /// outside one, has just ended; what is underway is what came
        /// since; the items read whole are the messages and control frames
        /// ended so far; and the largest frame is the largest sent.
        #[test]
        fn between_messages_exactly_at_the_ends_of_messages(
            frames in proptest::collection::vec(generated(), 1..12),
            cuts in proptest::collection::vec(1..40_000usize, 1..40),
        ) {
            let mut bytes = Vec::new();
            let mut boundaries = vec![0];
            let mut item_ends = Vec::new();
            let mut open = false;
            for generated in &frames {
                match *generated {
                    Generated::Data { last, length } => {
                        let opcode = if open { CONTINUATION } else { BINARY };
                        bytes.extend(frame(last, opcode, length));
                        open = !last;
                        if last {
                            item_ends.push(bytes.len());
                        }
                    }
                    Generated::Ping { length } => {
                        bytes.extend(frame(true, PING, length));
                        item_ends.push(bytes.len());
                    }
                }
                if !open {
                    boundaries.push(bytes.len());
                }
            }
            let largest = frames.iter().map(|generated| match *generated {
                Generated::Data { length, .. } | Generated::Ping { length } => length as u64,
            });
            let largest = largest.max().unwrap();
            let mut progress = Progress::default();
            let (mut at, mut cuts) = (0, cuts.into_iter().cycle());
            while at < bytes.len() {
                let next = (at + cuts.next().unwrap()).min(bytes.len());
                progress.read(&bytes[at..next]);
                at = next;
                let last_boundary = *boundaries.iter().rev().find(|&&b| b <= at).unwrap();
                proptest::prop_assert_eq!(progress.between_messages(), last_boundary == at, "at {}", at);
                proptest::prop_assert_eq!(progress.underway(), (at - last_boundary) as u64, "at {}", at);
                let items = item_ends.iter().filter(|&&end| end <= at).count() as u64;
                proptest::prop_assert_eq!(progress.items(), items, "at {}", at);
            }
            proptest::prop_assert_eq!(progress.largest(), largest);
        }
    }

    #[test]
    fn bytes_past_a_message_count_toward_the_next() {
        let mut bytes = frame(true, TEXT, 20);
        let next = frame(true, BINARY, 100);
        bytes.extend_from_slice(&next[..30]);
        let mut progress = Progress::default();
        progress.read(&bytes);
        assert!(!progress.between_messages());
        assert_eq!(progress.underway(), 30);
    }
}
