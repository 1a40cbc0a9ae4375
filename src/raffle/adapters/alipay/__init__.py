"""Alipay's face-to-face payment as the PaymentGateway: open API calls and notifications."""
