"""Deny lists: who may not play (a user, a phone, an address or range, a device), and until when."""

from __future__ import annotations

import bisect
import functools
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from raffle.domain.errors import RaffleError

MAX_VALUE = 64  # a user id, an E.164 phone, an IPv6 range, a device serial all fit
MAX_REASON = 200
DENIED = "this request is not allowed"  # the same words whatever denied it: no help to abusers


class DenyKind(StrEnum):
    USER = "user"
    PHONE = "phone"
    IP = "ip"  # an address or a CIDR range, IPv4 or IPv6
    SN = "sn"  # a device serial (the profile's `sn`)


class Denied(RaffleError):
    """A request by or for someone a deny list names: which list and why are never told."""

    code = "denied"

    def __init__(self) -> None:
        super().__init__(DENIED)


class InvalidDenyEntry(RaffleError):
    code = "invalid_deny_entry"


class UnknownDenyEntry(RaffleError):
    code = "unknown_deny_entry"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a rule denied by itself: the rule, the events counted in its window, and when
    the first and the last of them came."""

    rule_id: int
    event: str
    count: int
    window_minutes: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True, slots=True)
class DenyEntry:
    """One line of a deny list. `value` is normalised (E.164 phone, CIDR network); an entry
    whose `expires_at` has passed no longer denies. `evidence` is set on automatic entries."""

    kind: DenyKind
    value: str
    reason: str
    added_by: str
    added_at: datetime
    expires_at: datetime | None = None
    evidence: Evidence | None = None
    id: int = 0  # given when stored

    def in_force(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now


def network(text: str) -> str:
    """An address or a CIDR range as its network ("10.1.2.3/16" is "10.1.0.0/16"; an
    address alone is its /32 or /128); InvalidDenyEntry otherwise."""
    try:
        net = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise InvalidDenyEntry(f"{text!r} is not an IP address or CIDR range") from None
    mapped = net.version == 6 and net.prefixlen >= 96 and net.network_address.ipv4_mapped
    if mapped:  # "::ffff:10.0.0.0/104" is 10.0.0.0/8: clients are checked as IPv4 too
        return str(ipaddress.ip_network(f"{mapped}/{net.prefixlen - 96}"))
    return str(net)


def checked_value(kind: DenyKind, value: str) -> str:
    """The value as the list keeps it (phones are normalised by the caller, which knows the
    numbering plan)."""
    value = value.strip()
    if not value or len(value) > MAX_VALUE:
        raise InvalidDenyEntry(f"a {kind} must be 1 to {MAX_VALUE} characters")
    return network(value) if kind is DenyKind.IP else value


class DenyList:
    """The entries in force at `now`, as a process holds them for the checks: exact keys in a
    set per kind, and each IP version's ranges merged into sorted, disjoint intervals (an
    address is found by bisection, whatever the number of ranges). Built once per change
    of the stored list, then only read; `valid_until` is when its first entry expires, and
    the list must then be built again (`at`)."""

    def __init__(self, entries: Iterable[DenyEntry] = (), now: datetime | None = None) -> None:
        self.entries = [e for e in entries if now is None or e.in_force(now)]
        expiries = [e.expires_at for e in self.entries if e.expires_at is not None]
        self.valid_until = min(expiries, default=None)
        exact: dict[DenyKind, set[str]] = {kind: set() for kind in DenyKind}
        ranges: dict[int, list[tuple[int, int]]] = {4: [], 6: []}
        for entry in self.entries:
            if entry.kind is DenyKind.IP:
                net = ipaddress.ip_network(entry.value, strict=False)
                first = int(net.network_address)
                ranges[net.version].append((first, first + net.num_addresses - 1))
            else:
                exact[entry.kind].add(entry.value)
        self._users, self._phones = exact[DenyKind.USER], exact[DenyKind.PHONE]
        self._serials = exact[DenyKind.SN]
        self._ranges = {version: _merged(found) for version, found in ranges.items()}
        self.kinds = frozenset(e.kind for e in self.entries)

    def at(self, now: datetime) -> DenyList:
        """The list without the entries expired at `now`."""
        return DenyList(self.entries, now)

    def denies(
        self,
        *,
        user: str | None = None,
        phone: str | None = None,
        sn: str | None = None,
        ip: str | None = None,
    ) -> bool:
        """Whether a user id, phone, device serial or client address (None: not known) is
        on the list."""
        return (
            user in self._users
            or phone in self._phones
            or sn in self._serials
            or (ip is not None and self._address_denied(ip))
        )

    def _address_denied(self, text: str) -> bool:
        if (found := _address(text)) is None:
            return False
        starts, ends = self._ranges[found[0]]
        at = bisect.bisect_right(starts, found[1]) - 1
        return at >= 0 and found[1] <= ends[at]


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Sorted, disjoint intervals covering the same addresses: their starts and their ends."""
    starts: list[int] = []
    ends: list[int] = []
    for first, last in sorted(ranges):
        if ends and first <= ends[-1] + 1:
            ends[-1] = max(ends[-1], last)
        else:
            starts.append(first)
            ends.append(last)
    return starts, ends


@functools.lru_cache(maxsize=65_536)  # clients come back: each address is parsed once
def _address(text: str) -> tuple[int, int] | None:
    """An address's IP version and number (an IPv4-mapped IPv6 one as IPv4); None if the
    text is not an address (a test client's name)."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.version, int(address)
