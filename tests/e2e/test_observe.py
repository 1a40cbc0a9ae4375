"""http/observe.py in-process: request ids, route templates (never paths) and GET /metrics."""

from __future__ import annotations

import io
import json

from tests.e2e.conftest import ACTIVITY, Api


def _requests(server_log: io.StringIO) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in server_log.getvalue().splitlines()]
    return [line for line in lines if line["event"] == "request"]


async def test_a_callers_request_id_is_kept_when_it_is_a_token_else_a_new_one_is_made(
    api: Api, server_log: io.StringIO
) -> None:
    given = ["checkout-42.a:b", "two words", "x" * 129]
    answers = [await api.client.get("/api/health", headers={"X-Request-ID": g}) for g in given]
    echoed = [a.headers["X-Request-ID"] for a in answers]
    assert echoed[0] == "checkout-42.a:b"
    assert all(len(e) == 32 and int(e, 16) >= 0 for e in echoed[1:])
    assert echoed[1] != echoed[2]
    assert [line["request_id"] for line in _requests(server_log)] == echoed


async def test_lines_and_metrics_name_route_templates_never_paths(
    api: Api, server_log: io.StringIO
) -> None:
    auth = await api.login("olga")
    drawn = await api.client.post(f"/api/activities/{ACTIVITY}/draws", headers=auth)
    assert drawn.status_code == 201
    assert (await api.client.get("/api/no-such/secret-path-123")).status_code == 404
    lines = _requests(server_log)
    assert [(line["route"], line["status"]) for line in lines] == [
        ("/api/auth/login", 200),
        ("/api/activities/{activity_id}/draws", 201),
        ("unmatched", 404),
    ]
    assert lines[1]["user_id"] == "olga"
    assert "user_id" not in lines[0]  # the login has no session yet
    server = [line for line in server_log.getvalue().splitlines() if '"httpx"' not in line]
    assert "secret-path-123" not in "".join(server)  # the test's client logs it, not the server
    shown = (await api.client.get("/metrics")).text
    assert 'route="unmatched",status="404"} 1.0' in shown
    assert f'raffle_draws_total{{activity="{ACTIVITY}",outcome=' in shown
    assert "secret-path-123" not in shown
