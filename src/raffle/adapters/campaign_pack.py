"""Packed campaign files: a zip of the YAML and its prizes' images, written and read."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from raffle.adapters.campaign_prize_cards import IMAGES, PackedFiles
from raffle.adapters.prize_images import MAX_BYTES
from raffle.domain.errors import RaffleError
from raffle.domain.prize_images import PrizeImage

CAMPAIGN = "campaign.yaml"
MAX_MEMBERS = 1000
MAX_YAML = 16 * 1024 * 1024  # as POST /api/admin/campaigns takes


class InvalidPack(RaffleError):
    code = "invalid_campaign_file"


def pack(text: str, images: Iterable[PrizeImage]) -> bytes:
    """The YAML as `campaign.yaml` and each image as `images/<id>.<ext>`, as it names them."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(CAMPAIGN, text)
        for image in images:  # compressed already: stored as they are
            archive.writestr(f"{IMAGES}/{image.file_name}", image.data, zipfile.ZIP_STORED)
    return out.getvalue()


def unpack(data: bytes, source: str) -> tuple[str, PackedFiles]:
    """The YAML of a packed campaign file and its other files by path. Every member is
    bounded by its stated size before it is read (a zip bomb states a small one and is cut)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise InvalidPack(f"{source}: more than {MAX_MEMBERS} files")
        raw = _read(archive, CAMPAIGN, MAX_YAML)
        if len(raw) > MAX_YAML:
            raise InvalidPack(f"{source}: {CAMPAIGN} has more than {MAX_YAML} bytes")
        text = raw.decode("utf-8")
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, ValueError):
        raise InvalidPack(f"{source}: not a zip holding {CAMPAIGN} (UTF-8)") from None

    def files(path: str) -> bytes | None:
        name = str(PurePosixPath(path))
        try:
            return _read(archive, name, MAX_BYTES)  # one more: too large, said so
        except (KeyError, zipfile.BadZipFile, ValueError):
            return None

    return text, files


def folder_files(folder: Path) -> PackedFiles:
    """Files beside a campaign file, by relative path; none outside its folder."""
    root = folder.resolve()

    def files(path: str) -> bytes | None:
        where = (root / path).resolve()
        if not where.is_relative_to(root) or not where.is_file():
            return None
        with where.open("rb") as file:
            return file.read(MAX_BYTES + 1)

    return files


def _read(archive: zipfile.ZipFile, name: str, most: int) -> bytes:
    """At most `most` + 1 bytes of the member: one more than allowed tells it is too long."""
    with archive.open(name) as member:
        return member.read(most + 1)
