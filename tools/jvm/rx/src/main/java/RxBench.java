// Seed 000's workloads on RxJava 3, the second JVM peer of the lab's reactive crate beside
// Reactor (the version tools/jvm/pom.xml pins): the JVM counterparts of
// the lab's reactive crate in subscribe-overhead, publish-on-latency, backpressure-buffer
// and heap-growth. One named workload per process, W warm-up runs then R measured runs,
// each run's result checked against its closed form (backpressure and heap-growth: against
// their counts, by the run itself and again by the lab). --fault drop-one: one op fewer
// per run (backpressure, heap-growth: the source never emits element 1).
// Speaks the lab's child protocol (Protocol.java): run marks, heartbeats, done / failed.
//
//   java -cp "target/jvm/rx/classes:$(cat target/jvm/rx/classpath.txt)" RxBench \
//     --workload flowable-range|single-just|hand-written|observe-on|latency|backpressure|heap-growth \
//     --n N --warmup W --runs R [--fault drop-one]
//     [--demand bulk|one-by-one] [--scheduler single|computation]   (latency)
//     --case sync-request-1|publish-on-1|grid --policy drop-latest|drop-oldest|error
//     --capacity C [--rate R --service-ns S]                       (backpressure: RxBackpressure.java)
//     --buffer observable|on-backpressure-buffer|observe-on --work W [--bound B]
//                                                                  (heap-growth: RxHeapGrowth.java)
//
// Exit 0: done (also when a run's result is wrong: the outcome says so); 2: bad command
// line (one line on stderr); 3: failed. tools/jvm/README.md ("RxJava") has the details.
// The command line, the run loop and the outcome are the shared module's (Seed000.java):
// ReactorBench runs the same workloads on Reactor through it.

import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.functions.Consumer;
import io.reactivex.rxjava3.schedulers.Schedulers;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

final class RxBench implements Seed000.Library {
    static final String[] WORKLOADS = {"flowable-range", "single-just", "hand-written", "observe-on", "latency",
        "backpressure", "heap-growth"};

    /** observe-on's queue: Reactor's publishOn prefetch, the reactive crate's default. */
    static final int PREFETCH = Seed000.PREFETCH;

    @Override public String tool() { return "RxBench"; }
    @Override public String[] workloads() { return WORKLOADS; }
    @Override public String[] schedulers() { return new String[] {"single", "computation"}; }
    @Override public String[] buffers() { return RxHeapGrowth.BUFFERS; }
    @Override public String versionKey() { return "rxjava_version"; }
    @Override public String version() { return Seed000.jarVersion(Flowable.class); }
    @Override public long runOnce(Seed000.Config c) throws InterruptedException { return runOne(c); }
    @Override public long latency(Seed000.Config c, int n, long[] lat, long[] crossed)
            throws InterruptedException {
        return latencyRun(c, n, lat, crossed);
    }
    @Override public long backpressure(Seed000.Config c, StringBuilder extra) throws InterruptedException {
        BackpressureRun.Counts k = RxBackpressure.run(c);
        extra.append(BackpressureRun.json(c, k, RxBackpressure.OVERFLOW_ERROR));
        return k.delivered;
    }
    @Override public long heapGrowth(Seed000.Config c, StringBuilder extra) throws InterruptedException {
        HeapGrowthRun.Run k = RxHeapGrowth.run(c);
        extra.append(HeapGrowthRun.json(k));
        return k.received;
    }

    /** Sums what it is given; read `sum` after the run (no volatile store per element). */
    static final class Sum implements Consumer<Integer> {
        final Seed000.Sum s = new Seed000.Sum();
        @Override public void accept(Integer v) { s.add(v); }
    }

    /**
     * Seed 000's SyncSinglePublisher written against org.reactivestreams: one element, then
     * onComplete, once demand arrives. Rules honoured: request(n <= 0) signals onError
     * (3.9); a request from inside onSubscribe or onNext does not recurse (3.3: the
     * `emitting` flag); after a terminal signal or cancel nothing more is signalled (1.3,
     * 3.6, 3.7).
     */
    static final class SyncSinglePublisher<T> implements Publisher<T> {
        final T value;
        SyncSinglePublisher(T value) { this.value = value; }

        @Override public void subscribe(Subscriber<? super T> s) {
            if (s == null) throw new NullPointerException("subscriber (rule 1.9)");
            s.onSubscribe(new Single1<>(s, value));
        }

        static final class Single1<T> implements Subscription {
            final Subscriber<? super T> s;
            final T value;
            boolean done;
            boolean emitting;

            Single1(Subscriber<? super T> s, T value) { this.s = s; this.value = value; }

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

    /** The seed's subscriber: requests everything, sums. */
    static final class SumSubscriber implements Subscriber<Integer> {
        final Sum into;
        SumSubscriber(Sum into) { this.into = into; }
        @Override public void onSubscribe(Subscription s) { s.request(Long.MAX_VALUE); }
        @Override public void onNext(Integer v) { into.accept(v); }
        @Override public void onError(Throwable t) { throw new IllegalStateException(t); }
        @Override public void onComplete() { }
    }

    /**
     * Seed 000's latency test: range(0, n).map(i -> {nanoTime, thread}).observeOn(scheduler,
     * false, 256), the subscriber recording nanoTime - stamp per element into `lat` (sized
     * before the run) and whether the element was stamped on another thread. Bulk demand:
     * request(Long.MAX_VALUE) once; one-by-one: request(1) after each element. Returns the
     * elements that arrived in order (-1 on error or timeout); `crossed[0]` counts crossings.
     */
    static long latencyRun(Seed000.Config c, int n, long[] lat, long[] crossed) throws InterruptedException {
        boolean one = c.demand.equals("one-by-one");
        CountDownLatch end = new CountDownLatch(1);
        AtomicBoolean failed = new AtomicBoolean();
        int[] got = {0};
        boolean[] inOrder = {true};
        io.reactivex.rxjava3.core.Scheduler sched =
            c.scheduler.equals("single") ? Schedulers.single() : Schedulers.computation();
        Flowable.range(0, n)
            .map(i -> new long[] {System.nanoTime(), i, Thread.currentThread().getId()})
            .observeOn(sched, false, PREFETCH)
            .subscribe(new io.reactivex.rxjava3.core.FlowableSubscriber<long[]>() {
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

    /** One run: the result it computed (the fault makes it one short). */
    static long runOne(Seed000.Config c) throws InterruptedException {
        int n = c.ops();
        Sum sum = new Sum();
        switch (c.workload) {
            case "flowable-range":
                Flowable.range(1, n).subscribe(sum);
                return sum.s.sum;
            case "single-just": {
                Single<Integer> single = Single.just(1);
                for (int i = 0; i < n; i++) single.subscribe(sum);
                return sum.s.sum;
            }
            case "hand-written": {
                SyncSinglePublisher<Integer> p = new SyncSinglePublisher<>(1);
                for (int i = 0; i < n; i++) p.subscribe(new SumSubscriber(sum));
                return sum.s.sum;
            }
            case "observe-on": {
                CountDownLatch end = new CountDownLatch(1);
                AtomicBoolean failed = new AtomicBoolean();
                long[] result = {0};
                Flowable.range(1, n)
                    .observeOn(Schedulers.single(), false, PREFETCH)
                    .subscribe(sum, e -> { failed.set(true); end.countDown(); },
                        () -> { result[0] = sum.s.sum; end.countDown(); });
                if (!end.await(60, TimeUnit.SECONDS) || failed.get()) return -1;
                return result[0];
            }
            default:
                throw new IllegalStateException("no workload " + c.workload);
        }
    }

    public static void main(String[] args) {
        Seed000.main(new RxBench(), args);
    }
}
