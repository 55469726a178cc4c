package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.internal.FileStaging;
import io.embednorm.arrow.internal.StagedChunks;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The staging's second user, files: values read from a file at positions into the slots and the
 * results written from the slots into another file at the same positions, through {@link
 * HostCopyGpuEngine}'s asynchronous lanes. The output file holds the test GPU's bits (the CPU
 * engine's, lowest bit flipped) exactly where the values were, and nothing else is written.
 */
class FileStagingTest {
  private static final long SEED = TestSeeds.seeds()[TestSeeds.seeds().length - 1];
  private static final long SLOT_BYTES = (16 << 10) + 8;

  /** Values start at an odd place of the file, as a column's buffer in a record batch's body. */
  private static final int HEADER = 40;

  @TempDir Path directory;

  @Test
  void fixedAndRaggedRowsGoFromFileToFileThroughTheSlots() throws IOException {
    System.out.println("FileStagingTest seed " + SEED + " (-Dembednorm.test.seed to repeat)");
    Random random = new Random(SEED);
    int width = 33;
    int rows = 1200;
    float[] values = new float[rows * width];
    for (int index = 0; index < values.length; index++) {
      values[index] = (float) (random.nextGaussian() * 3 + 1);
    }
    Path input = directory.resolve("input");
    Path output = directory.resolve("output");
    ByteBuffer file = ByteBuffer.allocate(HEADER + values.length * 4 + 24);
    file.order(ByteOrder.LITTLE_ENDIAN).position(HEADER);
    for (float value : values) {
      file.putFloat(value);
    }
    Files.write(input, file.array());
    Normalization step = Normalization.of(Op.LAYER_NORM);
    byte[] expected = expected(step, values, rows, width);
    int[] offsets = new int[rows + 1];
    for (int row = 0; row <= rows; row++) {
      offsets[row] = row * width;
    }
    CountingHostMemory memory = new CountingHostMemory();
    for (boolean ragged : new boolean[] {false, true}) {
      Files.write(output, new byte[file.capacity()]);
      try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 300);
          StagingPool pool = new StagingPool(memory, SLOT_BYTES, 3 * 2 * SLOT_BYTES);
          FileChannel in = FileChannel.open(input, StandardOpenOption.READ);
          FileChannel out = FileChannel.open(output, StandardOpenOption.WRITE)) {
        int rowsPerChunk = (int) (SLOT_BYTES / (width * 4L));
        try (PipelineSession session = gpu.openSession(List.of(step), ElementType.FLOAT32);
            StagedChunks staged =
                new StagedChunks(
                    session,
                    pool,
                    FileStaging.source(in, position -> HEADER),
                    FileStaging.target(out))) {
          for (int from = 0; from < rows; from += rowsPerChunk) {
            int to = Math.min(rows, from + rowsPerChunk);
            int first = from;
            int[] chunkOffsets = new int[to - from + 1];
            for (int row = from; row <= to; row++) {
              chunkOffsets[row - from] = offsets[row] - offsets[from];
            }
            staged.run(
                HEADER + (long) offsets[from] * 4,
                (long) (offsets[to] - offsets[from]) * 4,
                (inputAddress, outputAddress) ->
                    ragged
                        ? session.enqueueRagged(
                            inputAddress,
                            outputAddress,
                            chunkOffsets,
                            first,
                            new ColumnShape(width, false))
                        : session.enqueue(inputAddress, outputAddress, to - first, width, first));
          }
          staged.finish();
          session.finish();
        }
        assertThat(pool.slotsInUse()).isZero();
      }
      byte[] written = Files.readAllBytes(output);
      byte[] values32 = new byte[values.length * 4];
      System.arraycopy(written, HEADER, values32, 0, values32.length);
      assertThat(values32).as("seed %d, ragged %s", SEED, ragged).isEqualTo(expected);
      for (int index = 0; index < written.length; index++) {
        if (index < HEADER || index >= HEADER + values32.length) {
          assertThat(written[index]).as("byte %d outside the values", index).isZero();
        }
      }
    }
    assertThat(memory.allocatedBytes()).as("slot bytes after the pools closed").isZero();
  }

  @Test
  void aFileThatEndsEarlyFailsTheChunkAndEverySlotGoesBack() throws IOException {
    Path input = directory.resolve("short");
    Files.write(input, new byte[1000]);
    CountingHostMemory memory = new CountingHostMemory();
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 0);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, 2 * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(input, StandardOpenOption.READ);
        PipelineSession session =
            gpu.openSession(List.of(Normalization.of(Op.RMS_NORM)), ElementType.FLOAT32);
        StagedChunks staged =
            new StagedChunks(
                session,
                pool,
                FileStaging.source(in, position -> 0),
                (address, position, bytes) -> {})) {
      assertThatThrownBy(
              () ->
                  staged.run(
                      0,
                      16 * 100,
                      (inputAddress, outputAddress) ->
                          session.enqueue(inputAddress, outputAddress, 100, 4, 0)))
          .isInstanceOf(UncheckedIOException.class)
          .hasCauseInstanceOf(EOFException.class)
          .hasMessageContaining("the file ends before byte 1600");
      staged.close();
      assertThat(pool.slotsInUse()).isZero();
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /** The CPU engine's rows with every element's lowest bit flipped: the test GPU's. */
  private static byte[] expected(Normalization step, float[] values, int rows, int width) {
    ByteBuffer in = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    in.asFloatBuffer().put(values);
    ByteBuffer out = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    try (NormalizationEngine cpu = Engines.cpu(1)) {
      cpu.normalize(step, RowBatch.fixedWidth(ElementType.FLOAT32, rows, width, in, out));
    }
    byte[] bytes = new byte[values.length * 4];
    out.get(0, bytes);
    for (int index = 0; index < bytes.length; index += 4) {
      bytes[index] ^= 1;
    }
    return bytes;
  }
}
