package io.embednorm.jobs.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NumberFileTest {
  @TempDir Path folder;

  @Test
  void readsNumbersSeparatedByCommasAndWhitespace() throws IOException {
    Path file = Files.writeString(folder.resolve("w.txt"), " 1, 2.5\n-3e2\t4 ,5\n");
    assertThat(NumberFile.read(file, "weight")).containsExactly(1, 2.5, -300, 4, 5);
  }

  @Test
  void namesTheItemThatIsNotANumber() throws IOException {
    Path file = Files.writeString(folder.resolve("w.txt"), "1, 2, abc, 4");
    assertThatThrownBy(() -> NumberFile.read(file, "weight"))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage("Cannot read weight file '" + file + "': item 3 ('abc') is not a number");
  }

  @Test
  void refusesNumbersThatAreNotFinite() throws IOException {
    for (String item : new String[] {"1e400", "-1E400", "NaN", "nan", "Infinity", "-inf"}) {
      Path file = Files.writeString(folder.resolve("w.txt"), "1 2 " + item);
      assertThatThrownBy(() -> NumberFile.read(file, "weight"))
          .isInstanceOf(EmbedNormException.class)
          .hasMessage(
              "Cannot read weight file '"
                  + file
                  + "': item 3 ('"
                  + item
                  + "') is not a finite number");
    }
  }

  @Test
  void refusesJavaOnlyNumberForms() throws IOException {
    for (String item : new String[] {"1f", "2d", "0x1p3"}) {
      Path file = Files.writeString(folder.resolve("w.txt"), item + " 1");
      assertThatThrownBy(() -> NumberFile.read(file, "weight"))
          .hasMessage(
              "Cannot read weight file '" + file + "': item 1 ('" + item + "') is not a number");
    }
    Path decimals = Files.writeString(folder.resolve("d.txt"), "+1 .5 5. -0.0 1e-400 2E+3");
    assertThat(NumberFile.read(decimals, "weight")).containsExactly(1, 0.5, 5, -0.0, 0, 2000);
  }

  @Test
  void rejectsEmptyAndMissingFiles() throws IOException {
    Path empty = Files.writeString(folder.resolve("empty.txt"), " \n ");
    assertThatThrownBy(() -> NumberFile.read(empty, "bias"))
        .hasMessage("Cannot read bias file '" + empty + "': it holds no numbers");
    Path missing = folder.resolve("missing.txt");
    assertThatThrownBy(() -> NumberFile.read(missing, "weight"))
        .hasMessage("Cannot read weight file '" + missing + "': no such file");
  }
}
