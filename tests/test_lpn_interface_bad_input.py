"""Issue 23's bad input for `lpn interface`: one line naming the problem, exit status 2,
no traceback; the checks run before any extraction work."""

import textwrap

import pytest

NETS = textwrap.dedent('''
    from accelperf.lpn import Net


    def no_start():
        net = Net("no-start")
        item = net.token_type("Item")
        a, done = net.place("a", item, initial=[()] * 3), net.place("done", item)
        net.transition("t", inputs={a: 1}, outputs={done: 1}, delay=2)
        net.done = done
        return net.build()


    def routed():
        net = Net("routed")
        job = net.token_type("Job", "size")
        src, small, big, done = (net.place(n, job) for n in ("jobs", "small", "big", "done"))
        net.transition("route", inputs={src: 1},
                       route=[(small, lambda j: j.size < 100), (big, lambda j: j.size >= 100)])
        net.transition("fast", inputs={small: 1}, outputs={done: 1}, delay=1)
        net.transition("slow", inputs={big: 1}, outputs={done: 1}, delay=9)
        net.start, net.done = src, done
        net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]
        net.default_input = [5, 500]
        return net.build()


    def pipeline():
        net = Net("pipeline")
        item = net.token_type("Item")
        src, done = net.place("items", item), net.place("done", item)
        net.transition("work", inputs={src: 1}, outputs={done: 1}, delay=3)
        net.start, net.done = src, done
        net.tokens_from_input = lambda n: [{}] * n
        net.default_input = 4
        return net.build()
''')


@pytest.fixture
def nets(tmp_path):
    path = tmp_path / "nets.py"
    path.write_text(NETS)
    return path


def _one_line_exit_2(cli, args, *words):
    code, _, err = cli("lpn", "interface", *args)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for w in words:
        assert w in err, err


def test_a_model_with_no_start_place(cli, nets):
    _one_line_exit_2(cli, [f"{nets}:no_start"], "no-start", "no start place")


def test_routing_on_a_value_the_space_does_not_bound_per_token(cli, nets):
    """A stream's tokens are bounded only through their mean: a route on each token's size
    cannot be decided, and the message names the transition and the remedy."""
    _one_line_exit_2(cli, [f"{nets}:routed"], "route condition", "'route'", "fixed count")


def test_a_space_with_no_input(cli, nets, tmp_path):
    space = tmp_path / "space.toml"
    space.write_text('constraints = ["count(items) > 20"]\n'
                     '[places.items]\ncount = [1, 10]\nproperties = {}\n')
    _one_line_exit_2(cli, [f"{nets}:pipeline", "--space", str(space)],
                     "no input meets", "count(items) > 20")


def test_a_space_whose_every_class_deadlocks(cli, tmp_path):
    """Fig. 2 with only computes: each waits for an operand no load makes, so every class
    is stuck and none has a latency."""
    space = tmp_path / "space.toml"
    space.write_text('model = "fig2-pipeline"\n[places.start]\ncount = 4\nproperties = '
                     '{ kind = [1, 1], cycles = [1, 50], operands = [1, 1], group = [4, 4] }\n')
    _one_line_exit_2(cli, ["fig2-pipeline", "--space", str(space)], "deadlocks")
