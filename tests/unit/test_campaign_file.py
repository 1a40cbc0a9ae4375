from pathlib import Path

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, read_campaign
from raffle.domain.rules import DrawContext

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
