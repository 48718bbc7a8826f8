//! The server's instrumentation follows `handoff::trace`: an `event_loop` span per pass
//! with its `events` count, `wait` spans around `poll`, a `handle` span per request on the
//! workers, and `connections` counter events. (Its own test binary: it installs a global
//! subscriber, since the spans come from the server's threads.)

mod common;

use common::{connect, read_response, send, start_mode, Mode};
use echo_server::ServerConfig;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::Attributes;
use tracing::{Event, Id, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

#[derive(Default)]
struct Seen {
    spans: HashMap<String, u64>,
    events_fields: u64,
    counters: Vec<(String, u64)>,
}

struct Recorder(Arc<Mutex<Seen>>);

#[derive(Default)]
struct Fields {
    counter: Option<String>,
    value: Option<u64>,
    events: Option<u64>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "counter" {
            self.counter = Some(format!("{value:?}").trim_matches('"').to_string());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "counter" {
            self.counter = Some(value.to_string());
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "value" => self.value = Some(value),
            "events" => self.events = Some(value),
            _ => {}
        }
    }
}

impl<S: Subscriber> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        let mut f = Fields::default();
        attrs.record(&mut f);
        let mut seen = self.0.lock().unwrap();
        *seen.spans.entry(attrs.metadata().name().to_string()).or_default() += 1;
        if attrs.metadata().name() == "event_loop" && f.events.is_some_and(|n| n > 0) {
            seen.events_fields += 1;
        }
    }
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() == handoff::trace::COUNTER_TARGET {
            let mut f = Fields::default();
            event.record(&mut f);
            if let (Some(c), Some(v)) = (f.counter, f.value) {
                self.0.lock().unwrap().counters.push((c, v));
            }
        }
    }
}

#[test]
fn event_loop_worker_and_counter_instrumentation() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let subscriber = tracing_subscriber::registry().with(Recorder(seen.clone()));
    tracing::subscriber::set_global_default(subscriber).expect("first subscriber");

    let server = start_mode(Mode::Locked(None), ServerConfig::default());
    for _ in 0..5 {
        let mut s = connect(server.addr());
        send(&mut s, "GET / HTTP/1.0\r\n\r\n");
        assert_eq!(read_response(&mut s).0, 200);
    }
    let stats = server.shutdown();

    let seen = seen.lock().unwrap();
    assert_eq!(seen.spans.get("handle"), Some(&5), "{:?}", seen.spans);
    let loops = seen.spans.get("event_loop").copied().unwrap_or(0);
    assert_eq!(loops, stats.event_loop_iterations, "{:?}", seen.spans);
    assert!(seen.events_fields > 0, "no event_loop span carried an events count");
    assert!(seen.spans.get("wait").copied().unwrap_or(0) >= loops, "{:?}", seen.spans);
    let conns: Vec<u64> =
        seen.counters.iter().filter(|(c, _)| c == "connections").map(|(_, v)| *v).collect();
    assert!(conns.contains(&0) && conns.iter().any(|&v| v >= 1), "{conns:?}");
}
