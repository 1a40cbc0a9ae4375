from pathlib import Path

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, read_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.rules import DrawContext
from raffle.domain.winners_feed import FeedDisplay

EXAMPLES = Path(__file__).parents[2] / "examples"

GOOD = """\
awards:
  - {id: 1, kind: thanks, title: thanks}
  - {id: 2, kind: coupon, title: coupon, config: c5}
strategies:
  - id: 10
    fallback: 1
    rules:
      weight: "5:2"
    prizes:
      - {award: 2, rate: 0.0099, stock: 10, rules: {lock: 2}}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_is_valid(example: Path) -> None:
    campaign = read_campaign(example)
    assert campaign.strategies
    assert all(sum(e.odds(DrawContext("u", 1)).values()) == 1 for e in campaign.engines().values())


def test_rates_stay_exact_decimals(tmp_path: Path) -> None:
    campaign = read_campaign(write(tmp_path, GOOD))
    prize = campaign.strategies[0].prizes[0]
    assert str(prize.rate) == "0.0099"
    assert prize.weight == 9900
    assert prize.rules == (("lock", "2"),)
    assert campaign.strategies[0].rules == (("weight", "5:2"),)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("rate: 0.0099", "rate: 1.5", 10, "between 0 and 1"),
        ("rate: 0.0099", "rate: 0.00000001", 10, "decimal places"),
        ("kind: coupon", "kind: lottery", 3, "Input should be"),
        ("{award: 2,", "{award: 3,", 10, "award 3 is not a known award"),
        ('weight: "5:2"', 'weight: "5:9"', 8, "award 9 is not a prize"),
        ("{lock: 2}", "{lock: 0}", 10, "lock must be"),
        ("fallback: 1", "fallback: {award: 1, points: '9,1'}", 6, "low above high"),
        ("    fallback: 1\n", "", 5, "Field required"),
        ("stock: 10", "stock: lots", 10, "valid integer"),
        ("title: thanks", "title: thanks, colour: red", 2, "Extra inputs"),
        ("rules:", "rules: [", 9, "expected"),
    ],
)
def test_invalid_files_are_refused_with_the_line_of_the_problem(
    tmp_path: Path, old: str, new: str, line: int, message: str
) -> None:
    assert old in GOOD
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, GOOD.replace(old, new)))
    problems = error.value.problems
    assert any(p.line == line and message in p.message for p in problems), problems


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = GOOD.replace("rate: 0.0099", "rate: 2").replace(
        "kind: coupon", "kind: coupon, title2: x"
    )
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    assert len(error.value.problems) >= 1
    text = GOOD.replace("id: 10", "id: 10\n    exhaustion: sideways").replace(
        "kind: coupon", "kind: nope"
    )
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    assert {p.line for p in error.value.problems} == {3, 6}


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidCampaignFile, match="id 1 is used twice"):
        read_campaign(write(tmp_path, GOOD.replace("id: 2, kind", "id: 1, kind")))


POOLS = """\
code_pools:
  c5: [C5-AAAA, C5-BBBB,
       C5-CCCC]
"""


def test_code_pools_are_read_with_their_codes(tmp_path: Path) -> None:
    campaign = read_campaign(write(tmp_path, GOOD + POOLS))
    (pool,) = campaign.code_pools
    assert (pool.name, pool.codes) == ("c5", ("C5-AAAA", "C5-BBBB", "C5-CCCC"))
    assert campaign.coupon_pools() == {"c5"}


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("C5-BBBB", "007", 12, "valid string"),  # YAML reads 007 as the number 7
        ("C5-CCCC", "C5-AAAA", 13, "listed twice"),
        ("C5-CCCC", "'C5 CCCC'", 13, "without spaces"),
        ("config: c5", "config: ''", 3, "names its code pool"),
        ("kind: coupon, title: coupon, config: c5", "kind: content, title: c", 3, "its content"),
    ],
)
def test_bad_code_pools_and_coupon_configs_are_refused_by_line(
    tmp_path: Path, old: str, new: str, line: int, message: str
) -> None:
    text = (GOOD + POOLS).replace(old, new)
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    problems = error.value.problems
    assert any(p.line == line and message in p.message for p in problems), problems


FIVE_MISTAKES = """\
awards:
  - {id: 1, kind: thanks, title: thanks}
  - {id: 2, kind: lottery, title: coupon}
  - {id: 3, kind: physical, title: lamp}
strategies:
  - id: 10
    fallback: 1
    prizes:
      - {award: 3, rate: 1.5, stock: 10}
      - {award: 1, rate: 0.00000001}
packs:
  - {id: 5, total: 10, day: 3, month: 10}
activities:
  - id: 100
    name: demo
    strategy: 11
    begin_at: 2026-01-01T00:00:00+08:00
    end_at: 2027-01-01T00:00:00+08:00
skus:
  - {sku: 9011, activity: 100, pack: 5, stock: 100, colour: red}
"""
# (line, a part of the message): a kind, two rates, a reference and a field, all at once
FIVE_PROBLEMS = [
    (3, "Input should be"),
    (9, "between 0 and 1"),
    (10, "decimal places"),
    (16, "strategy 11 is not in the campaign"),
    (20, "Extra inputs are not permitted"),
]


def test_five_mistakes_are_reported_at_once_each_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, FIVE_MISTAKES))
    problems = error.value.problems
    assert [p.line for p in problems] == [line for line, _ in FIVE_PROBLEMS], problems
    for problem, (_, message) in zip(problems, FIVE_PROBLEMS, strict=True):
        assert message in problem.message, problem
    assert [p.where for p in problems][1:] == [
        "strategies.0.prizes.0.rate",
        "strategies.0.prizes.1.rate",
        "activities.0.strategy",
        "skus.0.colour",
    ]


def test_each_item_is_checked_whatever_another_one_holds(tmp_path: Path) -> None:
    text = GOOD.replace("{id: 1, kind: thanks, title: thanks}", "{id: 1, kind: thanks}")
    text += "packs:\n  - {id: 5, total: -1, day: 3, month: 10}\n  - {id: 6, total: 1, day: 1}\n"
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    found = {(p.line, p.where) for p in error.value.problems}
    assert {(2, "awards.0.title"), (12, "packs.0.total"), (13, "packs.1.month")} <= found


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("awards:\n  - {id: 1, kind: thanks\nstrategies: []\n", 3),
        ("awards: []\nstrategies:\n  - id: 1\n   fallback: 1\n", 4),
        ("awards: [\n", 2),
        ("awards: []\n\tstrategies: []\n", 2),
    ],
)
def test_a_yaml_syntax_error_has_its_line(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    (problem,) = error.value.problems
    assert problem.line == line, problem
    assert str(problem).startswith(f"line {line}:")


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("id: 10", f"id: {2**63}", "strategies.0.id"),
        ("stock: 10", f"stock: {2**31}", "strategies.0.prizes.0.stock"),
        ("title: thanks", f"title: {'x' * 129}", "awards.0.title"),
        ("{id: 1,", "{id: 0,", "awards.0.id"),
    ],
)
def test_numbers_and_text_beyond_what_is_stored_are_refused(
    tmp_path: Path, old: str, new: str, where: str
) -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, GOOD.replace(old, new)))
    assert where in {p.where for p in error.value.problems}, error.value.problems


CAPPED = """\
awards:
  - {id: 1, kind: thanks, title: thanks}
strategies:
  - {id: 10, fallback: 1, prizes: []}
activities:
  - id: 5
    name: capped
    strategy: 10
    begin_at: 2026-01-01T00:00:00+08:00
    end_at: 2027-01-01T00:00:00+08:00
    award_num_limit: 50
    join_people_total_limit: 1000
    perfect_activity: true
"""


def test_an_activitys_caps_are_read(tmp_path: Path) -> None:
    (activity,) = read_campaign(write(tmp_path, CAPPED)).activities
    assert (activity.caps.winners, activity.caps.participants, activity.caps.perfect) == (
        50,
        1000,
        True,
    )


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("award_num_limit: 50", "award_num_limit: 0", 11, "award_num_limit must be at least 1"),
        ("join_people_total_limit: 1000", "join_people_total_limit: -1", 12, "greater than"),
        ("perfect_activity: true", "perfect_activity: often", 13, "valid boolean"),
        ("award_num_limit: 50", "award_num_limit: many", 11, "valid integer"),
    ],
)
def test_bad_caps_refuse_the_file_with_their_line(
    tmp_path: Path, old: str, new: str, line: int, message: str
) -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, CAPPED.replace(old, new)))
    problems = error.value.problems
    assert any(p.line == line and message in p.message for p in problems), problems


@pytest.mark.parametrize("display", list(FeedDisplay))
def test_an_activitys_winners_feed_is_read_and_written_back(
    tmp_path: Path, display: FeedDisplay
) -> None:
    text = CAPPED + f"    show_winning_list: {display.value}\n"
    (activity,) = read_campaign(write(tmp_path, text)).activities
    assert activity.winners_feed is display
    written = write_campaign(read_campaign(write(tmp_path, text)))
    assert ("show_winning_list" in written) is (display is not FeedDisplay.HIDDEN)
    (again,) = read_campaign(write(tmp_path, written)).activities
    assert again.winners_feed is display


def test_an_activity_without_a_feed_setting_hides_it_and_a_bad_one_is_refused(
    tmp_path: Path,
) -> None:
    (activity,) = read_campaign(write(tmp_path, CAPPED)).activities
    assert activity.winners_feed is FeedDisplay.HIDDEN
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, CAPPED + "    show_winning_list: 2\n"))
    assert any(p.line == 14 for p in error.value.problems), error.value.problems


@pytest.mark.parametrize("queued", [True, False])
def test_an_activitys_queued_mode_is_read_and_written_back(tmp_path: Path, queued: bool) -> None:
    text = CAPPED + f"    queued: {str(queued).lower()}\n"
    (activity,) = read_campaign(write(tmp_path, text)).activities
    assert activity.queued is queued
    written = write_campaign(read_campaign(write(tmp_path, text)))
    assert ("queued" in written) is queued  # off is the default, not written
    (again,) = read_campaign(write(tmp_path, written)).activities
    assert again.queued is queued
    (plain,) = read_campaign(write(tmp_path, CAPPED)).activities
    assert plain.queued is False


SCHEDULED = """\
activities:
  - id: 5
    name: lamps at noon
    strategy: 10
    begin_at: 2026-12-01T00:00:00+08:00
    end_at: 2026-12-02T00:00:00+08:00
    kind: scheduled
    draw_at: 2026-12-01T12:00:00+08:00
    winners_per_prize: 100
    one_person_lottery_number: 2
    audience: beta
"""


def test_a_scheduled_activity_reads_and_writes_back(tmp_path: Path) -> None:
    campaign = read_campaign(write(tmp_path, GOOD + SCHEDULED))
    (activity,) = campaign.activities
    schedule = activity.schedule
    assert schedule is not None
    assert (activity.kind.value, schedule.winners, schedule.per_person) == ("scheduled", 100, 2)
    assert schedule.cutoff.isoformat() == "2026-12-01T11:30:00+08:00"  # 30 minutes before
    assert schedule.audience == "beta"
    again = read_campaign(write(tmp_path, write_campaign(campaign)))
    assert again.activities == campaign.activities


def test_an_activity_both_queued_and_scheduled_is_refused_at_its_line(tmp_path: Path) -> None:
    text = GOOD + SCHEDULED.replace("    kind:", "    queued: true\n    kind:")
    line = text.splitlines().index("    queued: true") + 1
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, text))
    (problem,) = error.value.problems
    where = (problem.line, problem.where, problem.reason)
    assert where == (line, "activities.0.queued", "queued_and_scheduled")
    assert "queued or scheduled, not both" in problem.message
    assert f"line {line}: activities.0.queued:" in str(error.value)
    assert str(error.value).endswith("(queued_and_scheduled)")
    plain = read_campaign(write(tmp_path, text.replace("queued: true", "queued: false")))
    assert [(a.queued, a.kind.value) for a in plain.activities] == [(False, "scheduled")]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    kind: scheduled\n", "", "an instant activity has no schedule"),
        ("    winners_per_prize: 100\n", "", "has draw_at and winners_per_prize"),
        ("draw_at: 2026-12-01", "draw_at: 2026-12-03", "the draw time is within"),
        ("    audience: beta\n", "    cutoff: 2026-12-01T12:00:01+08:00\n", "before the draw"),
    ],
)
def test_a_schedule_that_cannot_run_is_refused(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    with pytest.raises(InvalidCampaignFile) as error:
        read_campaign(write(tmp_path, GOOD + SCHEDULED.replace(old, new)))
    assert any(message in p.message for p in error.value.problems), error.value.problems
