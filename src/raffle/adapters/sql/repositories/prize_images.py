"""Uploaded prize images in SQL, by their id (the SHA-256 of their bytes)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import insert_ignore
from raffle.adapters.sql.tables.config import prize_image
from raffle.domain.prize_images import PrizeImage


class SqlPrizeImageRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def add(self, image: PrizeImage, now: datetime) -> None:
        row = {
            "image_id": image.id,
            "media_type": image.media_type,
            "data": image.data,
            "width": image.width,
            "height": image.height,
            "created_at": now,
        }
        # The id is the bytes' hash: a stored row of that id already holds these bytes.
        await self._connection.execute(insert_ignore(self._connection.dialect, prize_image, row))

    async def get(self, image_id: str) -> PrizeImage | None:
        row = (
            await self._connection.execute(
                select(prize_image).where(prize_image.c.image_id == image_id)
            )
        ).first()
        if row is None:
            return None
        return PrizeImage(row.image_id, row.media_type, row.data, row.width, row.height)

    async def known(self, image_ids: Collection[str]) -> set[str]:
        """Which of `image_ids` are stored."""
        if not image_ids:
            return set()
        rows = await self._connection.execute(
            select(prize_image.c.image_id).where(prize_image.c.image_id.in_(sorted(image_ids)))
        )
        return set(rows.scalars())
