"""KTAP for the host's Python test modules: each test a function registered
with @test, run in order; one that raises fails with its message as the
diagnostic. main() prints the document and returns the exit status."""
import traceback

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_eq(want, got):
    if got != want:
        raise AssertionError(f"want {want!r}, got {got!r}")


def main():
    print("KTAP version 1")
    print(f"1..{len(TESTS)}")
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        name = fn.__name__.replace("_", "-")
        try:
            fn()
            print(f"ok {i} {name}")
        except Exception as e:  # every failure is this case's, with its reason
            failed += 1
            for line in (str(e) or traceback.format_exc()).splitlines():
                print(f"# {line}")
            print(f"not ok {i} {name}")
    return 1 if failed else 0
