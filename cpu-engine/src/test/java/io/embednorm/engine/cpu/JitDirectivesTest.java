package io.embednorm.engine.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The JIT directives of conf/jvm.options (bin/embednorm) and of the root pom's {@code
 * embednorm.jvm.options} (the tests) name methods by their names, private ones included: a rename
 * would leave a directive that matches nothing, which the JVM accepts without a word. Every {@code
 * -XX:CompileCommand} must match at least one existing method, and the two lists must hold the same
 * options.
 */
class JitDirectivesTest {
  private static final Path ROOT = repositoryRoot();

  @Test
  void jvmOptionsAndThePomPropertyHoldTheSameOptions() {
    assertThat(pomOptions())
        .as("embednorm.jvm.options in pom.xml against conf/jvm.options")
        .containsExactlyInAnyOrderElementsOf(jvmOptionsFile());
  }

  @Test
  void everyCompileCommandNamesAnExistingMethod() {
    List<String> commands = new ArrayList<>();
    for (String option : jvmOptionsFile()) {
      if (option.startsWith("-XX:CompileCommand=")) {
        commands.add(option.substring("-XX:CompileCommand=".length()));
      }
    }
    assertThat(commands).as("CompileCommands in conf/jvm.options").isNotEmpty();
    List<String> matchingNothing = new ArrayList<>();
    for (String command : commands) {
      String[] parts = command.split(",");
      if (parts.length < 2) {
        assertThat(parts[0]).as(command).isIn("quiet", "help");
        continue;
      }
      if (matchingMethods(parts[1]) == 0) {
        matchingNothing.add(command);
      }
    }
    assertThat(matchingNothing).as("CompileCommands that match no method").isEmpty();
  }

  /** The test of the test: the matcher finds what exists and nothing else. */
  @Test
  void theMatcherTellsExistingMethodsFromMissingOnes() {
    assertThat(matchingMethods("io.embednorm.engine.cpu.FloatSums::maximum")).isEqualTo(1);
    assertThat(matchingMethods("io/embednorm/engine/cpu/FloatSums.maximum")).isEqualTo(1);
    assertThat(matchingMethods("io.embednorm.engine.cpu.FloatSums::maximumMag*")).isEqualTo(1);
    assertThat(matchingMethods("io.embednorm.engine.cpu.*::*")).isGreaterThan(100);
    assertThat(matchingMethods("io.embednorm.engine.cpu.Vector*::*")).isGreaterThan(10);
    assertThat(matchingMethods("jdk.incubator.vector.*::*")).isGreaterThan(100);
    assertThat(matchingMethods("io.embednorm.engine.cpu.FloatSums::noSuchMethod")).isZero();
    assertThat(matchingMethods("io.embednorm.engine.cpu.NoSuchClass::*")).isZero();
    assertThat(matchingMethods("io.embednorm.engine.cpu.NoSuch*::*")).isZero();
  }

  /**
   * The methods a HotSpot method pattern matches: {@code package.Class::method} or {@code
   * package/Class.method}, an optional signature after the name, {@code *} at either end of the
   * class and the method name.
   */
  private static int matchingMethods(String pattern) {
    String classPart;
    String methodPart;
    int colons = pattern.indexOf("::");
    if (colons >= 0) {
      classPart = pattern.substring(0, colons);
      methodPart = pattern.substring(colons + 2);
    } else {
      int dot = pattern.lastIndexOf('.');
      classPart = pattern.substring(0, dot);
      methodPart = pattern.substring(dot + 1);
    }
    int signature = methodPart.indexOf('(');
    if (signature >= 0) {
      methodPart = methodPart.substring(0, signature);
    }
    Pattern classes = wildcard(classPart.replace('/', '.'));
    Pattern methods = wildcard(methodPart);
    int matches = 0;
    for (String className : candidateClasses(classPart.replace('/', '.'))) {
      if (!classes.matcher(className).matches()) {
        continue;
      }
      Class<?> type;
      try {
        type = Class.forName(className, false, JitDirectivesTest.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        continue;
      }
      List<Executable> executables = new ArrayList<>(Arrays.asList(type.getDeclaredMethods()));
      executables.addAll(Arrays.asList(type.getDeclaredConstructors()));
      for (Executable executable : executables) {
        String name = executable instanceof Constructor ? "<init>" : executable.getName();
        if (methods.matcher(name).matches()) {
          matches++;
        }
      }
    }
    return matches;
  }

  /** {@code *} as any run of characters, everything else literally. */
  private static Pattern wildcard(String text) {
    return Pattern.compile(
        Arrays.stream(text.split("\\*", -1)).map(Pattern::quote).collect(Collectors.joining(".*")));
  }

  /**
   * The binary names of the classes that a class pattern could match: the pattern itself where it
   * has no wildcard, else every class of the package before its first {@code *}, from this module's
   * classes and the JDK's modules.
   */
  private static List<String> candidateClasses(String classPattern) {
    int star = classPattern.indexOf('*');
    if (star < 0) {
      return List.of(classPattern);
    }
    String prefix = classPattern.substring(0, star);
    String packageName = prefix.substring(0, Math.max(0, prefix.lastIndexOf('.')));
    String folder = packageName.replace('.', '/');
    List<String> names = new ArrayList<>();
    try {
      Path classes =
          Path.of(CpuEngine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(classes)) {
        names.addAll(classNames(classes.resolve(folder), packageName));
      } else {
        try (FileSystem jar = FileSystems.newFileSystem(classes)) {
          names.addAll(classNames(jar.getPath(folder), packageName));
        }
      }
      Path modules = FileSystems.getFileSystem(URI.create("jrt:/")).getPath("modules");
      try (Stream<Path> each = Files.list(modules)) {
        for (Path module : each.toList()) {
          names.addAll(classNames(module.resolve(folder), packageName));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    return names;
  }

  /** The classes in {@code folder} and below, as binary names. */
  private static List<String> classNames(Path folder, String packageName) throws IOException {
    if (!Files.isDirectory(folder)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(folder)) {
      return files
          .filter(file -> file.getFileName().toString().endsWith(".class"))
          .map(
              file ->
                  folder
                      .relativize(file)
                      .toString()
                      .replace(folder.getFileSystem().getSeparator(), "."))
          .map(name -> packageName + "." + name.substring(0, name.length() - ".class".length()))
          .toList();
    }
  }

  /** conf/jvm.options without its comments and blank lines, as bin/embednorm reads it. */
  private static List<String> jvmOptionsFile() {
    try {
      return Files.readAllLines(ROOT.resolve("conf/jvm.options"), StandardCharsets.UTF_8).stream()
          .map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#"))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The options of {@code <embednorm.jvm.options>} in the root pom.xml. */
  private static List<String> pomOptions() {
    try {
      String pom = Files.readString(ROOT.resolve("pom.xml"), StandardCharsets.UTF_8);
      Matcher property =
          Pattern.compile(
                  "<embednorm\\.jvm\\.options>(.*?)</embednorm\\.jvm\\.options>", Pattern.DOTALL)
              .matcher(pom);
      assertThat(property.find()).as("<embednorm.jvm.options> in pom.xml").isTrue();
      return Arrays.stream(property.group(1).strip().split("\\s+")).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The folder above the module that holds conf/jvm.options and the root pom.xml. */
  private static Path repositoryRoot() {
    for (Path folder = Path.of("").toAbsolutePath(); folder != null; folder = folder.getParent()) {
      if (Files.isRegularFile(folder.resolve("conf/jvm.options"))
          && Files.isRegularFile(folder.resolve("pom.xml"))) {
        return folder;
      }
    }
    throw new IllegalStateException(
        "Cannot find the repository root (conf/jvm.options) above " + Path.of("").toAbsolutePath());
  }
}
