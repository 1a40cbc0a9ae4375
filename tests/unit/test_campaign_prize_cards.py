"""Campaign files and prize cards: every field read and written back, images by path read
beside the file or from its zip, a missing or bad image reported with its line, and a
packed export read back to the same campaign."""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from raffle.adapters.campaign_file import InvalidCampaignFile, parse_campaign, read_campaign
from raffle.adapters.campaign_pack import CAMPAIGN, InvalidPack, pack, unpack
from raffle.adapters.campaign_writer import write_campaign
from raffle.adapters.prize_images import prepare
from raffle.domain.prize_cards import PrizeCard

HEAD = """awards:
  - {id: 101, kind: random_points, title: 随机积分, config: "1,100"}
  - {id: 109, kind: physical, title: iPhone}
  - {id: 106, kind: physical, title: 手机}
strategies:
  - id: 1
    fallback: 101
    prizes:
"""


def _png(colour: tuple[int, int, int] = (200, 0, 0)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), colour).save(out, "PNG")
    return out.getvalue()


def _file(*prizes: str) -> str:
    return HEAD + "".join(f"      - {p}\n" for p in prizes)


def test_every_field_is_read_and_written_back() -> None:
    text = _file(
        "{award: 109, rate: 0.0001, stock: 10, level: 1, level_name: 一等奖, "
        "image: 'https://cdn.example.com/a.png', description: 新款, win_tips: 三日内填写地址, "
        "priority: -2, cell: 8, value_cents: 899900}",
        "{award: 106, rate: 0.05, stock: 5, enabled: false}",
    )
    campaign = parse_campaign(text, "t.yaml")
    iphone, phone = campaign.strategies[0].prizes
    assert iphone.card == PrizeCard(
        1, "一等奖", "https://cdn.example.com/a.png", "新款", "三日内填写地址", -2, 8, 899900
    )
    assert not phone.enabled
    assert phone.card == PrizeCard()
    assert parse_campaign(write_campaign(campaign), "again") == campaign


def test_an_image_beside_the_file_is_read_checked_and_kept(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "gold.png").write_bytes(_png())
    file = tmp_path / "campaign.yaml"
    file.write_text(_file("{award: 109, rate: 0.01, image: images/gold.png}"), encoding="utf-8")
    campaign = read_campaign(file)
    (image,) = campaign.images
    assert campaign.strategies[0].prizes[0].card.image == image.id == prepare(_png()).id
    written = write_campaign(campaign)
    assert f"image: images/{image.id}.png" in written


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ("images/missing.png", "no image file 'images/missing.png'"),
        ("../secret.png", "no image file"),
        ("images/words.png", "not a PNG, JPEG, WebP or GIF image"),
        ("http://cdn.example.com/a.png", "https://"),
    ],
)
def test_a_bad_image_is_a_problem_at_its_line(tmp_path: Path, image: str, message: str) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "words.png").write_text("not a picture")
    (tmp_path.parent / "secret.png").write_bytes(_png())
    file = tmp_path / "campaign.yaml"
    file.write_text(_file(f"{{award: 109, rate: 0.01, image: '{image}'}}"), encoding="utf-8")
    with pytest.raises(InvalidCampaignFile) as refused:
        read_campaign(file)
    (problem,) = refused.value.problems
    assert problem.line == 9
    assert problem.where == "strategies.0.prizes.0.image"
    assert message in problem.message


def test_an_uploaded_images_path_reads_as_its_id_when_not_packed() -> None:
    stored = prepare(_png())
    campaign = parse_campaign(
        _file(f"{{award: 109, rate: 0.01, image: images/{stored.file_name}}}"), "t.yaml"
    )
    assert campaign.strategies[0].prizes[0].card.image == stored.id
    assert campaign.images == ()
    assert campaign.image_references() == {stored.id: [("strategies", 0, "prizes", 0, "image")]}


def test_a_packed_export_reads_back_to_the_same_campaign(tmp_path: Path) -> None:
    image = prepare(_png((0, 90, 200)))
    plain = parse_campaign(_file("{award: 109, rate: 0.01, level: 2}"), "t.yaml")
    prize = plain.strategies[0].prizes[0]
    shown = replace(prize, card=replace(prize.card, image=image.id))
    campaign = replace(
        plain, strategies=(replace(plain.strategies[0], prizes=(shown,)),), images=(image,)
    )
    packed = tmp_path / "export.zip"
    packed.write_bytes(pack(write_campaign(campaign), campaign.images))
    assert read_campaign(packed) == campaign


def test_a_zip_without_its_campaign_or_with_a_huge_member_is_refused() -> None:
    with pytest.raises(InvalidPack):
        unpack(b"PK\x03\x04 truncated", "x.zip")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("other.yaml", "{}")
    with pytest.raises(InvalidPack):
        unpack(out.getvalue(), "x.zip")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(CAMPAIGN, _file("{award: 109, rate: 0.01, image: images/bomb.png}"))
        archive.writestr("images/bomb.png", bytes(8 * 1024 * 1024))  # deflates to ~8 KiB
    text, files = unpack(out.getvalue(), "x.zip")
    assert len(files("images/bomb.png") or b"") == 2 * 1024 * 1024 + 1  # read no further
    with pytest.raises(InvalidCampaignFile, match="at most 2048 KiB"):
        parse_campaign(text, "x.zip", files)
