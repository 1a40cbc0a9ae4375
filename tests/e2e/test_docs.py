"""/docs works offline: Swagger UI's files are served by the service itself."""

from __future__ import annotations

import re

from tests.e2e.conftest import Api


async def test_the_docs_page_loads_only_local_assets_that_answer(api: Api) -> None:
    page = await api.client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page.text)
    urls += re.findall(r"""url:\s*["']([^"']+)["']""", page.text)
    assert {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"} <= set(urls)
    assert "/openapi.json" in urls
    assert not [u for u in urls if not u.startswith("/")], urls
    assert "//" not in " ".join(urls)
    for url in urls:
        answer = await api.client.get(url)
        assert answer.status_code == 200, url
    script = await api.client.get("/docs/assets/swagger-ui-bundle.js")
    assert "SwaggerUIBundle" in script.text
    assert "javascript" in script.headers["content-type"]


async def test_the_oauth2_redirect_page_and_no_cdn_redoc(api: Api) -> None:
    assert (await api.client.get("/docs/oauth2-redirect")).status_code == 200
    assert (await api.client.get("/redoc")).status_code == 404
