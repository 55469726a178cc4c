#!/usr/bin/env bash
# Packs the project for the GPU host (../shared/gpu/bundle.sh), then works around two things seen
# there on 2026-11-21: folders of test classes do not arrive whole (inner-class files have '$' in
# their names), and JUnit's console launcher does not expand the 'lib/*' wildcard of .gpu/cp.
# So test classes travel as jars in .gpu/lib, and .gpu/gpu-test runs JUnit through java -cp.
#   bench/gpu-bundle.sh [--spark]         then, on the GPU host: .gpu/gpu-test [junit options]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
# bundle.sh fails when .gpu and .gpu-jre together pass 60 MiB (after packing both): then send them
# in two calls in quick succession, .gpu-jre first (../shared/gpu/README.md, "With Spark").
if ! ../shared/gpu/bundle.sh "$@"; then
  [ -x .gpu/java ] && [ -d .gpu-jre ] || exit 1
  echo "gpu-bundle: over 60 MiB together: send .gpu-jre in one call, then .gpu" >&2
fi
# The jlink'd runtime has no zip file system, so JUnit cannot scan jars: list the test classes here.
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
