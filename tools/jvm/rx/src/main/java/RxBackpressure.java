// Seed 000's corrected onBackpressureBuffer test on RxJava 3: the JVM counterpart of the
// lab's backpressure-buffer rows (RxBench --workload backpressure). One run, its counts
// and its own check; RxBench writes the run's JSON.
//
// The buffer is RxJava's onBackpressureBuffer(capacity, onOverflow, strategy), the form
// with an exact capacity (a bounded ArrayDeque; onBackpressureBuffer(int) rounds its
// SpscArrayQueue up to a power of two, 16 for 10) and the three policies the Rust rows
// run: DROP_LATEST, DROP_OLDEST and ERROR. RxJava's DROP_LATEST drops the newest
// *buffered* element and keeps the arriving one (Reactor's and the reactive crate's drop
// the arriving one): either way one element is lost per overflow, so the counts compare;
// which elements arrive differs. onOverflow runs once per dropped element; under ERROR it
// does not run, and the overflow is the MissingBackpressureException it signals instead
// (counted as one overflow where the buffer emits it, as the reactive crate counts its
// Error overflow).

import io.reactivex.rxjava3.core.BackpressureOverflowStrategy;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.FlowableSubscriber;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.exceptions.MissingBackpressureException;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscription;

final class RxBackpressure {
    static final String[] CASES = {"sync-request-1", "publish-on-1", "grid"};
    static final String[] POLICIES = {"drop-latest", "drop-oldest", "error"};

    private RxBackpressure() { }

    static BackpressureOverflowStrategy strategy(String policy) {
        switch (policy) {
            case "drop-latest": return BackpressureOverflowStrategy.DROP_LATEST;
            case "drop-oldest": return BackpressureOverflowStrategy.DROP_OLDEST;
            default: return BackpressureOverflowStrategy.ERROR;
        }
    }

    /** One run's counts. Written by the source's and the subscriber's threads, read after
     *  the terminal signal (the latch orders them). */
    static final class Counts {
        long emitted;
        long lastEmitted = -1;
        boolean sourceInOrder = true;
        final AtomicLong dropped = new AtomicLong();
        /** MissingBackpressureExceptions the buffer signalled (on the source's thread). */
        long overflowErrors;
        long overflowsAtOnce = -1;
        long delivered;
        long lastDelivered = -1;
        boolean inOrder = true;
        String terminal = "none";
        double elapsedMs = -1;
        /** When the source emitted its first element: the pacing's origin (set there, not
         *  before subscribing, so that loading RxJava's classes in a cold JVM, some 300 ms
         *  here, is not taken for a producer that fell behind its schedule). */
        long t0 = -1;

        long overflows() { return dropped.get() + overflowErrors; }
    }

    /** The subscriber of every case: request(1) up front and after each element (spinning
     *  `serviceNs` first), or, `detached`, nothing until the caller requests. */
    static final class Sub implements FlowableSubscriber<Integer> {
        final Counts c;
        final long serviceNs;
        final boolean detached;
        final CountDownLatch end = new CountDownLatch(1);
        volatile Subscription s;

        Sub(Counts c, long serviceNs, boolean detached) {
            this.c = c;
            this.serviceNs = serviceNs;
            this.detached = detached;
        }

        @Override public void onSubscribe(Subscription s) {
            this.s = s;
            if (!detached) s.request(1);
        }

        @Override public void onNext(Integer v) {
            RxBench.OPAQUE.consume(v);
            if (v <= c.lastDelivered) c.inOrder = false;
            c.lastDelivered = v;
            c.delivered++;
            if (serviceNs > 0) spinFor(serviceNs);
            if (!detached) s.request(1);
        }

        @Override public void onError(Throwable t) {
            c.terminal = "error: " + t;
            end.countDown();
        }

        @Override public void onComplete() {
            c.terminal = "complete";
            end.countDown();
        }
    }

    static void spinFor(long ns) {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < ns) Thread.onSpinWait();
    }

    /** range(0, n), without element 1 under the planted fault, counted and checked for order
     *  as it leaves the source; paced to element i at c.t0 + i * periodNs when periodNs > 0. */
    static Flowable<Integer> source(RxBench.Config cfg, int n, Counts c, long periodNs) {
        Flowable<Integer> f = Flowable.range(0, n);
        if (cfg.fault != null) f = f.filter(i -> i != 1);
        return f.map(i -> {
            if (c.t0 < 0) c.t0 = System.nanoTime();
            if (periodNs > 0) {
                long due = c.t0 + i * periodNs;
                while (System.nanoTime() < due) Thread.onSpinWait();
            }
            if (i != c.emitted) c.sourceInOrder = false;
            c.emitted++;
            c.lastEmitted = i;
            return i;
        });
    }

    /** The buffer under test: exact capacity, each drop counted; an overflow error counted
     *  as the buffer emits it, before any asynchronous boundary. */
    static Flowable<Integer> buffer(RxBench.Config cfg, Flowable<Integer> f, Counts c) {
        return f.onBackpressureBuffer(cfg.capacity, c.dropped::incrementAndGet, strategy(cfg.policy))
            .doOnError(t -> {
                if (t instanceof MissingBackpressureException) c.overflowErrors++;
            });
    }

    /** One run of the configured case; the counts (terminal "none" on a timeout). */
    static Counts run(RxBench.Config cfg) throws InterruptedException {
        Counts c = new Counts();
        switch (cfg.bpCase) {
            case "sync-request-1": {
                Sub sub = new Sub(c, 0, false);
                buffer(cfg, source(cfg, cfg.n, c, 0), c).subscribe(sub);
                sub.end.await(30, TimeUnit.SECONDS);
                return c;
            }
            case "publish-on-1": {
                Scheduler single = Schedulers.single();
                Sub sub = new Sub(c, 0, true);
                // The range is synchronous: subscribe returns once every element met the buffer.
                buffer(cfg, source(cfg, cfg.n, c, 0), c).observeOn(single, false, 1).subscribe(sub);
                c.overflowsAtOnce = c.overflows();
                sub.s.request(Long.MAX_VALUE);
                sub.end.await(30, TimeUnit.SECONDS);
                return c;
            }
            default: {
                long period = (long) (cfg.serviceNs / cfg.rate);
                Sub sub = new Sub(c, cfg.serviceNs, false);
                buffer(cfg, source(cfg, cfg.n, c, period), c)
                    .observeOn(Schedulers.single(), false, 1)
                    .subscribe(sub);
                sub.end.await(60, TimeUnit.SECONDS);
                if (c.t0 >= 0) c.elapsedMs = (System.nanoTime() - c.t0) / 1e6;
                return c;
            }
        }
    }

    /** The run's own check: every element that left the source either arrived or
     *  overflowed, in order, and the stream ended as its policy says. */
    static String check(RxBench.Config cfg, Counts c) {
        if (c.terminal.equals("none")) return "no terminal signal in time";
        if (!c.sourceInOrder) return "the source's elements were not 0, 1, 2, ... (element "
            + c.lastEmitted + " was its number " + (c.emitted - 1) + ")";
        if (!c.inOrder) return "elements arrived out of order";
        boolean error = cfg.policy.equals("error") && !cfg.bpCase.equals("sync-request-1");
        if (error) {
            if (!c.terminal.startsWith("error: " + MissingBackpressureException.class.getName())) {
                return "ended " + c.terminal + ", not with MissingBackpressureException";
            }
            return "ok";
        }
        if (!c.terminal.equals("complete")) return "ended " + c.terminal;
        if (c.delivered + c.overflows() != c.emitted) {
            return "delivered " + c.delivered + " + overflowed " + c.overflows() + " != emitted " + c.emitted;
        }
        return "ok";
    }

    /** The run's fields for the outcome's run object. */
    static String json(RxBench.Config cfg, Counts c) {
        return String.format(Locale.ROOT,
            ",\"bp\":{\"emitted\":%d,\"last_emitted\":%d,\"delivered\":%d,\"overflows\":%d,"
                + "\"overflows_at_once\":%s,\"in_order\":%b,\"terminal\":%s,\"elapsed_ms\":%s,\"check\":%s}",
            c.emitted, c.lastEmitted, c.delivered, c.overflows(),
            c.overflowsAtOnce < 0 ? "null" : Long.toString(c.overflowsAtOnce), c.inOrder,
            Protocol.str(c.terminal), c.elapsedMs < 0 ? "null" : Protocol.num(c.elapsedMs),
            Protocol.str(check(cfg, c)));
    }
}
