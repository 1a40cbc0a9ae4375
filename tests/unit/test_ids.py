from datetime import UTC, datetime, timedelta

from raffle.service import ids

NOW = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)


def test_order_ids_of_one_millisecond_sort_in_the_order_they_were_made() -> None:
    made = [ids.order_id(NOW) for _ in range(1000)]
    assert made == sorted(made)
    assert len(set(made)) == 1000
    assert all(len(i) == 24 and int(i, 16) >= 0 for i in made)
    assert {i[:12] for i in made} == {f"{int(NOW.timestamp() * 1000):012x}"}


def test_a_later_millisecond_sorts_after_and_an_earlier_one_before() -> None:
    now = ids.order_id(NOW)
    assert ids.order_id(NOW + timedelta(milliseconds=1)) > now
    assert ids.order_id(NOW - timedelta(milliseconds=1)) < now
