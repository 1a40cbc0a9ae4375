# syntax=docker/dockerfile:1
# raffle's image: its wheel and its dependencies' wheels built in one stage, installed in a slim
# one with the runtime dependencies only (no extras: no test tools, no scipy), run by a user
# without privileges. `raffle serve` by default; `raffle worker`, `raffle migrate`, `raffle load`
# and `raffle user create` as commands (compose.yaml, docs/production.md).

FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    RAFFLE_HOST=0.0.0.0 \
    RAFFLE_PORT=8000
# The wheels are mounted, not copied: no layer keeps them.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels raffle \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/raffle \
       --shell /usr/sbin/nologin raffle
USER raffle
# Writable by raffle: the embedded SQLite default (`docker run -p 8000:8000 IMAGE`) lives here.
WORKDIR /var/lib/raffle
EXPOSE 8000
# The process answers; /api/health/ready (where present) also checks the servers behind it.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD python -c "import os, urllib.request as r; r.urlopen('http://127.0.0.1:%s/api/health' % os.environ['RAFFLE_PORT'], timeout=2)"
CMD ["raffle", "serve"]
