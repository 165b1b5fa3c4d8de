"""Provider fetchers, one per provider with the same shape, registered in catalog/providers.py.

Each fetcher is `fetch(*, client=None, regions=..., progress=..., **injected_clients) -> FetchResult`
(catalog/fetchers/result.py). The registry imports a provider's SDK only when that fetcher runs.
"""

from __future__ import annotations

from catalog.fetchers.result import CredentialsError, FetchError, FetchResult, Progress

__all__ = ["CredentialsError", "FetchError", "FetchResult", "Progress"]
