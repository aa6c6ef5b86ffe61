#!/usr/bin/env bash
# Renders a report's HTML in headless Chromium and checks the screenshot is not blank:
# enough non-white pixels, and the chart palette's first color (#4e79a7, the first
# series of every chart) present, so the inline SVG charts were drawn. Also fails on any
# console message of level warning or error (a blocked resource, a CSP violation, a
# script error) and on horizontal overflow (content reaching the right edge of the
# 1200 px wide window, which the pages' layout keeps white).
#
#   tests/render_html.sh HARNESS_EXE REPORT.json [SCREENSHOT.png]
#   tests/render_html.sh HARNESS_EXE PAGE.html [SCREENSHOT.png]   (a page already rendered:
#       compare --format html, a history, trace-html)
#
# Exit 0 pass, 1 fail, 77 skipped (no Chromium or no python3: ctest's SKIP_RETURN_CODE).
set -u
exe=${1:?usage: render_html.sh HARNESS_EXE REPORT.json [SCREENSHOT.png]}
report=${2:?usage: render_html.sh HARNESS_EXE REPORT.json [SCREENSHOT.png]}

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$candidate; break; fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no chromium on PATH (apt-get install chromium) - the HTML report was not rendered"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is needed to read the screenshot"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shot=${3:-$work/report.png}
html=$work/report.html

case "$report" in
  *.html) cp "$report" "$html" ;;
  *) "$exe" report "$report" --format html --out "$html" || { echo "FAIL: harness report exited $?"; exit 1; } ;;
esac

# A private profile and home: nothing of the user's, nothing fetched.
HOME=$work XDG_CONFIG_HOME=$work XDG_CACHE_HOME=$work timeout 120 "$browser" \
  --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --enable-logging=stderr --v=0 \
  --screenshot="$shot" --window-size=1200,2000 "file://$html" >"$work/chromium.log" 2>&1
rc=$?
# Console messages reach the log as "...:INFO:CONSOLE:line] "text", source: ..." (any
# level); CSP violations and failed loads are logged the same way.
if grep -E 'CONSOLE[:(]|Refused to|Failed to load' "$work/chromium.log" >"$work/console.txt"; then
  echo "FAIL: console messages while rendering:"
  head -20 "$work/console.txt"
  exit 1
fi
if [ ! -s "$shot" ]; then
  echo "FAIL: $browser wrote no screenshot (exit $rc); its log:"
  tail -20 "$work/chromium.log"
  exit 1
fi

python3 - "$shot" <<'PY'
import struct, sys, zlib

def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or interlace != 0 or color not in (2, 6):
        sys.exit(f"FAIL: unexpected PNG format (depth {depth}, color type {color}, interlace {interlace})")
    bpp = 4 if color == 6 else 3
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows

width, height, bpp, rows = read_png(sys.argv[1])
total = nonwhite = palette = 0
colors = set()
for line in rows:
    for x in range(0, len(line), bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        total += 1
        if r < 245 or g < 245 or b < 245:
            nonwhite += 1
        if abs(r - 0x4E) <= 6 and abs(g - 0x79) <= 6 and abs(b - 0xA7) <= 6:
            palette += 1
        if len(colors) < 5000:
            colors.add((r >> 3, g >> 3, b >> 3))
share = nonwhite / total
print(f"screenshot {width}x{height}: {100 * share:.1f}% non-white pixels, {len(colors)} colors, "
      f"{palette} pixels of the first series color")
if share < 0.02 or len(colors) < 16:
    sys.exit("FAIL: the screenshot is blank")
if palette < 50:
    sys.exit("FAIL: no chart was drawn (the first series color is missing)")
# Overflow: the pages are at most 1120 px wide and centered, so the rightmost 30 columns of
# a 1200 px window stay white unless something sticks out.
edge = sum(1 for line in rows for x in range(width - 30, width)
           if min(line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]) < 235)
print(f"{edge} non-white pixels in the rightmost 30 columns")
if edge > 0:
    sys.exit("FAIL: content overflows the page horizontally")
print("PASS")
PY
