"""Alipay's RSA2 signatures: the signing string, SHA256withRSA (PKCS#1 v1.5) and keys."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

REQUEST_UNSIGNED = frozenset({"sign"})
# A notification's sign_type is left out of its signing string too (Alipay's rule for
# asynchronous notifications; a request's sign_type is signed).
NOTIFICATION_UNSIGNED = frozenset({"sign", "sign_type"})


def signing_string(params: Mapping[str, str], unsigned: Collection[str] = REQUEST_UNSIGNED) -> str:
    """The parameters sorted by name, `name=value` joined by `&`, values as they are (not
    URL-encoded), empty values and the unsigned names left out."""
    return "&".join(
        f"{name}={value}"
        for name, value in sorted(params.items())
        if value and name not in unsigned
    )


def sign(key: rsa.RSAPrivateKey, text: str) -> str:
    """SHA256withRSA (PKCS#1 v1.5) of the UTF-8 text, base64."""
    signature = key.sign(text.encode(), padding.PKCS1v15(), hashes.SHA256())
    return base64.b64encode(signature).decode()


def verifies(key: rsa.RSAPublicKey, text: str, signature: str) -> bool:
    try:
        raw = base64.b64decode(signature, validate=True)
        key.verify(raw, text.encode(), padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def private_key(text: str) -> rsa.RSAPrivateKey:
    """An RSA private key from PEM, or from the bare base64 (PKCS#8 or PKCS#1 DER) that
    Alipay's key tool writes."""
    data = text.strip()
    key = (
        serialization.load_pem_private_key(data.encode(), password=None)
        if data.startswith("-----")
        else serialization.load_der_private_key(_der(data), password=None)
    )
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key")
    return key


def public_key(text: str) -> rsa.RSAPublicKey:
    """An RSA public key from PEM or bare base64 DER (as Alipay's console shows it)."""
    data = text.strip()
    key = (
        serialization.load_pem_public_key(data.encode())
        if data.startswith("-----")
        else serialization.load_der_public_key(_der(data))
    )
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA public key")
    return key


def _der(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except binascii.Error as error:
        raise ValueError("a key must be PEM or base64") from error
