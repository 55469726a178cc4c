package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.arrow.internal.FileStaging;
import io.embednorm.arrow.internal.StagedChunks;
import io.embednorm.arrow.internal.StagingPool;
import io.embednorm.engine.ColumnShape;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.GpuFaultException;
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
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

  private static final int WIDTH = 33;
  private static final Normalization STEP = Normalization.of(Op.LAYER_NORM);

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

  /**
   * Many chunks through one or two slots, the writes slower than the test GPU, and a run of chunks
   * wider than a slot: every chunk is written whole, in order, by one writer thread (the caller and
   * the copy threads write nothing), the bits are the test GPU's, and the slots held at once stay
   * within the staging's limit, wide ones included.
   */
  @ParameterizedTest(name = "{0} slots")
  @ValueSource(ints = {1, 2})
  void manyChunksThroughFewSlotsAreWrittenWholeOnOneWriterThread(int slots) throws IOException {
    Random random = new Random(TestSeeds.mix(SEED, slots));
    int perSlot = (int) (SLOT_BYTES / (WIDTH * 4L));
    List<Integer> chunkRows = new ArrayList<>();
    for (int chunk = 0; chunk < 300; chunk++) {
      chunkRows.add(chunk >= 100 && chunk < 112 ? 2 * perSlot + 5 : 1 + random.nextInt(perSlot));
    }
    Values values = values(chunkRows.stream().mapToInt(Integer::intValue).sum(), random);
    CountingHostMemory memory = new CountingHostMemory();
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 200);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, slots * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(values.input(), StandardOpenOption.READ);
        WriteFaultChannel out = values.output(directory).delayEachWrite(100)) {
      List<long[]> chunks;
      try (PipelineSession session = gpu.openSession(List.of(STEP), ElementType.FLOAT32);
          StagedChunks staged =
              new StagedChunks(
                  session,
                  pool,
                  FileStaging.source(in, position -> HEADER),
                  FileStaging.target(out))) {
        chunks = runChunks(session, staged, chunkRows, chunkRows.size());
        staged.finish();
        session.finish();
      }
      assertThat(pool.slotsInUse()).isZero();
      List<WriteFaultChannel.Write> writes = out.writes();
      assertThat(writes.stream().map(write -> new long[] {write.position(), write.bytes()}))
          .as("one write a chunk, in order")
          .containsExactlyElementsOf(chunks);
      assertThat(writes.stream().map(WriteFaultChannel.Write::thread).distinct())
          .singleElement()
          .asString()
          .startsWith("embednorm-writer-");
      long pooled = slotBlock(SLOT_BYTES);
      long wide = slotBlock((2L * perSlot + 5) * WIDTH * 4);
      assertThat(memory.peakBytes())
          .as("pinned bytes at once: %d slots and as many wide ones", slots)
          .isLessThanOrEqualTo(slots * (pooled + wide));
    }
    assertThat(values.writtenValues(directory)).as("seed %d", SEED).isEqualTo(values.expected());
    assertThat(memory.allocatedBytes()).isZero();
  }

  /** A file system that takes a few bytes at a time: each chunk is written on until whole. */
  @Test
  void shortWritesAreCarriedOnUntilEachChunkIsWhole() throws IOException {
    Random random = new Random(SEED);
    int perSlot = (int) (SLOT_BYTES / (WIDTH * 4L));
    List<Integer> chunkRows = Collections.nCopies(30, perSlot);
    Values values = values(30 * perSlot, random);
    CountingHostMemory memory = new CountingHostMemory();
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 100);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, 2 * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(values.input(), StandardOpenOption.READ);
        WriteFaultChannel out = values.output(directory).mostBytesPerWrite(1000)) {
      try (PipelineSession session = gpu.openSession(List.of(STEP), ElementType.FLOAT32);
          StagedChunks staged =
              new StagedChunks(
                  session,
                  pool,
                  FileStaging.source(in, position -> HEADER),
                  FileStaging.target(out))) {
        runChunks(session, staged, chunkRows, chunkRows.size());
        staged.finish();
        session.finish();
      }
      assertThat(out.writes().size()).isGreaterThan(30 * perSlot * WIDTH * 4 / 1000);
      assertThat(pool.slotsInUse()).isZero();
    }
    assertThat(values.writtenValues(directory)).as("seed %d", SEED).isEqualTo(values.expected());
    assertThat(memory.allocatedBytes()).isZero();
  }

  /**
   * A write failing midway (no space left) is thrown on the caller's thread, saying which bytes it
   * was writing, at its next chunk; no chunk is written after it, and every slot goes back.
   */
  @Test
  void aWriteFailingMidwayIsThrownToTheCallerAndNothingIsWrittenAfterIt() throws IOException {
    Random random = new Random(SEED);
    int perSlot = (int) (SLOT_BYTES / (WIDTH * 4L));
    int chunkBytes = perSlot * WIDTH * 4;
    List<Integer> chunkRows = Collections.nCopies(40, perSlot);
    Values values = values(40 * perSlot, random);
    long failing = HEADER + 10L * chunkBytes;
    CountingHostMemory memory = new CountingHostMemory();
    int[] chunksRun = {0};
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 100);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, 3 * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(values.input(), StandardOpenOption.READ);
        WriteFaultChannel out = values.output(directory).failAtByte(failing + 1000)) {
      PipelineSession session = gpu.openSession(List.of(STEP), ElementType.FLOAT32);
      StagedChunks staged =
          new StagedChunks(
              session, pool, FileStaging.source(in, position -> HEADER), FileStaging.target(out));
      assertThatThrownBy(
              () -> {
                for (int chunk = 0; chunk < chunkRows.size(); chunk++) {
                  runChunks(session, staged, chunkRows, chunk + 1, chunk);
                  chunksRun[0]++;
                }
                staged.finish();
              })
          .isInstanceOf(UncheckedIOException.class)
          .cause()
          .hasMessage(
              "No space left on device (writing bytes %d to %d of the output, 1000 of them"
                  + " written)",
              failing, failing + chunkBytes);
      assertThat(chunksRun[0]).as("chunks run before the failure was thrown").isLessThan(40);
      session.close();
      staged.close();
      List<WriteFaultChannel.Write> writes = out.writes();
      assertThat(writes.get(writes.size() - 1).position())
          .as("the failed write is the last")
          .isEqualTo(failing);
      assertThat(writes).hasSize(11);
      assertThat(pool.slotsInUse()).isZero();
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /**
   * A chunk failing on the GPU while the writer holds one write in progress and one queued: closing
   * the staging waits for the write in progress (a write cannot be cut short), drops the queued
   * one, and nothing is written after the close; every slot goes back.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void closingWhileWritesAreQueuedWaitsForTheWriteInProgressAndDropsTheRest() throws Exception {
    Random random = new Random(SEED);
    int perSlot = (int) (SLOT_BYTES / (WIDTH * 4L));
    int chunkBytes = perSlot * WIDTH * 4;
    List<Integer> chunkRows = Collections.nCopies(6, perSlot);
    Values values = values(6 * perSlot, random);
    CountingHostMemory memory = new CountingHostMemory();
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 100);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, 3 * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(values.input(), StandardOpenOption.READ);
        WriteFaultChannel out = values.output(directory).holdWrites()) {
      gpu.failChunkAsync(3);
      PipelineSession session = gpu.openSession(List.of(STEP), ElementType.FLOAT32);
      StagedChunks staged =
          new StagedChunks(
              session, pool, FileStaging.source(in, position -> HEADER), FileStaging.target(out));
      assertThatThrownBy(() -> runChunks(session, staged, chunkRows, chunkRows.size()))
          .isInstanceOf(GpuFaultException.class);
      out.awaitHolding();
      session.close();
      AtomicBoolean released = new AtomicBoolean();
      Thread releaser =
          new Thread(
              () -> {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
                released.set(true);
                out.release();
              });
      releaser.start();
      staged.close();
      assertThat(released).as("the close waited for the write in progress").isTrue();
      releaser.join();
      int writesAtClose = out.writes().size();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      assertThat(out.writes()).as("writes after the close").hasSize(writesAtClose);
      assertThat(out.writes())
          .as("the first chunk's write only")
          .extracting(WriteFaultChannel.Write::position)
          .containsExactly((long) HEADER);
      assertThat(pool.slotsInUse()).isZero();
    }
    byte[] written = values.writtenValues(directory);
    assertThat(Arrays.copyOfRange(written, 0, chunkBytes))
        .isEqualTo(Arrays.copyOfRange(values.expected(), 0, chunkBytes));
    assertThat(Arrays.copyOfRange(written, chunkBytes, 2 * chunkBytes))
        .as("the queued chunk is not written")
        .isEqualTo(new byte[chunkBytes]);
    assertThat(memory.allocatedBytes()).isZero();
  }

  /**
   * The caller's thread interrupted while the writer holds every slot: it stops with the interrupt
   * (its next read of the file fails, as a file channel does), nothing is written after the close,
   * and every slot goes back.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void anInterruptedCallerStopsAndEverySlotGoesBack() throws Exception {
    Random random = new Random(SEED);
    int perSlot = (int) (SLOT_BYTES / (WIDTH * 4L));
    List<Integer> chunkRows = Collections.nCopies(20, perSlot);
    Values values = values(20 * perSlot, random);
    CountingHostMemory memory = new CountingHostMemory();
    try (HostCopyGpuEngine gpu = new HostCopyGpuEngine(SEED, 100);
        StagingPool pool = new StagingPool(memory, SLOT_BYTES, 2 * 2 * SLOT_BYTES);
        FileChannel in = FileChannel.open(values.input(), StandardOpenOption.READ);
        WriteFaultChannel out = values.output(directory).holdWrites()) {
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicInteger writesAtClose = new AtomicInteger(-1);
      Thread caller =
          new Thread(
              () -> {
                PipelineSession session = gpu.openSession(List.of(STEP), ElementType.FLOAT32);
                StagedChunks staged =
                    new StagedChunks(
                        session,
                        pool,
                        FileStaging.source(in, position -> HEADER),
                        FileStaging.target(out));
                try {
                  runChunks(session, staged, chunkRows, chunkRows.size());
                  staged.finish();
                } catch (RuntimeException stopped) {
                  failure.set(stopped);
                } finally {
                  session.close();
                  staged.close();
                  writesAtClose.set(out.writes().size());
                }
              });
      caller.start();
      out.awaitHolding();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      caller.interrupt();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      out.release();
      caller.join();
      assertThat(failure.get())
          .isInstanceOf(UncheckedIOException.class)
          .hasCauseInstanceOf(ClosedByInterruptException.class);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      assertThat(out.writes()).as("writes after the close").hasSize(writesAtClose.get());
      assertThat(pool.slotsInUse()).isZero();
    }
    assertThat(memory.allocatedBytes()).isZero();
  }

  /** Rows of {@link #WIDTH} at {@link #HEADER} of a file, and the test GPU's bits for them. */
  private record Values(Path input, int rows, byte[] expected) {
    /** The output, of the input's size and zeroed, behind a channel a test can disturb. */
    WriteFaultChannel output(Path directory) throws IOException {
      Path output = directory.resolve("output");
      Files.write(output, new byte[HEADER + expected.length + 24]);
      return new WriteFaultChannel(FileChannel.open(output, StandardOpenOption.WRITE));
    }

    byte[] writtenValues(Path directory) throws IOException {
      byte[] written = Files.readAllBytes(directory.resolve("output"));
      return Arrays.copyOfRange(written, HEADER, HEADER + expected.length);
    }
  }

  private Values values(int rows, Random random) throws IOException {
    float[] values = new float[rows * WIDTH];
    ByteBuffer file = ByteBuffer.allocate(HEADER + values.length * 4 + 24);
    file.order(ByteOrder.LITTLE_ENDIAN).position(HEADER);
    for (int index = 0; index < values.length; index++) {
      values[index] = (float) (random.nextGaussian() * 3 + 1);
      file.putFloat(values[index]);
    }
    Path input = directory.resolve("input");
    Files.write(input, file.array());
    return new Values(input, rows, expected(STEP, values, rows, WIDTH));
  }

  /** Runs chunks {@code [0, count)} of the given rows; returns each one's position and bytes. */
  private static List<long[]> runChunks(
      PipelineSession session, StagedChunks staged, List<Integer> chunkRows, int count) {
    return runChunks(session, staged, chunkRows, count, 0);
  }

  /** Runs chunks {@code [from, count)} of the given rows; returns each one's position and bytes. */
  private static List<long[]> runChunks(
      PipelineSession session, StagedChunks staged, List<Integer> chunkRows, int count, int from) {
    List<long[]> chunks = new ArrayList<>();
    int first = 0;
    for (int chunk = 0; chunk < count; chunk++) {
      int rows = chunkRows.get(chunk);
      if (chunk >= from) {
        long position = HEADER + (long) first * WIDTH * 4;
        long bytes = (long) rows * WIDTH * 4;
        int firstRow = first;
        staged.run(
            position,
            bytes,
            (inputAddress, outputAddress) ->
                session.enqueue(inputAddress, outputAddress, rows, WIDTH, firstRow));
        chunks.add(new long[] {position, bytes});
      }
      first += rows;
    }
    return chunks;
  }

  /**
   * The pinned bytes of a slot for {@code bytes}: two halves, each with room to align, in pages.
   */
  private static long slotBlock(long bytes) {
    return 2 * ((bytes + 16 + 4095) & -4096L);
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
