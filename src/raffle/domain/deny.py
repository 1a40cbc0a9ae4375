"""Deny lists: who may not play (a user, a phone, an address or range, a device), and until when."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
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
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise InvalidDenyEntry(f"{text!r} is not an IP address or CIDR range") from None


def checked_value(kind: DenyKind, value: str) -> str:
    """The value as the list keeps it (phones are normalised by the caller, which knows the
    numbering plan)."""
    value = value.strip()
    if not value or len(value) > MAX_VALUE:
        raise InvalidDenyEntry(f"a {kind} must be 1 to {MAX_VALUE} characters")
    return network(value) if kind is DenyKind.IP else value


Expiry = datetime | None  # None: for ever


def _later(a: Expiry, b: Expiry) -> Expiry:
    return None if a is None or b is None else max(a, b)


def _alive(expiry: Expiry, now: datetime) -> bool:
    return expiry is None or expiry > now


@dataclass(slots=True)
class _Ranges:
    """CIDR ranges of one IP version: for each prefix length in use, the network numbers.
    An address is looked up once per prefix length in use (at most 33 or 129), never per
    range."""

    bits: int
    by_prefix: dict[int, dict[int, Expiry]] = field(default_factory=dict)
    prefixes: tuple[tuple[int, int, dict[int, Expiry]], ...] = ()  # (mask, prefix, networks)

    def add(self, net: ipaddress.IPv4Network | ipaddress.IPv6Network, expiry: Expiry) -> None:
        networks = self.by_prefix.setdefault(net.prefixlen, {})
        key = int(net.network_address)
        networks[key] = _later(networks[key], expiry) if key in networks else expiry
        all_ones = (1 << self.bits) - 1
        self.prefixes = tuple(
            (all_ones ^ ((1 << (self.bits - p)) - 1), p, n)
            for p, n in sorted(self.by_prefix.items())
        )

    def denies(self, address: int, now: datetime) -> bool:
        for mask, _, networks in self.prefixes:
            if (key := address & mask) in networks and _alive(networks[key], now):
                return True
        return False


class DenyList:
    """Every entry in force, as a process holds them for the checks: exact keys in one dict,
    ranges by prefix length. Built once per change of the stored list, then only read."""

    def __init__(self, entries: Iterable[DenyEntry] = ()) -> None:
        self._exact: dict[tuple[DenyKind, str], Expiry] = {}
        self._ranges = {4: _Ranges(32), 6: _Ranges(128)}
        self.kinds: frozenset[DenyKind] = frozenset()
        kinds: set[DenyKind] = set()
        for entry in entries:
            kinds.add(entry.kind)
            if entry.kind is DenyKind.IP:
                net = ipaddress.ip_network(entry.value, strict=False)
                self._ranges[net.version].add(net, entry.expires_at)
            else:
                key = (entry.kind, entry.value)
                before = self._exact.get(key, entry.expires_at)
                self._exact[key] = _later(before, entry.expires_at)
        self.kinds = frozenset(kinds)

    def denies(self, now: datetime, keys: Mapping[DenyKind, str | None]) -> bool:
        """Whether any of `keys` (a user id, phone, client address, serial; None: not
        known) is on the list and in force at `now`."""
        for kind, value in keys.items():
            if value is None or kind not in self.kinds:
                continue
            if kind is DenyKind.IP:
                if self._address_denied(value, now):
                    return True
            elif (key := (kind, value)) in self._exact and _alive(self._exact[key], now):
                return True
        return False

    def _address_denied(self, text: str, now: datetime) -> bool:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:  # not an address (a test client's name): no range holds it
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return self._ranges[address.version].denies(int(address), now)
