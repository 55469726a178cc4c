#!/usr/bin/env bash
# Packs the project for a GPU host that has no JDK, so that the GPU tests and the GPU benchmarks
# (io.embednorm.benchmarks.KernelBenchmark, PipelineBenchmark, SparkQueryBenchmark) run there.
# It wraps the workspace's ../shared/gpu/bundle.sh (a jlink'd Java runtime in .gpu-jre/, the jars of
# the modules and their dependencies in .gpu/lib, launchers .gpu/java and .gpu/cp; with --spark,
# Spark's jars in .gpu-spark-1 ... -N), then:
#   - packs each module's compiled tests as .gpu/lib/embednorm-<module>-tests.jar (folders of class
#     files do not travel whole: inner-class files have '$' in their names);
#   - lists the test classes in .gpu/test-classes.txt (the jlink'd runtime has no zip file system, so
#     JUnit cannot scan jars for them);
#   - writes .gpu/gpu-test, which runs JUnit through `java -cp` (the JVM expands the 'lib/*' wildcard
#     of .gpu/cp, which JUnit's console launcher does not).
# Every module directory with a pom.xml is bundled (those depending on Spark only with --spark) unless
# modules are named; the jars are each module's target/*.jar and the tests its target/test-classes.
# All output goes to .gpu/, .gpu-jre/ and .gpu-spark-*/, which .gitignore lists.
#
#   benchmarks/scripts/gpu-bundle.sh [--spark] [MODULE ...]      e.g. ... gpu-bundle.sh benchmarks
# then send .gpu-jre and .gpu to the GPU host (in two calls if together they pass 60 MiB) and run there
#   .gpu/gpu-test [junit console-launcher options]                  (default: --include-tag gpu)
#   .gpu/java -cp "$(.gpu/cp)" io.embednorm.benchmarks.KernelBenchmark --types f32,bf16,f16 --rounds 5
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
bundle=${EMBEDNORM_GPU_BUNDLE:-../shared/gpu/bundle.sh}
[ -x "$bundle" ] || { echo "gpu-bundle: no $bundle (set EMBEDNORM_GPU_BUNDLE to the bundle script)" >&2; exit 1; }
# bundle.sh fails when .gpu and .gpu-jre together pass 60 MiB (after packing both): then send them
# in two calls in quick succession, .gpu-jre first.
if ! "$bundle" "$@"; then
  [ -x .gpu/java ] && [ -d .gpu-jre ] || exit 1
  echo "gpu-bundle: over 60 MiB together: send .gpu-jre in one call, then .gpu" >&2
fi
# The benchmarks module names Spark (for SparkQueryBenchmark), so without --spark the bundle leaves it
# out; its own thin jar and compiled tests join anyway: KernelBenchmark, PipelineBenchmark and the
# copy kernel's GPU test need only what the other modules bring.
if [ ! -e .gpu/test-classes/benchmarks ] && [ -f benchmarks/pom.xml ]; then
  (mvn -q -B -pl benchmarks -am install -DskipTests >&2)
  for jar in benchmarks/target/embednorm-benchmarks-*.jar; do
    [[ $jar == *-sources.jar || $jar == *-javadoc.jar ]] || cp "$jar" .gpu/lib/
  done
  if [ -d benchmarks/target/test-classes ]; then
    mkdir -p .gpu/test-classes/benchmarks && cp -r benchmarks/target/test-classes/. .gpu/test-classes/benchmarks/
  fi
fi
# benchmarks/target/benchmarks.jar is JMH's runnable jar with every dependency inside; the thin
# embednorm-benchmarks jar and the dependencies are in .gpu/lib already, so it would only add size.
if ls .gpu/lib/embednorm-benchmarks-*.jar >/dev/null 2>&1; then rm -f .gpu/lib/benchmarks.jar; fi
rm -f .gpu/lib/original-*.jar
: >.gpu/test-classes.txt
for folder in .gpu/test-classes/*/; do
  [ -d "$folder" ] || continue
  module=$(basename "$folder")
  jar cf ".gpu/lib/embednorm-$module-tests.jar" -C "$folder" .
  (cd "$folder" && find . -name '*Test.class' ! -name '*$*' | sed 's|^\./||; s|\.class$||; s|/|.|g') >>.gpu/test-classes.txt
done
rm -rf .gpu/test-classes
mv .gpu/junit-platform-console-standalone-*.jar .gpu/lib/ 2>/dev/null || true
cat >.gpu/gpu-test <<'EOS'
#!/usr/bin/env bash
# Runs the bundled JUnit tests tagged gpu (or what the console-launcher options say).
here=$(cd "$(dirname "$0")" && pwd)
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(--include-tag gpu)
selected=(); while read -r class; do selected+=(--select-class "$class"); done <"$here/test-classes.txt"
exec "$here/java" -cp "$("$here/cp")" org.junit.platform.console.ConsoleLauncher execute \
  "${selected[@]}" --disable-banner --disable-ansi-colors "${args[@]}"
EOS
chmod +x .gpu/gpu-test
du -sm .gpu .gpu-jre
