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
// Error overflow). A run's counts, check and JSON are the shared module's (BackpressureRun.java).

import io.reactivex.rxjava3.core.BackpressureOverflowStrategy;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.FlowableSubscriber;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.exceptions.MissingBackpressureException;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;

final class RxBackpressure {
    /** The exception RxJava's buffer signals under ERROR. */
    static final String OVERFLOW_ERROR = MissingBackpressureException.class.getName();
    
    private RxBackpressure() { }

    static BackpressureOverflowStrategy strategy(String policy) {
        switch (policy) {
            case "drop-latest": return BackpressureOverflowStrategy.DROP_LATEST;
            case "drop-oldest": return BackpressureOverflowStrategy.DROP_OLDEST;
            default: return BackpressureOverflowStrategy.ERROR;
        }
    }

    /** The subscriber of every case: request(1) up front and after each element (spinning
     *  `serviceNs` first), or, `detached`, nothing until the caller requests. */
    static final class Sub implements FlowableSubscriber<Integer> {
        final BackpressureRun.Counts c;
        final long serviceNs;
        final boolean detached;
        final CountDownLatch end = new CountDownLatch(1);
        volatile Subscription s;

        Sub(BackpressureRun.Counts c, long serviceNs, boolean detached) {
            this.c = c;
            this.serviceNs = serviceNs;
            this.detached = detached;
        }

        @Override public void onSubscribe(Subscription s) {
            this.s = s;
            if (!detached) s.request(1);
        }

        @Override public void onNext(Integer v) {
            Seed000.OPAQUE.consume(v);
            if (v <= c.lastDelivered) c.inOrder = false;
            c.lastDelivered = v;
            c.delivered++;
            if (serviceNs > 0) Seed000.spinFor(serviceNs);
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

    /** range(0, n), without element 1 under the planted fault, counted and checked for order
     *  as it leaves the source; paced to element i at c.t0 + i * periodNs when periodNs > 0. */
    static Flowable<Integer> source(Seed000.Config cfg, int n, BackpressureRun.Counts c, long periodNs) {
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
    static Flowable<Integer> buffer(Seed000.Config cfg, Flowable<Integer> f, BackpressureRun.Counts c) {
        return f.onBackpressureBuffer(cfg.capacity, c.dropped::incrementAndGet, strategy(cfg.policy))
            .doOnError(t -> {
                if (t instanceof MissingBackpressureException) c.overflowErrors++;
            });
    }

    /** One run of the configured case; the counts (terminal "none" on a timeout). */
    static BackpressureRun.Counts run(Seed000.Config cfg) throws InterruptedException {
        BackpressureRun.Counts c = new BackpressureRun.Counts();
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
}
