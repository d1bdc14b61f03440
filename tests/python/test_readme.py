"""test_readme.py: the README's Python snippet runs as written (torch imported before it is used) and
the install instructions name switches that exist (the CUDA module can be skipped, progress shown)."""
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*path):
    with open(os.path.join(REPO, *path), encoding="utf-8") as f:
        return f.read()


def _python_snippet():
    text = _read("README.md")
    section = text[text.index("## From Python"):]
    section = section[:section.index("\n## ", 1)]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_snippet_imports_torch_before_using_it():
    code = _python_snippet()
    lines = code.splitlines()
    first_use = next(i for i, line in enumerate(lines) if "torch." in line.split("#")[0])
    imports = [i for i, line in enumerate(lines) if line.strip() == "import torch"]
    assert imports and imports[0] < first_use, code


def test_readme_torch_tests_run_as_written():
    pytest.importorskip("torch")
    code = _python_snippet()
    torch_part = code[code.index("import torch"):]
    ns = {}
    exec(compile("import exactref as er\n" + torch_part, "README.md", "exec"), ns)
    tests = [name for name in ns if name.startswith("test_")]
    assert len(tests) >= 2
    for name in tests:
        ns[name]()


def test_install_instructions_name_real_switches():
    cmake = _read("CMakeLists.txt")
    assert re.search(r'set\(ER_ENABLE_CUDA "AUTO" CACHE STRING', cmake) and "OFF" in cmake
    for doc in (_read("README.md"), _read("docs", "python.md")):
        assert "pip install -v" in doc  # pip shows a build backend's progress only with -v
        assert "-C cmake.define.ER_ENABLE_CUDA=OFF" in doc
    assert 'SKBUILD_CMAKE_DEFINE="ER_ENABLE_CUDA=OFF"' in _read("docs", "python.md")
