"""The bounded runner itself: it must report hangs, memory blow-ups and tracebacks, or the hostile
suite could pass while the cases it runs fail."""
from tests.hostile.bounded import run_bounded


def test_a_clean_case_is_ok():
    out = run_bounded("print(ARGS['x'] + 1)", {"x": 41})
    assert out.ok and out.stdout.strip() == "42"


def test_a_hang_is_reported_as_a_timeout():
    out = run_bounded("while True: pass", seconds=1.5)
    assert out.timed_out and not out.ok and "out of CPU time" in out.explain()


def test_a_child_that_waits_without_computing_is_stopped_by_the_wall_clock_back_stop():
    out = run_bounded("import time\ntime.sleep(600)", seconds=1, wall=2)
    assert out.timed_out and not out.ok and "wall-clock" in out.explain()


def test_the_limit_is_on_cpu_time_not_on_the_wall_clock():
    """A loaded machine slows a child down but does not use its CPU time: a child that sleeps past its
    CPU allowance (as a starved one waits for a core) still finishes and is ok."""
    out = run_bounded("import time\ntime.sleep(2.5)\nprint('done')", seconds=1)
    assert out.ok and out.stdout.strip() == "done", out.explain()


def test_a_memory_blow_up_is_reported():
    out = run_bounded("x = bytearray(3 * 1024 ** 3)", memory=512 * 1024 ** 2)
    assert out.out_of_memory and not out.ok


def test_a_traceback_is_reported():
    out = run_bounded("raise ValueError('boom')")
    assert out.traceback and not out.ok
