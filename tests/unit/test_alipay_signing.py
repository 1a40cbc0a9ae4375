"""Alipay's signing string, RSA2 both ways between the adapter and the simulator, keys in
Alipay's formats, amounts and answers cut from the body as sent."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from alipay_sim import signing as sim_signing
from raffle.adapters.alipay.answers import answer
from raffle.adapters.alipay.fields import cents, yuan
from raffle.adapters.alipay.signing import (
    NOTIFICATION_UNSIGNED,
    private_key,
    public_key,
    sign,
    signing_string,
    verifies,
)

# The example request of Alipay's open platform documentation ("自行实现签名"): its
# parameters, and the string to sign it gives for them.
_MENU = (
    '{"button":[{"actionParam":"ZFB_HFCZ","actionType":"out","name":"话费充值"},'
    '{"name":"查询","subButton":[{"actionParam":"ZFB_YECX","actionType":"out","name":"余额查询"},'
    '{"actionParam":"ZFB_LLCX","actionType":"out","name":"流量查询"},'
    '{"actionParam":"ZFB_HFCX","actionType":"out","name":"话费查询"}]},'
    '{"actionParam":"http://m.alipay.com","actionType":"link","name":"最新优惠"}]}'
)
DOCUMENTED_REQUEST = {
    "app_id": "2014072300007148",
    "method": "alipay.mobile.public.menu.add",
    "charset": "GBK",
    "sign_type": "RSA2",
    "timestamp": "2014-07-24 03:07:50",
    "biz_content": _MENU,
    "sign": "e9zEAe4TTQ4LPLQvETPoLGXTiURcxiAKfMVQ6Hrrsx2hmyIEGvSfAQzbLxHrhyZ48wOJXTsD4FPnt+YG",
    "version": "1.0",
}
DOCUMENTED_STRING = (
    f"app_id=2014072300007148&biz_content={_MENU}&charset=GBK"
    "&method=alipay.mobile.public.menu.add&sign_type=RSA2&timestamp=2014-07-24 03:07:50"
    "&version=1.0"
)


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def test_the_signing_string_of_alipays_documented_example() -> None:
    assert signing_string(DOCUMENTED_REQUEST) == DOCUMENTED_STRING
    assert sim_signing.signing_string(DOCUMENTED_REQUEST) == DOCUMENTED_STRING


def test_empty_values_are_left_out_and_a_notification_leaves_out_its_sign_type() -> None:
    params = {"b": "2", "a": "1", "empty": "", "sign": "x", "sign_type": "RSA2"}
    assert signing_string(params) == "a=1&b=2&sign_type=RSA2"
    assert signing_string(params, NOTIFICATION_UNSIGNED) == "a=1&b=2"


def test_what_one_side_signs_the_other_verifies(key: rsa.RSAPrivateKey) -> None:
    text = signing_string(DOCUMENTED_REQUEST)
    ours, theirs = sign(key, text), sim_signing.sign(key, text)
    assert ours == theirs  # PKCS#1 v1.5 is deterministic
    assert sim_signing.verifies(key.public_key(), text, ours)
    assert verifies(key.public_key(), text, theirs)
    assert not verifies(key.public_key(), text.replace("GBK", "UTF-8"), ours)
    assert not verifies(key.public_key(), text, "not base64!")


def test_keys_as_pem_or_as_alipays_bare_base64(key: rsa.RSAPrivateKey) -> None:
    public = key.public_key()
    numbers = public.public_numbers()
    for der_format in (
        serialization.PrivateFormat.PKCS8,
        serialization.PrivateFormat.TraditionalOpenSSL,
    ):
        der = key.private_bytes(
            serialization.Encoding.DER, der_format, serialization.NoEncryption()
        )
        assert private_key(base64.b64encode(der).decode()).public_key().public_numbers() == numbers
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert private_key(pem.decode()).public_key().public_numbers() == numbers
    spki = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert public_key(base64.b64encode(spki).decode()).public_numbers() == numbers
    assert public_key(sim_signing.public_pem(key)).public_numbers() == numbers
    with pytest.raises(ValueError, match="PEM or base64"):
        public_key("not a key at all!")


@pytest.mark.parametrize(("amount", "text"), [(1, "0.01"), (1234, "12.34"), (100, "1.00")])
def test_amounts_are_cents_inside_and_yuan_on_the_wire(amount: int, text: str) -> None:
    assert yuan(amount) == text
    assert cents(text) == amount


@pytest.mark.parametrize("text", ["12.345", "-1.00", "1e3", " 12.34", "12,34", "", "NaN", "１２"])
def test_a_malformed_amount_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not an amount"):
        cents(text)


@pytest.mark.parametrize("amount", [0, -100, 100_000_000_01])
def test_an_amount_alipay_would_not_take_is_refused(amount: int) -> None:
    with pytest.raises(ValueError, match=r"0\.01 to 100000000\.00"):
        yuan(amount)


def test_an_answer_is_cut_from_the_body_exactly_as_sent(key: rsa.RSAPrivateKey) -> None:
    # Spacing and an escaped character that a re-serialisation would change.
    node = '{ "code" : "10000", "msg":"Success", "subject":"\\u8bfe" }'
    body = f'{{"alipay_trade_query_response" : {node} ,\n "sign":"{sign(key, node)}"}}'
    found = answer(body, "alipay.trade.query")
    assert found.text == node
    assert found.fields["subject"] == "课"
    assert found.sign is not None
    assert verifies(key.public_key(), found.text, found.sign)
    assert not verifies(key.public_key(), json.dumps(found.fields), found.sign)


@pytest.mark.parametrize(
    "body",
    ["[]", '{"other_response":{}}', '{"alipay_trade_query_response":[]}', "{", '{"a":1} x'],
)
def test_a_body_without_the_methods_answer_is_refused(body: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - json's errors say where, ours say what
        answer(body, "alipay.trade.query")


def test_an_error_answer_is_found_under_error_response() -> None:
    body = '{"error_response":{"code":"40002","sub_code":"isv.invalid-app-id"}}'
    found = answer(body, "alipay.trade.precreate")
    assert found.fields["sub_code"] == "isv.invalid-app-id"
    assert found.sign is None
