package io.embednorm.arrow;

import io.embednorm.engine.ElementType;
import io.embednorm.engine.EmbedNormException;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/** Finds an embedding column by name and checks its type, with the messages users see. */
final class EmbeddingColumn {
  static final String EXPECTED_TYPE =
      "expected a FixedSizeList or List of float32, float64 or float16";

  private EmbeddingColumn() {}

  /**
   * The index of {@code column} among {@code fields}, after checking that its type is supported.
   *
   * @param holder what holds the fields, for the message, e.g. {@code the batch}
   */
  static int require(List<Field> fields, String column, String holder) {
    for (int index = 0; index < fields.size(); index++) {
      if (fields.get(index).getName().equals(column)) {
        elementType(fields.get(index), column);
        return index;
      }
    }
    String names =
        fields.isEmpty()
            ? holder + " has no columns"
            : holder
                + " has columns "
                + fields.stream().map(Field::getName).collect(Collectors.joining(", "));
    throw new EmbedNormException(
        "Cannot normalize column '" + column + "': no such column; " + names);
  }

  /** The element type of a supported column; throws for any other type. */
  static ElementType elementType(Field field, String column) {
    ArrowType type = field.getType();
    boolean list = type instanceof ArrowType.FixedSizeList || type instanceof ArrowType.List;
    if (list && field.getChildren().size() == 1) {
      ArrowType childType = field.getChildren().get(0).getType();
      if (childType instanceof ArrowType.FloatingPoint) {
        return elementType(((ArrowType.FloatingPoint) childType).getPrecision());
      }
    }
    throw new EmbedNormException(
        "Cannot normalize column '"
            + column
            + "': its type is "
            + describe(field)
            + "; "
            + EXPECTED_TYPE);
  }

  /** A type as Arrow prints it, with the types of its children, e.g. {@code List<Utf8>}. */
  static String describe(Field field) {
    String type = field.getType().toString();
    if (field.getChildren().isEmpty()) {
      return type;
    }
    return type
        + field.getChildren().stream()
            .map(EmbeddingColumn::describe)
            .collect(Collectors.joining(", ", "<", ">"));
  }

  private static ElementType elementType(FloatingPointPrecision precision) {
    switch (precision) {
      case HALF:
        return ElementType.FLOAT16;
      case SINGLE:
        return ElementType.FLOAT32;
      case DOUBLE:
      default:
        return ElementType.FLOAT64;
    }
  }
}
