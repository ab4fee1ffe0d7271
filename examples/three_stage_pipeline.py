"""A three-stage pipeline of one's own: fetch (2 cycles), compute (5 cycles), writeback
(1 cycle), with a 2-entry buffer between compute and writeback. Its input is the number
of items; every item is alike (its tokens carry no properties).

    accelperf lpn verify examples/three_stage_pipeline.py:build \\
        --space examples/spaces/three-stage-50-to-100-items.toml --prove 'latency <= 600'
"""

from accelperf.lpn import Net


def build():
    net = Net("three-stage", "fetch 2, compute 5, writeback 1; 2-entry buffer before writeback",
              input_format="the number of items, e.g. 10")
    item = net.token_type("Item")
    items = net.place("items", item)
    fetched = net.place("fetched", item)
    computed = net.place("computed", item, capacity=2)
    written = net.place("written", item)
    net.transition("fetch", inputs={items: 1}, outputs={fetched: 1}, delay=2)
    net.transition("compute", inputs={fetched: 1}, outputs={computed: 1}, delay=5)
    net.transition("writeback", inputs={computed: 1}, outputs={written: 1}, delay=1)
    net.start, net.done = items, written
    net.tokens_from_input = lambda n: [{}] * n
    net.default_input = 10
    return net.build()
