"""readbench.base.idmemo.IdentityMemo: once per object identity (and args), least recently used dropped."""

from readbench.base.idmemo import IdentityMemo


def test_a_value_is_computed_once_per_object_and_args_not_per_equal_object():
    seen = []

    def compute(obj, *args):
        seen.append((id(obj), args))
        return f"{sum(obj)}:{args}"

    memo = IdentityMemo(compute)
    a, b = [1, 2], [1, 2]  # equal, not the same object
    assert [memo(a), memo(a), memo(b), memo(a, "x"), memo(a, "x"), memo(a, "y")] == \
        ["3:()", "3:()", "3:()", "3:('x',)", "3:('x',)", "3:('y',)"]
    assert seen == [(id(a), ()), (id(b), ()), (id(a), ("x",)), (id(a), ("y",))]
    assert len(memo) == 4 and a in memo and b in memo and [1, 2] not in memo


def test_a_bounded_memo_drops_the_least_recently_used_and_computes_it_anew():
    calls = []
    memo = IdentityMemo(lambda obj: calls.append(obj) or len(calls), size=2)
    x, y, z = object(), object(), object()
    assert [memo(x), memo(y), memo(x), memo(z)] == [1, 2, 1, 3]  # x used again: y is the oldest
    assert x in memo and z in memo and y not in memo and len(memo) == 2
    assert memo(y) == 4 and x not in memo  # y computed anew; now x was the least recently used
