#!/usr/bin/env python3
"""Lists the Swift and C modules vaultctl-gate links (issue 34, point 1), with their line counts, as a Markdown table.

From `swift package describe --type json` (the manifest's own graph, so it cannot drift from Package.swift):
the targets vaultctl-gate depends on, transitively; for each, the lines of its sources (`wc -l`, comments
included). `--check FILE` compares the table with the one between `<!-- gate-modules -->` and
`<!-- /gate-modules -->` in FILE (docs/gate.md) and fails (1) when they differ; `--write FILE` replaces it.
"""
import json, os, subprocess, sys

def graph(root):
    d = json.loads(subprocess.run(['swift', 'package', 'describe', '--type', 'json'], cwd=root,
                                  capture_output=True, text=True, check=True).stdout)
    return {t['name']: t for t in d['targets']}

def closure(targets, name):
    seen, order = set(), []
    def visit(n):
        if n in seen: return
        seen.add(n)
        for dep in targets[n].get('target_dependencies', []): visit(dep)
        order.append(n)
    visit(name)
    return order

def lines(root, t):
    n = 0
    for s in t.get('sources', []):
        with open(os.path.join(root, t['path'], s), 'rb') as f: n += f.read().count(b'\n')
    return n

def table(root, product='vaultctl-gate'):
    targets = graph(root)
    rows, swift = [], 0
    for name in reversed(closure(targets, product)):
        t = targets[name]
        if t['module_type'] == 'SystemLibraryTarget': kind = 'C library (module map; headers only)'
        elif t['module_type'] == 'ClangTarget': kind = 'C'
        else: kind = 'Swift'
        n = lines(root, t)
        if kind == 'Swift': swift += n
        rows.append(f"| `{name}` | {kind} | {len(t.get('sources', []))} | {n} |")
    head = ['| module | kind | files | lines |', '| --- | --- | --- | --- |']
    return '\n'.join(head + rows + [f'| **all Swift** | | | **{swift}** |'])

if __name__ == '__main__':
    root = os.environ.get('ROOT') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    t = table(root)
    if len(sys.argv) == 3 and sys.argv[1] in ('--check', '--write'):
        doc = open(sys.argv[2]).read()
        a, b = '<!-- gate-modules -->\n', '\n<!-- /gate-modules -->'
        i, j = doc.index(a) + len(a), doc.index(b)
        if sys.argv[1] == '--write':
            open(sys.argv[2], 'w').write(doc[:i] + t + doc[j:])
        elif doc[i:j] != t:
            print(f'{sys.argv[2]}: the table of the gate\'s modules is out of date; run: scripts/gate-modules.py --write {sys.argv[2]}', file=sys.stderr)
            sys.exit(1)
    else:
        print(t)
