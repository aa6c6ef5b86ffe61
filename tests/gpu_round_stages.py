#!/usr/bin/env python3
"""scripts/gpu-round.sh's stages, as a user meets them (no GPU needed):

- the list it checks names against up front (known_stages) is exactly the stages its loop
  implements, and --help mentions every one of them;
- a misspelt stage exits 2 with the list, before anything runs (no work folder created),
  even after valid ones.

  python3 tests/gpu_round_stages.py        (ctest: gpu_round_stages)
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-round.sh")


def run(*args, env=None):
    return subprocess.run(["bash", SCRIPT, *args], capture_output=True, text=True, env=env, timeout=60)


class GpuRoundStages(unittest.TestCase):
    def setUp(self):
        with open(SCRIPT) as f:
            self.text = f.read()
        m = re.search(r'^known_stages="([^"]*)"', self.text, re.M)
        self.assertIsNotNone(m, "gpu-round.sh has no known_stages list")
        self.known = m.group(1).split()
        self.implemented = re.findall(r"^    ([a-z0-9-]+)\)", self.text, re.M)

    def test_the_list_is_what_the_loop_implements(self):
        self.assertGreater(len(self.implemented), 10)
        self.assertEqual(sorted(self.known), sorted(self.implemented))
        self.assertEqual(len(self.known), len(set(self.known)), "a stage listed twice")

    def test_help_names_every_stage(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        words = set(re.findall(r"[a-z0-9-]+", r.stdout))
        missing = [s for s in self.known if s not in words]
        self.assertEqual(missing, [], "stages that --help does not mention")

    def test_a_misspelt_stage_fails_before_any_work(self):
        with tempfile.TemporaryDirectory() as tmp:
            work, pack = os.path.join(tmp, "work"), os.path.join(tmp, "pack")
            env = dict(os.environ, WORK=work, OUT=pack)
            r = run("build", "tets", env=env)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("unknown stage 'tets'", r.stderr)
            self.assertIn("attention-lazy-rescale", r.stderr)  # the list is printed
            self.assertFalse(os.path.exists(work), "the work folder was created: something ran")
            self.assertFalse(os.path.exists(pack))
            self.assertNotIn("=== build", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2 if "-v" in sys.argv else 1)
