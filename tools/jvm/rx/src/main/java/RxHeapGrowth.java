// Seed 000's heap-growth question on RxJava 3: the JVM counterpart of the lab's heap-growth
// rows (RxBench --workload heap-growth). A source faster than a consumer that does fixed
// work per message, through one of RxJava's buffers; the evidence is the live heap after a
// full collection, never a difference of totalMemory (the seed's invalid test).
//
// Buffers (--buffer):
//   observable              Observable.range(0, N).map(Msg::new).observeOn(single): no
//                           backpressure, observeOn's queue is unbounded (SpscLinkedArrayQueue)
//   on-backpressure-buffer  Flowable.range(0, N).map(Msg::new).onBackpressureBuffer()
//                           .observeOn(single, false, BOUND): an unbounded buffer before a
//                           bounded prefetch
//   observe-on              Flowable.range(0, N).map(Msg::new).observeOn(single, false, BOUND):
//                           bounded; the range emits only what is requested
//
// Live heap: right after System.gc() (a full, stop-the-world collection under the serial,
// parallel and G1 collectors the lab offers, unless
// -XX:+ExplicitGCInvokesConcurrent or -XX:+DisableExplicitGC is given: RxBench refuses
// those), the sum over the heap's memory pools of MemoryPoolMXBean.getCollectionUsage():
// each pool's occupancy just after that collection (MemoryMXBean's `used` also counts what
// was allocated since, and read 2-4 MB high in eden right after a full collection here),
// once before the run and on the source's thread after every N/8-th message
// leaves the source, the last after message N-1: the backlog is largest when the source
// has finished. The run's figure is the largest sample minus the sample before the run.
// The first run in a JVM first sends two messages through the same chain (untimed, within
// its run marks), so that the classes' static state is in the sample before the run.
// The message, the reading and a run's figures are the shared module's (HeapGrowthRun.java).

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Observable;
import io.reactivex.rxjava3.core.Observer;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.functions.Function;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.concurrent.TimeUnit;
import io.reactivex.rxjava3.core.FlowableSubscriber;
import org.reactivestreams.Subscription;

final class RxHeapGrowth {
    static final String[] BUFFERS = {"observable", "on-backpressure-buffer", "observe-on"};

    private RxHeapGrowth() { }

    /** The source: range(0, n), without message 1 under the planted fault. */
    static Flowable<Integer> flowable(int n, boolean fault) {
        Flowable<Integer> f = Flowable.range(0, n);
        return fault ? f.filter(i -> i != 1) : f;
    }

    static Observable<Integer> observable(int n, boolean fault) {
        Observable<Integer> f = Observable.range(0, n);
        return fault ? f.filter(i -> i != 1) : f;
    }

    /** Whether this JVM ran the class-loading pass. */
    static boolean loaded;

    /** One run of the configured buffer; its figures (terminal "none" on a timeout). */
    static HeapGrowthRun.Run run(Seed000.Config cfg) throws InterruptedException {
        HeapGrowthRun.refuseConcurrentGc();
        // The first run in a JVM first sends two messages through the same chain, so that the
        // static state of the classes it loads (some 0.5 MB here) is in the sample before the
        // run, not counted as the buffer's.
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

    /** Subscribes r's consumer to r.n messages through the configured buffer. */
    static void subscribe(Seed000.Config cfg, HeapGrowthRun.Run r, boolean fault) {
        Scheduler single = Schedulers.single();
        Function<Integer, HeapGrowthRun.Msg> make = r::make;
        if (cfg.buffer.equals("observable")) {
            observable(r.n, fault).map(make).observeOn(single).subscribe(new Observer<HeapGrowthRun.Msg>() {
                @Override public void onSubscribe(Disposable d) { }
                @Override public void onNext(HeapGrowthRun.Msg m) { r.take(m); }
                @Override public void onError(Throwable t) { r.ended("error: " + t); }
                @Override public void onComplete() { r.ended("complete"); }
            });
        } else {
            Flowable<HeapGrowthRun.Msg> f = flowable(r.n, fault).map(make);
            if (cfg.buffer.equals("on-backpressure-buffer")) f = f.onBackpressureBuffer();
            f.observeOn(single, false, cfg.bound).subscribe(new FlowableSubscriber<HeapGrowthRun.Msg>() {
                @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
                @Override public void onNext(HeapGrowthRun.Msg m) { r.take(m); }
                @Override public void onError(Throwable t) { r.ended("error: " + t); }
                @Override public void onComplete() { r.ended("complete"); }
            });
        }
    }
}
