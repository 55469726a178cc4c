package io.embednorm.jobs.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.embednorm.engine.EmbedNormException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job's input format comes from its data files' names, not from the output's format. */
class InputFilesTest {
  @TempDir Path folder;
  private final Configuration hadoop = new Configuration();

  @Test
  void namesTellTheFormat() {
    assertThat(InputFiles.formatOf("part-00000-1-c000.snappy.parquet")).isEqualTo("parquet");
    assertThat(InputFiles.formatOf("part-00000-1-c000.json.gz")).isEqualTo("json");
    assertThat(InputFiles.formatOf("items.ndjson")).isEqualTo("json");
    assertThat(InputFiles.formatOf("part-0.zstd.orc")).isEqualTo("orc");
    assertThat(InputFiles.formatOf("x.csv")).isEqualTo("csv");
    assertThat(InputFiles.formatOf("x.parquet.crc")).isNull();
    assertThat(InputFiles.formatOf("_SUCCESS")).isNull();
    assertThat(InputFiles.formatOf("parquet")).isNull();
  }

  @Test
  void folderFormatIgnoresMarkersChecksumsAndHiddenFiles() throws IOException {
    Path input = Files.createDirectories(folder.resolve("input"));
    Files.createFile(input.resolve("_SUCCESS"));
    Files.createFile(input.resolve(".part-00000.json.crc"));
    Files.createFile(input.resolve(".hidden.parquet"));
    Path partition = Files.createDirectories(input.resolve("day=1"));
    Files.createFile(partition.resolve("part-00000.json"));
    assertThat(InputFiles.detectFormat(input.toString(), hadoop)).isEqualTo("json");
    assertThat(InputFiles.detectFormat(partition.resolve("part-00000.json").toString(), hadoop))
        .isEqualTo("json");
  }

  @Test
  void parquetWhenNoNameTells() throws IOException {
    Path input = Files.createDirectories(folder.resolve("input"));
    Files.createFile(input.resolve("data"));
    assertThat(InputFiles.detectFormat(input.toString(), hadoop)).isEqualTo("parquet");
  }

  @Test
  void refusesMixedFormatsAndMissingInput() throws IOException {
    Path input = Files.createDirectories(folder.resolve("input"));
    Files.createFile(input.resolve("a.json"));
    Files.createFile(input.resolve("b.parquet"));
    assertThatThrownBy(() -> InputFiles.detectFormat(input.toString(), hadoop))
        .isInstanceOf(EmbedNormException.class)
        .hasMessage(
            "Cannot read input '"
                + input
                + "': it holds files of formats json, parquet; pass --input-format");
    Path missing = folder.resolve("missing");
    assertThatThrownBy(() -> InputFiles.requireExists(missing.toString(), hadoop))
        .hasMessage("Cannot read input '" + missing + "': no such file or directory");
    assertThatThrownBy(() -> InputFiles.detectFormat(folder.resolve("no*").toString(), hadoop))
        .hasMessage("Cannot read input '" + folder.resolve("no*") + "': no such file or directory");
  }
}
