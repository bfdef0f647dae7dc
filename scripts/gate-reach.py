#!/usr/bin/env python3
"""How much of the Swift that vaultctl-gate links it can ever run (issue 34, the "at most half" line).

`gate-modules.py` counts the lines of the modules the gate links. This counts, in those same files, the
function bodies of which no line has machine code in a gate built so that the linker drops every function
nothing reaches, that is: "linked, never run". Usage (the build takes about a minute; SwiftPM's own release
link keeps every public function, which is why the three frontend flags are needed here):

  swift build -c release --product vaultctl-gate --scratch-path .build/reach -Xswiftc -g \\
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -Xfrontend -Xswiftc -internalize-at-link \\
    -Xswiftc -Xfrontend -Xswiftc -conditional-runtime-records
  python3 scripts/gate-reach.py .build/reach/release/vaultctl-gate [--list N]

A body counts as reached when any line inside it appears in the binary's line table (`objdump
--dwarf=decodedline`) at an address in .text (the linker gives a dropped function's lines address 0);
inlined code keeps its own file and line, so a function inlined into a caller counts as reached. Bodies are
found by indentation (house style: a closing brace at the declaration's indentation), so the figures are an
estimate to within a few dozen lines: one-line functions, stored properties, types, comments and blank
lines are counted as reached. It prints, per module, the lines (wc -l), the lines of unreached bodies, and
with --list the largest unreached functions.
"""
import collections, os, re, subprocess, sys

MODULES = ['vaultctl-gate', 'GateService', 'GateProtocol', 'VaultRules', 'JSON', 'Slots']
DECL = re.compile(r'^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|private|fileprivate|internal|static|'
                  r'mutating|override|final|nonisolated|convenience|required)\s+)*(func|init|subscript|var)\b')


def reached_lines(binary):
    text = subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True, check=True).stdout
    low = next(int(l.split()[l.split().index('.text') + 2], 16) for l in text.splitlines() if ' .text ' in l)
    out = subprocess.run(['objdump', '--dwarf=decodedline', binary], capture_output=True, text=True).stdout
    hit = collections.defaultdict(set)
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0].endswith('.swift') and p[1].isdigit() and p[2].startswith('0x') and int(p[2], 16) >= low:
            hit[p[0]].add(int(p[1]))
    return hit


def unreached_bodies(path, hit):
    """(first line, length, declaration) of each multi-line body with no reached line."""
    lines = open(path, encoding='utf-8').read().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = DECL.match(lines[i])
        s = lines[i].rstrip()
        if m and s.endswith('{'):
            indent, j = len(m.group(1)), i + 1
            while j < len(lines) and not (lines[j].strip().startswith('}') and len(lines[j]) - len(lines[j].lstrip()) <= indent):
                j += 1
            if not set(range(i + 1, j + 2)) & hit:
                found.append((i + 1, j - i + 1, s.strip()))
            i = j + 1
            continue
        i += 1
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary, most = sys.argv[1], int(sys.argv[sys.argv.index('--list') + 1]) if '--list' in sys.argv else 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hit = reached_lines(binary)
    rows, every, total, dead = [], [], 0, 0
    for module in MODULES:
        folder = os.path.join(root, 'Sources', module)
        n = d = 0
        for base, _, files in os.walk(folder):
            for f in files:
                if not f.endswith('.swift'):
                    continue
                path = os.path.join(base, f)
                n += open(path, 'rb').read().count(b'\n')
                for first, length, decl in unreached_bodies(path, hit.get(f, set())):
                    d += length
                    every.append((length, os.path.relpath(path, root), first, decl))
        rows.append((module, n, d))
        total, dead = total + n, dead + d
    print('| module | lines | in bodies never reached |')
    print('| --- | ---: | ---: |')
    for module, n, d in rows:
        print(f'| `{module}` | {n} | {d} |')
    print(f'| **all** | **{total}** | **{dead}** ({100 * dead / total:.1f} %) |')
    print(f'\nLinked and possibly run: {total - dead} lines (the rest of each file: declarations, comments, types).')
    for length, path, first, decl in sorted(every, reverse=True)[:most]:
        print(f'{length:4d} {path}:{first} {decl[:100]}')


if __name__ == '__main__':
    main()
