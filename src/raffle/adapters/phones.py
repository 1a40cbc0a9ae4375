"""Phone numbers through Google's libphonenumber (`phonenumbers`): E.164, and their mask."""

from __future__ import annotations

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat

from raffle.domain.profile_fields import InvalidPhone, mask


class PhoneBook:
    """Numbers written without a country code are read as numbers of `region` (ISO 3166
    alpha-2, the setting RAFFLE_PHONE_REGION)."""

    def __init__(self, region: str) -> None:
        if region not in phonenumbers.SUPPORTED_REGIONS:
            raise ValueError(f"unknown phone region {region!r}")
        self._region = region

    def normalise(self, text: str) -> str:
        """The number in E.164 ("+8613800138000"); InvalidPhone unless it is a valid number
        of its country's numbering plan."""
        try:
            number = phonenumbers.parse(text, self._region)
        except NumberParseException:
            raise InvalidPhone(f"{text!r} is not a phone number", "phone") from None
        if not phonenumbers.is_valid_number(number):
            raise InvalidPhone(f"{text!r} is not a valid phone number", "phone")
        return phonenumbers.format_number(number, PhoneNumberFormat.E164)

    def masked(self, e164: str) -> str:
        number = phonenumbers.parse(e164, None)
        national = phonenumbers.national_significant_number(number)
        return mask(number.country_code or 0, national)
