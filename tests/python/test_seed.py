"""test_seed.py: every Code / Output pair of seed 002 runs verbatim and prints exactly the seed's Output."""
import contextlib
import io

# The seed's examples, in its order; each block runs in the namespace the earlier ones left.
SEED_EXAMPLES = [
    (
        '''import exactref as er

# A 1x2 float32 matrix
A = er.asarray([[1.0, 2.0]], "float32")
# The product of A and a 2x1 float32 matrix, as a Result
r = er.matmul(A, er.asarray([[3.0], [4.0]], "float32"))
# The operation's name, and what r.rounded satisfies
print("op:", r.op)
print("guarantee:", r.guarantee)
''',
        '''op: matmul
guarantee: correctly_rounded
''',
    ),
    (
        '''# matmul's backward on the same inputs, for the output gradient [[1.0]]
g = r.backward(er.asarray([[1.0]], "float32"))
# g has several outputs; listing g.rounded gives their names
print("outputs:", list(g.rounded))
# One output, by attribute and by name
print("grad_A by attribute:", g.rounded.grad_A.tolist())
print("grad_A by name:", g.rounded["grad_A"].tolist())
''',
        '''outputs: ['grad_A', 'grad_B']
grad_A by attribute: [[3.0, 4.0]]
grad_A by name: [[3.0, 4.0]]
''',
    ),
    (
        '''# matmul's required rounding step for the sum of each element's products
b = r.boundaries["accumulate"]
# Its kind: "accumulate" is a sum of terms
print("kind:", b.kind)
# What the sum adds up: "dot" for products, "sum" for plain terms
print("applies to:", b.applies_to)
''',
        '''kind: accumulate
applies to: dot
''',
    ),
]


def test_seed_examples_verbatim():
    ns = {}
    for code, expected in SEED_EXAMPLES:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "<seed 002>", "exec"), ns)
        assert buf.getvalue() == expected


def test_done_when_line():
    # the acceptance line, as a fresh interpreter runs it
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", "import exactref as er; print(er.matmul(er.asarray([[1.0, 2.0]], 'float32'), "
                               "er.asarray([[3.0], [4.0]], 'float32')).op)"],
        capture_output=True, text=True, check=True)
    assert out.stdout == "matmul\n"


def test_seed_signatures():
    import inspect

    import exactref as er

    sig = {name: str(inspect.signature(getattr(er.Result, name)))
           for name in ("tolerance", "finite_range", "may_be", "covers", "normal", "reshape", "transpose", "backward")}
    assert sig["tolerance"] == "(self, compute=None, *, ulps=None, flush_to_zero: bool = False, standard: str = 'normal')"
    assert sig["finite_range"] == sig["tolerance"]
    assert sig["may_be"] == ("(self, kind: str, compute=None, *, ulps=None, flush_to_zero: bool = False, "
                             "standard: str = 'normal')")
    assert sig["covers"] == ("(self, output, compute=None, *, ulps=None, flush_to_zero: bool = False, "
                             "standard: str = 'normal')")
    assert sig["normal"] == "(self, compute=None, *, flush_to_zero: bool = False)"
    assert sig["reshape"] == "(self, shape) -> 'Result'"
    assert sig["transpose"] == "(self, i: int, j: int) -> 'Result'"
    assert sig["backward"] == "(self, grad, **options) -> 'Result'"
    assert str(inspect.signature(er.Boundary)) == \
        "(kind: 'str', description: 'str', applies_to: 'str | None' = None) -> None"
