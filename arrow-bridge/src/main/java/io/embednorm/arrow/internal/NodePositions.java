package io.embednorm.arrow.internal;

import com.google.flatbuffers.Table;

/**
 * The positions of a record batch's field nodes in its message buffer, which the generated
 * flatbuffer classes read but do not tell. Point it at a message's header with {@code
 * message.header(new NodePositions())}.
 */
final class NodePositions extends Table {
  /** The vtable slot of {@code RecordBatch.nodes} (field 1: 4 + 2 × 1). */
  private static final int NODES_SLOT = 6;

  /** Bytes of one {@code FieldNode} struct: length and null count, 8 bytes each. */
  private static final int NODE_BYTES = 16;

  /** The buffer index of node {@code index}'s null count. */
  int nullCountPosition(int index) {
    int slot = __offset(NODES_SLOT);
    if (slot == 0) {
      throw new MappedPathUnavailable("a record batch has no field nodes");
    }
    return __vector(slot) + index * NODE_BYTES + Long.BYTES;
  }
}
