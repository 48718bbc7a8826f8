//! The fixed-size record a thread writes for each span, instant or counter, and the field
//! visitor that fills it without allocating.
//!
//! Two sources write records into the same rings. The `tracing` path (the layer and the
//! standalone subscriber) names a record by its callsite's `&'static Metadata` and copies
//! up to [`TEXT_BYTES`] of text into it ([`Record::encode`], [`WORDS`] words). The direct
//! path (`handoff::trace`'s macros through the [`crate::direct`] sink) names it by its
//! `&'static Site` and keeps its text as a `&'static str` address and length, never
//! copied ([`encode_site`], [`SITE_WORDS`] words: a shorter record in the same slot). A
//! flag bit tells them apart; both decode to one [`Record`] whose names, field names and
//! text a dump reads the same way. Timestamps are raw clock readings in the ring and
//! nanoseconds once decoded.

use std::fmt::{self, Write as _};

use handoff::trace::{NumKind, Shape, Site, SiteKind, NO_FIELD};
use tracing::field::{Field, Visit};
use tracing::Metadata;

use crate::clock::Clock;

/// Bytes of text kept inline per record (counter name, instant kind, wait reason, message).
pub(crate) const TEXT_BYTES: usize = 48;
/// Words per record: start, end, metadata, packed flags, number, text.
pub(crate) const WORDS: usize = 5 + TEXT_BYTES / 8;
/// Words a direct-path record writes: start, end, site, packed flags, number, text address
/// (the text's length is in the flags).
pub(crate) const SITE_WORDS: usize = 6;
const _: () = assert!(SITE_WORDS <= WORDS);
/// Flag bit (word 3) of a direct-path record: word 2 is a `&'static Site`.
const SITE_BIT: u64 = 1 << 63;
/// Bits 32.. of word 3 that hold a direct-path record's text length.
const SITE_TEXT_LEN_MASK: u64 = (1 << 24) - 1;
/// Bytes one ring slot takes (the record plus its sequence stamp).
pub const SLOT_BYTES: usize = (WORDS + 1) * 8;

/// No field stored in this slot of the record.
const NONE: u8 = u8::MAX;
const _: () = assert!(NONE == NO_FIELD, "one \"no field\" index for both paths");

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
}

fn field_name(meta: &'static Metadata<'static>, idx: u8) -> Option<&'static str> {
    if idx == NONE {
        return None;
    }
    meta.fields().iter().nth(idx as usize).map(|f| f.name())
}

fn site_field(site: &'static Site, idx: u8) -> Option<&'static str> {
    site.fields.get(idx as usize).copied().filter(|_| idx != NO_FIELD)
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

/// What names a record: a `tracing` callsite or a direct-path call site.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    Meta(&'static Metadata<'static>),
    Site(&'static Site),
}

/// One record, decoded.
#[derive(Clone, Copy)]
pub(crate) struct Record {
    pub start_ns: u64,
    pub end_ns: u64,
    pub kind: Kind,
    pub source: Source,
    pub fields: Fields,
}

impl Record {
    /// The span's or event's name (a `tracing` event's is `event file:line`; a site's is
    /// its counter name, instant kind or span name).
    pub(crate) fn name(&self) -> &'static str {
        match self.source {
            Source::Meta(m) => m.name(),
            Source::Site(s) => s.name,
        }
    }

    /// The `tracing` target (the dump's category).
    pub(crate) fn target(&self) -> &'static str {
        match self.source {
            Source::Meta(m) => m.target(),
            Source::Site(s) => s.target,
        }
    }

    /// The name of the field the record's number came from.
    pub(crate) fn num_field(&self) -> Option<&'static str> {
        match self.source {
            Source::Meta(m) => field_name(m, self.fields.num_idx),
            Source::Site(s) => site_field(s, self.fields.num_idx),
        }
    }

    /// The name of the field the record's text came from.
    pub(crate) fn text_field(&self) -> Option<&'static str> {
        match self.source {
            Source::Meta(m) => field_name(m, self.fields.text_idx),
            Source::Site(s) => site_field(s, self.fields.text_idx),
        }
    }

    /// A `tracing`-path record; timestamps are raw clock readings.
    pub(crate) fn encode(
        start: u64,
        end: u64,
        kind: Kind,
        meta: &'static Metadata<'static>,
        f: &Fields,
    ) -> [u64; WORDS] {
        let mut w = [0u64; WORDS];
        w[0] = start;
        w[1] = end;
        w[2] = (meta as *const Metadata<'static>).expose_provenance() as u64;
        w[3] = kind as u64
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

    /// Decodes a record that [`Record::encode`] or [`encode_site`] produced, its
    /// timestamps turned into nanoseconds by `clock`; `None` for an empty slot.
    pub(crate) fn decode(w: &[u64; WORDS], clock: &Clock) -> Option<Record> {
        let kind = match w[3] & 0xff {
            1 => Kind::Span,
            2 => Kind::Instant,
            3 => Kind::Counter,
            _ => return None,
        };
        let addr = usize::try_from(w[2]).ok().filter(|&a| a != 0)?;
        let num_kind = match (w[3] >> 8) & 0xff {
            1 => Num::I64,
            2 => Num::F64,
            3 => Num::Bool,
            _ => Num::U64,
        };
        let mut fields = Fields {
            num: w[4],
            num_kind,
            num_idx: ((w[3] >> 16) & 0xff) as u8,
            text_idx: ((w[3] >> 24) & 0xff) as u8,
            ..Fields::EMPTY
        };
        let source = if w[3] & SITE_BIT != 0 {
            let ptr = std::ptr::with_exposed_provenance::<Site>(addr);
            // SAFETY: a record with SITE_BIT is only ever written by `encode_site`, whose
            // word 2 is the exposed address of a `&'static Site`; the ring hands out only
            // records whose stamp validated (never torn), so `addr` is that 'static,
            // immutable site.
            let site: &'static Site = unsafe { &*ptr };
            if fields.text_idx != NONE {
                let len = ((w[3] >> 32) & SITE_TEXT_LEN_MASK) as usize;
                fields.copy_text(site_text(w[5], len));
            }
            Source::Site(site)
        } else {
            let ptr = std::ptr::with_exposed_provenance::<Metadata<'static>>(addr);
            // SAFETY: word 2 of a record without SITE_BIT is only ever written by `encode`,
            // from a `&'static Metadata<'static>` whose provenance it exposed; the ring
            // copies words atomically and hands out only records whose stamp validated
            // (never torn), so `addr` is the address of that 'static, immutable metadata.
            let meta: &'static Metadata<'static> = unsafe { &*ptr };
            for (k, chunk) in fields.text.chunks_exact_mut(8).enumerate() {
                chunk.copy_from_slice(&w[5 + k].to_le_bytes());
            }
            fields.text_len = (((w[3] >> 32) & 0xff) as usize).min(TEXT_BYTES) as u8;
            Source::Meta(meta)
        };
        Some(Record { start_ns: clock.ns(w[0]), end_ns: clock.ns(w[1]), kind, source, fields })
    }
}

/// The text a direct-path record points at: `len` bytes at `addr` (a prefix of the
/// `&'static str` it was written from when that was longer than the length field holds).
fn site_text(addr: u64, len: usize) -> &'static [u8] {
    if len == 0 {
        return &[];
    }
    let Ok(addr) = usize::try_from(addr) else { return &[] };
    let ptr = std::ptr::with_exposed_provenance::<u8>(addr);
    // SAFETY: `encode_site` writes word 5 as the exposed address of a `&'static str` and
    // `len` as its length clamped to SITE_TEXT_LEN_MASK, both in one record that the ring
    // handed out only after its stamp validated; so `len` bytes from `ptr` lie within
    // that 'static, immutable string.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

impl Fields {
    /// Copies `bytes` (UTF-8, possibly cut mid-character at its end) into the inline text,
    /// truncated at a character boundary as the `tracing` path's `TextBuf` truncates.
    fn copy_text(&mut self, bytes: &[u8]) {
        let head = &bytes[..bytes.len().min(TEXT_BYTES)];
        let valid = match std::str::from_utf8(head) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        self.text[..valid].copy_from_slice(&head[..valid]);
        self.text_len = valid as u8;
    }
}

/// A direct-path record of `site` (see the module docs); timestamps are raw clock readings.
/// `shape` packs the number kind and the two field indexes in the order of word 3's bits
/// 8–31, so it goes in as it is.
#[inline(always)]
pub(crate) fn encode_site(
    start: u64,
    end: u64,
    site: &'static Site,
    num: u64,
    text: &'static str,
    shape: Shape,
) -> [u64; SITE_WORDS] {
    let kind = match site.kind {
        SiteKind::Span => Kind::Span,
        SiteKind::Instant => Kind::Instant,
        SiteKind::Counter => Kind::Counter,
    };
    let text_len = (text.len() as u64).min(SITE_TEXT_LEN_MASK);
    [
        start,
        end,
        (site as *const Site).expose_provenance() as u64,
        kind as u64 | ((shape.0 & 0xff_ffff) as u64) << 8 | text_len << 32 | SITE_BIT,
        num,
        text.as_ptr().expose_provenance() as u64,
    ]
}

// `Shape`'s number kinds are this module's `Num` discriminants (word 3 bits 8–15 decode
// through `Num`).
const _: () = {
    assert!(NumKind::U64 as u8 == Num::U64 as u8);
    assert!(NumKind::I64 as u8 == Num::I64 as u8);
    assert!(NumKind::F64 as u8 == Num::F64 as u8);
    assert!(NumKind::Bool as u8 == Num::Bool as u8);
};
