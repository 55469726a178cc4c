#!/usr/bin/env python3
"""Checks that the job's Arrow IPC output equals its Parquet output, bit for bit, read with pyarrow.

Usage: job_output_check.py PARQUET_DIR ARROW_DIR [--id id] [--column embedding]

Reads every part-*.arrow file of ARROW_DIR as it is (pyarrow.ipc.open_file, the IPC file format),
checks the column's type is fixed_size_list<float|double>[D], and compares with the Parquet output
sorted by the id column: ids, null rows, element bits, and every other column. Prints one line;
exits 1 on a difference. JobBenchmark leaves both outputs in its --work folder (job-parquet,
job-arrow).
"""
import argparse
import glob
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc
import pyarrow.parquet as pq


def arrow_table(folder):
    files = sorted(glob.glob(os.path.join(folder, "part-*.arrow")))
    if not files:
        sys.exit(f"job_output_check: no part-*.arrow files in {folder}")
    tables = []
    for name in files:
        tables.append(ipc.open_file(pa.memory_map(name)).read_all())
    return pa.concat_tables(tables), len(files)


def element_bits(column):
    """The elements of a list-like column as unsigned integers (their bits), row-major."""
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    return values.view(np.uint32 if values.dtype == np.float32 else np.uint64)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("parquet")
    parser.add_argument("arrow")
    parser.add_argument("--id", default="id")
    parser.add_argument("--column", default="embedding")
    options = parser.parse_args()

    arrow, files = arrow_table(options.arrow)
    kind = arrow.schema.field(options.column).type
    if not pa.types.is_fixed_size_list(kind):
        sys.exit(f"job_output_check: column {options.column} is {kind}, not a fixed_size_list")
    parquet = pq.read_table(options.parquet)
    arrow = arrow.sort_by(options.id).combine_chunks()
    parquet = parquet.sort_by(options.id).combine_chunks()
    if arrow.num_rows != parquet.num_rows:
        sys.exit(f"job_output_check: {arrow.num_rows} Arrow rows, {parquet.num_rows} Parquet rows")
    differences = []
    for name in parquet.column_names:
        expected, actual = parquet.column(name), arrow.column(name)
        if name != options.column:
            if not actual.equals(expected.cast(actual.type)):
                differences.append(name)
            continue
        same_nulls = np.array_equal(
            actual.is_null().to_numpy(zero_copy_only=False),
            expected.is_null().to_numpy(zero_copy_only=False))
        valid = expected.is_valid()
        same_values = np.array_equal(
            element_bits(actual.filter(valid)), element_bits(expected.filter(valid)))
        if not (same_nulls and same_values):
            differences.append(name)
    verdict = "equals" if not differences else "DIFFERS FROM (" + ", ".join(differences) + ")"
    try:  # Polars, where the host has it: the same files as they are
        import polars
        polars_rows = sum(polars.read_ipc(name, memory_map=False).height
                          for name in glob.glob(os.path.join(options.arrow, "part-*.arrow")))
        print(f"polars {polars.__version__} reads {polars_rows} rows")
    except ImportError:
        pass
    print(f"Arrow output ({files} files, {arrow.num_rows} rows, {options.column}: {kind}) "
          f"{verdict} the Parquet output, bit for bit")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
