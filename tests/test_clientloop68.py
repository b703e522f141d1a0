"""clientloop68's pure part (tests.benches.clientloop68.groups): a fake server's log split into
the groups of streams that ended at one step, each with its replacements, worked by hand."""

import pytest

from tests.benches import clientloop68 as cl


def test_groups_by_hand() -> None:
    # Two streams end at the step at 1.000 s (their final writes at 1.0002 / 1.0005 s); their
    # replacements arrive at 1.010 and 1.013 s, and end at the step at 2.000 s, whose
    # replacements are not in the log (the run's end): one group. first = 1.010 - 1.000 = 10 ms,
    # spread = 1.013 - 1.010 = 3 ms, per request 3 / (2 - 1) = 3 ms, the server's own end
    # spread 1.0005 - 1.0002 = 0.3 ms.
    log = [{"arrive_s": 0.0, "tick_s": 1.0, "end_s": 1.0002},
           {"arrive_s": 0.001, "tick_s": 1.0, "end_s": 1.0005},
           {"arrive_s": 1.010, "tick_s": 2.0, "end_s": 2.0001},
           {"arrive_s": 1.013, "tick_s": 2.0, "end_s": 2.0002}]
    (g,) = cl.groups(log)
    assert g.k == 2
    assert g.first_ms == pytest.approx(10.0)
    assert g.spread_ms == pytest.approx(3.0)
    assert g.per_req_ms == pytest.approx(3.0)
    assert g.end_spread_ms == pytest.approx(0.3)


def test_cpu_per_request() -> None:
    # 0.101 s of client CPU over 100 logged requests and the ready check's one: 1.0 ms each.
    res = {"cpu_s": 0.101, "log": [{}] * 100}
    assert cl.cpu_ms_per_request(res) == pytest.approx(1.0)
