package io.embednorm.spark.internal;

import io.embednorm.engine.EmbedNormException;
import io.embednorm.spark.EmbedNormConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Renders the settings table of docs/CONFIGURATION.md from {@link EmbedNormConfig}, so that the
 * page is never edited by hand where it lists settings. The table sits between two marker comments;
 * the prose around it is free. {@code main} rewrites the table in place; a test fails when the
 * committed page differs from what this renders.
 */
public final class ConfigurationDocumentation {
  /** The line before the generated table. */
  public static final String BEGIN =
      "<!-- BEGIN GENERATED SETTINGS: ConfigurationDocumentation renders this from EmbedNormConfig;"
          + " do not edit by hand -->";

  /** The line after the generated table. */
  public static final String END = "<!-- END GENERATED SETTINGS -->";

  private ConfigurationDocumentation() {}

  /** The settings table in Markdown, one row per setting, ending with a newline. */
  public static String table() {
    StringBuilder table = new StringBuilder();
    table.append("| key | type | default | description |\n");
    table.append("|---|---|---|---|\n");
    for (EmbedNormConfig.Entry<?> entry : EmbedNormConfig.entries()) {
      table
          .append("| `")
          .append(entry.name())
          .append("` | ")
          .append(entry.type().replace("|", "\\|"))
          .append(" | `")
          .append(entry.defaultText())
          .append("` | ")
          .append(entry.documentation().replace("|", "\\|"))
          .append(" |\n");
    }
    return table.toString();
  }

  /** The generated section of {@code page}: the text between the markers, or null if absent. */
  public static String generatedSection(String page) {
    int begin = page.indexOf(BEGIN);
    int end = page.indexOf(END);
    if (begin < 0 || end < begin) {
      return null;
    }
    return page.substring(begin + BEGIN.length(), end).strip() + "\n";
  }

  /** {@code page} with its generated section replaced by the current {@link #table()}. */
  public static String regenerate(String page) {
    int begin = page.indexOf(BEGIN);
    int end = page.indexOf(END);
    if (begin < 0 || end < begin) {
      throw new EmbedNormException(
          "Cannot regenerate the settings table: the page lacks the markers "
              + BEGIN
              + " / "
              + END);
    }
    return page.substring(0, begin + BEGIN.length()) + "\n" + table() + page.substring(end);
  }

  /** Rewrites the table of the page at {@code args[0]} (default docs/CONFIGURATION.md). */
  public static void main(String[] args) throws IOException {
    Path page = Paths.get(args.length > 0 ? args[0] : "docs/CONFIGURATION.md");
    String text = Files.readString(page, StandardCharsets.UTF_8);
    Files.writeString(page, regenerate(text), StandardCharsets.UTF_8);
  }
}
