// Seed 000's corrected onBackpressureBuffer test on Reactor, the seed's library: the JVM
// counterpart of the lab's backpressure-buffer rows (ReactorBench --workload backpressure),
// the same cases as RxBackpressure.java (which explains them) with Reactor's operators.
//
// The buffer is Reactor's onBackpressureBuffer(maxSize, onBufferOverflow, strategy), the form
// with an exact capacity and an overflow callback, under the three policies the Rust rows
// run: DROP_LATEST (Reactor drops the arriving element, as the reactive crate does),
// DROP_OLDEST and ERROR. Reactor calls onBufferOverflow once per element it gives up, under
// ERROR too (for the element that overflowed, before it signals
// Exceptions.failWithOverflow()): so the callback's count is the overflow count under every
// policy, and the error is not counted again. The asynchronous boundary is
// publishOn(Schedulers.single(), false, 1), Reactor's form of observeOn(single, false, 1).

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.BufferOverflowStrategy;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

final class ReactorBackpressure {
    /** The class of the exception Reactor's buffer signals under ERROR
     *  (Exceptions.failWithOverflow()), the prefix the run's check expects. */
    static final String OVERFLOW_ERROR = Exceptions.failWithOverflow().getClass().getName();

    private ReactorBackpressure() { }

    static BufferOverflowStrategy strategy(String policy) {
        switch (policy) {
            case "drop-latest": return BufferOverflowStrategy.DROP_LATEST;
            case "drop-oldest": return BufferOverflowStrategy.DROP_OLDEST;
            default: return BufferOverflowStrategy.ERROR;
        }
    }

    /** The subscriber of every case: request(1) up front and after each element (spinning
     *  `serviceNs` first), or, `detached`, nothing until the caller requests. */
    static final class Sub implements CoreSubscriber<Integer> {
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
    static Flux<Integer> source(Seed000.Config cfg, int n, BackpressureRun.Counts c, long periodNs) {
        Flux<Integer> f = Flux.range(0, n);
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

    /** The buffer under test: exact capacity, each element it gives up counted. */
    static Flux<Integer> buffer(Seed000.Config cfg, Flux<Integer> f, BackpressureRun.Counts c) {
        return f.onBackpressureBuffer(cfg.capacity, x -> c.dropped.incrementAndGet(), strategy(cfg.policy));
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
                Sub sub = new Sub(c, 0, true);
                // The range is synchronous: subscribe returns once every element met the buffer.
                buffer(cfg, source(cfg, cfg.n, c, 0), c)
                    .publishOn(Schedulers.single(), false, 1)
                    .subscribe(sub);
                c.overflowsAtOnce = c.overflows();
                sub.s.request(Long.MAX_VALUE);
                sub.end.await(30, TimeUnit.SECONDS);
                return c;
            }
            default: {
                long period = (long) (cfg.serviceNs / cfg.rate);
                Sub sub = new Sub(c, cfg.serviceNs, false);
                buffer(cfg, source(cfg, cfg.n, c, period), c)
                    .publishOn(Schedulers.single(), false, 1)
                    .subscribe(sub);
                sub.end.await(60, TimeUnit.SECONDS);
                if (c.t0 >= 0) c.elapsedMs = (System.nanoTime() - c.t0) / 1e6;
                return c;
            }
        }
    }
}
