"""Profiles on every database: stored and read back whole, one phone a user, searched and paged;
imports apply good rows, report bad ones by line, and change nothing the second time; every
write moves the profiles' version on, which processes without Redis poll to forget copies."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import func, inspect, select
from sqlalchemy.ext.asyncio import AsyncEngine

from raffle.adapters.phones import PhoneBook
from raffle.adapters.profile_file import read_profiles
from raffle.adapters.profile_news import PolledProfileNews
from raffle.adapters.sql.migrate import downgrade, upgrade
from raffle.adapters.sql.tables.profiles import profile as profile_table
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.profile_fields import PhoneTaken
from raffle.domain.profiles import Gender, Profile
from raffle.service.ports import UnitOfWork
from raffle.service.ports.audiences import ProfileQuery
from raffle.service.profile_cache import CachedProfiles
from raffle.service.profile_import import import_profiles
from raffle.service.profiles import ProfileCare, edit_my_profile, put_profile
from tests.unit.fakes import FakeClock

AT = datetime(2026, 11, 24, 12, 0, 0, 123456, tzinfo=UTC)
ALICE = Profile(
    user_id="alice",
    phone="+8613800138000",
    level=3,
    gender=Gender.FEMALE,
    birth_date=date(1990, 5, 17),
    region="浙江省",
    channel="app",
    sn="SN-2208-0001",
    attributes={
        "vip": True,
        "score": 2**53 + 1,  # beyond a double: kept exact
        "ratio": 0.25,
        "city": "杭州 🏮",
        "joined": date(2024, 5, 1),
    },
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    await upgrade(database_url)
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


def care(engine: AsyncEngine, *, interval: float = 0.5) -> ProfileCare:
    async def read(user_id: str) -> Profile | None:
        async with SqlUnitOfWork(engine) as uow:
            return await uow.profiles.get(user_id)

    async def version() -> int:
        async with SqlUnitOfWork(engine) as uow:
            return await uow.profiles.version()

    cache = CachedProfiles(read, PolledProfileNews(version, interval), ttl=3600)
    return ProfileCare(lambda: SqlUnitOfWork(engine), PhoneBook("CN"), cache, FakeClock(AT))


async def _put(engine: AsyncEngine, *profiles: Profile, at: datetime = AT) -> None:
    uow: UnitOfWork = SqlUnitOfWork(engine)
    async with uow:
        for profile in profiles:
            await uow.profiles.put(profile, at)
        await uow.commit()


async def test_a_profile_comes_back_equal_with_its_typed_attributes(engine: AsyncEngine) -> None:
    await _put(engine, ALICE, Profile("bob"))
    uow: UnitOfWork = SqlUnitOfWork(engine)
    async with uow:
        assert await uow.profiles.get("alice") == ALICE
        assert await uow.profiles.get("bob") == Profile("bob")
        assert await uow.profiles.get("carol") is None
        stored = await uow.profiles.stored("alice")
        assert stored is not None
        assert stored.updated_at == AT
        assert await uow.profiles.many(["alice", "carol", "bob", "alice"]) == {
            "alice": ALICE,
            "bob": Profile("bob"),
        }
        assert await uow.profiles.phone_owners(["+8613800138000", "+8613900139000"]) == {
            "+8613800138000": "alice"
        }
    later = AT + timedelta(hours=1)
    await _put(engine, Profile("alice", level=4), at=later)  # replaces the whole row
    async with SqlUnitOfWork(engine) as uow:
        stored = await uow.profiles.stored("alice")
    assert stored is not None
    assert (stored.profile, stored.updated_at) == (
        Profile("alice", level=4),
        later,
    )


async def test_a_phone_is_one_users_and_a_clash_leaves_the_transaction_usable(
    engine: AsyncEngine,
) -> None:
    await _put(engine, ALICE)
    async with SqlUnitOfWork(engine) as uow:
        with pytest.raises(PhoneTaken):
            await uow.profiles.put(Profile("bob", phone=ALICE.phone), AT)
        await uow.profiles.put(Profile("carol", level=2), AT)  # the transaction goes on
        await uow.commit()
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.profiles.get("bob") is None
        assert await uow.profiles.get("carol") == Profile("carol", level=2)
        # Many profiles without a phone: NULLs do not clash.
        await uow.profiles.put(Profile("dave"), AT)
        await uow.commit()


async def test_concurrent_claims_of_one_number_leave_it_with_one_user(engine: AsyncEngine) -> None:
    care_ = care(engine)
    users = [f"user{n:03d}" for n in range(200)]  # hundreds in flight
    results = await asyncio.gather(
        *(put_profile(u, {"phone": "13800138000"}, care_) for u in users),
        return_exceptions=True,
    )
    winners = [u for u, r in zip(users, results, strict=True) if isinstance(r, Profile)]
    assert len(winners) == 1
    assert all(isinstance(r, PhoneTaken) for r in results if not isinstance(r, Profile))
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.profiles.phone_owners(["+8613800138000"]) == {"+8613800138000": winners[0]}


async def test_search_by_prefix_phone_level_and_region_in_pages(engine: AsyncEngine) -> None:
    profiles = [
        Profile(f"user{n:02d}", level=n % 3, region="浙江" if n % 2 else "上海") for n in range(25)
    ]
    profiles += [Profile("us_x", level=1), Profile("usAx", level=1), ALICE]
    await _put(engine, *profiles)

    async def ids(query: ProfileQuery, after: str | None = None, limit: int = 100) -> list[str]:
        async with SqlUnitOfWork(engine) as uow:
            return [s.profile.user_id for s in await uow.profiles.search(query, after, limit)]

    assert await ids(ProfileQuery(user_prefix="us_")) == ["us_x"]  # "_" is no wildcard
    assert len(await ids(ProfileQuery(user_prefix="user"))) == 25
    assert await ids(ProfileQuery(phone="+8613800138000")) == ["alice"]
    assert await ids(ProfileQuery(user_prefix="user1", level=1, region="浙江")) == [
        f"user{n}" for n in range(10, 20) if n % 3 == 1 and n % 2
    ]
    pages, after = [], None
    while page := await ids(ProfileQuery(user_prefix="user"), after, 10):
        pages.append(page)
        after = page[-1]
    assert [len(p) for p in pages] == [10, 10, 5]
    assert [u for page in pages for u in page] == sorted(
        p.user_id for p in profiles if p.user_id.startswith("user")
    )
    async with SqlUnitOfWork(engine) as uow:
        scanned = [p.user_id for p in await uow.profiles.page("user23", 100)]
    # After user23 in the database's own order (collations differ on "_" and case).
    assert scanned[0] == "user24"
    assert not {f"user{n:02d}" for n in range(24)} & set(scanned)


async def test_an_import_applies_good_rows_reports_bad_ones_and_is_idempotent(
    engine: AsyncEngine,
) -> None:
    await _put(engine, Profile("zed", phone="+8613900139000"))
    text = (
        "user_id,phone,level,gender,birth_date,region,attr.vip\n"
        "alice,138 0013 8000,3,f,1990-05-17,浙江,true\n"  # 2
        "bob,12345,1,,,,\n"  # 3: not a phone number
        "carol,,1000,,,,\n"  # 4: level out of bounds
        "alice,,1,,,,\n"  # 5: alice again
        "dave,13900139000,1,,,,\n"  # 6: zed's number
        "erin,13700137000,2,m,,上海,false\n"  # 7
        "frank,13700137000,2,,,,\n"  # 8: erin's number, from this very file
        "x,,1,,,,\n"  # 9: not a user id
        "gina,,1,,2030-01-01,,\n"  # 10: born in the future
    )
    first = await import_profiles(read_profiles(text, "csv"), care(engine))
    assert (first.rows, first.created, first.updated, first.unchanged) == (9, 2, 0, 0)
    assert [(p.line, p.code, p.field) for p in first.problems] == [
        (3, "invalid_phone", "phone"),
        (4, "invalid_profile", "level"),
        (5, "duplicate_user", "user_id"),
        (6, "phone_taken", ""),
        (8, "phone_taken", ""),
        (9, "invalid_profile", "user_id"),
        (10, "invalid_profile", "birth_date"),
    ]
    assert first.refused == 7
    async with SqlUnitOfWork(engine) as uow:
        alice = await uow.profiles.get("alice")
        assert alice is not None
        assert (alice.phone, alice.level, alice.attributes) == ("+8613800138000", 3, {"vip": True})
        for refused in ("bob", "carol", "dave", "frank", "x", "gina"):
            assert await uow.profiles.get(refused) is None
    stamps = await _stamps(engine)

    again = await import_profiles(read_profiles(text, "csv"), care(engine))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    assert [p.line for p in again.problems] == [p.line for p in first.problems]
    assert await _stamps(engine) == stamps  # nothing written: not even the time


async def _stamps(engine: AsyncEngine) -> dict[str, datetime]:
    async with engine.connect() as connection:
        rows = await connection.execute(select(profile_table.c.user_id, profile_table.c.updated_at))
        return {str(u): t for u, t in rows}


async def test_an_import_row_sets_only_the_fields_its_file_names(engine: AsyncEngine) -> None:
    await _put(engine, ALICE)
    text = '{"user_id": "alice", "level": 5, "attributes": {"vip": null, "tier": "gold"}}\n'
    report = await import_profiles(read_profiles(text, "jsonl"), care(engine))
    assert (report.updated, report.problems) == (1, [])
    async with SqlUnitOfWork(engine) as uow:
        alice = await uow.profiles.get("alice")
    expected = {**{k: v for k, v in ALICE.attributes.items() if k != "vip"}, "tier": "gold"}
    assert alice == Profile(**{**_fields(ALICE), "level": 5, "attributes": expected})


def _fields(profile: Profile) -> dict[str, object]:
    return {name: getattr(profile, name) for name in Profile.__dataclass_fields__}


async def test_a_thousand_rows_import_in_chunks_with_progress(engine: AsyncEngine) -> None:
    lines = ["user_id,phone,level,region,attr.n"]
    lines += [f"p{n:04d},1380000{n:04d},{n % 10},r{n % 7},{n}" for n in range(1000)]
    lines[501] = "p0500,not a phone,1,r,1"  # one bad row, in the second chunk
    done: list[int] = []
    report = await import_profiles(
        read_profiles("\n".join(lines), "csv"), care(engine), progress=done.append
    )
    assert (report.rows, report.created, report.refused) == (1000, 999, 1)
    assert report.problems[0].line == 502
    assert done == [500, 1000]
    async with engine.connect() as connection:
        assert await connection.scalar(select(func.count()).select_from(profile_table)) == 999
    async with SqlUnitOfWork(engine) as uow:
        p = await uow.profiles.get("p0999")
    assert p == Profile("p0999", phone="+8613800000999", level=9, region="r5",
                        attributes={"n": 999})  # fmt: skip
    again = await import_profiles(read_profiles("\n".join(lines), "csv"), care(engine))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 999)


async def test_writing_many_at_once_refuses_only_the_rows_whose_phone_is_taken(
    engine: AsyncEngine,
) -> None:
    await _put(engine, ALICE, Profile("bob", level=1))
    batch = [
        Profile("bob", level=2),  # stored: updated
        Profile("carol", phone=ALICE.phone),  # alice's number: refused
        Profile("dave", phone="+8613900139000"),  # new
    ]
    async with SqlUnitOfWork(engine) as uow:
        refused = await uow.profiles.put_all(batch, AT)
        await uow.commit()
    assert set(refused) == {"carol"}
    assert isinstance(refused["carol"], PhoneTaken)
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.profiles.many(["bob", "carol", "dave"]) == {
            "bob": batch[0],
            "dave": batch[2],
        }


async def test_concurrent_imports_claiming_the_same_numbers_give_each_to_one_user(
    engine: AsyncEngine,
) -> None:
    files = [
        "user_id,phone\n" + "".join(f"{who}{n:03d},1380000{n:04d}\n" for n in range(100))
        for who in ("a", "b", "c", "d")
    ]
    reports = await asyncio.gather(
        *(import_profiles(read_profiles(text, "csv"), care(engine)) for text in files)
    )
    assert sum(r.created for r in reports) == 100  # a number a user, whoever came first
    assert sum(r.refused for r in reports) == 300
    assert {p.code for r in reports for p in r.problems} == {"phone_taken"}
    async with engine.connect() as connection:
        assert await connection.scalar(select(func.count()).select_from(profile_table)) == 100


async def test_changes_made_at_once_to_one_profile_are_none_of_them_lost(
    engine: AsyncEngine,
) -> None:
    """Each change reads the profile and writes it back merged: the row's lock (and, for a
    profile not stored yet, running again after the first insert) keeps every change."""
    await _put(engine, Profile("stored", level=1))
    care_ = care(engine)
    keys = [f"k{n:02d}" for n in range(30)]  # a profile holds at most 32 attributes
    await asyncio.gather(
        *(
            edit_my_profile(who, {"attributes": {key: n}}, frozenset({"attributes"}), care_)
            for who in ("stored", "new")
            for n, key in enumerate(keys)
        )
    )
    async with SqlUnitOfWork(engine) as uow:
        found = await uow.profiles.many(["stored", "new"])
    for who in ("stored", "new"):
        assert found[who].attributes == {key: n for n, key in enumerate(keys)}, who
    assert found["stored"].level == 1


async def _version(engine: AsyncEngine) -> int:
    async with SqlUnitOfWork(engine) as uow:
        return await uow.profiles.version()


async def test_every_committed_write_moves_the_version_on_and_a_rolled_back_one_does_not(
    engine: AsyncEngine,
) -> None:
    first = await _version(engine)
    await _put(engine, Profile("alice", level=1))
    after_put = await _version(engine)
    assert after_put > first
    async with SqlUnitOfWork(engine) as uow:
        assert await uow.profiles.put_all([Profile("bob"), Profile("carol")], AT) == {}
        await uow.commit()
    after_all = await _version(engine)
    assert after_all > after_put
    async with SqlUnitOfWork(engine) as uow:
        await uow.profiles.put(Profile("dave"), AT)  # not committed: rolled back
    assert await _version(engine) == after_all


async def test_a_process_without_redis_forgets_a_profile_another_process_changed(
    engine: AsyncEngine,
) -> None:
    """Two caches on one database, as `raffle serve` and `raffle profile import` without
    Redis: the one that reads hears the other's change through the polled version."""
    await _put(engine, Profile("alice", phone="+8613800138000", sn="SN-1"))
    server, importer = care(engine, interval=0.05), care(engine)
    watching = asyncio.create_task(server.cache.watch())
    try:
        assert (await server.cache.of("alice")).sn == "SN-1"
        await put_profile("alice", {"sn": "SN-2"}, importer)
        async with asyncio.timeout(10):  # how long to wait before failing, not a speed bound
            while (await server.cache.of("alice")).sn != "SN-2":  # noqa: ASYNC110 - polled
                await asyncio.sleep(0.02)
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
    # Its own change it forgets at once, with no news at all.
    await put_profile("alice", {"sn": "SN-3"}, server)
    assert (await server.cache.of("alice")).sn == "SN-3"


async def test_0030_makes_the_version_row_and_undoes_itself(
    engine: AsyncEngine, database_url: str
) -> None:
    async def tables() -> set[str]:
        async with engine.connect() as connection:
            return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))

    assert await _version(engine) == 0
    await downgrade(database_url, "0029")
    assert "profile_version" not in await tables()
    assert "profile" in await tables()
    await upgrade(database_url)
    assert await _version(engine) == 0
