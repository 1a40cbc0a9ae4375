"""Alipay's face-to-face payment as the PaymentGateway: open API calls and notifications."""

from raffle.adapters.alipay.gateway import AlipayGateway, Merchant
from raffle.adapters.alipay.signing import private_key, public_key

__all__ = ["AlipayGateway", "Merchant", "private_key", "public_key"]
