package lab.referee;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * The lab's JVM programs' own loops, reached from JMH's benchmarks. The programs live in the
 * unnamed package (the lab starts them by class name) and JMH requires its benchmarks in a
 * named one, which cannot name the unnamed package's classes; so the loops are looked up
 * once, as method handles held in static finals, which the JIT inlines like a direct call.
 */
final class Programs {
    private Programs() { }

    /** A package-private static method of class `cls`, as a method handle. */
    static MethodHandle method(String cls, String name, Class<?>... params) {
        try {
            Method m = Class.forName(cls).getDeclaredMethod(name, params);
            m.setAccessible(true);
            return MethodHandles.lookup().unreflect(m);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the lab's program " + cls + "." + name
                + " is not on the class path: " + e, e);
        }
    }

    /** A new instance of the package-private nested class `cls`. */
    static Object instance(String cls) {
        try {
            Constructor<?> k = Class.forName(cls).getDeclaredConstructor();
            k.setAccessible(true);
            return k.newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make a " + cls + ": " + e, e);
        }
    }

    /** Sets field `name` of `o`. */
    static void set(Object o, String name, Object value) {
        try {
            Field f = o.getClass().getDeclaredField(name);
            f.setAccessible(true);
            f.set(o, value);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no field " + name + " in " + o.getClass() + ": " + e, e);
        }
    }

    /** Reads long field `name` of `o`. */
    static long getLong(Object o, String name) {
        try {
            Field f = o.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return f.getLong(o);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no field " + name + " in " + o.getClass() + ": " + e, e);
        }
    }

    static Class<?> cls(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("the lab's program " + name + " is not on the class path", e);
        }
    }

    static MethodType type(Class<?> r, Class<?>... p) {
        return MethodType.methodType(r, p);
    }
}
