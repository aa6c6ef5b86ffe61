#!/usr/bin/env python3
"""Writes the Matrix Market files of the spmv tests and suites into tests/data/mtx/.

Good files (read by tests/spmv_cpu_test.cpp and suites/spmv.yaml):
  general_real.mtx      7 x 5 general real, comments, an empty row, a duplicate (summed)
  symmetric_real.mtx    6 x 6 symmetric real, lower triangle stored (mirrored on read)
  pattern_general.mtx   9 x 9 pattern (values 1), CRLF line ends
  integer_symmetric.mtx 4 x 4 symmetric integer
  arrow_2000.mtx        2000 x 2000 symmetric real "arrow": diagonal, full first row and
                        column (one row of 2000 elements: ELL pads it to 2000 x 2000)
Hostile files (each rejected with the line the test expects, see EXPECTED below):
  bad_header, unsupported_array, truncated (cut inside a line), too_few_entries,
  index_out_of_range, non_numeric, bad_size, empty, extra_entries.

Deterministic (no randomness beyond a fixed LCG): rerunning rewrites the same bytes.
Usage: python3 scripts/make_test_matrices.py [OUT_DIR]
"""
import os
import sys

HEADER = "%%MatrixMarket matrix coordinate {field} {symmetry}\n"

# file -> (line, message fragment) that the reader must report: "path:line: ...".
EXPECTED = {
    "bad_header.mtx": (1, "bad header"),
    "unsupported_array.mtx": (1, "unsupported format 'array'"),
    "truncated.mtx": (6, "expected 3 fields"),
    "too_few_entries.mtx": (7, "truncated: 4 of 10 entries"),
    "index_out_of_range.mtx": (5, "out of range"),
    "non_numeric.mtx": (4, "non-numeric value 'abc'"),
    "bad_size.mtx": (3, "bad size line"),
    "empty.mtx": (1, "empty file"),
    "extra_entries.mtx": (5, "more entries than the 2"),
}


def lcg(seed):
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield (state >> 11) / float(1 << 53)


def write(out_dir, name, text, newline="\n"):
    with open(os.path.join(out_dir, name), "w", newline=newline) as f:
        f.write(text)


def good(out_dir):
    write(out_dir, "general_real.mtx",
          HEADER.format(field="real", symmetry="general") +
          "% a comment line\n%\n7 5 10\n"
          "1 1 1.5\n1 5 -2\n2 2 3.25e0\n4 1 -1\n4 3 0.5\n4 3 0.25\n5 4 2\n6 5 -0.75\n7 1 1e-1\n7 2 +4\n")
    # Row 3 is empty; (4, 3) appears twice: 0.75 after summing.
    write(out_dir, "symmetric_real.mtx",
          HEADER.format(field="real", symmetry="symmetric") +
          "6 6 9\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n4 4 4\n5 1 2.5\n6 3 -0.5\n6 6 1\n")
    entries = [(1, 1), (2, 3), (3, 2), (4, 9), (5, 5), (6, 1), (7, 7), (8, 2), (9, 9), (9, 1), (1, 9)]
    write(out_dir, "pattern_general.mtx",
          HEADER.format(field="pattern", symmetry="general") + "9 9 %d\n" % len(entries) +
          "".join("%d %d\n" % e for e in entries), newline="\r\n")
    write(out_dir, "integer_symmetric.mtx",
          HEADER.format(field="integer", symmetry="symmetric") + "4 4 5\n1 1 2\n2 1 -3\n3 3 7\n4 2 1\n4 4 -5\n")
    n = 2000
    rnd = lcg(17)
    lines = []
    for i in range(1, n + 1):
        lines.append("%d %d %.6f" % (i, i, 4 + next(rnd)))
    for i in range(2, n + 1):
        lines.append("%d 1 %.6f" % (i, next(rnd) - 0.5))
    write(out_dir, "arrow_2000.mtx",
          HEADER.format(field="real", symmetry="symmetric") +
          "%% arrow matrix: diagonal + first column (mirrored to the first row)\n" +
          "%d %d %d\n" % (n, n, len(lines)) + "\n".join(lines) + "\n")


def hostile(out_dir):
    real = HEADER.format(field="real", symmetry="general")
    write(out_dir, "bad_header.mtx", "%%NotMatrixMarket something\n3 3 1\n1 1 1\n")
    write(out_dir, "unsupported_array.mtx", "%%MatrixMarket matrix array real general\n3 3\n1\n2\n3\n")
    # Cut inside the last line: "3 3" lost its value.
    write(out_dir, "truncated.mtx", real + "% cut short\n3 3 4\n1 1 1\n2 2 2\n3 3")
    write(out_dir, "too_few_entries.mtx", real + "4 4 10\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n")
    write(out_dir, "index_out_of_range.mtx", real + "5 5 3\n1 1 1\n2 2 2\n6 1 3\n")
    write(out_dir, "non_numeric.mtx", real + "3 3 2\n1 1 1\n2 2 abc\n")
    write(out_dir, "bad_size.mtx", real + "% size line follows\n5 5\n1 1 1\n")
    write(out_dir, "empty.mtx", "")
    write(out_dir, "extra_entries.mtx", real + "3 3 2\n1 1 1\n2 2 2\n3 3 3\n")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "mtx")
    os.makedirs(out_dir, exist_ok=True)
    good(out_dir)
    hostile(out_dir)
    print("wrote %d files to %s" % (len(os.listdir(out_dir)), out_dir))


if __name__ == "__main__":
    main()
