#!/usr/bin/env python3
"""check-layers.py: read every #include of the library's sources and fail on a forbidden direction.

The layers (docs/architecture.md), bottom to top, and what each folder may include besides itself and
the system's headers:

  core      include/exactref/core/         core
  public    include/exactref/*.h           public, and of the core only er_types.h (no functions)
  host      src/host/                      host, public, core
  backend   cpu/  opencl/  cuda/           its own folder, host, public, core   (never another backend)
  front     src/*.[ch], src/interval/      front, host, backends, public, core
  math      src/math/                      math, public, core
  interp    src/interp/, src/python/       own folder, front headers (src/*.h), math, public, core
  cli       src/cli/                       cli, interp, math, front headers, public, core

Also refused: an include that resolves to nothing in the tree while naming a project folder, and any
circle of includes between the tree's files.  tests/ and bench/ may include anything and are not read.

Usage: check-layers.py [ROOT]   (ROOT: the repository, default: this script's parent's parent)
       check-layers.py --self-test   (builds small trees in a temporary directory: a good one must
                                      pass and each kind of violation must be caught)
Exit status 0 when every include is allowed, 1 with one line per violation otherwise.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCES = ('.c', '.h', '.cu', '.cuh', '.cl', '.h.in')
BACKENDS = ('cpu', 'opencl', 'cuda')


def layer_of(rel):
    """The layer (and, for backends and interp, the folder) of a repository-relative path, or None."""
    parts = rel.split('/')
    if rel.startswith('include/exactref/core/'):
        return 'core'
    if rel.startswith('include/exactref/'):
        return 'public'
    if parts[0] in BACKENDS:
        return 'backend:' + parts[0]
    if parts[0] == 'src':
        if len(parts) == 2:
            return 'front'
        sub = parts[1]
        if sub == 'host':
            return 'host'
        if sub == 'interval':
            return 'front'
        if sub == 'math':
            return 'math'
        if sub in ('interp', 'python'):
            return 'interp:' + sub
        if sub == 'cli':
            return 'cli'
        return 'front'
    return None


def allowed(src, dst, dst_rel):
    """Whether a file of layer src may include a file of layer dst (dst_rel: its path)."""
    if src == dst:
        return True
    base = {'core', 'public'}
    if src == 'core':
        return False
    if src == 'public':
        # A user's file gets the core's types and constants, never its inline functions.
        return dst == 'core' and os.path.basename(dst_rel) == 'er_types.h'
    if src == 'host':
        return dst in base
    if src.startswith('backend:'):
        return dst in base | {'host'}
    if src == 'front':
        return dst in base | {'host'} or dst.startswith('backend:')
    if src == 'math':
        return dst in base
    if src.startswith('interp:'):
        front_header = dst == 'front' and dst_rel.endswith('.h')
        return dst in base | {'math'} or front_header
    if src == 'cli':
        front_header = dst == 'front' and dst_rel.endswith('.h')
        return dst in base | {'math'} or dst.startswith('interp:') or front_header
    return True


def project_files(root):
    out = []
    for top in ('include', 'src', 'cpu', 'opencl', 'cuda'):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCES):
                    out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, '/'))
    return out


def resolve(root, rel, name, files, kind='"'):
    """The repository-relative file an include names: next to the includer (quoted includes only),
    then include/, then src/ (a configured header: its .in template); else, for a quoted include, the
    one file of the tree whose path ends so (an include that only an extra -I path finds: its direction
    is checked all the same).  An angle-bracket include found in neither root is a system header
    (<math.h> is C's, not include/exactref/math.h)."""
    here = os.path.dirname(rel)
    for base in ((here, 'include', 'src') if kind == '"' else ('include', 'src')):
        cand = os.path.normpath(os.path.join(base, name)).replace(os.sep, '/')
        if cand.startswith('..'):
            continue
        if os.path.isfile(os.path.join(root, cand)):
            return cand
        if os.path.isfile(os.path.join(root, cand + '.in')):
            return cand + '.in'
    if kind != '"':
        return None
    ends = [f for f in files if f == name or f.endswith('/' + name)]
    return ends[0] if len(ends) == 1 else None


def check(root):
    errors = []
    graph = {}
    files = project_files(root)
    for rel in files:
        src = layer_of(rel)
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        graph[rel] = []
        for m in INCLUDE.finditer(text):
            kind, name = m.group(1), m.group(2)
            line = text.count('\n', 0, m.start()) + 1
            dst_rel = resolve(root, rel, name, files, kind)
            if dst_rel is None:
                if kind == '"' and (name.startswith('exactref/') or '../' in name):
                    errors.append('%s:%d: #include "%s" names no file of the tree' % (rel, line, name))
                continue  # a system or generated header
            dst = layer_of(dst_rel)
            if dst is None:
                errors.append('%s:%d: includes %s, outside the library (tests/, bench/)' % (rel, line, dst_rel))
                continue
            graph[rel].append((dst_rel, line))
            if src is not None and not allowed(src, dst, dst_rel):
                errors.append('%s:%d: %s may not include %s (%s)' % (rel, line, src, dst_rel, dst))
    # circles of includes (depth-first search, each circle reported once)
    state, stack, seen = {}, [], set()

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g, _ in graph.get(f, ()):
            if state.get(g) == 1:
                cyc = stack[stack.index(g):] + [g]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    errors.append('include circle: ' + ' -> '.join(cyc))
            elif state.get(g) is None:
                visit(g)
        stack.pop()
        state[f] = 2

    for f in sorted(graph):
        if state.get(f) is None:
            visit(f)
    return errors


def self_test():
    good = {
        'include/exactref/core/er_a.h': '#include "er_b.h"\n',
        'include/exactref/core/er_b.h': '#include <stdint.h>\n',
        'include/exactref/core/er_types.h': '#include <stdint.h>\n',
        'include/exactref/mma.h': '#include "exactref/core/er_types.h"\n',
        'src/host/er_host.h': '#include "exactref/mma.h"\n',
        'cpu/cpu.c': '#include "../src/host/er_host.h"\n#include "cpu.h"\n',
        'cpu/cpu.h': '#include "exactref/core/er_a.h"\n',
        'src/front.h': '#include "exactref/mma.h"\n',
        'src/mma.c': '#include "../cpu/cpu.h"\n#include "front.h"\n',
        'src/interp/run.c': '#include "../front.h"\n#include "exactref/mma.h"\n',
        'src/cli/main.c': '#include "front.h"\n#include "interp/run.h"\n',
        'src/interp/run.h': '\n',
    }
    bad = [
        ('backend -> src', {'cpu/x.c': '#include "../src/front.h"\n'}),
        ('backend -> backend', {'opencl/x.c': '#include "../cpu/cpu.h"\n'}),
        ('public -> a core header with functions', {'include/exactref/result.h': '#include "exactref/core/er_a.h"\n'}),
        ('core -> public', {'include/exactref/core/er_c.h': '#include "exactref/mma.h"\n'}),
        ('interp -> backend', {'src/python/m.c': '#include "../../cpu/cpu.h"\n'}),
        ('circle', {'include/exactref/core/er_b.h': '#include "er_a.h"\n'}),
        ('missing', {'src/mma2.c': '#include "exactref/nothing.h"\n'}),
        ('backend -> backend through -I', {'cuda/k.cu': '#include "cpu.h"\n'}),
    ]

    def build(base, files):
        for rel, text in files.items():
            p = os.path.join(base, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'w') as fh:
                fh.write(text)

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, 'good')
        build(d, good)
        errs = check(d)
        if errs:
            print('self-test: the good tree was refused:', *errs, sep='\n  ')
            failures += 1
        for i, (what, extra) in enumerate(bad):
            d = os.path.join(tmp, 'bad%d' % i)
            files = dict(good)
            files.update(extra)
            build(d, files)
            errs = check(d)
            if not errs:
                print('self-test: %s was not caught' % what)
                failures += 1
            else:
                print('self-test: %s caught: %s' % (what, errs[0]))
    print('self-test: %s' % ('FAILED' if failures else 'passed'))
    return 1 if failures else 0


def main(argv):
    if len(argv) > 1 and argv[1] == '--self-test':
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(e)
    n = len(project_files(root))
    print('check-layers: %d files, %s' % (n, '%d violation(s)' % len(errors) if errors else 'every include allowed'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
