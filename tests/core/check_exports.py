#!/usr/bin/env python3
"""check_exports.py: the shared library exports exactly the functions the public headers declare.

Usage: check_exports.py NM LIBRARY INCLUDE_DIR
  NM           the nm program (binutils)
  LIBRARY      libexactref.so
  INCLUDE_DIR  the folder holding exactref/*.h

Every function prototype named er_* in include/exactref/*.h (not core/: the core is inline) must be in
the library's dynamic symbol table, marked ER_API in its header, and nothing else named er_* may be
there.  Prints each difference; exit status 0 when there is none, 1 otherwise.
"""
import glob
import os
import re
import subprocess
import sys

DECL = re.compile(r'^(ER_API\s+)?(?:const\s+)?[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*[\s*]+(er_\w+)\s*\(', re.M)


def declared(include_dir):
    names, unmarked = set(), []
    for path in sorted(glob.glob(os.path.join(include_dir, 'exactref', '*.h'))):
        with open(path, encoding='utf-8') as fh:
            text = fh.read()
        text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
        for m in DECL.finditer(text):
            line = m.group(0)
            if line.startswith(('typedef', 'return', 'static', '#')):
                continue
            names.add(m.group(2))
            if not m.group(1):
                unmarked.append('%s: %s is declared without ER_API' % (os.path.basename(path), m.group(2)))
    return names, unmarked


def exported(nm, library):
    out = subprocess.run([nm, '-D', '--defined-only', library], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRVW':
            names.add(parts[2].split('@')[0])
    return names


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    nm, library, include_dir = argv[1:]
    decl, problems = declared(include_dir)
    exp = exported(nm, library)
    if not decl:
        problems.append('no declarations found under %s' % include_dir)
    for name in sorted(decl - exp):
        problems.append('%s is declared in a public header but not exported' % name)
    for name in sorted(n for n in exp - decl if n.startswith(('er_', '_er_'))):
        problems.append('%s is exported but declared in no public header' % name)
    for p in problems:
        print(p)
    print('check_exports: %d declared, %d exported, %s' % (len(decl), len(exp), '%d problem(s)' % len(problems)
                                                           if problems else 'the same set'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
