package io.embednorm.benchmarks;

import org.openjdk.jmh.annotations.Fork;

/** The engine with the Vector API loops, as bin/embednorm runs it. */
@Fork(
    value = 1,
    jvmArgsAppend = {
      "--add-modules=jdk.incubator.vector",
      "-XX:PerMethodTrapLimit=1000",
      "-Dembednorm.cpu.warmup=false",
      "-Xmx2g",
      "-XX:MaxDirectMemorySize=2g"
    })
public class SimdEngineBenchmark extends EngineBenchmark {}
