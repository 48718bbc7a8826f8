// Seed 000's heap-growth question on Reactor, the seed's library: the JVM counterpart of the
// lab's heap-growth rows (ReactorBench --workload heap-growth). A source faster than a
// consumer that does fixed work per message, through one of Reactor's buffers; the evidence
// is the live heap after a full collection (HeapGrowthRun.java, the shared module's, and
// RxHeapGrowth.java explain the reading), never a difference of totalMemory (the seed's
// invalid test).
//
// Buffers (--buffer):
//   on-backpressure-buffer  Flux.range(0, N).map(Msg::new).onBackpressureBuffer()
//                           .publishOn(single, false, BOUND): an unbounded buffer before a
//                           bounded prefetch
//   publish-on              Flux.range(0, N).map(Msg::new).publishOn(single, false, BOUND):
//                           bounded; the range emits only what is requested
// Reactor's Flux has no counterpart of RxJava's Observable (a stream without backpressure),
// so the rx-observable row has no Reactor row.

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

final class ReactorHeapGrowth {
    static final String[] BUFFERS = {"on-backpressure-buffer", "publish-on"};

    private ReactorHeapGrowth() { }

    /** Whether this JVM ran the class-loading pass. */
    static boolean loaded;

    /** One run of the configured buffer; its figures (terminal "none" on a timeout). */
    static HeapGrowthRun.Run run(Seed000.Config cfg) throws InterruptedException {
        HeapGrowthRun.refuseConcurrentGc();
        // The first run in a JVM first sends two messages through the same chain, so that the
        // static state of the classes it loads is in the sample before the run, not counted
        // as the buffer's.
        if (!loaded) {
            HeapGrowthRun.Run warm = new HeapGrowthRun.Run(2, cfg.work, false);
            subscribe(cfg, warm, false);
            warm.end.await(60, TimeUnit.SECONDS);
            loaded = true;
        }
        HeapGrowthRun.Run r = new HeapGrowthRun.Run(cfg.n, cfg.work, true);
        r.liveBefore = HeapGrowthRun.liveAfterGc();
        subscribe(cfg, r, cfg.fault != null);
        r.end.await(600, TimeUnit.SECONDS);
        return r;
    }

    /** Subscribes r's consumer to r.n messages (without message 1 under the planted fault)
     *  through the configured buffer. */
    static void subscribe(Seed000.Config cfg, HeapGrowthRun.Run r, boolean fault) {
        Function<Integer, HeapGrowthRun.Msg> make = r::make;
        Flux<Integer> src = Flux.range(0, r.n);
        if (fault) src = src.filter(i -> i != 1);
        Flux<HeapGrowthRun.Msg> f = src.map(make);
        if (cfg.buffer.equals("on-backpressure-buffer")) f = f.onBackpressureBuffer();
        f.publishOn(Schedulers.single(), false, cfg.bound).subscribe(new CoreSubscriber<HeapGrowthRun.Msg>() {
            @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
            @Override public void onNext(HeapGrowthRun.Msg m) { r.take(m); }
            @Override public void onError(Throwable t) { r.ended("error: " + t); }
            @Override public void onComplete() { r.ended("complete"); }
        });
    }
}
