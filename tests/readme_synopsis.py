#!/usr/bin/env python3
"""README's command synopsis names every option that `harness <command> --help` lists
(issue 34: --devices, --allow-mixed and compare's --filter, --min-effect-size,
--fail-on-missing were missing)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.environ["HARNESS_EXE"]

readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
block = readme[readme.index("## Commands"):]
block = block[block.index("```") + 3:]
block = block[:block.index("```")]
# The synopsis of each command: its first line and the indented lines that follow.
synopsis = {}
current = None
for line in block.splitlines():
    m = re.match(r"harness (\w+) ", line)
    if m:
        current = m.group(1)
        synopsis[current] = line
    elif current and line.startswith(" "):
        synopsis[current] += line
missing = []
for command in ["run", "gbench", "list", "compare", "report", "validate"]:
    help_text = subprocess.run([EXE, command, "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"^\s+(?:-\w,)?(--[a-z][a-z0-9-]*)", help_text, re.M)) - {"--help"}
    for option in sorted(options):
        if option not in synopsis.get(command, ""):
            missing.append(f"harness {command} {option}")
if missing:
    print("README.md's synopsis lacks: " + ", ".join(missing))
    sys.exit(1)
print("README.md's synopsis names every option of", ", ".join(sorted(synopsis)))
