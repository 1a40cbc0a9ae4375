"""RSA2 as Alipay signs: the sorted `k=v&…` string, SHA256withRSA (PKCS#1 v1.5), base64."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# The simulator is the other side of the wire: it keeps its own copy of the rules rather
# than borrowing the service's, so a mistake in one shows as a failed verification.


def signing_string(params: Mapping[str, str], unsigned: Collection[str] = ("sign",)) -> str:
    return "&".join(
        f"{name}={value}"
        for name, value in sorted(params.items())
        if value and name not in unsigned
    )


def sign(key: rsa.RSAPrivateKey, text: str) -> str:
    return base64.b64encode(key.sign(text.encode(), padding.PKCS1v15(), hashes.SHA256())).decode()


def verifies(key: rsa.RSAPublicKey, text: str, signature: str) -> bool:
    try:
        raw = base64.b64decode(signature, validate=True)
        key.verify(raw, text.encode(), padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def load_public(text: str) -> rsa.RSAPublicKey:
    """PEM, or bare base64 DER as Alipay's console shows keys."""
    data = text.strip()
    if data.startswith("-----"):
        key = serialization.load_pem_public_key(data.encode())
    else:
        key = serialization.load_der_public_key(base64.b64decode("".join(data.split())))
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("not an RSA public key")
    return key


def load_private(text: str) -> rsa.RSAPrivateKey:
    data = text.strip()
    if data.startswith("-----"):
        key = serialization.load_pem_private_key(data.encode(), password=None)
    else:
        key = serialization.load_der_private_key(base64.b64decode("".join(data.split())), None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key")
    return key
