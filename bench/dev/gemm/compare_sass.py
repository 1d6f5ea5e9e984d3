#!/usr/bin/env python3
"""Compares the machine code (SASS) of two builds of a CUDA module kernel by kernel.

    bench/dev/gemm/compare_sass.py OLD.so NEW.so [NAME_FILTER]

Kernels are matched by the text of their instructions (addresses and encodings left
out), not by name: a kernel that moved namespace, or whose configuration type was
renamed, still matches when its code is the same. Prints, per architecture, how many
kernels each side has and how many bodies the other side holds too, then the demangled
names of the kernels whose code has no equal on the other side. NAME_FILTER keeps the
kernels whose demangled name contains it. Needs cuobjdump and nvdisasm (CUDA toolkit, or
pip nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm) and c++filt.
"""
import collections
import hashlib
import re
import subprocess
import sys


def kernels(path):
    """{(arch, mangled name): [normalized bodies]} of `path`."""
    text = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True, check=True).stdout
    out = collections.defaultdict(list)
    arch = name = None
    body = []

    def flush():
        if name is not None:
            out[(arch, name)].append("\n".join(body))

    for line in text.split("\n"):
        m = re.match(r"\s*arch = (\S+)", line)
        if m:
            flush()
            arch, name, body = m.group(1), None, []
            continue
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            flush()
            name, body = m.group(1), []
            continue
        if line.startswith("Fatbin") or line.startswith("====="):
            flush()
            name, body = None, []
            continue
        if name is None:
            continue
        line = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line)
        line = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", line).strip()
        if line and not line.startswith(".headerflags") and not line.startswith("...."):
            body.append(line)
    flush()
    return out


def demangle(names):
    names = list(names)
    text = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout
    return dict(zip(names, text.split("\n")))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
    wanted = sys.argv[3] if len(sys.argv) > 3 else ""
    names = demangle({n for _, n in list(old) + list(new)})
    digest = lambda body: hashlib.sha1(body.encode()).hexdigest()
    for arch in sorted({a for a, _ in list(old) + list(new)}):
        side = []
        for table in (old, new):
            side.append({(n, i): digest(b) for (a, n), bodies in table.items() if a == arch and wanted in names[n]
                         for i, b in enumerate(bodies)})
        counts = [collections.Counter(s.values()) for s in side]
        print(f"{arch}: old {len(side[0])} kernels, new {len(side[1])}, "
              f"old bodies found in new {sum(1 for h in side[0].values() if h in counts[1])}, "
              f"new bodies found in old {sum(1 for h in side[1].values() if h in counts[0])}")
        for label, mine, other in (("only old", side[0], counts[1]), ("only new", side[1], counts[0])):
            for (n, _), h in sorted(mine.items(), key=lambda item: names[item[0][0]]):
                if h not in other:
                    print(f"  {label}: {names[n]}")


if __name__ == "__main__":
    main()
