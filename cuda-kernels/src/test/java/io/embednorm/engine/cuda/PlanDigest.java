package io.embednorm.engine.cuda;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Op;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;

/**
 * The planner's decisions over a fixed set of batches on three model devices, reduced to one
 * SHA-256 digest per device: {@link LaunchPlanTest} compares them with the digests of the decisions
 * as they were when the tuning moved into the kernels, so that a change to any launch shows. The
 * model devices stand in for a live context: compute capability, multiprocessors, peak memory
 * bandwidth, and a made-up but deterministic occupancy that depends on the kernel's name (so a plan
 * that asks about the wrong kernel moves a grid).
 */
final class PlanDigest {
  private PlanDigest() {}

  /** A device as the planner sees it, without a driver. */
  record ModelDevice(String name, int computeCapability, int multiprocessors, long bandwidth) {
    /** Shared memory one block may opt into. */
    int sharedMemoryPerBlockOptIn() {
      return computeCapability >= 90 ? 232_448 : 166_912;
    }

    /**
     * Blocks of {@code kernel} an SM holds: by threads, registers (from the name), shared memory.
     */
    int occupancy(String kernel, int block, int sharedBytes) {
      int registers = 1 + Math.floorMod(kernel.hashCode(), 3);
      int byThreads = 2048 / (block * registers);
      int byShared = sharedBytes == 0 ? 32 : 233_472 / (sharedBytes + 1024);
      return Math.min(32, Math.min(byThreads, byShared));
    }

    /** Dynamic shared memory a block kernel may use: the opt-in less its static scratch. */
    int dynamicSharedMemoryLimit(String kernel) {
      return sharedMemoryPerBlockOptIn() - 384;
    }
  }

  /** An A100 (no clusters), an H100 80GB HBM3 and an H200, by their figures. */
  static final List<ModelDevice> DEVICES =
      List.of(
          new ModelDevice("a100", 80, 108, 2_039_000_000_000L),
          new ModelDevice("h100", 90, 132, 3_352_000_000_000L),
          new ModelDevice("h200", 90, 132, 4_800_000_000_000L));

  /** One planner decision, as a line. */
  interface Planner {
    String plan(
        ModelDevice device,
        Op op,
        ElementType type,
        int width,
        long rows,
        boolean vectorizable,
        boolean ragged);
  }

  /** Rows of the batches planned: one, a few blocks' worth, more than a resident grid holds. */
  static final long[] ROWS = {1, 1000, 1L << 24};

  /**
   * Widths planned: every width to 4100 (the warp, tile and warp-row paths and their boundaries),
   * then both sides of every multiple of 32 to 70016 (packs, cluster threads, block threads), and
   * every width around the block path's cache limits and the 2-byte uncached threshold.
   */
  static int[] widths() {
    TreeSet<Integer> widths = new TreeSet<>();
    for (int width = 1; width <= 4100; width++) {
      widths.add(width);
    }
    for (int multiple = 4128; multiple <= 70016; multiple += 32) {
      widths.add(multiple - 1);
      widths.add(multiple);
      widths.add(multiple + 1);
    }
    for (int[] window :
        new int[][] {
          {16370, 16400},
          {20770, 20860},
          {28950, 29060},
          {32750, 32790},
          {41570, 41680},
          {57900, 58080},
          {65520, 65560}
        }) {
      for (int width = window[0]; width <= window[1]; width++) {
        widths.add(width);
      }
    }
    return widths.stream().mapToInt(Integer::intValue).toArray();
  }

  /** The digest of {@code planner}'s decisions on {@code device}; with {@code dump}, every line. */
  static String digest(Planner planner, ModelDevice device, Path dump) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException impossible) {
      throw new IllegalStateException(impossible);
    }
    try (PrintWriter out =
        dump == null
            ? null
            : new PrintWriter(Files.newBufferedWriter(dump, StandardCharsets.UTF_8))) {
      for (Op op : Op.values()) {
        for (ElementType type : ElementType.values()) {
          int vector = 16 / type.byteWidth();
          for (int width : widths()) {
            for (long rows : ROWS) {
              for (boolean vectorizable : new boolean[] {false, true}) {
                if (vectorizable && width % vector != 0) {
                  continue;
                }
                for (boolean ragged : new boolean[] {false, true}) {
                  String line =
                      op.sqlName()
                          + " "
                          + type
                          + " "
                          + width
                          + " "
                          + rows
                          + (vectorizable ? " aligned" : " unaligned")
                          + (ragged ? " ragged: " : " contiguous: ")
                          + planner.plan(device, op, type, width, rows, vectorizable, ragged)
                          + "\n";
                  sha.update(line.getBytes(StandardCharsets.UTF_8));
                  if (out != null) {
                    out.print(line);
                  }
                }
              }
            }
          }
        }
      }
    } catch (IOException failure) {
      throw new UncheckedIOException(failure);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  /**
   * Writes every decision of the planner, with the tuning the build described, to {@code
   * args[0]/<device>.txt} and prints the digests: run it in two trees and diff the files to see
   * which launches a change to the tuning moves.
   */
  public static void main(String[] args) {
    KernelTuning tuning = KernelDescription.tuning();
    for (ModelDevice device : DEVICES) {
      LaunchPlanTest.Model model = new LaunchPlanTest.Model(device, tuning);
      Path dump = Path.of(args[0], device.name() + ".txt");
      String digest =
          digest(
              (d, op, type, width, rows, vectorizable, ragged) ->
                  describe(
                      LaunchPlan.planBatch(op, type, width, rows, vectorizable, ragged, model)),
              device,
              dump);
      System.out.println(device.name() + " " + digest + " " + dump);
    }
  }

  /** A plan as a decision line: every field that reaches the launch. */
  static String describe(LaunchPlan plan) {
    return plan.kernel()
        + " "
        + plan.path()
        + " grid "
        + plan.grid()
        + " block "
        + plan.block()
        + " shared "
        + plan.sharedBytes()
        + " group "
        + plan.group()
        + " pack "
        + plan.pack();
  }
}
