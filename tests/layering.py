#!/usr/bin/env python3
"""Read harness/src's include lines and check that its folders are layered.

  layering.py check [--root DIR]      exit 1 when an include goes from a lower stage up to
                                      a higher one (or into a folder not in LAYERS)
  layering.py graph [--root DIR]      the include graph between harness's folders: each
                                      arrow with its include count, and the arrows that
                                      sit in a loop
  layering.py selftest                the check on a made-up tree (an upward include fails)
  layering.py functions [--root DIR] [--most N]
                                      the N longest functions in harness/src (by lines,
                                      from the opening line to the closing brace)

The layers, bottom first (a folder includes only folders of lower layers):
"""
import argparse
import os
import re
import sys

# Bottom first. A folder may include the folders of lower layers only (not its peers).
LAYERS = [
    ["core"],                             # error helpers, did_you_mean
    ["types"],                            # the records every stage passes on
    ["plugin", "operands", "profile"],    # registry, buffers, CUPTI/NVTX/peaks
    ["suite", "python"],                  # YAML -> cases (checks metric names: profile/);
                                          # --python variants (embedded CPython)
    ["measure"],                          # timing (NVTX ranges, the L2 evictor: profile/)
    ["report"],                           # the report record, JSON, journal
    ["compare"],                          # statistics and verdicts
    ["render"],                           # md, csv, html, SVG, console formatters
    ["run"],                              # the session on top
]
__doc__ += "".join(f"  {i}: {', '.join(l)}\n" for i, l in enumerate(LAYERS))

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".cu", ".cuh", ".h")


def default_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(here), "harness", "src")


def includes(root):
    """(folder, file, line number, included folder) for every include of another folder."""
    folders = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    out = []
    for folder in sorted(folders):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or "/" not in m.group(1):
                            continue
                        target = m.group(1).split("/")[0]
                        if target in folders and target != folder:
                            out.append((folder, os.path.relpath(path, root), number, target))
    return out


def loops(edges):
    """The arrows (a, b) that sit in a loop: b reaches a again."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            n = todo.pop()
            if n == goal:
                return True
            if n in seen:
                continue
            seen.add(n)
            todo.extend(graph.get(n, ()))
        return False

    return {(a, b) for a, b in edges if reaches(b, a)}


def layer_of(folder):
    for i, names in enumerate(LAYERS):
        if folder in names:
            return i
    return None


def cmd_graph(root):
    inc = includes(root)
    counts = {}
    for folder, _, _, target in inc:
        counts[(folder, target)] = counts.get((folder, target), 0) + 1
    # module arrows: a file's stem (foo.hpp and foo.cpp are one module) to a folder
    modules = {(os.path.splitext(f)[0], t) for _, f, _, t in inc}
    in_loop = loops(counts.keys())
    for (a, b), n in sorted(counts.items()):
        print(f"  {a:>9} -> {b:<9} {n:>2} include(s){'   in a loop' if (a, b) in in_loop else ''}")
    looped_modules = {(m, t) for m, t in modules if (m.split("/")[0], t) in in_loop}
    print(f"folder arrows: {len(counts)}, in a loop: {len(in_loop)}")
    print(f"module arrows (file stem -> folder): {len(modules)}, in a loop: {len(looped_modules)}")
    print(f"include lines between folders: {len(inc)}, "
          f"in a loop: {sum(1 for f, _, _, t in inc if (f, t) in in_loop)}")
    return 0


def cmd_check(root):
    bad = []
    for folder, path, number, target in includes(root):
        lf, lt = layer_of(folder), layer_of(target)
        if lf is None:
            bad.append(f"{path}:{number}: folder '{folder}' is in no layer of tests/layering.py")
        elif lt is None:
            bad.append(f"{path}:{number}: includes '{target}/', which is in no layer")
        elif lt >= lf:
            bad.append(f"{path}:{number}: {folder}/ (layer {lf}) includes {target}/ (layer {lt}), "
                       f"{'a peer' if lt == lf else 'a higher stage'}")
    for line in bad:
        print(line)
    print(f"layering: {len(bad)} upward include(s)")
    return 1 if bad else 0


def strip_code(line):
    """A line without its comments, string and character literals."""
    code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    code = re.sub(r"'(\\.|[^'\\])*'", "''", code)
    return code.split("//")[0]


def functions(root):
    """(lines, file:line, header) for every function body at namespace level in the
    .cpp/.cu files: a '{' at namespace depth whose statement so far looks like a
    signature (has a ')' and is no class, struct, enum, namespace or initialiser)."""
    found = []
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith((".cpp", ".cu")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            depth, ns, start, stmt, stmt_line = 0, [], None, "", None
            in_block_comment = False
            for i, line in enumerate(lines):
                code = strip_code(line)
                if in_block_comment:
                    if "*/" not in code:
                        continue
                    code, in_block_comment = code.split("*/", 1)[1], False
                if "/*" in code and "*/" not in code:
                    code, in_block_comment = code.split("/*", 1)[0], True
                if code.lstrip().startswith("#"):
                    continue
                for ch in code:
                    top = depth == len(ns)
                    if ch == "{":
                        if top:
                            head = stmt.strip()
                            if re.match(r"^(inline\s+)?namespace\b|^extern\s", head) or head == "":
                                ns.append(depth)
                            elif start is None and ")" in head and not re.match(
                                    r"^(template\s*<[^>]*>\s*)?(class|struct|enum|union)\b", head) \
                                    and "=" not in head.split("(")[0]:
                                start = stmt_line
                        depth += 1
                        stmt, stmt_line = "", None
                    elif ch == "}":
                        depth -= 1
                        if ns and depth == ns[-1]:
                            ns.pop()
                        elif depth == len(ns) and start is not None:
                            found.append((i - start + 1, f"{os.path.relpath(path, root)}:{start + 1}",
                                          lines[start].strip()))
                            start = None
                        stmt, stmt_line = "", None
                    elif ch == ";":
                        if depth == len(ns):
                            stmt, stmt_line = "", None
                    elif depth == len(ns):
                        if stmt_line is None and not ch.isspace():
                            stmt_line = i
                        stmt += ch
                if depth == len(ns) and stmt:
                    stmt += " "
    found.sort(key=lambda x: -x[0])
    return found


def cmd_functions(root, most):
    for n, where, header in functions(root)[:most]:
        name = re.sub(r"\(.*", "", header)
        print(f"  {n:>4}  {where:<40} {name[-60:]}")
    return 0


def cmd_selftest():
    """check on a made-up tree: passes a downward include, fails an upward and a peer one."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        def put(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        put("types/a.hpp", "#pragma once\n")
        put("run/b.cpp", '#include "types/a.hpp"\n')
        ok = cmd_check(root) == 0
        put("suite/c.hpp", '#include "run/b.hpp"\n')
        up = cmd_check(root) == 1
        os.remove(os.path.join(root, "suite/c.hpp"))
        put("profile/e.hpp", "#pragma once\n")
        put("plugin/d.cpp", '#include "profile/e.hpp"\n')
        peer = cmd_check(root) == 1
        os.remove(os.path.join(root, "plugin/d.cpp"))
        graph_ok = cmd_graph(root) == 0 and not loops({("a", "b")}) and len(loops({("a", "b"), ("b", "a")})) == 2
    print(f"selftest: downward {ok}, upward caught {up}, peer caught {peer}, graph {graph_ok}")
    return 0 if ok and up and peer and graph_ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["check", "graph", "functions", "selftest"])
    p.add_argument("--root", default=default_root(), help="harness/src (default: next to tests/)")
    p.add_argument("--most", type=int, default=10, help="functions: how many (default 10)")
    a = p.parse_args()
    if a.command == "graph":
        return cmd_graph(a.root)
    if a.command == "selftest":
        return cmd_selftest()
    if a.command == "functions":
        return cmd_functions(a.root, a.most)
    return cmd_check(a.root)


if __name__ == "__main__":
    sys.exit(main())
