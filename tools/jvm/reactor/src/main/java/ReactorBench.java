// Seed 000's workloads on Reactor (reactor-core 3.8.8, the seed's version, through its BOM
// 2025.0.8), the seed's own library: the JVM counterparts of the lab's reactive crate in
// subscribe-overhead, publish-on-latency, backpressure-buffer and heap-growth, beside
// RxBench's RxJava rows. The command line, the run loop, the outcome JSON and the JIT
// blackhole are the shared module's (Seed000.java), so the lab drives RxBench and this
// program with one code path; only the workloads are Reactor's.
//
//   java -cp "target/jvm/reactor/classes:$(cat target/jvm/reactor/classpath.txt)" ReactorBench \
//     --workload flux-range|mono-just|hand-written|publish-on|latency|backpressure|heap-growth \
//     --n N --warmup W --runs R [--fault drop-one]
//     [--demand bulk|one-by-one] [--scheduler single|parallel]     (latency)
//     --case sync-request-1|publish-on-1|grid --policy drop-latest|drop-oldest|error
//     --capacity C [--rate R --service-ns S]                       (backpressure: ReactorBackpressure.java)
//     --buffer on-backpressure-buffer|publish-on --work W [--bound B]
//                                                                  (heap-growth: ReactorHeapGrowth.java)
//
// The subscribe workloads are the seed's Bench.java, with the seed's subscribers: a lambda
// summing into a field (Flux.range, Mono.just) and an anonymous java.util.concurrent.Flow
// subscriber requesting Long.MAX_VALUE (the hand-written publisher). The seed's sink is a
// static volatile long; here it is Seed000.Sum (a plain field behind the JIT blackhole), as
// in RxBench, so that the JVM rows and the reactive crate's pay the same per element.
// --fault drop-one: one op fewer per run (backpressure, heap-growth: the source never emits
// element 1). Exit 0: done; 2: bad command line (one line on stderr); 3: failed.

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

final class ReactorBench implements Seed000.Library {
    static final String[] WORKLOADS = {"flux-range", "mono-just", "hand-written", "publish-on", "latency",
        "backpressure", "heap-growth"};
    /** The latency test's schedulers: the seed ran Schedulers.parallel(). */
    static final String[] SCHEDULERS = {"single", "parallel"};

    static final int PREFETCH = Seed000.PREFETCH;

    @Override public String tool() { return "ReactorBench"; }
    @Override public String[] workloads() { return WORKLOADS; }
    @Override public String[] schedulers() { return SCHEDULERS; }
    @Override public String[] buffers() { return ReactorHeapGrowth.BUFFERS; }
    @Override public String versionKey() { return "reactor_version"; }
    @Override public String version() { return Seed000.jarVersion(Flux.class); }

    @Override public long backpressure(Seed000.Config c, StringBuilder extra) throws InterruptedException {
        BackpressureRun.Counts k = ReactorBackpressure.run(c);
        extra.append(BackpressureRun.json(c, k, ReactorBackpressure.OVERFLOW_ERROR));
        return k.delivered;
    }

    @Override public long heapGrowth(Seed000.Config c, StringBuilder extra) throws InterruptedException {
        HeapGrowthRun.Run k = ReactorHeapGrowth.run(c);
        extra.append(HeapGrowthRun.json(k));
        return k.received;
    }

    /**
     * Seed 000's SyncSinglePublisher on java.util.concurrent.Flow: one element, then
     * onComplete, once demand arrives. Rules honoured: request(n <= 0) signals onError
     * (3.9); a request from inside onSubscribe or onNext does not recurse (3.3: the
     * `emitting` flag); after a terminal signal or cancel nothing more is signalled (1.3,
     * 3.6, 3.7). No Reactor in it: the seed set it beside Mono.just as the thinnest path.
     */
    static final class SyncSinglePublisher<T> implements Flow.Publisher<T> {
        final T value;
        SyncSinglePublisher(T value) { this.value = value; }

        @Override public void subscribe(Flow.Subscriber<? super T> s) {
            if (s == null) throw new NullPointerException("subscriber (rule 1.9)");
            s.onSubscribe(new Single1<>(s, value));
        }

        static final class Single1<T> implements Flow.Subscription {
            final Flow.Subscriber<? super T> s;
            final T value;
            boolean done;
            boolean emitting;

            Single1(Flow.Subscriber<? super T> s, T value) { this.s = s; this.value = value; }

            @Override public void request(long n) {
                if (done) return;
                if (n <= 0) {
                    done = true;
                    s.onError(new IllegalArgumentException("rule 3.9: request(" + n + ")"));
                    return;
                }
                if (emitting) return;
                emitting = true;
                done = true;
                s.onNext(value);
                s.onComplete();
            }

            @Override public void cancel() { done = true; }
        }
    }

    /** One run of a subscribe workload: the result it computed (the fault makes it one
     *  short). */
    @Override public long runOnce(Seed000.Config c) throws InterruptedException {
        int n = c.ops();
        Seed000.Sum sum = new Seed000.Sum();
        switch (c.workload) {
            case "flux-range":
                Flux.range(1, n).subscribe(sum::add);
                return sum.sum;
            case "mono-just": {
                Mono<Integer> mono = Mono.just(1);
                for (int i = 0; i < n; i++) mono.subscribe(sum::add);
                return sum.sum;
            }
            case "hand-written": {
                SyncSinglePublisher<Integer> p = new SyncSinglePublisher<>(1);
                for (int i = 0; i < n; i++) {
                    p.subscribe(new Flow.Subscriber<Integer>() {
                        @Override public void onSubscribe(Flow.Subscription s) { s.request(Long.MAX_VALUE); }
                        @Override public void onNext(Integer v) { sum.add(v); }
                        @Override public void onError(Throwable t) { throw new IllegalStateException(t); }
                        @Override public void onComplete() { }
                    });
                }
                return sum.sum;
            }
            case "publish-on": {
                CountDownLatch end = new CountDownLatch(1);
                AtomicBoolean failed = new AtomicBoolean();
                long[] result = {0};
                Flux.range(1, n)
                    .publishOn(Schedulers.single(), false, PREFETCH)
                    .subscribe(sum::add, e -> { failed.set(true); end.countDown(); },
                        () -> { result[0] = sum.sum; end.countDown(); });
                if (!end.await(60, TimeUnit.SECONDS) || failed.get()) return -1;
                return result[0];
            }
            default:
                throw new IllegalStateException("no workload " + c.workload);
        }
    }

    /**
     * Seed 000's latency test: range(0, n).map(i -> {nanoTime, i, thread}).publishOn(scheduler,
     * false, 256) (the seed's publishOn(Schedulers.parallel()) has the default prefetch,
     * 256), the subscriber recording nanoTime - stamp per element into `lat` (sized before
     * the run) and whether the element was stamped on another thread. Bulk demand:
     * request(Long.MAX_VALUE) once, as the seed's lambda subscriber; one-by-one: request(1)
     * after each element. Returns the elements that arrived in order (-1 on error or
     * timeout); `crossed[0]` counts crossings.
     */
    @Override public long latency(Seed000.Config c, int n, long[] lat, long[] crossed)
            throws InterruptedException {
        boolean one = c.demand.equals("one-by-one");
        CountDownLatch end = new CountDownLatch(1);
        AtomicBoolean failed = new AtomicBoolean();
        int[] got = {0};
        boolean[] inOrder = {true};
        Scheduler sched = c.scheduler.equals("single") ? Schedulers.single() : Schedulers.parallel();
        Flux.range(0, n)
            .map(i -> new long[] {System.nanoTime(), i, Thread.currentThread().getId()})
            .publishOn(sched, false, PREFETCH)
            .subscribe(new CoreSubscriber<long[]>() {
                Subscription s;
                @Override public void onSubscribe(Subscription s) {
                    this.s = s;
                    s.request(one ? 1 : Long.MAX_VALUE);
                }
                @Override public void onNext(long[] e) {
                    long now = System.nanoTime();
                    int k = got[0]++;
                    lat[k] = Math.max(1, now - e[0]);
                    if (e[1] != k) inOrder[0] = false;
                    if (e[2] != Thread.currentThread().getId()) crossed[0]++;
                    if (one) s.request(1);
                }
                @Override public void onError(Throwable t) { failed.set(true); end.countDown(); }
                @Override public void onComplete() { end.countDown(); }
            });
        if (!end.await(60, TimeUnit.SECONDS) || failed.get() || !inOrder[0]) return -1;
        return got[0];
    }

    public static void main(String[] args) {
        Seed000.main(new ReactorBench(), args);
    }
}
