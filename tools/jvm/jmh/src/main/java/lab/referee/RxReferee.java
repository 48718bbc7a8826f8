package lab.referee;

import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * JMH's form of seed 000's synchronous workloads on RxJava 3, as the lab's rx rows run them:
 * each benchmark calls RxBench.runOnce, the very loop the lab's child times, over the same n,
 * so JMH's ns/op and the lab's row time one piece of code: average time per element
 * (Flowable.range) or per subscription (Single.just, the hand-written publisher), the unit
 * of the lab's subscribe-overhead.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class RxReferee {
    /** Seed 000's n: one million elements or subscriptions per run. */
    static final int N = 1_000_000;

    static final Class<?> CONFIG = Programs.cls("RxBench$Config");
    static final MethodHandle RUN_ONCE = Programs.method("RxBench", "runOnce", CONFIG);

    Object range, just, hand;

    static Object config(String workload) {
        Object c = Programs.instance("RxBench$Config");
        Programs.set(c, "workload", workload);
        Programs.set(c, "n", N);
        return c;
    }

    @Setup
    public void setup() {
        range = config("flowable-range");
        just = config("single-just");
        hand = config("hand-written");
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long flowableRange() throws Throwable {
        return (long) RUN_ONCE.invoke(range);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long singleJust() throws Throwable {
        return (long) RUN_ONCE.invoke(just);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long handWritten() throws Throwable {
        return (long) RUN_ONCE.invoke(hand);
    }
}
