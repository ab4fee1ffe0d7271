"""The tutorial's accelerator (docs/tutorial/ten-minutes.md): fetch, compute and write back,
with a two-slot buffer between compute and write-back (a slot is held from the
start of compute to the end of write-back).

    accelperf lpn simulate examples/three_stage.py:pipeline --input '[4, 1, 6, 2]'
"""
from accelperf.lpn import Net


def pipeline(buffer=2):
    net = Net("three-stage")
    item = net.token_type("Item", "size")
    inbox = net.place("inbox", item)
    fetched = net.place("fetched", item)
    computed = net.place("computed", item, capacity=buffer)   # the bounded buffer
    done = net.place("done", item)
    net.transition("fetch", inputs={inbox: 1}, outputs={fetched: 1}, delay=2)
    net.transition("compute", inputs={fetched: 1}, outputs={computed: 1},
                   delay=lambda fetched: 1 + fetched.size)
    net.transition("writeback", inputs={computed: 1}, outputs={done: 1}, delay=3)
    net.start, net.done = inbox, done
    net.tokens_from_input = lambda sizes: [{"size": s} for s in sizes]      # Ψ
    net.default_input = [4, 1, 6, 2]
    return net.build()
