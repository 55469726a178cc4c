package io.embednorm.spark.internal;

import io.embednorm.arrow.ResultMemory;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * The element memory of one task's results, reused batch after batch: blocks allocated from the
 * task's allocator, each lent to one result at a time ({@link ResultMemory}) and free again when
 * that result is closed. A large buffer allocated afresh per batch comes as fresh pages, whose
 * first writes by the CPU engine cost several times what writes to touched memory do.
 *
 * <p>A result larger than every free block gets a new block, an eighth larger than it asks (a free
 * block too small is freed first), so a task holds as many blocks as results it has open at once
 * (one in the columnar operator), each about the size of its largest batch. A lent block is
 * accounted twice: to the task's allocator, which holds it, and to the result's. The task's {@link
 * ColumnarNormalizer} owns this and closes it when the task completes; a block still lent then is
 * freed when its result is closed (if never, the task's allocator reports the leak).
 */
final class ResultBlocks implements ResultMemory, AutoCloseable {
  private final BufferAllocator allocator;
  private final List<Block> blocks = new ArrayList<>();
  private boolean closed;

  /** Blocks from {@code allocator}, the task's. */
  ResultBlocks(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  @Override
  public synchronized ArrowBuf elements(BufferAllocator owner, long bytes) {
    if (closed || bytes == 0) {
      return owner.buffer(bytes);
    }
    Block block = freeBlock(bytes);
    block.lent = true;
    try {
      return owner.wrapForeignAllocation(new Lent(block, bytes));
    } catch (RuntimeException | Error failure) {
      block.lent = false;
      throw failure;
    }
  }

  /** Frees the blocks not lent now; those lent are freed as their results close. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    blocks.removeIf(
        block -> {
          if (block.lent) {
            return false;
          }
          block.buffer.close();
          return true;
        });
  }

  /** The smallest free block of at least {@code bytes}, or a new one (freeing a smaller one). */
  private Block freeBlock(long bytes) {
    Block fit = null;
    Block tooSmall = null;
    for (Block block : blocks) {
      if (block.lent) {
        continue;
      }
      if (block.buffer.capacity() < bytes) {
        tooSmall = block;
      } else if (fit == null || block.buffer.capacity() < fit.buffer.capacity()) {
        fit = block;
      }
    }
    if (fit != null) {
      return fit;
    }
    if (tooSmall != null) {
      blocks.remove(tooSmall);
      tooSmall.buffer.close();
    }
    Block created = new Block(allocator.buffer(bytes + bytes / 8));
    blocks.add(created);
    return created;
  }

  private synchronized void giveBack(Block block) {
    block.lent = false;
    if (closed) {
      blocks.remove(block);
      block.buffer.close();
    }
  }

  /** A block of the task's memory; lent while a result uses it. */
  private static final class Block {
    final ArrowBuf buffer;
    boolean lent;

    Block(ArrowBuf buffer) {
      this.buffer = buffer;
    }
  }

  /** A block lent to a result's allocator; its release gives the block back. */
  private final class Lent extends ForeignAllocation {
    private final Block block;

    Lent(Block block, long bytes) {
      super(bytes, block.buffer.memoryAddress());
      this.block = block;
    }

    @Override
    protected void release0() {
      giveBack(block);
    }
  }
}
