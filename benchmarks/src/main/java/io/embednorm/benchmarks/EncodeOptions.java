package io.embednorm.benchmarks;

import io.embednorm.engine.Encoding;
import io.embednorm.engine.Op;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command line of the encode benchmarks: {@code --widths 128,768,4096 --ops
 * l2_normalize,rms_norm --encodings float16,...} (these defaults), and numeric options each
 * benchmark names.
 */
record EncodeOptions(
    int[] widths, List<Op> ops, List<Encoding> encodings, Map<String, String> numbers) {

  static EncodeOptions parse(String[] args, Set<String> numberNames) {
    int[] widths = {128, 768, 4096};
    List<Op> ops = List.of(Op.L2_NORMALIZE, Op.RMS_NORM);
    List<Encoding> encodings = List.of(Encoding.values());
    Map<String, String> numbers = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      String value = args[i + 1];
      switch (args[i]) {
        case "--widths" ->
            widths = Arrays.stream(value.split(",")).mapToInt(Integer::parseInt).toArray();
        case "--ops" -> ops = Arrays.stream(value.split(",")).map(Op::fromName).toList();
        case "--encodings" ->
            encodings = Arrays.stream(value.split(",")).map(Encoding::named).toList();
        default -> {
          if (!numberNames.contains(args[i])) {
            throw new IllegalArgumentException("unknown option " + args[i]);
          }
          numbers.put(args[i], value);
        }
      }
    }
    return new EncodeOptions(widths, ops, encodings, numbers);
  }

  /** The value of numeric option {@code name}, or {@code otherwise}. */
  double number(String name, double otherwise) {
    return numbers.containsKey(name) ? Double.parseDouble(numbers.get(name)) : otherwise;
  }
}
