package io.embednorm.arrow;

import io.embednorm.arrow.internal.BatchBuffersCheck;
import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An Arrow IPC file or stream being read, batch by batch into one root. Every failure reads "Cannot
 * read Arrow file '&lt;path&gt;': &lt;why&gt;".
 */
final class ArrowInput implements AutoCloseable {
  private static final byte[] FILE_MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);
  private static final int CONTINUATION = 0xFFFFFFFF;

  private final Path path;
  private final ArrowReader reader;
  private final ArrowFormat format;
  private final long size;

  private ArrowInput(Path path, ArrowReader reader, ArrowFormat format, long size) {
    this.path = path;
    this.reader = reader;
    this.format = format;
    this.size = size;
  }

  /** Opens {@code path}, telling the file format from the stream format by its first bytes. */
  static ArrowInput open(Path path, BufferAllocator allocator) {
    FileChannel channel;
    try {
      channel = FileChannel.open(path, StandardOpenOption.READ);
    } catch (IOException | RuntimeException failure) {
      throw failure(path, failure);
    }
    try {
      long size = channel.size();
      ArrowFormat format = detect(channel, size);
      IpcMetadataCheck.check(channel, size, format);
      channel.position(0);
      ArrowReader reader =
          format == ArrowFormat.FILE
              ? new CheckedFileReader(channel, allocator)
              : streamReader(channel, allocator);
      return new ArrowInput(path, reader, format, size);
    } catch (EmbedNormException failure) {
      closeQuietly(channel);
      throw failure;
    } catch (IOException | RuntimeException failure) {
      closeQuietly(channel);
      throw failure(path, failure);
    }
  }

  /**
   * A reader of the stream in {@code channel} that checks each batch and frees every body it reads,
   * without the metadata check of {@link #open}; closing it closes {@code channel}.
   */
  static ArrowReader streamReader(FileChannel channel, BufferAllocator allocator) {
    return new CheckedStreamReader(channel, allocator);
  }

  ArrowFormat format() {
    return format;
  }

  /** The size of the file in bytes. */
  long size() {
    return size;
  }

  /** The root every batch is loaded into; reads the schema on first use. */
  VectorSchemaRoot root() {
    try {
      return reader.getVectorSchemaRoot();
    } catch (IOException | RuntimeException failure) {
      throw failure(path, failure);
    }
  }

  /**
   * Loads the next batch into {@link #root()}, its buffers checked against its field nodes first
   * ({@link BatchBuffersCheck}); false at the end.
   */
  boolean loadNextBatch() {
    try {
      return reader.loadNextBatch();
    } catch (IOException | RuntimeException failure) {
      throw failure(path, failure);
    }
  }

  /** The dictionaries of dictionary-encoded columns, for a writer that passes them through. */
  DictionaryProvider dictionaries() {
    return reader;
  }

  @Override
  public void close() {
    try {
      reader.close();
    } catch (IOException | RuntimeException failure) {
      throw failure(path, failure);
    }
  }

  private static ArrowFormat detect(FileChannel channel, long size) throws IOException {
    if (size == 0) {
      throw new IOException("the file is empty");
    }
    ByteBuffer head = ByteBuffer.allocate((int) Math.min(8, size)).order(ByteOrder.LITTLE_ENDIAN);
    while (head.hasRemaining() && channel.read(head) >= 0) {
      // read until full
    }
    head.flip();
    if (head.remaining() >= FILE_MAGIC.length
        && ByteBuffer.wrap(FILE_MAGIC).equals(head.duplicate().limit(FILE_MAGIC.length))) {
      return ArrowFormat.FILE;
    }
    if (head.remaining() == 8) {
      boolean continued = head.getInt(0) == CONTINUATION;
      long length = continued ? head.getInt(4) : head.getInt(0);
      long prefix = continued ? 8 : 4;
      if (length > 0 && length <= size - prefix) {
        return ArrowFormat.STREAM;
      }
    }
    StringBuilder bytes = new StringBuilder();
    for (int index = 0; index < head.limit(); index++) {
      bytes.append(String.format(" %02x", head.get(index)));
    }
    throw new IOException(
        "it is neither an Arrow IPC file nor an Arrow IPC stream (it starts with bytes"
            + bytes
            + ")");
  }

  static EmbedNormException failure(Path path, Exception failure) {
    return new EmbedNormException(
        "Cannot read Arrow file '" + path + "': " + reason(failure), failure);
  }

  /** A short reason for a failed file operation, e.g. {@code no such file}. */
  static String reason(Exception failure) {
    if (failure instanceof NoSuchFileException) {
      return "no such file";
    }
    if (failure instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (failure instanceof FileSystemException
        && ((FileSystemException) failure).getReason() != null) {
      return ((FileSystemException) failure).getReason();
    }
    String message = failure.getMessage();
    return message == null || message.isBlank() ? failure.getClass().getSimpleName() : message;
  }

  /** Checks a batch before Arrow loads it; closes it when it is damaged. */
  private static void check(List<Field> fields, ArrowRecordBatch batch) {
    try {
      BatchBuffersCheck.check(fields, batch);
    } catch (RuntimeException damaged) {
      batch.close();
      throw damaged;
    }
  }

  private static List<Field> dictionaryFields(
      Map<Long, Dictionary> dictionaries, ArrowDictionaryBatch batch) {
    Dictionary dictionary = dictionaries.get(batch.getDictionaryId());
    if (dictionary == null) {
      // Arrow Java would throw too, without closing the batch.
      throw new IllegalArgumentException(
          "it has a dictionary batch for dictionary "
              + batch.getDictionaryId()
              + ", not in its schema");
    }
    return List.of(dictionary.getVector().getField());
  }

  /**
   * A file reader that checks each batch's buffers before loading it ({@link BatchBuffersCheck}).
   */
  private static final class CheckedFileReader extends ArrowFileReader {
    CheckedFileReader(FileChannel channel, BufferAllocator allocator) {
      super(channel, allocator);
    }

    @Override
    protected void loadRecordBatch(ArrowRecordBatch batch) {
      checkRecordBatch(this, batch);
      super.loadRecordBatch(batch);
    }

    @Override
    protected void loadDictionary(ArrowDictionaryBatch batch) {
      checkDictionary(dictionaries, batch);
      super.loadDictionary(batch);
    }
  }

  /**
   * A stream reader that checks each batch's buffers before loading it, and frees a message body
   * that Arrow Java drops when it fails before building a batch of it ({@link
   * BodyOwningMessageReader}).
   */
  private static final class CheckedStreamReader extends ArrowStreamReader {
    private final BodyOwningMessageReader messages;

    CheckedStreamReader(FileChannel channel, BufferAllocator allocator) {
      this(new BodyOwningMessageReader(new ReadChannel(channel), allocator), allocator);
    }

    private CheckedStreamReader(BodyOwningMessageReader messages, BufferAllocator allocator) {
      super(messages, allocator);
      this.messages = messages;
    }

    @Override
    protected Schema readSchema() throws IOException {
      try {
        return super.readSchema();
      } catch (IOException | RuntimeException failure) {
        messages.releaseUnclaimed();
        throw failure;
      }
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      try {
        return super.loadNextBatch();
      } catch (IOException | RuntimeException failure) {
        messages.releaseUnclaimed();
        throw failure;
      }
    }

    @Override
    protected void loadRecordBatch(ArrowRecordBatch batch) {
      messages.handOver();
      checkRecordBatch(this, batch);
      super.loadRecordBatch(batch);
    }

    @Override
    protected void loadDictionary(ArrowDictionaryBatch batch) {
      messages.handOver();
      checkDictionary(dictionaries, batch);
      super.loadDictionary(batch);
    }
  }

  /** Checks a record batch against the reader's schema; closes it when it is damaged. */
  private static void checkRecordBatch(ArrowReader reader, ArrowRecordBatch batch) {
    check(getVectorSchemaRootUnchecked(reader).getSchema().getFields(), batch);
  }

  /** Checks a dictionary batch against its dictionary's field; closes it when it is damaged. */
  private static void checkDictionary(
      Map<Long, Dictionary> dictionaries, ArrowDictionaryBatch batch) {
    try {
      check(dictionaryFields(dictionaries, batch), batch.getDictionary());
    } catch (RuntimeException damaged) {
      batch.close();
      throw damaged;
    }
  }

  private static VectorSchemaRoot getVectorSchemaRootUnchecked(ArrowReader reader) {
    try {
      return reader.getVectorSchemaRoot();
    } catch (IOException failure) {
      throw new java.io.UncheckedIOException(failure);
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // the read failure is what the caller needs to see
    }
  }
}
