//! The trace macros' two ways out: through `tracing` while no sink is set (what a
//! subscriber such as `TraceLog` sees is unchanged), then straight into the sink once one
//! is, with the same names, field names and values a subscriber would have seen. One test:
//! the sink is set once per process.

use std::sync::Mutex;

use handoff::trace::{self, NumKind, Shape, Sink, Site, SiteKind, TraceLog, Values, NO_FIELD};
use handoff::{batch_counter, batch_span, consume_span, counter, instant, publish_span, wait_span};

/// One record as the sink got it: kind, name, target, (num field name, num, kind), (text
/// field name, text), whether it was a span that ended after it started.
type Got = (
    SiteKind,
    &'static str,
    String,
    Option<(&'static str, u64, NumKind)>,
    Option<(&'static str, &'static str)>,
    bool,
);

struct Collect(Mutex<Vec<Got>>, std::sync::atomic::AtomicU64);

fn field(site: &Site, idx: u8) -> Option<&'static str> {
    (idx != NO_FIELD).then(|| site.fields[idx as usize])
}

impl Collect {
    fn push(&self, site: &'static Site, v: Values, span: bool) {
        let num = field(site, v.num_field).map(|f| (f, v.num, v.num_kind));
        let text = field(site, v.text_field).map(|f| (f, v.text));
        self.0.lock().unwrap().push((site.kind, site.name, site.target.into(), num, text, span));
    }
}

impl Sink for Collect {
    fn now(&self) -> u64 {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
    fn event(&self, site: &'static Site, num: u64, text: &'static str, shape: Shape) {
        self.push(site, Values::from_parts(num, text, shape), false);
    }
    fn span(&self, site: &'static Site, start: u64, num: u64, text: &'static str, shape: Shape) {
        let ended_after = self.now() > start;
        self.push(site, Values::from_parts(num, text, shape), ended_after);
    }
}

/// Every macro form the lab uses, plus an instant in `tracing`'s `?` form.
fn emit(i: u64) {
    counter!("queue_depth", i);
    batch_counter!("sampled", i);
    instant!("overflow", count = i);
    instant!("halt", note = "text only", sequence = -3i64, value = 2.5f64, more = 1u32);
    instant!("debug_form", count = ?i);
    let _w = wait_span!(trace::WAIT_FULL);
    let _b = batch_span!(i + 1);
    let _p = publish_span!(trace::flow_id(1, i));
    let _c = consume_span!(trace::flow_id(1, i));
}

#[test]
fn macros_go_through_tracing_until_a_sink_is_set_then_straight_to_it() {
    let log = TraceLog::default();
    tracing::subscriber::with_default(log.clone(), || emit(7));
    let flow = trace::flow_id(1, 7);
    let want_lines = vec![
        "event lab::counter counter=queue_depth value=7".to_string(),
        "event lab::counter counter=sampled value=7".into(),
        "event lab::instant kind=overflow count=7".into(),
        "event lab::instant kind=halt note=text only sequence=-3 value=2.5 more=1".into(),
        "event lab::instant kind=debug_form count=7".into(),
        "span wait reason=full".into(),
        "span batch size=8".into(),
        format!("span publish flow={flow}"),
        format!("span consume flow={flow}"),
    ];
    assert_eq!(log.take(), want_lines);

    static SINK: Collect = Collect(Mutex::new(Vec::new()), std::sync::atomic::AtomicU64::new(1));
    assert!(trace::set_sink(&SINK).is_ok());
    assert!(trace::set_sink(&SINK).is_err(), "once per process");
    trace::set_batch_every(2);
    tracing::subscriber::with_default(log.clone(), || {
        emit(7);
        emit(8); // batch_counter! and batch_span! keep one call in 2
    });
    // Only the `?` form went through tracing.
    assert_eq!(
        log.take(),
        vec![
            "event lab::instant kind=debug_form count=7",
            "event lab::instant kind=debug_form count=8"
        ]
    );
    let got = std::mem::take(&mut *SINK.0.lock().unwrap());
    use SiteKind::*;
    let m = "sink".to_string(); // the module the spans are entered in, as for `tracing`
    let want: Vec<Got> = vec![
        (
            Counter,
            "queue_depth",
            "lab::counter".into(),
            Some(("value", 7, NumKind::U64)),
            Some(("counter", "queue_depth")),
            false,
        ),
        (
            Counter,
            "sampled",
            "lab::counter".into(),
            Some(("value", 7, NumKind::U64)),
            Some(("counter", "sampled")),
            false,
        ),
        (
            Instant,
            "overflow",
            "lab::instant".into(),
            Some(("count", 7, NumKind::U64)),
            Some(("kind", "overflow")),
            false,
        ),
        // `value` is preferred over the first number, as the flight recorder's visitor does.
        (
            Instant,
            "halt",
            "lab::instant".into(),
            Some(("value", 2.5f64.to_bits(), NumKind::F64)),
            Some(("kind", "halt")),
            false,
        ),
        // Guards drop in reverse order.
        (Span, "consume", m.clone(), Some(("flow", flow, NumKind::U64)), None, true),
        (Span, "publish", m.clone(), Some(("flow", flow, NumKind::U64)), None, true),
        (Span, "batch", m.clone(), Some(("size", 8, NumKind::U64)), None, true),
        (Span, "wait", m.clone(), None, Some(("reason", "full")), true),
    ];
    let flow8 = trace::flow_id(1, 8);
    let want8: Vec<Got> = vec![
        (
            Counter,
            "queue_depth",
            "lab::counter".into(),
            Some(("value", 8, NumKind::U64)),
            Some(("counter", "queue_depth")),
            false,
        ),
        (
            Instant,
            "overflow",
            "lab::instant".into(),
            Some(("count", 8, NumKind::U64)),
            Some(("kind", "overflow")),
            false,
        ),
        (
            Instant,
            "halt",
            "lab::instant".into(),
            Some(("value", 2.5f64.to_bits(), NumKind::F64)),
            Some(("kind", "halt")),
            false,
        ),
        (Span, "consume", m.clone(), Some(("flow", flow8, NumKind::U64)), None, true),
        (Span, "publish", m.clone(), Some(("flow", flow8, NumKind::U64)), None, true),
        (Span, "wait", m, None, Some(("reason", "full")), true),
    ];
    assert_eq!(got, [want, want8].concat());
}

/// A span's target is the module it is entered in, as `tracing`'s is.
#[test]
fn a_span_site_names_its_module() {
    static SITE: Site = Site::span("wait", module_path!(), &["reason"]);
    assert_eq!(SITE.target, "sink");
    assert_eq!(Values::instant("k", &[("a", None), ("b", Some((NumKind::Bool, 1)))]).num_field, 2);
}
