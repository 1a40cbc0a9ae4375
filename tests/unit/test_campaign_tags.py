"""A campaign file's `tags:` section: read with each problem at its line, refused whole, and
written back to the same tags."""

from __future__ import annotations

from datetime import date

import pytest

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign
from raffle.adapters.campaign_writer import write_campaign
from raffle.domain.tags import Tag, TagDefinition, TagKind

TAGS = """\
tags:
  - name: beta
    kind: static
    description: 测试用户
    members: [ann, bob, ann]
  - name: seniors
    kind: dynamic
    clause: {field: birth_date, operator: "<", value: 1966-01-01}
  - name: target
    kind: dynamic
    condition: tags["beta"] or (tags["seniors"] and attrs&["vip"] == true)
"""


def test_tags_are_read_and_written_back_to_the_same_tags() -> None:
    campaign = parse_campaign(TAGS, "test")
    assert campaign.tags == (
        TagDefinition(Tag("beta", TagKind.STATIC, "", "测试用户"), ("ann", "bob")),
        TagDefinition(
            Tag("seniors", TagKind.DYNAMIC, 'birth_date != null and birth_date < d"1966-01-01"')
        ),
        TagDefinition(
            Tag(
                "target",
                TagKind.DYNAMIC,
                'tags["beta"] or (tags["seniors"] and attrs&["vip"] == true)',
            )
        ),
    )
    written = write_campaign(campaign)
    assert parse_campaign(written, "written") == campaign
    assert write_campaign(parse_campaign(written, "written")) == written
    assert date(1966, 1, 1).isoformat() in written


def test_every_bad_tag_is_reported_at_its_line_and_the_file_refused_whole() -> None:
    text = """\
awards:
  - {id: 1, kind: thanks, title: Thanks}
tags:
  - name: beta
    kind: static
    members: [ann]
  - name: broken
    kind: dynamic
    condition: "age >\\n  > 3"
  - name: Bad
    kind: static
  - name: typed
    kind: dynamic
    clause: {field: level, operator: in, value: 3}
  - name: ring_a
    kind: dynamic
    condition: tags["ring_b"]
  - name: ring_b
    kind: dynamic
    condition: tags["ring_a"]
  - name: beta
    kind: dynamic
    condition: level > 1
    members: [bob]
"""
    with pytest.raises(InvalidCampaignFile) as refused:
        parse_campaign(text, "test")
    found = [(p.line, p.where) for p in refused.value.problems]
    assert found == [
        (9, "tags.1.condition"),
        (10, "tags.2"),
        (14, "tags.3.clause"),
        (17, "tags.4.condition"),
        (20, "tags.5.condition"),
        (21, "tags.6.name"),
        (24, "tags.6.members"),
    ]
    messages = {p.where: p.message for p in refused.value.problems}
    assert "line 2, column 3" in messages["tags.1.condition"]
    assert "ring" in messages["tags.4.condition"]
