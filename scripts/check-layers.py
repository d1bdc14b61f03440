#!/usr/bin/env python3
"""check-layers.py: read every #include and every call of the library's sources and fail on a forbidden direction.

The layers (docs/architecture.md), bottom to top, and what each folder may include besides itself and
the system's headers:

  core      include/exactref/core/         core
  public    include/exactref/*.h           public, and of the core only er_types.h (no functions)
  host      host/                          host, public, core
  backend   cpu/  opencl/  cuda/           its own folder, host, public, core   (never another backend)
  front     src/*.[ch], src/interval/, src/ops/  front, host, backends, public, core
  math      src/math/                      math, public, core
  interp    src/interp/                    interp, front headers (src/*.h), math, public, core
  ends      src/cli/, src/python/          own folder, interp, math, front headers, public, core

Also refused: an include that resolves to nothing in the tree while naming a project folder, and any
circle of includes between the tree's files.  tests/ and bench/ may include anything and are not read.

Calls (with --build): the same table read from the compiled objects.  Each object file of the build
tree that comes from a source of the tree is read with nm; a symbol one object uses (undefined there)
and another defines belongs to the defining file's layer, and the using file's layer must be allowed
to include that layer (a front header counts as the front: interp and cli may call the front door).
So a backend calling the front door, the command or Python calling a backend's function, or one backend
calling another is refused even when the prototype came from a public header.  And a backend may not
define a function a public header declares with ER_API: the public API is the front door's to define
(and route), or every caller of it reaches the backend without the router.

Prototypes by hand: a function declared (not defined) at file scope of a .c file, without static,
whose definition is not in that file, is refused: its prototype belongs in the header of the file that
defines it, where the include check can see the direction.

Usage: check-layers.py [ROOT] [--build DIR] [--nm NM]
         ROOT: the repository (default: this script's parent's parent); DIR: a build tree of it, whose
         objects give the calls (without it, the calls are not checked); NM: the nm to run (default nm)
       check-layers.py --self-test   (builds small trees in a temporary directory: a good one must
                                      pass and each kind of violation must be caught)
Exit status 0 when every include and call is allowed, 1 with one line per violation otherwise.
"""
import os
import re
import subprocess
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
    if parts[0] == 'host':
        return 'host'
    if parts[0] == 'src':
        if len(parts) == 2:
            return 'front'
        sub = parts[1]
        if sub in ('interval', 'ops'):
            return 'front'
        if sub == 'math':
            return 'math'
        if sub == 'interp':
            return 'interp'
        if sub in ('cli', 'python'):
            return 'ends:' + sub
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
    if src == 'interp':
        front_header = dst == 'front' and dst_rel.endswith('.h')
        return dst in base | {'math'} or front_header
    if src.startswith('ends:'):
        # The two front ends (the command, the Python extension) stand side by side on top.
        front_header = dst == 'front' and dst_rel.endswith('.h')
        return dst in base | {'math', 'interp'} or front_header
    return True


def project_files(root):
    out = []
    for top in ('include', 'host', 'src', 'cpu', 'opencl', 'cuda'):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(SOURCES):
                    out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, '/'))
    return out


def resolve(root, rel, name, files, kind='"'):
    """The repository-relative file an include names: next to the includer (quoted includes only),
    then include/, then src/ (a configured header: its .in template), then the root (the build's
    include path has the root and src/, so "host/er_msg.h" and, from a folder of src/, "../host/er_msg.h"
    name host/); else, for a quoted include, the
    one file of the tree whose path ends so (an include that only an extra -I path finds: its direction
    is checked all the same).  An angle-bracket include found in neither root is a system header
    (<math.h> is C's, not include/exactref/math.h)."""
    here = os.path.dirname(rel)
    for base in ((here, 'include', 'src', '') if kind == '"' else ('include', 'src')):
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


def check(root, symbols=None):
    """Every violation in the tree at root; symbols (read_symbols' table, or None): its calls too."""
    errors = hand_prototypes(root)
    if symbols is not None:
        errors += check_calls(symbols, public_functions(root))
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


def object_sources(root, build):
    """Each object file of the build tree that comes from a source of the tree: {object: source}.
    An object's source is its path after the target's `<target>.dir/`, below the folder holding its
    CMakeFiles (generated sources, and tests/ and bench/, are left out)."""
    out = {}
    for d, dirs, files in os.walk(build):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith('.o'):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, build).replace(os.sep, '/')
            m = re.match(r'^(?:(.*)/)?CMakeFiles/[^/]+\.dir/(.+)\.o$', rel)
            if not m:
                continue
            src = ((m.group(1) + '/') if m.group(1) else '') + m.group(2)
            if layer_of(src) is None or not os.path.isfile(os.path.join(root, src)):
                continue
            out[path] = src
    return out


def read_symbols(root, build, nm='nm'):
    """{source: (defined, undefined)}: the global symbols each source's object defines and uses."""
    table = {}
    for obj, src in object_sources(root, build).items():
        res = subprocess.run([nm, '-P', obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        if res.returncode != 0:
            raise RuntimeError('%s -P %s failed: %s' % (nm, obj, res.stderr.strip()))
        defined, undefined = set(), set()
        for line in res.stdout.splitlines():
            f = line.split()
            if len(f) < 2:
                continue
            name, kind = f[0], f[1]
            if kind == 'U':
                undefined.add(name)
            elif kind in 'TDBRVWCGSi':
                defined.add(name)
        d, u = table.setdefault(src, (set(), set()))
        d |= defined
        u |= undefined
    return table


PUBLIC_DECL = re.compile(r'\bER_API\s+[^;{}()]*?\b(er_\w+)\s*\(')


def public_functions(root):
    """The names the public headers declare with ER_API: the front door's to define."""
    names = set()
    d = os.path.join(root, 'include', 'exactref')
    if os.path.isdir(d):
        for f in sorted(os.listdir(d)):
            if f.endswith('.h'):
                with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                    names.update(PUBLIC_DECL.findall(strip_c(fh.read())))
    return names


def check_calls(symbols, public=frozenset()):
    """One line per call (a symbol used by one source, defined by another) in a forbidden direction,
    and per public function (public: their names) defined by a backend, where every caller above the
    backends would reach it without the front door."""
    errors = []
    owner = {}
    for src, (defined, _) in symbols.items():
        for name in defined:
            owner.setdefault(name, []).append(src)
            if name in public and layer_of(src).startswith('backend:'):
                errors.append('%s: defines the public %s: a backend\'s function reached without the front door '
                              '(define it in src/ and route it)' % (src, name))
    for src in sorted(symbols):
        layer = layer_of(src)
        for name in sorted(symbols[src][1]):
            for dst_rel in sorted(owner.get(name, ())):
                if dst_rel == src:
                    continue
                dst = layer_of(dst_rel)
                # The front door's functions are called through its headers (public or src/*.h).
                as_header = os.path.splitext(dst_rel)[0] + '.h' if dst == 'front' else dst_rel
                if layer is not None and not allowed(layer, dst, as_header):
                    errors.append('%s: %s may not call %s, defined in %s (%s)' % (src, layer, name, dst_rel, dst))
    return errors


def strip_c(text):
    """The text with comments, string and character literals and preprocessor lines blanked (newlines
    kept, so that offsets still give line numbers)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + ' ' * (j - i - 2) + c if j - i >= 2 else ' ' * (j - i))
            i = j
            continue
        if c == '#' and at_line_start:
            j = i
            while True:  # the directive with its continuation lines
                k = text.find('\n', j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != '\\':
                    break
                j = k + 1
            out.append(re.sub(r'[^\n]', ' ', text[i:k]))
            i = k
            continue
        if c == '\n':
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return ''.join(out)


PROTOTYPE = re.compile(r'^(?P<pre>[\w\s\*]+?[\s\*])(?P<name>[A-Za-z_]\w*)\s*\((?P<args>[^;{}]*)\)\s*'
                       r'(?:__attribute__\s*\(\(.*\)\)\s*)?;$', re.S)


def hand_prototypes(root):
    """One line per function declared by hand at file scope of a .c file and defined elsewhere."""
    errors = []
    for rel in project_files(root):
        if not rel.endswith('.c'):
            continue
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as fh:
            text = strip_c(fh.read())
        depth, start = 0, 0
        for i, c in enumerate(text):
            if c in '{(':
                if depth == 0 and c == '{':
                    pass
                depth += 1
            elif c in '})':
                depth -= 1
                if depth == 0 and c == '}':
                    start = i + 1
            elif c == ';' and depth == 0:
                stmt = text[start:i + 1].strip()
                lead = start + len(text[start:i + 1]) - len(text[start:i + 1].lstrip())
                start = i + 1
                m = PROTOTYPE.match(stmt)
                if not m:
                    continue
                words = m.group('pre').split()
                if 'static' in words or 'typedef' in words or not words or '=' in stmt:
                    continue
                name = m.group('name')
                if re.search(r'\b%s\s*\([^;{}]*\)\s*\{' % re.escape(name), text):
                    continue  # declared ahead of its own definition in this file
                line = text.count('\n', 0, lead) + 1
                errors.append('%s:%d: %s declared by hand (its prototype belongs in the header of the '
                              'file that defines it)' % (rel, line, name))
    return errors


def self_test():
    good = {
        'include/exactref/core/er_a.h': '#include "er_b.h"\n',
        'include/exactref/core/er_b.h': '#include <stdint.h>\n',
        'include/exactref/core/er_types.h': '#include <stdint.h>\n',
        'include/exactref/mma.h': '#include "exactref/core/er_types.h"\nER_API int er_mma_public(int x);\n',
        'host/er_host.h': '#include "exactref/mma.h"\n',
        'cpu/cpu.c': '#include "../host/er_host.h"\n#include "cpu.h"\n',
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
        ('python -> backend', {'src/python/m.c': '#include "../../cpu/cpu.h"\n'}),
        ('interp -> python', {'src/python/m.h': '\n', 'src/interp/x.c': '#include "../python/m.h"\n'}),
        ('circle', {'include/exactref/core/er_b.h': '#include "er_a.h"\n'}),
        ('missing', {'src/mma2.c': '#include "exactref/nothing.h"\n'}),
        ('backend -> backend through -I', {'cuda/k.cu': '#include "cpu.h"\n'}),
        ('a prototype by hand', {'src/cli/cmd.c': '/* f */\n#include "front.h"\n'
                                 'er_status er_cpu_run(const char *s, int n);\nint g(void) { return 0; }\n'}),
    ]
    # Calls, as nm gives them: {source: (defined, undefined)}.  The good tree's calls go down only.
    good_symbols = {
        'host/er_alloc.c': ({'er_alloc'}, set()),
        'cpu/cpu.c': ({'er_cpu_run'}, {'er_alloc', 'memcpy'}),
        'opencl/cl.c': ({'er_cl_run'}, {'er_alloc'}),
        'src/mma.c': ({'er_mma', 'er_convert_array', 'er_mma_public'}, {'er_cpu_run', 'er_cl_run', 'er_alloc'}),
        'src/interp/run.c': ({'er_interp_run'}, {'er_mma'}),
        'src/python/m.c': ({'PyInit_m'}, {'er_convert_array', 'er_mma', 'er_interp_run'}),
        'src/cli/main.c': ({'main'}, {'er_mma', 'er_interp_run', 'er_convert_array'}),
    }
    bad_calls = [
        ('a call from the command to a backend', {'src/cli/main.c': ({'main'}, {'er_cl_run'})}),
        ('a call from Python to a backend', {'src/python/m.c': ({'PyInit_m'}, {'er_cpu_run'})}),
        ('a call from a backend up to the front door', {'cpu/cpu.c': ({'er_cpu_run'}, {'er_convert_array'})}),
        ('a call from one backend to another', {'opencl/cl.c': ({'er_cl_run'}, {'er_cpu_run'})}),
        ('a call from the host helpers up to a backend', {'host/er_alloc.c': ({'er_alloc'}, {'er_cl_run'})}),
        ('a public function defined by a backend', {'cpu/cpu.c': ({'er_cpu_run', 'er_mma_public'}, {'er_alloc'})}),
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
        errs = check(d, good_symbols)
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
        d = os.path.join(tmp, 'good')
        for what, extra in bad_calls:
            symbols = dict(good_symbols)
            symbols.update(extra)
            errs = check(d, symbols)
            if not errs:
                print('self-test: %s was not caught' % what)
                failures += 1
            else:
                print('self-test: %s caught: %s' % (what, errs[0]))
        # Not prototypes by hand: a forward declaration of the file's own function, a static one, a
        # variable, a function pointer, a declaration inside a comment, a string or a macro.
        quiet = {'src/fwd.c': '/* fwd */\nint h(int x);\nstatic int k(void);\nextern const char tbl[];\n'
                              'int (*hook)(int);\n/* int er_nope(void); */\nconst char *s = "int er_no(void);";\n'
                              '#define DECL int er_macro(void);\n'
                              'int h(int x) { return x; }\nstatic int k(void) { return 1; }\n'}
        d = os.path.join(tmp, 'quiet')
        build(d, dict(good, **quiet))
        errs = check(d, good_symbols)
        if errs:
            print('self-test: a tree without a prototype by hand was refused:', *errs, sep='\n  ')
            failures += 1
    print('self-test: %s' % ('FAILED' if failures else 'passed'))
    return 1 if failures else 0


def main(argv):
    if len(argv) > 1 and argv[1] == '--self-test':
        return self_test()
    args, build, nm = [], None, 'nm'
    i = 1
    while i < len(argv):
        if argv[i] in ('--build', '--nm') and i + 1 < len(argv):
            if argv[i] == '--build':
                build = argv[i + 1]
            else:
                nm = argv[i + 1]
            i += 2
            continue
        args.append(argv[i])
        i += 1
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    symbols = None
    if build is not None:
        symbols = read_symbols(root, build, nm)
        if not symbols:
            print('check-layers: no object of the library in %s (build it first)' % build)
            return 1
    errors = check(root, symbols)
    for e in errors:
        print(e)
    n = len(project_files(root))
    what = 'every include%s allowed' % (' and every call of %d objects' % len(symbols) if symbols else '')
    print('check-layers: %d files, %s' % (n, '%d violation(s)' % len(errors) if errors else what))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
