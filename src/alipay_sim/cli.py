"""`raffle-alipay-sim`: the simulator on a port, for `raffle demo`, tests and people."""

from __future__ import annotations

from pathlib import Path

import click
import uvicorn
from cryptography.hazmat.primitives import serialization

from alipay_sim.app import create_app
from alipay_sim.signing import load_private, load_public, new_key, public_pem
from alipay_sim.simulator import Config


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8010, show_default=True, type=click.IntRange(0, 65535))
@click.option("--app-id", envvar="ALIPAY_SIM_APP_ID", required=True, help="The merchant's app.")
@click.option("--seller-id", envvar="ALIPAY_SIM_SELLER_ID", required=True, help="Its seller id.")
@click.option(
    "--merchant-public-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The app's public key (PEM or base64): requests are verified with it.",
)
@click.option(
    "--key",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The simulator's private key (PEM); made and written there if the file is missing.",
)
@click.option(
    "--public-key-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the simulator's public key, for the service's configuration.",
)
@click.option(
    "--notify-scale",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Alipay's notification retry schedule times this (0.001: 25 hours in 90 s).",
)
@click.option("--public-url", help="The simulator's address as buyers reach it (QR codes).")
def main(
    host: str,
    port: int,
    app_id: str,
    seller_id: str,
    merchant_public_key: Path,
    key: Path,
    public_key_out: Path | None,
    notify_scale: float,
    public_url: str | None,
) -> None:
    """Serve a simulated Alipay face-to-face payment gateway at /gateway.do."""
    if key.exists():
        private = load_private(key.read_text())
    else:
        private = new_key()
        key.touch(mode=0o600)  # never readable by others, not even for a moment
        key.write_bytes(
            private.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    if public_key_out is not None:
        public_key_out.write_text(public_pem(private))
    config = Config(
        app_id=app_id,
        seller_id=seller_id,
        merchant_key=load_public(merchant_public_key.read_text()),
        key=private,
        notify_scale=notify_scale,
        public_url=public_url,
    )
    uvicorn.run(create_app(config), host=host, port=port, log_level="warning")
