"""RSA2 (SHA256withRSA, PKCS#1 v1.5, 2048-bit keys): sign and verify rates of `cryptography`
(the adapter's) and of pycryptodomex (what python-alipay-sdk signs with), in one run.

Run: .venv/bin/pip install pycryptodomex==3.24.2   # only for the comparison
     .venv/bin/python bench/signatures.py [--seconds S]

The text signed is a precreate request's signing string, as the adapter builds it; what is
verified is a notification's. The figures are per second on one core, and their ratio.
"""

from __future__ import annotations

import argparse
import base64
import time
from collections.abc import Callable

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from raffle.adapters.alipay.signing import sign, signing_string, verifies

REQUEST = signing_string({
    "app_id": "2021000000000001", "method": "alipay.trade.precreate", "format": "JSON",
    "charset": "utf-8", "sign_type": "RSA2", "timestamp": "2026-11-25 09:30:00", "version": "1.0",
    "notify_url": "https://shop.example.com/api/payments/alipay/notify",
    "biz_content": '{"out_trade_no":"P100200300","total_amount":"12.34","subject":"一篇付费文章",'
                   '"timeout_express":"30m"}',
})  # fmt: skip


def rate(work: Callable[[], object], seconds: float) -> float:
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            work()
        done += 20
    return done / elapsed


def cryptography_rates(key: rsa.RSAPrivateKey, seconds: float) -> tuple[float, float]:
    signature, public = sign(key, REQUEST), key.public_key()
    assert verifies(public, REQUEST, signature)
    return (
        rate(lambda: sign(key, REQUEST), seconds),
        rate(lambda: verifies(public, REQUEST, signature), seconds),
    )


def pycryptodome_rates(key: rsa.RSAPrivateKey, seconds: float) -> tuple[float, float] | None:
    try:
        from Cryptodome.Hash import SHA256
        from Cryptodome.PublicKey import RSA
        from Cryptodome.Signature import PKCS1_v1_5
    except ImportError:
        return None
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    theirs = RSA.import_key(pem)
    signer, verifier = PKCS1_v1_5.new(theirs), PKCS1_v1_5.new(theirs.public_key())

    def signed() -> str:  # as python-alipay-sdk does it
        return base64.b64encode(signer.sign(SHA256.new(REQUEST.encode()))).decode()

    signature = signed()
    assert signature == sign(key, REQUEST)  # the same bytes as cryptography's

    def verified() -> bool:
        return bool(verifier.verify(SHA256.new(REQUEST.encode()), base64.b64decode(signature)))

    return rate(signed, seconds), rate(verified, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    seconds = parser.parse_args().seconds
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ours = cryptography_rates(key, seconds)
    print(f"{'library':<16} {'sign/s':>10} {'verify/s':>10}")
    print(f"{'cryptography':<16} {ours[0]:>10,.0f} {ours[1]:>10,.0f}")
    if (other := pycryptodome_rates(key, seconds)) is None:
        print("pycryptodomex: not installed (pip install pycryptodomex==3.24.2 to compare)")
        return
    print(f"{'pycryptodomex':<16} {other[0]:>10,.0f} {other[1]:>10,.0f}")
    print(f"cryptography / pycryptodomex: sign {ours[0] / other[0]:.1f}x, "
          f"verify {ours[1] / other[1]:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
