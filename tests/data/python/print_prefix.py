"""Prints the embedded interpreter's sys.prefix and declares no variant: tests/python_test.cpp
checks that HARNESS_PYTHON=<venv>/bin/python3 makes the harness use that virtual environment."""
import sys

print(f"sys.prefix={sys.prefix}", flush=True)
