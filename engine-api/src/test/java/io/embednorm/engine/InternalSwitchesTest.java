package io.embednorm.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class InternalSwitchesTest {
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([^|]+) \\|");

  /** docs/CONFIGURATION.md lists every switch of the registry, with its default, and no other. */
  @Test
  void theDocumentedTableIsTheRegistry() throws IOException {
    Path doc = Path.of("..", "docs", "CONFIGURATION.md");
    String text = Files.readString(doc);
    String section = text.substring(text.indexOf("## Internal switches"));
    Map<String, String> documented = new LinkedHashMap<>();
    for (String line : section.split("\n")) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        documented.put(row.group(1), row.group(2).trim());
      }
    }
    Map<String, String> registered = new LinkedHashMap<>();
    for (InternalSwitch<?> entry : InternalSwitches.all()) {
      registered.put(entry.name(), String.valueOf(entry.defaultValue()));
    }
    assertThat(documented).isEqualTo(registered);
  }

  @Test
  void anUnsetSwitchHasItsDefaultAndASetOneItsValue() {
    InternalSwitch<Integer> lanes = InternalSwitches.GPU_LANES;
    String before = System.getProperty(lanes.name());
    try {
      System.clearProperty(lanes.name());
      assertThat(lanes.value()).isEqualTo(4);
      System.setProperty(lanes.name(), " 6 ");
      assertThat(lanes.value()).isEqualTo(6);
    } finally {
      restore(lanes.name(), before);
    }
  }

  @Test
  void aValueThatDoesNotParseNamesTheSwitch() {
    InternalSwitch<Boolean> simd = InternalSwitches.CPU_SIMD;
    String before = System.getProperty(simd.name());
    try {
      System.setProperty(simd.name(), "yes");
      assertThatThrownBy(simd::value)
          .isInstanceOf(EmbedNormException.class)
          .hasMessage("Cannot read internal switch embednorm.cpu.simd: 'yes' is not a valid value");
    } finally {
      restore(simd.name(), before);
    }
  }

  private static void restore(String name, String value) {
    if (value == null) {
      System.clearProperty(name);
    } else {
      System.setProperty(name, value);
    }
  }
}
