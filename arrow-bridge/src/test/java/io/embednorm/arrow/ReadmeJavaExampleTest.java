package io.embednorm.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's Arrow Java example as a newcomer meets it: the program between the marker {@code
 * <!-- readme-test: arrow-example -->} and its fence compiles as written against this module's test
 * class path, and runs in a new JVM with exactly the JVM options of the README's {@code java} line
 * (marker {@code arrow-run}), so that a missing import or module opening fails here. The dependency
 * it names (marker {@code arrow-dependency}) is this module's.
 */
class ReadmeJavaExampleTest {
  private static final Path README = Path.of("..", "README.md");

  @TempDir Path folder;

  @Test
  void exampleCompilesAndRunsWithTheStatedOptions() throws Exception {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    String source = block(readme, "arrow-example", "java");
    Path file = folder.resolve("NormalizeColumn.java");
    Files.writeString(file, source, StandardCharsets.UTF_8);
    String classPath = testClassPath();
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    int compiled =
        compiler.run(null, null, null, "-cp", classPath, "-d", folder.toString(), file.toString());
    assertThat(compiled).as("javac of the README's example").isZero();

    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions(block(readme, "arrow-run", "bash")));
    command.addAll(List.of("-cp", folder + File.pathSeparator + classPath, "NormalizeColumn"));
    Process process =
        new ProcessBuilder(command).redirectError(folder.resolve("err.txt").toFile()).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
    String err = Files.readString(folder.resolve("err.txt"));
    assertThat(process.exitValue()).as(out + err).isZero();

    // Independent float64 reference: x / sqrt(mean(x^2) + 1e-6) for [3, 4] and [1, 1].
    double[][] rows = {{3, 4}, {1, 1}};
    List<String> lines = out.lines().toList();
    assertThat(lines).as(out).hasSize(rows.length);
    for (int row = 0; row < rows.length; row++) {
      double meanSquare = (rows[row][0] * rows[row][0] + rows[row][1] * rows[row][1]) / 2;
      double scale = 1 / Math.sqrt(meanSquare + 1e-6);
      double[] printed = numbers(lines.get(row));
      assertThat(printed).as(lines.get(row)).hasSize(2);
      for (int i = 0; i < 2; i++) {
        double expected = rows[row][i] * scale;
        assertThat(Math.abs(printed[i] - expected)).isLessThanOrEqualTo(1e-5 * expected + 1e-6);
      }
    }
  }

  @Test
  void dependencyNamesThisModule() throws IOException {
    String dependency =
        block(Files.readString(README, StandardCharsets.UTF_8), "arrow-dependency", "xml");
    String pom = Files.readString(Path.of("pom.xml"), StandardCharsets.UTF_8);
    Matcher parentVersion =
        Pattern.compile("<parent>.*?<version>(.*?)</version>", Pattern.DOTALL).matcher(pom);
    assertThat(parentVersion.find()).isTrue();
    assertThat(dependency)
        .contains("<groupId>io.embednorm</groupId>")
        .contains("<artifactId>embednorm-arrow-bridge</artifactId>")
        .contains("<version>" + parentVersion.group(1) + "</version>");
  }

  /** The fenced block of {@code language} that follows {@code <!-- readme-test: name -->}. */
  private static String block(String readme, String name, String language) {
    String marker = "<!-- readme-test: " + name + " -->\n```" + language + "\n";
    int start = readme.indexOf(marker);
    assertThat(start).as("README.md holds " + marker.strip()).isNotNegative();
    int from = start + marker.length();
    int end = readme.indexOf("\n```", from);
    return readme.substring(from, end + 1);
  }

  /** The options of the block's {@code java} line: its words between "java" and "-cp". */
  private static List<String> jvmOptions(String commands) {
    String line =
        commands.lines().filter(text -> text.startsWith("java ")).findFirst().orElseThrow();
    List<String> words = Arrays.asList(line.split("\\s+"));
    return words.subList(1, words.indexOf("-cp"));
  }

  private static String testClassPath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  private static double[] numbers(String line) {
    Matcher matcher = Pattern.compile("-?\\d+\\.\\d+(E-?\\d+)?").matcher(line);
    List<Double> numbers = new ArrayList<>();
    while (matcher.find()) {
      numbers.add(Double.parseDouble(matcher.group()));
    }
    return numbers.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
