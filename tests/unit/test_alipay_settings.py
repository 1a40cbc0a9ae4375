"""Alipay's settings: ids, gateway URL and keys from the environment or from files, checked
at start-up without ever showing a key; bootstrap wires the adapter only with an app id."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import ValidationError

from raffle.adapters.alipay.gateway import AlipayGateway
from raffle.bootstrap import bootstrap
from raffle.settings import Settings, problems

APP_ID, SELLER_ID = "2021000000000001", "2088000000000001"


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    """The app's private key as PEM, Alipay's public key as the console's bare base64."""
    app = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    alipay = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = app.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = alipay.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, base64.b64encode(public).decode()


def _problems(monkeypatch: pytest.MonkeyPatch, **env: str) -> list[str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as error:
        Settings()
    return problems(error.value)


async def test_keys_from_files_wire_the_adapter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: tuple[str, str]
) -> None:
    (private := tmp_path / "app.pem").write_text(keys[0])
    (public := tmp_path / "alipay.pub").write_text(keys[1])
    for name, value in {
        "RAFFLE_DATABASE_URL": f"sqlite:///{tmp_path / 'raffle.db'}",
        "RAFFLE_ALIPAY_APP_ID": APP_ID,
        "RAFFLE_ALIPAY_SELLER_ID": SELLER_ID,
        "RAFFLE_ALIPAY_GATEWAY_URL": "http://127.0.0.1:8010/gateway.do",
        "RAFFLE_ALIPAY_NOTIFY_URL": "https://shop.example.com/api/payments/alipay/notify",
        "RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE": str(private),
        "RAFFLE_ALIPAY_PUBLIC_KEY_FILE": str(public),
    }.items():
        monkeypatch.setenv(name, value)
    raffle = bootstrap(Settings())
    try:
        assert isinstance(raffle.gateway, AlipayGateway)
        assert raffle.gateway.url == "http://127.0.0.1:8010/gateway.do"
        merchant = raffle.gateway.merchant
        assert (merchant.app_id, merchant.seller_id) == (APP_ID, SELLER_ID)
        assert merchant.notify_url == "https://shop.example.com/api/payments/alipay/notify"
    finally:
        await raffle.close()
    assert raffle.gateway.client.is_closed


async def test_no_app_id_no_gateway(tmp_path: Path) -> None:
    raffle = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'raffle.db'}"))
    try:
        assert raffle.gateway is None
    finally:
        await raffle.close()


def test_an_app_id_needs_its_seller_and_both_keys(
    monkeypatch: pytest.MonkeyPatch, keys: tuple[str, str]
) -> None:
    assert _problems(monkeypatch, RAFFLE_ALIPAY_APP_ID=APP_ID) == [
        "RAFFLE_ALIPAY_APP_ID needs RAFFLE_ALIPAY_SELLER_ID (2088…)"
    ]
    monkeypatch.setenv("RAFFLE_ALIPAY_SELLER_ID", SELLER_ID)
    assert _problems(monkeypatch, RAFFLE_ALIPAY_PUBLIC_KEY=keys[1]) == [
        "set one of RAFFLE_ALIPAY_APP_PRIVATE_KEY and RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE"
    ]
    both = _problems(
        monkeypatch,
        RAFFLE_ALIPAY_APP_PRIVATE_KEY=keys[0],
        RAFFLE_ALIPAY_PUBLIC_KEY_FILE="/nowhere/alipay.pub",
    )
    assert both == ["set one of RAFFLE_ALIPAY_PUBLIC_KEY and RAFFLE_ALIPAY_PUBLIC_KEY_FILE"]


def test_a_key_that_does_not_load_is_named_never_shown(
    monkeypatch: pytest.MonkeyPatch, keys: tuple[str, str]
) -> None:
    secret = keys[0].replace("A", "B")  # PEM still, but no key
    told = _problems(
        monkeypatch,
        RAFFLE_ALIPAY_APP_ID=APP_ID,
        RAFFLE_ALIPAY_SELLER_ID=SELLER_ID,
        RAFFLE_ALIPAY_APP_PRIVATE_KEY=secret,
        RAFFLE_ALIPAY_PUBLIC_KEY=keys[1],
    )
    assert told == ["RAFFLE_ALIPAY_APP_PRIVATE_KEY is not an RSA key (PEM or base64)"]
    monkeypatch.delenv("RAFFLE_ALIPAY_APP_PRIVATE_KEY")
    told = _problems(monkeypatch, RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE="/nowhere/app.pem")
    assert told == ["RAFFLE_ALIPAY_APP_PRIVATE_KEY_FILE cannot be read: No such file or directory"]


def test_production_reaches_alipay_over_https_only(keys: tuple[str, str]) -> None:
    with pytest.raises(ValidationError, match="RAFFLE_ALIPAY_GATEWAY_URL on https"):
        Settings(
            env="production",
            database_url="postgresql://raffle:Xk29-vault@db:5432/raffle",
            alipay_app_id=APP_ID,
            alipay_seller_id=SELLER_ID,
            alipay_gateway_url="http://openapi.alipay.com/gateway.do",
            alipay_app_private_key=keys[0],  # type: ignore[arg-type]
            alipay_public_key=keys[1],
        )


def test_a_call_needs_some_time(monkeypatch: pytest.MonkeyPatch) -> None:
    told = _problems(monkeypatch, RAFFLE_ALIPAY_TIMEOUT_SECONDS="0")
    assert told == ["RAFFLE_ALIPAY_TIMEOUT_SECONDS: must be more than 0"]
