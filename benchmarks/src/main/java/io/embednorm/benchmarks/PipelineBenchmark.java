package io.embednorm.benchmarks;

import io.embednorm.arrow.ArrowNormalizer;
import io.embednorm.arrow.NormalizationMetrics;
import io.embednorm.arrow.PinnedAllocators;
import io.embednorm.engine.DeviceChoice;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Engines;
import io.embednorm.engine.InternalSwitches;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import io.embednorm.engine.PinnedBlock;
import io.embednorm.engine.PipelineSession;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.cuda.CudaAvailability;
import io.embednorm.engine.cuda.CudaContext;
import io.embednorm.engine.cuda.CudaEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Arrow → GPU → Arrow end to end over several GiB of float32 embeddings, next to the copy
 * bandwidths measured in the same run: pinned upload, download and both at once (duplex), and
 * pageable. Modes: the pipeline on pinned Arrow memory at several chunk sizes, then at the default
 * chunk size on pinned memory and on ordinary Arrow memory ({@code RootAllocator}: through the
 * pinned staging slots, the default, from one and two threads; and registered per call, {@code
 * embednorm.gpu.staging=false}) with the ratio staged / pinned of this run, the CPU engine on the
 * same ordinary batches (the device {@code auto} weighs against the staged path), and the naive
 * path (pageable, one stream, no overlap). Rate = input bytes normalized per second; the ceiling is
 * half the duplex rate, since every byte goes up once and down once.
 *
 * <p>With {@code --gpus 0,1} (two or more GPUs) each width ends with the spread: the pipeline on
 * the first listed GPU alone and then over all listed GPUs, on the same pinned batches, at each
 * chunk size, with the ratio of their rates, the chunks each GPU ran, and whether the outputs are
 * equal bit for bit. The rows above it are unchanged (GPU 0's).
 *
 * <pre>
 * java -cp ... io.embednorm.benchmarks.PipelineBenchmark [--widths 768,4096] [--gib 4]
 *     [--batch-mib 512] [--chunks-mib 4,8,16,32,64] [--op rms_norm] [--repeats 3] [--gpus 0,1]
 * </pre>
 */
public final class PipelineBenchmark {
  private static final long MEBIBYTE = 1L << 20;

  private final int[] widths;
  private final long totalBytes;
  private final long batchBytes;
  private final long[] chunkSizes;
  private final Normalization normalization;
  private final int repeats;
  private final int[] gpus;

  private PipelineBenchmark(String[] arguments) {
    int[] parsedWidths = {768, 4096};
    double gib = 4;
    long batchMib = 512;
    long[] chunks = {4, 8, 16, 32, 64};
    Op op = Op.RMS_NORM;
    int parsedRepeats = 3;
    int[] parsedGpus = {0};
    for (int index = 0; index + 1 < arguments.length; index += 2) {
      String value = arguments[index + 1];
      switch (arguments[index]) {
        case "--widths":
          parsedWidths = Arrays.stream(value.split(",")).mapToInt(Integer::parseInt).toArray();
          break;
        case "--gib":
          gib = Double.parseDouble(value);
          break;
        case "--batch-mib":
          batchMib = Long.parseLong(value);
          break;
        case "--chunks-mib":
          chunks = Arrays.stream(value.split(",")).mapToLong(Long::parseLong).toArray();
          break;
        case "--op":
          op = Op.fromName(value);
          break;
        case "--repeats":
          parsedRepeats = Integer.parseInt(value);
          break;
        case "--gpus":
          parsedGpus = Arrays.stream(value.split(",")).mapToInt(Integer::parseInt).toArray();
          break;
        default:
          throw new IllegalArgumentException("unknown option " + arguments[index]);
      }
    }
    this.widths = parsedWidths;
    this.totalBytes = (long) (gib * (1L << 30));
    this.batchBytes = batchMib * MEBIBYTE;
    this.chunkSizes = Arrays.stream(chunks).map(size -> size * MEBIBYTE).toArray();
    this.normalization = Normalization.of(op);
    this.repeats = parsedRepeats;
    this.gpus = parsedGpus;
  }

  public static void main(String[] arguments) {
    new PipelineBenchmark(arguments).run();
  }

  private void run() {
    CudaContext context = CudaContext.of(0);
    System.out.printf(
        "# %s, %s, %.1f GiB of float32 per width in batches of %d MiB, median of %d%n",
        CudaAvailability.get().deviceName(),
        normalization.op().sqlName(),
        totalBytes / (double) (1L << 30),
        batchBytes / MEBIBYTE,
        repeats);
    try (RootAllocator pinned = PinnedAllocators.newRootAllocator(Long.MAX_VALUE);
        RootAllocator plain = new RootAllocator()) {
      for (int width : widths) {
        runWidth(context, pinned, plain, width);
      }
    }
  }

  private void runWidth(
      CudaContext context, BufferAllocator pinned, BufferAllocator plain, int width) {
    int rowsPerBatch = (int) (batchBytes / ((long) width * Float.BYTES));
    int batches = (int) Math.max(1, totalBytes / ((long) rowsPerBatch * width * Float.BYTES));
    long inputBytes = (long) batches * rowsPerBatch * width * Float.BYTES;
    List<FieldVector> pinnedBatches = new ArrayList<>();
    List<FieldVector> plainBatches = new ArrayList<>();
    try {
      // One random batch, copied: the rates do not depend on the values.
      try (FieldVector template = randomBatch(plain, rowsPerBatch, width)) {
        for (int batch = 0; batch < batches; batch++) {
          pinnedBatches.add(copyOf(template, pinned));
          plainBatches.add(copyOf(template, plain));
        }
      }
      long oneBatch = (long) rowsPerBatch * width * Float.BYTES;
      CopyBandwidth.Figures pinnedCopy =
          CopyBandwidth.measure(context, data(pinnedBatches.get(0)).memoryAddress(), oneBatch, 5);
      CopyBandwidth.Figures pageableCopy =
          CopyBandwidth.measure(context, data(plainBatches.get(0)).memoryAddress(), oneBatch, 3);
      double ceiling = pinnedCopy.duplex() / 2;
      System.out.printf(
          "%nwidth %d: %d batches of %d rows, %.2f GiB input%n",
          width, batches, rowsPerBatch, inputBytes / (double) (1L << 30));
      System.out.printf(
          "copy pinned: up %.1f GB/s, down %.1f GB/s, duplex %.1f GB/s (ceiling for input: %.1f"
              + " GB/s); pageable: up %.1f, down %.1f, duplex %.1f%n",
          pinnedCopy.upload() / 1e9,
          pinnedCopy.download() / 1e9,
          pinnedCopy.duplex() / 1e9,
          ceiling / 1e9,
          pageableCopy.upload() / 1e9,
          pageableCopy.download() / 1e9,
          pageableCopy.duplex() / 1e9);
      System.out.printf(
          "%-28s %10s %9s %10s %10s %10s %9s %9s%n",
          "mode",
          "GB/s in",
          "% ceiling",
          "upload ms",
          "kernel ms",
          "download ms",
          "pinned %",
          "reg. ms");
      for (long chunk : chunkSizes) {
        long output = data(pinnedBatches.get(1 % batches)).memoryAddress();
        long input = data(pinnedBatches.get(0)).memoryAddress();
        double copies = 0;
        for (int repeat = 0; repeat < 3; repeat++) {
          copies =
              Math.max(
                  copies,
                  CopyBandwidth.chunkedRoundTrip(context, input, output, oneBatch, chunk, 4));
        }
        System.out.printf(
            "%-28s %10.1f %8.1f%%%n",
            "copies only, " + chunk / MEBIBYTE + " MiB, 4 lanes",
            copies / 1e9,
            100 * copies / ceiling);
        sessionOnly(context, pinnedBatches, width, chunk, inputBytes, ceiling);
        try (ArrowNormalizer normalizer = gpu(pinned, chunk)) {
          measure(
              "pipeline, pinned, " + chunk / MEBIBYTE + " MiB",
              normalizer,
              pinnedBatches,
              inputBytes,
              ceiling);
        }
      }
      long defaultChunk = ArrowNormalizer.DEFAULT_GPU_CHUNK_BYTES;
      String size = defaultChunk / MEBIBYTE + " MiB";
      Measured pinnedRate;
      Measured staged;
      try (ArrowNormalizer normalizer = gpu(pinned, defaultChunk)) {
        pinnedRate =
            measure("pipeline, pinned, " + size, normalizer, pinnedBatches, inputBytes, ceiling);
      }
      try (ArrowNormalizer normalizer = gpu(plain, defaultChunk)) {
        staged =
            measure(
                "pipeline, ordinary (staged), " + size,
                normalizer,
                plainBatches,
                inputBytes,
                ceiling);
        measureThreads(
            "pipeline, ordinary (staged), " + size + ", 2 threads",
            normalizer,
            plainBatches,
            inputBytes,
            ceiling,
            2);
      }
      // The peer auto weighs the staged GPU path against on ordinary memory: the CPU engine.
      Measured cpu;
      try (ArrowNormalizer normalizer =
          ArrowNormalizer.builder(plain).device(DeviceChoice.CPU).build()) {
        cpu =
            measureThreads(
                "CPU engine, ordinary, all cores",
                normalizer,
                plainBatches,
                inputBytes,
                ceiling,
                1);
      }
      String staging = InternalSwitches.GPU_STAGING.name();
      System.setProperty(staging, "false");
      try (ArrowNormalizer normalizer = gpu(plain, defaultChunk)) {
        measure(
            "pipeline, ordinary (registered), " + size,
            normalizer,
            plainBatches,
            inputBytes,
            ceiling);
      } finally {
        System.clearProperty(staging);
      }
      System.out.printf(
          "ratio ordinary (staged) / pinned at %s, same run: %.2f (%.1f%% of the ceiling;"
              + " staged %d of %d bytes moved)%n",
          size,
          staged.rate() / pinnedRate.rate(),
          100 * staged.rate() / ceiling,
          staged.metrics().stagedBytes(),
          staged.metrics().bytesUploaded() + staged.metrics().bytesDownloaded());
      System.out.printf(
          "ratio ordinary (staged) / CPU engine on the same batches, same run: %.2f%n",
          staged.rate() / cpu.rate());
      naive(plain, plainBatches, width, inputBytes, ceiling);
      checkSame(pinned, plain, pinnedBatches.get(0), plainBatches.get(0), width);
      if (gpus.length > 1) {
        spread(pinned, pinnedBatches, inputBytes, ceiling);
      }
    } finally {
      pinnedBatches.forEach(FieldVector::close);
      plainBatches.forEach(FieldVector::close);
    }
  }

  private ArrowNormalizer gpu(BufferAllocator allocator, long chunk) {
    return ArrowNormalizer.builder(allocator).device(DeviceChoice.GPU).gpuChunkBytes(chunk).build();
  }

  /**
   * The pipeline on the first of {@code --gpus} alone, then over all of them, on the same pinned
   * batches at each chunk size; the share of the ceiling is of the listed GPUs' ceilings together
   * (each GPU has its own link), taken as this GPU's times their number.
   */
  private void spread(
      BufferAllocator pinned, List<FieldVector> batches, long inputBytes, double ceiling) {
    String all = "GPUs " + Arrays.toString(gpus);
    System.out.printf(
        "spread over %s, pinned, same batches (%% ceiling: of %d times the one above)%n",
        all, gpus.length);
    for (long chunk : chunkSizes) {
      String size = chunk / MEBIBYTE + " MiB";
      try (ArrowNormalizer one =
              ArrowNormalizer.builder(pinned)
                  .device(DeviceChoice.GPU)
                  .gpuOrdinal(gpus[0])
                  .gpuChunkBytes(chunk)
                  .build();
          ArrowNormalizer several =
              ArrowNormalizer.builder(pinned)
                  .device(DeviceChoice.GPU)
                  .gpuOrdinals(gpus)
                  .gpuChunkBytes(chunk)
                  .build()) {
        Measured alone =
            measure(
                "pipeline, pinned, " + size + ", GPU " + gpus[0],
                one,
                batches,
                inputBytes,
                ceiling * gpus.length);
        Measured spread =
            measure(
                "pipeline, pinned, " + size + ", " + all,
                several,
                batches,
                inputBytes,
                ceiling * gpus.length);
        Measured threads =
            measureThreads(
                "pipeline, pinned, " + size + ", " + all + ", " + gpus.length + " threads",
                several,
                batches,
                inputBytes,
                ceiling * gpus.length,
                gpus.length);
        boolean same;
        try (FieldVector onOne = one.normalize(batches.get(0), normalization);
            FieldVector onSeveral = several.normalize(batches.get(0), normalization)) {
          same = sameBits(onOne, onSeveral);
        }
        System.out.printf(
            "ratio %s / GPU %d at %s: %.2fx in one call at a time, %.2fx from %d threads;"
                + " chunks per GPU %s; output equal bit for bit: %s%n",
            all,
            gpus[0],
            size,
            spread.rate() / alone.rate(),
            threads.rate() / alone.rate(),
            gpus.length,
            spread.metrics().chunksPerGpu(),
            same);
      }
    }
    double together = copiesTogether(batches);
    System.out.printf(
        "copy pinned on %s at once: duplex %.1f GB/s together = %.2fx GPU %d's (the host's"
            + " ceiling for the spread)%n",
        all, together / 1e9, together / (2 * ceiling), gpus[0]);
  }

  /**
   * The duplex copy rate of every listed GPU at once, each from its own thread on its own batch:
   * what the host's memory and links give several GPUs together.
   */
  private double copiesTogether(List<FieldVector> batches) {
    long bytes = data(batches.get(0)).capacity();
    List<CompletableFuture<CopyBandwidth.Figures>> copies = new ArrayList<>();
    for (int index = 0; index < gpus.length; index++) {
      long address = data(batches.get(index % batches.size())).memoryAddress();
      int ordinal = gpus[index];
      copies.add(
          CompletableFuture.supplyAsync(
              () -> CopyBandwidth.measure(CudaContext.of(ordinal), address, bytes, 5)));
    }
    return copies.stream().mapToDouble(copy -> copy.join().duplex()).sum();
  }

  /** As {@link #measure}, with the batches shared out among {@code threadCount} calling threads. */
  private Measured measureThreads(
      String mode,
      ArrowNormalizer normalizer,
      List<FieldVector> batches,
      long inputBytes,
      double ceiling,
      int threadCount) {
    double[] rates = new double[repeats];
    for (int repeat = -1; repeat < repeats; repeat++) {
      long started = System.nanoTime();
      List<CompletableFuture<Void>> callers = new ArrayList<>();
      for (int thread = 0; thread < threadCount; thread++) {
        int first = thread;
        callers.add(
            CompletableFuture.runAsync(
                () -> {
                  for (int batch = first; batch < batches.size(); batch += threadCount) {
                    normalizer.normalize(batches.get(batch), normalization).close();
                  }
                }));
      }
      callers.forEach(CompletableFuture::join);
      if (repeat >= 0) {
        rates[repeat] = inputBytes / ((System.nanoTime() - started) / 1e9);
      }
    }
    double rate = median(rates);
    System.out.printf("%-28s %10.1f %8.1f%%%n", mode, rate / 1e9, 100 * rate / ceiling);
    return new Measured(rate, null);
  }

  /** A mode's median rate and the metrics of its last pass. */
  private record Measured(double rate, NormalizationMetrics metrics) {}

  private Measured measure(
      String mode,
      ArrowNormalizer normalizer,
      List<FieldVector> batches,
      long inputBytes,
      double ceiling) {
    double[] rates = new double[repeats];
    NormalizationMetrics last = null;
    pass(normalizer, batches, new NormalizationMetrics());
    for (int repeat = 0; repeat < repeats; repeat++) {
      NormalizationMetrics metrics = new NormalizationMetrics();
      long started = System.nanoTime();
      pass(normalizer, batches, metrics);
      rates[repeat] = inputBytes / ((System.nanoTime() - started) / 1e9);
      last = metrics;
    }
    double rate = median(rates);
    long moved = last.bytesUploaded() + last.bytesDownloaded();
    System.out.printf(
        "%-28s %10.1f %8.1f%% %10.1f %10.1f %10.1f %8.1f%% %9.1f%n",
        mode,
        rate / 1e9,
        100 * rate / ceiling,
        last.uploadNanos() / 1e6,
        last.kernelNanos() / 1e6,
        last.downloadNanos() / 1e6,
        100.0 * last.pinnedBytes() / Math.max(1, moved),
        last.registrationNanos() / 1e6);
    return new Measured(rate, last);
  }

  private void pass(
      ArrowNormalizer normalizer, List<FieldVector> batches, NormalizationMetrics metrics) {
    for (FieldVector batch : batches) {
      normalizer.normalize(batch, List.of(normalization), metrics).close();
    }
  }

  /** The device session alone, without Arrow: what the pipeline costs beyond the copies. */
  private void sessionOnly(
      CudaContext context,
      List<FieldVector> batches,
      int width,
      long chunk,
      long inputBytes,
      double ceiling) {
    long batchBytes = (long) batches.get(0).getValueCount() * width * Float.BYTES;
    int chunkRows = (int) Math.max(1, chunk / ((long) width * Float.BYTES));
    double[] rates = new double[repeats];
    try (CudaEngine engine = new CudaEngine(0);
        PinnedBlock output = Engines.hostMemory().allocate(batchBytes)) {
      for (int repeat = -1; repeat < repeats; repeat++) {
        long started = System.nanoTime();
        for (FieldVector batch : batches) {
          try (PipelineSession session =
              engine.openSession(List.of(normalization), ElementType.FLOAT32)) {
            long input = data(batch).memoryAddress();
            int rows = batch.getValueCount();
            for (int row = 0; row < rows; row += chunkRows) {
              long offset = (long) row * width * Float.BYTES;
              session.enqueue(
                  input + offset,
                  output.address() + offset,
                  Math.min(chunkRows, rows - row),
                  width,
                  row);
            }
            session.finish();
          }
        }
        if (repeat >= 0) {
          rates[repeat] = inputBytes / ((System.nanoTime() - started) / 1e9);
        }
      }
    }
    double rate = median(rates);
    System.out.printf(
        "%-28s %10.1f %8.1f%%%n",
        "session only, " + chunk / MEBIBYTE + " MiB", rate / 1e9, 100 * rate / ceiling);
  }

  /** The synchronous engine path on pageable memory: one stream, whole batches, no overlap. */
  private void naive(
      BufferAllocator allocator,
      List<FieldVector> batches,
      int width,
      long inputBytes,
      double ceiling) {
    double[] rates = new double[repeats];
    try (CudaEngine engine = new CudaEngine(0)) {
      for (int repeat = -1; repeat < repeats; repeat++) {
        long started = System.nanoTime();
        for (FieldVector batch : batches) {
          try (FieldVector output = naiveBatch(engine, allocator, batch, width)) {
            // freed at once, as the pipeline's results are
          }
        }
        if (repeat >= 0) {
          rates[repeat] = inputBytes / ((System.nanoTime() - started) / 1e9);
        }
      }
    }
    double rate = median(rates);
    System.out.printf(
        "%-28s %10.1f %8.1f%%%n", "naive (pageable, 1 stream)", rate / 1e9, 100 * rate / ceiling);
  }

  private FieldVector naiveBatch(
      CudaEngine engine, BufferAllocator allocator, FieldVector batch, int width) {
    FixedSizeListVector output = (FixedSizeListVector) batch.getField().createVector(allocator);
    output.setInitialCapacity(batch.getValueCount());
    output.allocateNew();
    output.setValueCount(batch.getValueCount());
    int bytes = (int) ((long) batch.getValueCount() * width * Float.BYTES);
    engine.normalize(
        normalization,
        RowBatch.fixedWidth(
            ElementType.FLOAT32,
            batch.getValueCount(),
            width,
            data(batch).nioBuffer(0, bytes),
            data(output).nioBuffer(0, bytes)));
    return output;
  }

  /** The pipeline on pinned memory and the naive path write the same bits. */
  private void checkSame(
      BufferAllocator pinned,
      BufferAllocator plain,
      FieldVector pinnedBatch,
      FieldVector plainBatch,
      int width) {
    try (ArrowNormalizer normalizer = gpu(pinned, ArrowNormalizer.DEFAULT_GPU_CHUNK_BYTES);
        FieldVector piped = normalizer.normalize(pinnedBatch, normalization);
        CudaEngine engine = new CudaEngine(0);
        FieldVector naive = naiveBatch(engine, plain, plainBatch, width)) {
      System.out.println(
          "pipeline output equals naive output bit for bit: " + sameBits(piped, naive));
    }
  }

  /** Whether two batches of the same shape hold the same element bits. */
  private static boolean sameBits(FieldVector first, FieldVector second) {
    long bytes =
        (long) first.getValueCount() * ((FixedSizeListVector) first).getListSize() * Float.BYTES;
    for (long offset = 0; offset < bytes; offset += Long.BYTES) {
      if (data(first).getLong(offset) != data(second).getLong(offset)) {
        return false;
      }
    }
    return true;
  }

  /** A FixedSizeList batch of float32 rows of {@code width}, not null, values in [-4, 4). */
  static FieldVector randomBatch(BufferAllocator allocator, int rows, int width) {
    Field element =
        new Field(
            "item",
            FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
            null);
    Field field =
        new Field(
            "embedding",
            FieldType.notNullable(new ArrowType.FixedSizeList(width)),
            List.of(element));
    FixedSizeListVector vector = (FixedSizeListVector) field.createVector(allocator);
    vector.setInitialCapacity(rows);
    vector.allocateNew();
    Float4Vector elements = (Float4Vector) vector.getDataVector();
    ArrowBuf data = elements.getDataBuffer();
    long count = (long) rows * width;
    long state = new Random(width).nextLong() | 1;
    for (long index = 0; index < count; index++) {
      state ^= state << 13;
      state ^= state >>> 7;
      state ^= state << 17;
      data.setFloat(index * Float.BYTES, (state >>> 40) * 0x1p-24f * 8 - 4);
    }
    vector.getValidityBuffer().setOne(0, vector.getValidityBuffer().capacity());
    elements.getValidityBuffer().setOne(0, elements.getValidityBuffer().capacity());
    vector.setValueCount(rows);
    return vector;
  }

  private static FieldVector copyOf(FieldVector template, BufferAllocator allocator) {
    FieldVector copy = template.getField().createVector(allocator);
    copy.setInitialCapacity(template.getValueCount());
    copy.allocateNew();
    ArrowBuf source = data(template);
    data(copy).setBytes(0, source, 0, source.capacity());
    copy.getValidityBuffer().setOne(0, copy.getValidityBuffer().capacity());
    ArrowBuf elementValidity = ((FixedSizeListVector) copy).getDataVector().getValidityBuffer();
    elementValidity.setOne(0, elementValidity.capacity());
    copy.setValueCount(template.getValueCount());
    return copy;
  }

  private static ArrowBuf data(FieldVector vector) {
    return ((FixedSizeListVector) vector).getDataVector().getDataBuffer();
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
