package io.embednorm.benchmarks;

import org.openjdk.jmh.annotations.Fork;

/** The engine with the scalar loops, as on a JVM without jdk.incubator.vector. */
@Fork(
    value = 1,
    jvmArgsAppend = {"-Dembednorm.cpu.simd=false", "-Xmx2g", "-XX:MaxDirectMemorySize=2g"})
public class ScalarEngineBenchmark extends EngineBenchmark {}
