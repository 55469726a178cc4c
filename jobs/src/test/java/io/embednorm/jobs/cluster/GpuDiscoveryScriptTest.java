package io.embednorm.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.resource.ResourceInformation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * conf/gpu-discovery.sh, run by bash with a fake {@code nvidia-smi} (or none) alone on its PATH,
 * and its output parsed by Spark's own parser of discovery scripts' output.
 */
class GpuDiscoveryScriptTest {
  private static final Path SCRIPT = Path.of("..", "conf", "gpu-discovery.sh");

  @TempDir Path bin;

  @Test
  void printsEveryGpuIndexThatNvidiaSmiLists() throws Exception {
    fakeNvidiaSmi("printf '0\\n1\\n 3\\n'");
    ResourceInformation gpus = ResourceInformation.parseJson(discover());
    assertThat(gpus.name()).isEqualTo("gpu");
    assertThat(gpus.addresses()).containsExactly("0", "1", "3");
  }

  @Test
  void printsNoAddressesWithoutNvidiaSmi() throws Exception {
    assertThat(ResourceInformation.parseJson(discover()).addresses()).isEmpty();
  }

  @Test
  void printsNoAddressesWhereNvidiaSmiFails() throws Exception {
    fakeNvidiaSmi("echo 'NVIDIA-SMI has failed' >&2; exit 9");
    assertThat(ResourceInformation.parseJson(discover()).addresses()).isEmpty();
  }

  private void fakeNvidiaSmi(String body) throws IOException {
    Path fake = bin.resolve("nvidia-smi");
    Files.writeString(fake, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));
    for (String tool : List.of("sh", "tr", "awk")) {
      Files.createSymbolicLink(bin.resolve(tool), which(tool));
    }
  }

  /** Runs the script with {@link #bin} as its whole PATH; returns its stdout, after exit 0. */
  private String discover() throws Exception {
    ProcessBuilder builder =
        new ProcessBuilder(which("bash").toString(), SCRIPT.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().put("PATH", bin.toString());
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as("exit code; output %s", output).isZero();
    return output;
  }

  private static Path which(String tool) {
    for (String folder : List.of("/usr/bin", "/bin", "/usr/local/bin")) {
      Path path = Path.of(folder, tool);
      if (Files.isExecutable(path)) {
        return path;
      }
    }
    throw new AssertionError("Cannot find " + tool + " in /usr/bin, /bin or /usr/local/bin");
  }
}
