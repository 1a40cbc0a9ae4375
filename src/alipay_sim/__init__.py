"""An Alipay face-to-face payment simulator: the open API, a pay page and notifications."""
