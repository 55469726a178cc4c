package io.embednorm.arrow;

import io.embednorm.arrow.TestColumns.Layout;
import io.embednorm.engine.ElementType;
import io.embednorm.engine.Normalization;
import io.embednorm.engine.Op;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * A seeded generator of hostile Arrow IPC inputs for {@link ArrowFilesFuzzTest}: a file or stream
 * written by Arrow Java's own writers (supported and unsupported column types, widths from 0 to
 * 70,000, null rows and null elements, offsets that start late or are poked into disorder, zero
 * batches, dictionaries, other columns around the embedding column), then damaged at the byte level
 * (truncated at a structural boundary or anywhere, metadata bytes flipped, lengths, offsets and
 * counts in the metadata rewritten to huge or negative values, the format's magic removed or added,
 * emptied). The description says everything that was done, for replay.
 */
final class HostileFiles {
  static final String COLUMN = "embedding";

  private static final long[] HOSTILE_LONGS = {
    Integer.MAX_VALUE, 1L << 62, -1, Long.MAX_VALUE, 1L << 31, 1L << 40, 0, 3
  };

  enum Kind {
    FIXED_FLOAT,
    LIST_FLOAT,
    INT,
    UTF8,
    STRUCT,
    FIXED_INT,
    NESTED_LIST,
    DICTIONARY,
    MISSING
  }

  /** A generated input: the bytes, the column and op to normalize, and what was done. */
  record Case(
      byte[] bytes,
      String column,
      Normalization normalization,
      String description,
      boolean mustSucceed) {}

  private boolean damaged;

  private final Random random;
  private final BufferAllocator allocator;
  private final StringBuilder description = new StringBuilder();

  private HostileFiles(Random random, BufferAllocator allocator) {
    this.random = random;
    this.allocator = allocator;
  }

  static Case generate(Random random, BufferAllocator allocator) throws IOException {
    return new HostileFiles(random, allocator).generate();
  }

  private Case generate() throws IOException {
    Spec spec = spec();
    boolean file = random.nextDouble() < 0.75;
    note(file ? "file" : "stream");
    note(spec.toString());
    byte[] bytes = write(spec, file);
    Normalization normalization = normalization(spec);
    note(normalization.toString());
    if (spec.offsetPoke() != null) {
      pokeOffsets(bytes, new IpcStructure(bytes, file), spec);
    }
    bytes = damage(bytes, file);
    boolean supported = spec.kind() == Kind.FIXED_FLOAT || spec.kind() == Kind.LIST_FLOAT;
    boolean fits =
        !normalization.hasWeight()
            || (spec.kind() == Kind.FIXED_FLOAT
                && (spec.width() == 0 || normalization.weight().length == spec.width()));
    boolean mustSucceed = supported && fits && !damaged && spec.offsetPoke() == null;
    return new Case(bytes, COLUMN, normalization, description.toString(), mustSucceed);
  }

  private void note(String what) {
    description.append(description.length() == 0 ? "" : "; ").append(what);
  }

  /** What the undamaged input holds. */
  record Spec(
      Kind kind,
      ElementType type,
      int width,
      int batches,
      int rows,
      double nullRows,
      double nullElements,
      int leadingElements,
      int nullRowWidth,
      String offsetPoke,
      boolean id,
      String label,
      boolean score) {}

  private Spec spec() {
    double draw = random.nextDouble();
    Kind kind =
        draw < 0.42
            ? Kind.FIXED_FLOAT
            : draw < 0.8
                ? Kind.LIST_FLOAT
                : Kind.values()[2 + random.nextInt(Kind.values().length - 2)];
    ElementType[] types = {ElementType.FLOAT16, ElementType.FLOAT32, ElementType.FLOAT64};
    ElementType type = types[random.nextInt(types.length)];
    boolean wide = random.nextDouble() < 0.03;
    int width =
        wide
            ? 70_000
            : kind == Kind.LIST_FLOAT
                ? new int[] {0, 1, 4, 9, 20}[random.nextInt(5)]
                : new int[] {0, 1, 2, 3, 5, 8, 16}[random.nextInt(7)];
    int batches = random.nextDouble() < 0.08 ? 0 : 1 + random.nextInt(3);
    int rows = wide ? random.nextInt(3) : random.nextInt(12);
    double nullDraw = random.nextDouble();
    double nullRows = nullDraw < 0.5 ? 0 : nullDraw < 0.85 ? 0.3 : 1.0;
    double nullElements = random.nextDouble() < 0.15 ? 0.05 : 0;
    boolean list = kind == Kind.LIST_FLOAT;
    int leading = list && random.nextDouble() < 0.3 ? 1 + random.nextInt(5) : 0;
    int nullRowWidth = list ? random.nextInt(3) : 0;
    String[] pokes = {"non-monotonic", "past-end", "negative", "null-row-garbage", "huge"};
    String poke = list && random.nextDouble() < 0.25 ? pokes[random.nextInt(pokes.length)] : null;
    double labelDraw = random.nextDouble();
    String label = labelDraw < 0.4 ? null : labelDraw < 0.8 ? "utf8" : "dictionary";
    return new Spec(
        kind,
        type,
        width,
        batches,
        rows,
        nullRows,
        nullElements,
        leading,
        nullRowWidth,
        poke,
        random.nextBoolean(),
        label,
        random.nextBoolean());
  }

  private Normalization normalization(Spec spec) {
    Op op = Op.values()[random.nextInt(Op.values().length)];
    Normalization normalization = Normalization.of(op);
    boolean parameters = op == Op.RMS_NORM || op == Op.LAYER_NORM;
    if (parameters && random.nextDouble() < 0.15) {
      int length = random.nextBoolean() && spec.width() > 0 ? spec.width() : 1 + random.nextInt(4);
      double[] weight = new double[length];
      for (int index = 0; index < length; index++) {
        weight[index] = 0.5 + random.nextDouble();
      }
      normalization = normalization.withWeight(weight);
    }
    return normalization;
  }

  // Writing the undamaged input.

  private byte[] write(Spec spec, boolean file) throws IOException {
    Dictionary dictionary =
        new Dictionary(
            TestColumns.varChars(allocator, "dictionary", "cat", "dog"),
            new DictionaryEncoding(7L, false, null));
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try {
      for (int batch = 0; batch < Math.max(1, spec.batches()); batch++) {
        batches.add(batch(spec, batch == 0 && spec.batches() == 0 ? 0 : spec.rows(), dictionary));
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (VectorSchemaRoot root = VectorSchemaRoot.create(batches.get(0).getSchema(), allocator);
          WritableByteChannel channel = Channels.newChannel(bytes);
          ArrowWriter writer =
              file
                  ? new ArrowFileWriter(
                      root, new DictionaryProvider.MapDictionaryProvider(dictionary), channel)
                  : new ArrowStreamWriter(
                      root, new DictionaryProvider.MapDictionaryProvider(dictionary), channel)) {
        writer.start();
        for (int batch = 0; batch < spec.batches(); batch++) {
          try (ArrowRecordBatch recordBatch =
              new VectorUnloader(batches.get(batch)).getRecordBatch()) {
            new VectorLoader(root).load(recordBatch);
          }
          writer.writeBatch();
        }
        writer.end();
      }
      return bytes.toByteArray();
    } finally {
      batches.forEach(VectorSchemaRoot::close);
      dictionary.getVector().close();
    }
  }

  private VectorSchemaRoot batch(Spec spec, int rows, Dictionary dictionary) {
    List<FieldVector> vectors = new ArrayList<>();
    try {
      if (spec.id()) {
        BigIntVector ids = new BigIntVector("id", allocator);
        vectors.add(ids);
        ids.allocateNew(rows);
        for (int row = 0; row < rows; row++) {
          ids.set(row, row);
        }
        ids.setValueCount(rows);
      }
      if (spec.label() != null) {
        String[] labels = new String[rows];
        for (int row = 0; row < rows; row++) {
          labels[row] = random.nextBoolean() ? "cat" : "dog";
        }
        VarCharVector plain = TestColumns.varChars(allocator, "label", labels);
        if (spec.label().equals("utf8")) {
          vectors.add(plain);
        } else {
          try (plain) {
            vectors.add((FieldVector) DictionaryEncoder.encode(plain, dictionary));
          }
        }
      }
      vectors.add(embedding(spec, rows, dictionary));
      if (spec.score()) {
        Float8Vector scores = new Float8Vector("score", allocator);
        vectors.add(scores);
        scores.allocateNew(rows);
        for (int row = 0; row < rows; row++) {
          scores.set(row, random.nextDouble());
        }
        scores.setValueCount(rows);
      }
      return new VectorSchemaRoot(vectors);
    } catch (RuntimeException | Error failure) {
      vectors.forEach(FieldVector::close);
      throw failure;
    }
  }

  private FieldVector embedding(Spec spec, int rows, Dictionary dictionary) {
    switch (spec.kind()) {
      case FIXED_FLOAT:
      case LIST_FLOAT:
        return floats(spec, rows);
      case DICTIONARY:
        {
          String[] values = new String[rows];
          Arrays.fill(values, "dog");
          try (VarCharVector plain = TestColumns.varChars(allocator, COLUMN, values)) {
            return (FieldVector) DictionaryEncoder.encode(plain, dictionary);
          }
        }
      default:
        return empty(field(spec), rows);
    }
  }

  private Field field(Spec spec) {
    FieldType doubles =
        FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
    FieldType ints = FieldType.nullable(new ArrowType.Int(32, true));
    Field item = new Field("item", doubles, null);
    switch (spec.kind()) {
      case INT:
        return new Field(COLUMN, ints, null);
      case UTF8:
        return new Field(COLUMN, FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
      case STRUCT:
        return new Field(COLUMN, FieldType.nullable(ArrowType.Struct.INSTANCE), List.of(item));
      case FIXED_INT:
        return new Field(
            COLUMN,
            FieldType.nullable(new ArrowType.FixedSizeList(Math.max(1, spec.width()))),
            List.of(new Field("item", ints, null)));
      case NESTED_LIST:
        return new Field(
            COLUMN,
            FieldType.nullable(ArrowType.List.INSTANCE),
            List.of(new Field("item", FieldType.nullable(ArrowType.List.INSTANCE), List.of(item))));
      case MISSING:
      default:
        return new Field("other", doubles, null);
    }
  }

  /** A vector of {@code field} with {@code rows} rows, all null. */
  private FieldVector empty(Field field, int rows) {
    FieldVector vector = field.createVector(allocator);
    try {
      vector.setInitialCapacity(rows);
      vector.allocateNew();
      vector.setValueCount(rows);
      return vector;
    } catch (RuntimeException | Error failure) {
      vector.close();
      throw failure;
    }
  }

  private FieldVector floats(Spec spec, int rows) {
    boolean list = spec.kind() == Kind.LIST_FLOAT;
    Field field =
        TestColumns.field(
            COLUMN, list ? Layout.LIST : Layout.FIXED_SIZE_LIST, spec.type(), spec.width());
    Double[][] values =
        TestColumns.gaussianRows(
            random,
            spec.type(),
            rows,
            row -> list && spec.width() > 0 ? random.nextInt(spec.width() + 1) : spec.width());
    for (int row = 0; row < rows; row++) {
      if (random.nextDouble() < spec.nullRows()) {
        values[row] = null;
      } else if (spec.nullElements() > 0) {
        for (int index = 0; index < values[row].length; index++) {
          if (random.nextDouble() < spec.nullElements()) {
            values[row][index] = null;
          }
        }
      }
    }
    if (!list) {
      return TestColumns.fixedSizeList(allocator, field, values);
    }
    return TestColumns.list(allocator, field, values, spec.leadingElements(), spec.nullRowWidth());
  }

  /**
   * Rewrites the list offsets of every record batch in the written bytes (Arrow Java's reader
   * derives element counts from offsets, so damaged offsets cannot go through its writer).
   */
  private void pokeOffsets(byte[] bytes, IpcStructure structure, Spec spec) {
    int validity =
        (spec.id() ? 2 : 0) + (spec.label() == null ? 0 : spec.label().equals("utf8") ? 3 : 2);
    ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    for (IpcStructure.Message batch : structure.messages) {
      if (!batch.isRecordBatch() || batch.bufferCount() <= validity + 1) {
        continue;
      }
      if (batch.lengthPosition() < 0 || all.getLong((int) batch.lengthPosition()) == 0) {
        continue;
      }
      int rows = (int) all.getLong((int) batch.lengthPosition());
      long bits = batch.bodyStart() + all.getLong((int) batch.buffersPosition() + validity * 16);
      long bitsLength = all.getLong((int) batch.buffersPosition() + validity * 16 + 8);
      int offsets =
          (int)
              (batch.bodyStart() + all.getLong((int) batch.buffersPosition() + validity * 16 + 16));
      int total = all.getInt(offsets + rows * 4);
      int row = random.nextInt(rows + 1);
      switch (spec.offsetPoke()) {
        case "non-monotonic":
          if (rows >= 2) {
            row = 1 + random.nextInt(rows - 1);
            all.putInt(
                offsets + row * 4, all.getInt(offsets + (row + 1) * 4) + 1 + random.nextInt(3));
          } else {
            all.putInt(offsets, total + 1);
          }
          break;
        case "past-end":
          all.putInt(offsets + rows * 4, total + 1 + random.nextInt(100));
          break;
        case "negative":
          all.putInt(offsets + row * 4, -1 - random.nextInt(1000));
          break;
        case "null-row-garbage":
          for (int index = 0; index < rows; index++) {
            boolean valid =
                bitsLength > 0 && ((bytes[(int) (bits + index / 8)] >> (index % 8)) & 1) != 0;
            if (!valid) {
              all.putInt(offsets + (index + 1) * 4, random.nextInt(total + 1));
            }
          }
          break;
        case "huge":
        default:
          all.putInt(offsets + row * 4, Integer.MAX_VALUE - random.nextInt(3));
          break;
      }
    }
  }

  // Damaging the bytes.

  private byte[] damage(byte[] bytes, boolean file) {
    IpcStructure structure = new IpcStructure(bytes, file);
    double draw = random.nextDouble();
    int damages = draw < 0.3 ? 0 : draw < 0.8 ? 1 : 2 + random.nextInt(2);
    byte[] result = bytes.clone();
    damaged = damages > 0;
    for (int count = 0; count < damages; count++) {
      result = damageOnce(result, structure, file);
    }
    return result;
  }

  private byte[] damageOnce(byte[] bytes, IpcStructure structure, boolean file) {
    List<IpcStructure.Message> batches =
        structure.messages.stream().filter(IpcStructure.Message::isRecordBatch).toList();
    switch (random.nextInt(14)) {
      case 13:
        if (!batches.isEmpty()) {
          // A consistent lie: the batch and every node claim the same huge length.
          IpcStructure.Message batch = batches.get(random.nextInt(batches.size()));
          long[] lengths = {Integer.MAX_VALUE - 1L, Integer.MAX_VALUE, 1L << 30, 1L << 20};
          long length = lengths[random.nextInt(lengths.length)];
          putLong(bytes, batch.lengthPosition(), length, "record batch length");
          for (int node = 0; node < batch.nodeCount(); node++) {
            putLong(bytes, batch.nodesPosition() + node * 16L, length, "node " + node + " length");
          }
        }
        return bytes;
      case 0:
      case 1:
        {
          long boundary = structure.boundaries.get(random.nextInt(structure.boundaries.size()));
          long cut = boundary + (random.nextBoolean() ? 0 : random.nextInt(9) - 4);
          return truncate(bytes, cut, "at a boundary");
        }
      case 2:
        return truncate(bytes, random.nextInt(bytes.length + 1), "at random");
      case 3:
        {
          int flips = 1 + random.nextInt(4);
          for (int flip = 0; flip < flips; flip++) {
            long[] region = metadataRegion(structure, file, bytes.length);
            if (region[1] > 0) {
              flip(bytes, region[0] + random.nextInt((int) region[1]), "metadata");
            }
          }
          return bytes;
        }
      case 4:
        flip(bytes, random.nextInt(bytes.length + 1), "anywhere");
        return bytes;
      case 5:
        if (!batches.isEmpty()) {
          IpcStructure.Message batch = batches.get(random.nextInt(batches.size()));
          putLong(bytes, batch.lengthPosition(), hostileLong(), "record batch length");
        }
        return bytes;
      case 6:
        if (!batches.isEmpty()) {
          IpcStructure.Message batch = batches.get(random.nextInt(batches.size()));
          if (batch.nodeCount() > 0) {
            int node = random.nextInt(batch.nodeCount());
            boolean nullCount = random.nextBoolean();
            putLong(
                bytes,
                batch.nodesPosition() + node * 16L + (nullCount ? 8 : 0),
                hostileLong(),
                "node " + node + (nullCount ? " null count" : " length"));
          }
        }
        return bytes;
      case 7:
        if (!batches.isEmpty()) {
          IpcStructure.Message batch = batches.get(random.nextInt(batches.size()));
          if (batch.bufferCount() > 0) {
            int buffer = random.nextInt(batch.bufferCount());
            boolean length = random.nextBoolean();
            long value =
                random.nextInt(3) == 0
                    ? (length ? 0 : bytes.length * 2L)
                    : random.nextInt(3) == 0 ? batch.bodyLength() + 8 : hostileLong();
            putLong(
                bytes,
                batch.buffersPosition() + buffer * 16L + (length ? 8 : 0),
                value,
                "buffer " + buffer + (length ? " length" : " offset"));
          }
        }
        return bytes;
      case 8:
        if (!structure.messages.isEmpty()) {
          IpcStructure.Message message =
              structure.messages.get(random.nextInt(structure.messages.size()));
          long value = random.nextBoolean() ? hostileLong() : message.bodyLength() + 8;
          putLong(bytes, message.bodyLengthPosition(), value, "message body length");
        }
        return bytes;
      case 9:
        if (structure.blockCount > 0) {
          int block = random.nextInt(structure.blockCount);
          long position = structure.blocksPosition + block * 24L;
          int field = random.nextInt(3);
          if (field == 1) {
            putInt(bytes, position + 8, (int) hostileLong(), "block " + block + " metadata length");
          } else {
            putLong(
                bytes,
                position + field * 8L,
                hostileLong(),
                "block " + block + (field == 0 ? " offset" : " body length"));
          }
        }
        return bytes;
      case 10:
        if (file && bytes.length >= 10) {
          int[] values = {0, -1, bytes.length, bytes.length - 9, Integer.MAX_VALUE};
          putInt(bytes, bytes.length - 10, values[random.nextInt(values.length)], "footer length");
        }
        return bytes;
      case 11:
        return swapFormat(bytes, file);
      case 12:
      default:
        if (random.nextInt(4) == 0) {
          note("emptied");
          return new byte[0];
        }
        return truncate(bytes, random.nextInt(bytes.length + 1), "at random");
    }
  }

  private long hostileLong() {
    return random.nextInt(4) == 0
        ? random.nextInt(64) - 8
        : HOSTILE_LONGS[random.nextInt(HOSTILE_LONGS.length)];
  }

  /** A region of metadata: the schema, a batch's metadata, or the footer. */
  private long[] metadataRegion(IpcStructure structure, boolean file, int length) {
    int choices = structure.messages.size() + (file ? 1 : 0);
    if (choices == 0) {
      return new long[] {0, Math.min(length, 8)};
    }
    int choice = random.nextInt(choices);
    if (choice == structure.messages.size()) {
      long footerStart = structure.boundaries.get(2);
      return new long[] {footerStart, Math.min(length, length - 10 - footerStart)};
    }
    IpcStructure.Message message = structure.messages.get(choice);
    return new long[] {
      message.start(), message.metadataStart() - message.start() + message.metadataLength()
    };
  }

  private byte[] swapFormat(byte[] bytes, boolean file) {
    byte[] magic = "ARROW1\0\0".getBytes(StandardCharsets.US_ASCII);
    if (file) {
      if (random.nextBoolean() || bytes.length < 18) {
        note("file without its leading magic");
        return Arrays.copyOfRange(bytes, Math.min(8, bytes.length), bytes.length);
      }
      note("file without its footer (a stream behind the file magic)");
      int footerLength =
          ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(bytes.length - 10);
      return Arrays.copyOf(bytes, Math.max(8, bytes.length - 10 - footerLength));
    }
    if (random.nextBoolean()) {
      note("stream behind the file magic");
      byte[] result = Arrays.copyOf(magic, magic.length + bytes.length);
      System.arraycopy(bytes, 0, result, magic.length, bytes.length);
      return result;
    }
    note("stream with the file magic and a footer length at its end");
    byte[] result = Arrays.copyOf(bytes, bytes.length + 10);
    ByteBuffer.wrap(result).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length, 16);
    System.arraycopy(magic, 0, result, bytes.length + 4, 6);
    return result;
  }

  private byte[] truncate(byte[] bytes, long cut, String how) {
    int length = (int) Math.max(0, Math.min(bytes.length, cut));
    note("truncated " + how + " to " + length + " of " + bytes.length + " bytes");
    return Arrays.copyOf(bytes, length);
  }

  private void flip(byte[] bytes, long position, String where) {
    if (position < 0 || position >= bytes.length) {
      return;
    }
    int mask = 1 + random.nextInt(255);
    bytes[(int) position] ^= (byte) mask;
    note("flipped byte " + position + " (" + where + ") with " + mask);
  }

  private void putLong(byte[] bytes, long position, long value, String what) {
    if (position < 0 || position + Long.BYTES > bytes.length) {
      return;
    }
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong((int) position, value);
    note(what + " set to " + value);
  }

  private void putInt(byte[] bytes, long position, int value, String what) {
    if (position < 0 || position + Integer.BYTES > bytes.length) {
      return;
    }
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt((int) position, value);
    note(what + " set to " + value);
  }
}
