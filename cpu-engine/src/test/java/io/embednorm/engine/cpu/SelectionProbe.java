package io.embednorm.engine.cpu;

/** Prints the loops a JVM selects; run by {@link RowPassSelectionTest} in a JVM of its own. */
public final class SelectionProbe {
  private SelectionProbe() {}

  public static void main(String[] arguments) {
    System.out.println(CpuKernels.implementation());
  }
}
