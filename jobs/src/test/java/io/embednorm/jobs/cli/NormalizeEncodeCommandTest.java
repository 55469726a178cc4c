package io.embednorm.jobs.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.Encoding;
import io.embednorm.engine.EncodingReference;
import io.embednorm.engine.Engines;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.NormalizationEngine;
import io.embednorm.engine.Op;
import io.embednorm.engine.RowBatch;
import io.embednorm.engine.TestSeeds;
import io.embednorm.jobs.internal.SampleData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code embednorm normalize --encode}: real Arrow IPC files in and out, the encoded column read
 * back and checked row by row against the encodings' float64 reference on the CPU engine's float32
 * result; other columns pass through.
 */
class NormalizeEncodeCommandTest {
  private static final int ROWS = 3_000;
  private static final int WIDTH = 37;

  @TempDir Path folder;
  private BufferAllocator allocator;

  @BeforeEach
  void openAllocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void closeAllocator() {
    allocator.close(); // throws on a leak
  }

  @ParameterizedTest
  @EnumSource(Encoding.class)
  void writesTheEncodingOfEveryRow(Encoding encoding) throws IOException {
    long seed = TestSeeds.seeds()[0];
    Path input = folder.resolve("in.arrow");
    Path output = folder.resolve("out.arrow");
    SampleData.writeArrow(allocator, input, ROWS, WIDTH, seed);

    CommandOutput result =
        CommandOutput.run(
            "normalize",
            "--input",
            input.toString(),
            "--output",
            output.toString(),
            "--op",
            "l2_normalize",
            "--device",
            "cpu",
            "--encode",
            encoding.optionName().toUpperCase(java.util.Locale.ROOT));

    assertThat(result.exitCode()).as("seed %d, stderr %s", seed, result.err()).isZero();
    assertThat(result.out())
        .contains("as " + encoding.optionName() + " of column 'embedding'")
        .contains(ROWS + " rows");
    float[] y = cpuResult(readInput(input));
    int rowBytes = (int) encoding.rowBytes(WIDTH);
    List<Long> ids = new ArrayList<>();
    int row = 0;
    try (FileChannel channel = FileChannel.open(output, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        FieldVector column = root.getVector("embedding");
        FixedSizeBinaryVector values;
        Float4Vector scales = null;
        if (encoding.hasScales()) {
          StructVector struct = (StructVector) column;
          values = struct.getChild("values", FixedSizeBinaryVector.class);
          scales = struct.getChild("scale", Float4Vector.class);
        } else {
          values = (FixedSizeBinaryVector) column;
        }
        assertThat(values.getField().getType()).isEqualTo(new ArrowType.FixedSizeBinary(rowBytes));
        BigIntVector id = (BigIntVector) root.getVector("id");
        for (int index = 0; index < root.getRowCount(); index++, row++) {
          ids.add(id.get(index));
          ByteBuffer bytes = ByteBuffer.wrap(values.get(index));
          float scale = scales == null ? 1f : scales.get(index);
          EncodingReference.assertRow(
              encoding, y, row * WIDTH, WIDTH, bytes, 0, scale, "seed " + seed + " row " + row);
        }
      }
    }
    assertThat(row).isEqualTo(ROWS);
    List<Long> expectedIds = new ArrayList<>();
    for (long id = 0; id < ROWS; id++) {
      expectedIds.add(id);
    }
    assertThat(ids).as("ids pass through").isEqualTo(expectedIds);
  }

  @Test
  void refusesAnUnknownEncodingInOneLine() throws IOException {
    Path input = folder.resolve("in.arrow");
    Path output = folder.resolve("out.arrow");
    SampleData.writeArrow(allocator, input, 10, 4, 1);

    CommandOutput result =
        CommandOutput.run(
            "normalize",
            "--input",
            input.toString(),
            "--output",
            output.toString(),
            "--op",
            "rms_norm",
            "--encode",
            "int4");

    assertThat(result.exitCode()).as(result.err()).isEqualTo(1);
    assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
    assertThat(result.err())
        .startsWith("embednorm normalize: ")
        .contains("Cannot choose encoding: 'int4' is not one of float16, bfloat16, int8, binary");
    assertThat(output).doesNotExist();
  }

  private float[] readInput(Path file) throws IOException {
    float[] values = new float[ROWS * WIDTH];
    int row = 0;
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      while (reader.loadNextBatch()) {
        FixedSizeListVector vector =
            (FixedSizeListVector) reader.getVectorSchemaRoot().getVector("embedding");
        Float4Vector data = (Float4Vector) vector.getDataVector();
        for (int index = 0; index < vector.getValueCount(); index++, row++) {
          for (int i = 0; i < WIDTH; i++) {
            values[row * WIDTH + i] = data.get(index * WIDTH + i);
          }
        }
      }
    }
    return values;
  }

  /** The float32 result of l2_normalize on the CPU engine, the y every encoding encodes. */
  private static float[] cpuResult(float[] input) {
    ByteBuffer in = ByteBuffer.allocate(4 * input.length).order(ByteOrder.LITTLE_ENDIAN);
    in.asFloatBuffer().put(input);
    ByteBuffer out = ByteBuffer.allocate(4 * input.length).order(ByteOrder.LITTLE_ENDIAN);
    try (NormalizationEngine engine = Engines.cpu()) {
      engine.normalize(
          Normalization.of(Op.L2_NORMALIZE),
          RowBatch.fixedWidth(ElementType.FLOAT32, ROWS, WIDTH, in, out));
    }
    float[] y = new float[input.length];
    out.asFloatBuffer().get(y);
    return y;
  }
}
