#!/usr/bin/env bash
# Builds and tests the Spark-facing modules against each Spark line (docs/SPARK-VERSIONS.md):
# for each line, a copy of the working tree under target/spark-matrix/spark-<line> (its own target/
# folders, so the default line's build in this checkout stays as it is), then
#   mvn -o -P spark-<line> -Dembednorm.cpuOnly -pl spark-udf,jobs,benchmarks -am verify
# with the tests of spark-udf and jobs only (the engines' tests do not depend on Spark) and the
# integration tests SparkSubmitJarIT, SparkSubmitScriptIT and SparkPackagesIT. Lines run one after
# another; each takes several minutes on 2 cores. Prints a table and writes it to
# target/spark-matrix/result.md.
#
# Usage: benchmarks/scripts/spark-matrix.sh [LINE...]   (default: 4.0 4.1 4.2)
# Environment: MVN_ARGS (default -o; empty to let Maven download a line's jars the first time).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
lines=("$@")
[ ${#lines[@]} -gt 0 ] || lines=(4.0 4.1 4.2)
matrix="$root/target/spark-matrix"
mkdir -p "$matrix"
result="$matrix/result.md"
integration_tests='SparkSubmitJarIT,SparkSubmitScriptIT,SparkPackagesIT'

# The version of a jar on the jobs module's resolved class paths (what the build really used).
resolved() {
  for file in "$1"/jobs/target/classpath-*.txt; do tr ':' '\n' < "$file"; echo; done 2>/dev/null |
    sed -n "s|.*/$2-\([0-9][0-9.]*\)\.jar\$|\1|p" | head -1
}

# Sums "Tests run: N, Failures: F, Errors: E, Skipped: S" over the surefire and failsafe reports.
counts() {
  cat "$1"/spark-udf/target/surefire-reports/*.txt "$1"/jobs/target/surefire-reports/*.txt \
    "$1"/jobs/target/failsafe-reports/*.txt 2>/dev/null |
    awk -F'[:,] *' '/^Tests run:/ { run += $2; failed += $4 + $6; skipped += $8 }
      END { printf "%d/%d/%d", run, failed, skipped }'
}

{
  echo "| line | Spark | Arrow | result | tests run/failed/skipped | seconds |"
  echo "|---|---|---|---|---|---|"
} > "$result"
for line in "${lines[@]}"; do
  copy="$matrix/spark-$line"
  mkdir -p "$copy"
  # The tracked and untracked (not ignored) files as they are now; target/ folders stay.
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
    tar --null -T - -cf -) | tar -xf - -C "$copy"
  rm -rf "$copy"/spark-udf/target/surefire-reports "$copy"/jobs/target/surefire-reports \
    "$copy"/jobs/target/failsafe-reports
  log="$matrix/spark-$line.log"
  started=$(date +%s)
  (cd "$copy" && mvn ${MVN_ARGS--o} -B -P "spark-$line" -Dembednorm.cpuOnly \
    -pl spark-udf,jobs,benchmarks -am verify \
    -Dtest='io/embednorm/spark/**/*Test,io/embednorm/jobs/**/*Test' -Dsurefire.failIfNoSpecifiedTests=false \
    -Dit.test="$integration_tests" -Dit.failIfNoSpecifiedTests=false \
    -Dspotless.check.skip=true) > "$log" 2>&1
  status=$?
  seconds=$(($(date +%s) - started))
  outcome=$([ $status -eq 0 ] && echo pass || echo "FAIL (see target/spark-matrix/spark-$line.log)")
  spark=$(resolved "$copy" spark-sql_2.13)
  arrow=$(resolved "$copy" arrow-vector)
  row="| $line | $spark | $arrow | $outcome | $(counts "$copy") | $seconds |"
  echo "$row" >> "$result"
  echo "spark-matrix: $row" >&2
done
cat "$result"
