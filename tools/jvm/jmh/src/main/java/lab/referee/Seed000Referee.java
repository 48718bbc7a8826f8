package lab.referee;

import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * JMH's form of seed 000's three synchronous workloads, as the lab's rx and reactor rows run
 * them: each benchmark calls the library program's own `runOnce` (RxBench or ReactorBench,
 * through the shared Seed000.Library), the very loop the lab's child times, over the same n,
 * so JMH's ns/op and the lab's row time one piece of code: average time per element (range)
 * or per subscription (just, the hand-written publisher), the unit of subscribe-overhead.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class Seed000Referee {
    /** Seed 000's n: one million elements or subscriptions per run. */
    static final int N = 1_000_000;

    static final Class<?> CONFIG = Programs.cls("Seed000$Config");
    static final Class<?> LIBRARY = Programs.cls("Seed000$Library");
    static final MethodHandle RUN_ONCE = Programs.method("Seed000$Library", "runOnce", CONFIG);

    /** `rx` (RxBench, RxJava 3) or `reactor` (ReactorBench, Reactor). */
    @Param({"rx", "reactor"})
    public String library;

    Object lib, range, just, hand;

    Object config(String workload) {
        Object c = Programs.instance("Seed000$Config");
        Programs.set(c, "workload", workload);
        Programs.set(c, "n", N);
        return c;
    }

    @Setup
    public void setup() {
        boolean rx = library.equals("rx");
        lib = Programs.instance(rx ? "RxBench" : "ReactorBench");
        range = config(rx ? "flowable-range" : "flux-range");
        just = config(rx ? "single-just" : "mono-just");
        hand = config("hand-written");
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long range() throws Throwable {
        return (long) RUN_ONCE.invoke(lib, range);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long just() throws Throwable {
        return (long) RUN_ONCE.invoke(lib, just);
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public long handWritten() throws Throwable {
        return (long) RUN_ONCE.invoke(lib, hand);
    }
}
