package lab.referee;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * JMH's form of seed 004's benchmark as the lab's netty rows run it: Netty's
 * ByteBufAllocatorBenchmark subject (allocate, then release, one thread, ops/ms) with the
 * lab's per-cycle touch (one byte written and read back), through NettyAlloc.cycles, the
 * loop the lab's child times, one cycle per op. Seed 004 ran 2 forks of 10 warm-up and 10
 * measured iterations of 1 s: the lab passes its counts on JMH's command line.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Thread)
public class NettyAllocReferee {
    static final Class<?> COUNTS = Programs.cls("NettyAlloc$Counts");
    static final MethodHandle CYCLES = Programs.method("NettyAlloc", "cycles",
        ByteBufAllocator.class, boolean.class, int.class, long.class, long.class, long.class, COUNTS);

    @Param({"pooled", "unpooled"})
    public String allocator;

    @Param({"heap", "direct"})
    public String memory;

    @Param({"1024"})
    public int size;

    ByteBufAllocator alloc;
    boolean heap;
    long cycle;
    Object counts;

    @Setup
    public void setup() {
        // As NettyAlloc makes them: a fresh allocator that prefers direct buffers.
        alloc = allocator.equals("pooled")
            ? new PooledByteBufAllocator(true) : new UnpooledByteBufAllocator(true);
        heap = memory.equals("heap");
        counts = Programs.instance("NettyAlloc$Counts");
    }

    @Benchmark
    public Object allocAndFree() throws Throwable {
        CYCLES.invoke(alloc, heap, size, cycle++, 1L, -1L, counts);
        return counts;
    }
}
