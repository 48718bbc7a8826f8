//! The fixed-size record a thread writes for each span, instant or counter, and the field
//! visitor that fills it without allocating.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::Metadata;

/// Bytes of text kept inline per record (counter name, instant kind, wait reason, message).
pub(crate) const TEXT_BYTES: usize = 48;
/// Words per record: start, end, metadata, packed flags, number, text.
pub(crate) const WORDS: usize = 5 + TEXT_BYTES / 8;
/// Bytes one ring slot takes (the record plus its sequence stamp).
pub const SLOT_BYTES: usize = (WORDS + 1) * 8;

/// No field stored in this slot of the record.
const NONE: u8 = u8::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Span = 1,
    Instant = 2,
    Counter = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    U64 = 0,
    I64 = 1,
    F64 = 2,
    Bool = 3,
}

/// The one number and one text a record keeps of an event's or span's fields, chosen by
/// name (the lab's conventions first: `value`/`size`/`flow`, `counter`/`kind`/`reason`/
/// `message`), else the first of each kind.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub num: u64,
    pub num_kind: Num,
    pub num_idx: u8,
    pub num_pref: bool,
    pub text_idx: u8,
    pub text_pref: bool,
    pub text_len: u8,
    pub text: [u8; TEXT_BYTES],
}

impl Fields {
    pub(crate) const EMPTY: Fields = Fields {
        num: 0,
        num_kind: Num::U64,
        num_idx: NONE,
        num_pref: false,
        text_idx: NONE,
        text_pref: false,
        text_len: 0,
        text: [0; TEXT_BYTES],
    };

    fn field_idx(field: &Field) -> u8 {
        u8::try_from(field.index()).unwrap_or(NONE - 1)
    }

    fn put_num(&mut self, field: &Field, kind: Num, v: u64) {
        let pref = matches!(field.name(), "value" | "size" | "flow");
        if self.num_idx == NONE || (pref && !self.num_pref) {
            self.num = v;
            self.num_kind = kind;
            self.num_idx = Self::field_idx(field);
            self.num_pref = pref;
        }
    }

    fn text_slot(&mut self, field: &Field) -> bool {
        let pref = matches!(field.name(), "counter" | "kind" | "reason" | "message");
        if self.text_idx == NONE || (pref && !self.text_pref) {
            self.text_idx = Self::field_idx(field);
            self.text_pref = pref;
            self.text_len = 0;
            true
        } else {
            false
        }
    }

    pub(crate) fn text(&self) -> &str {
        // Only whole UTF-8 characters are ever copied in (see `TextBuf`).
        std::str::from_utf8(&self.text[..self.text_len as usize]).unwrap_or("")
    }

    pub(crate) fn num_field<'a>(&self, meta: &'a Metadata<'static>) -> Option<&'a str> {
        field_name(meta, self.num_idx)
    }

    pub(crate) fn text_field<'a>(&self, meta: &'a Metadata<'static>) -> Option<&'a str> {
        field_name(meta, self.text_idx)
    }
}

fn field_name<'a>(meta: &'a Metadata<'static>, idx: u8) -> Option<&'a str> {
    if idx == NONE {
        return None;
    }
    meta.fields().iter().nth(idx as usize).map(|f| f.name())
}

/// A `fmt::Write` into the record's inline text that truncates at a char boundary.
struct TextBuf<'a>(&'a mut Fields);

impl fmt::Write for TextBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let len = self.0.text_len as usize;
        let room = TEXT_BYTES - len;
        let mut n = s.len().min(room);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.0.text[len..len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.0.text_len = (len + n) as u8;
        Ok(())
    }
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put_num(field, Num::U64, value);
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put_num(field, Num::I64, value as u64);
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put_num(field, Num::F64, value.to_bits());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put_num(field, Num::Bool, value as u64);
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.text_slot(field) {
            let _ = TextBuf(self).write_str(value);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.text_slot(field) {
            let _ = write!(TextBuf(self), "{value:?}");
        }
    }
}

/// One record, decoded.
#[derive(Clone, Copy)]
pub(crate) struct Record {
    pub start_ns: u64,
    pub end_ns: u64,
    pub kind: Kind,
    pub meta: &'static Metadata<'static>,
    pub fields: Fields,
}

impl Record {
    pub(crate) fn encode(&self) -> [u64; WORDS] {
        let f = &self.fields;
        let mut w = [0u64; WORDS];
        w[0] = self.start_ns;
        w[1] = self.end_ns;
        w[2] = (self.meta as *const Metadata<'static>).expose_provenance() as u64;
        w[3] = self.kind as u64
            | (f.num_kind as u64) << 8
            | (f.num_idx as u64) << 16
            | (f.text_idx as u64) << 24
            | (f.text_len as u64) << 32;
        w[4] = f.num;
        for (k, chunk) in f.text.chunks_exact(8).enumerate() {
            w[5 + k] = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        }
        w
    }

    /// Decodes a record that [`Record::encode`] produced; `None` for an empty slot.
    pub(crate) fn decode(w: &[u64; WORDS]) -> Option<Record> {
        let kind = match w[3] & 0xff {
            1 => Kind::Span,
            2 => Kind::Instant,
            3 => Kind::Counter,
            _ => return None,
        };
        let addr = usize::try_from(w[2]).ok().filter(|&a| a != 0)?;
        let ptr = std::ptr::with_exposed_provenance::<Metadata<'static>>(addr);
        // SAFETY: word 2 of a record is only ever written by `encode`, from a
        // `&'static Metadata<'static>` whose provenance it exposed; the ring copies words
        // atomically and hands out only records whose stamp validated (never torn), so
        // `addr` is the address of that 'static, immutable metadata.
        let meta: &'static Metadata<'static> = unsafe { &*ptr };
        let num_kind = match (w[3] >> 8) & 0xff {
            1 => Num::I64,
            2 => Num::F64,
            3 => Num::Bool,
            _ => Num::U64,
        };
        let mut text = [0u8; TEXT_BYTES];
        for (k, chunk) in text.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&w[5 + k].to_le_bytes());
        }
        let text_len = (((w[3] >> 32) & 0xff) as usize).min(TEXT_BYTES) as u8;
        Some(Record {
            start_ns: w[0],
            end_ns: w[1],
            kind,
            meta,
            fields: Fields {
                num: w[4],
                num_kind,
                num_idx: ((w[3] >> 16) & 0xff) as u8,
                num_pref: false,
                text_idx: ((w[3] >> 24) & 0xff) as u8,
                text_pref: false,
                text_len,
                text,
            },
        })
    }
}
